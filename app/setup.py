"""`bielik-lsp setup`: what this machine needs compiled that no wheel carries, built once.

The install brings llama.cpp exact and prebuilt (bielik-llama-cpp's wheels: every CPU level,
Metal on macOS), so on the CPU there is nothing to build. What is left for `setup`: a GPU build
(CUDA, Vulkan) or a build from llama-cpp-python's own source, and on Linux the stand-in that lets
MLX use PyPI's OpenBLAS (decoder/backends/blas.py) where the system has none.

It builds the llama.cpp that the installed bindings vendor (llama-cpp-python's release of the same
version: its source package, sha256-checked), without tinyBLAS (with it no pass over several
tokens gives one-token logits) and with the GPU backend asked for, into
~/.cache/bielik-lsp/llama.cpp/, and makes it the library the bindings load from then on
(decoder/backends/llama_lib.py). It needs CMake and Ninja (`uv tool install
'bielik-lsp[setup]'`), a C++ compiler, and the GPU's toolkit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import httpx
from tqdm import tqdm

from app.errors import UserError
from decoder.backends import llama_lib
from decoder.backends.blas import CANDIDATES, shim_path
from decoder.config import Settings

GPUS = {
    "cpu": [],
    "cuda": ["-DGGML_CUDA=ON"],
    "metal": ["-DGGML_METAL=ON"],
    "vulkan": ["-DGGML_VULKAN=ON"],
}
# Release build of llama-cpp-python's own CMake project (so its options and RPATHs are the
# wheel's), without its multimodal library, which we never load, and without tinyBLAS.
FLAGS = ["-DCMAKE_BUILD_TYPE=Release", "-DLLAVA_BUILD=OFF", "-DGGML_LLAMAFILE=OFF"]
INDEX = "https://pypi.org/simple"
SHARED = re.compile(r"(llama|ggml)[^/\\]*\.(so(\.\d+)*|dylib|dll)$")


def add_parser(sub: Any) -> None:
    """The `setup` command on `sub` (the subcommands of the main parser)."""
    setup = sub.add_parser(
        "setup",
        allow_abbrev=False,
        help="build llama.cpp for CUDA or Vulkan, or from source, into the cache (minutes)",
    )
    setup.add_argument(
        "--gpu",
        choices=["auto", *GPUS],
        default="auto",
        help="the GPU backend to build (auto: the one the installed llama-cpp-python uses)",
    )
    setup.add_argument(
        "--source", help="llama-cpp-python's source package (.tar.gz) or folder, for offline use"
    )
    setup.add_argument("--cmake-args", default="", help="more CMake flags, e.g. for a GPU arch")
    setup.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compiles")
    setup.add_argument("--force", action="store_true", help="build again even if cached")
    setup.add_argument(
        "--bundled", action="store_true", help="go back to the library the install compiled"
    )
    setup.add_argument("--no-check", action="store_true", help="skip the exactness check after")
    setup.add_argument("--quiet", action="store_true", help="no progress bars")


def run(settings: Settings, args: argparse.Namespace) -> int:
    """Give MLX a fast BLAS (Linux); build or reuse exact llama.cpp kernels, and select them."""
    if sys.platform.startswith("linux") and not args.bundled and find_spec("mlx"):
        print(f"setup: MLX multiplies with {fast_blas()}", file=sys.stderr)
    version = llama_lib.installed_version()
    if version is None:
        raise UserError(
            "llama.cpp's bindings are not installed (a remote-only install has no local engine)"
        )
    if args.bundled:
        llama_lib.current_file(version).unlink(missing_ok=True)
        print(f"setup: llama-cpp-python {version} loads the library it was installed with again")
        return 0
    print(select_exact(version, args))
    return 0 if args.no_check else check_exactness()


def select_exact(version: str, args: argparse.Namespace) -> str:
    """Make llama-cpp-python `version` load exact kernels: its own where they are, else ours."""
    try:
        own_gpu, own_exact = probe_library(None)
    except UserError:
        if args.gpu == "auto":  # nothing to go by
            raise
        own_gpu, own_exact = "none", False  # a broken or library-less install: build anyway
    gpu = args.gpu if args.gpu != "auto" else own_gpu
    if own_exact and gpu == own_gpu and not (args.force or args.cmake_args):
        llama_lib.current_file(version).unlink(missing_ok=True)
        return f"setup: the {gpu} llama.cpp installed here is exact (no tinyBLAS): nothing to build"
    flags = [*FLAGS, *GPUS[gpu], *shlex.split(args.cmake_args)]
    folder = llama_lib.builds_root() / f"{version}-{gpu}-{build_key(version, flags)}"
    if args.force or llama_lib.read_build(folder) is None:
        build(version, gpu, flags, folder, args)
    else:
        print(f"setup: reusing {folder}", file=sys.stderr)
    if probe_library(folder) != (gpu, True):
        raise UserError(f"the build in {folder} does not load as an exact {gpu} build")
    select(version, folder)
    return f"setup: llama-cpp-python {version} now loads the {gpu} build in {folder}"


def probe_library(folder: Path | None) -> tuple[str, bool]:
    """(GPU backend, no tinyBLAS) of a libllama as llama-cpp-python loads it, in a new process.

    `folder` None: the library the install compiled. Loading checks that the C API matches.
    """
    code = "from decoder.compat import llama_cpp as c; print(c.build(), c.llamafile_compiled())"
    env = {k: v for k, v in os.environ.items() if k != llama_lib.LIB_ENV}
    if folder is None:
        env[llama_lib.CHOICE_ENV] = "bundled"
    else:
        env[llama_lib.LIB_ENV] = str(folder)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-8:])
        raise UserError(f"llama-cpp-python cannot load {folder or 'its own library'}:\n{tail}")
    name, tinyblas = done.stdout.split()
    name = name.lower()
    return (name if name in GPUS else "cpu"), tinyblas == "False"


def build_key(version: str, flags: list[str]) -> str:
    """One folder per llama-cpp-python version, flags and machine."""
    key = "|".join([version, *flags, platform.system(), platform.machine()])
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def build(version: str, gpu: str, flags: list[str], folder: Path, args: argparse.Namespace) -> None:
    """Fetch and unpack the source, compile libllama and ggml, and keep the shared libraries."""
    root = llama_lib.builds_root()
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".build-") as work:
        source = Path(args.source) if args.source else fetch_source(version, args.quiet)
        tree = source if source.is_dir() else unpack(source, Path(work) / "src")
        objects = Path(work) / "build"
        configure(tree, objects, flags)
        compile_library(objects, args.jobs, args.quiet)
        staged = Path(work) / "lib"
        keep_libraries(objects, staged)
        manifest = {"version": version, "flags": flags, "gpu": gpu}
        (staged / "build.json").write_text(json.dumps(manifest, indent=1))
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(staged, folder)


def index_url() -> str:
    """The package index the installers were told to use (uv's, then pip's), else PyPI."""
    for name in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        if os.environ.get(name):
            return os.environ[name].rstrip("/")
    return INDEX


def fetch_source(version: str, quiet: bool) -> Path:
    """llama-cpp-python's source package for `version`, downloaded once and sha256-checked."""
    name = f"llama_cpp_python-{version}.tar.gz"
    target = llama_lib.builds_root() / "sources" / name
    if target.is_file():
        return target
    url, sha256 = find_file(index_url(), name)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{name}.{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=60) as reply:
            reply.raise_for_status()
            size = int(reply.headers.get("content-length", 0)) or None
            bar = tqdm(total=size, unit="B", unit_scale=True, desc=name, disable=quiet)
            with partial.open("wb") as out, bar:
                for block in reply.iter_bytes(1 << 20):
                    out.write(block)
                    digest.update(block)
                    bar.update(len(block))
    except httpx.HTTPError as error:
        partial.unlink(missing_ok=True)
        raise UserError(f"could not download {url}: {error} (offline: --source FILE)") from None
    if sha256 and digest.hexdigest() != sha256:
        partial.unlink(missing_ok=True)
        raise UserError(f"{name} from {url} does not match the index's sha256")
    os.replace(partial, target)
    return target


def find_file(index: str, name: str) -> tuple[str, str | None]:
    """A file's URL and sha256 in a simple index (PEP 691 JSON, or PEP 503 HTML)."""
    page = f"{index}/llama-cpp-python/"
    accept = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
    try:
        reply = httpx.get(page, headers={"Accept": accept}, follow_redirects=True, timeout=30)
        reply.raise_for_status()
    except httpx.HTTPError as error:
        raise UserError(f"could not read {page}: {error} (offline: --source FILE)") from None
    if "json" in reply.headers.get("content-type", ""):
        entries = reply.json()["files"]
        files = {f["filename"]: (f["url"], f.get("hashes", {}).get("sha256")) for f in entries}
    else:
        links = re.findall(r'href="([^"#]+)(?:#sha256=([0-9a-f]+))?"[^>]*>([^<]+)<', reply.text)
        files = {text.strip(): (href, sha) for href, sha, text in links}
    if name not in files:
        raise UserError(f"{page} has no {name}")
    url, sha256 = files[name]
    return str(httpx.URL(page).join(url)), sha256


def unpack(archive: Path, into: Path) -> Path:
    """The source package's one top folder, unpacked."""
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    tops = [p for p in into.iterdir() if p.is_dir()]
    if len(tops) != 1 or not (tops[0] / "CMakeLists.txt").is_file():
        raise UserError(f"{archive} is not llama-cpp-python's source package")
    return tops[0]


def tool(name: str) -> str | None:
    """A build tool on PATH, or the one its PyPI package ships (cmake, ninja)."""
    found = shutil.which(name)
    if found:
        return found
    try:
        module = __import__(name)
    except ImportError:
        return None
    folder = getattr(module, "BIN_DIR", None) or getattr(module, "CMAKE_BIN_DIR", None)
    return shutil.which(name, path=folder) if folder else None


def configure(tree: Path, objects: Path, flags: list[str]) -> None:
    """CMake's configure step; Ninja where it can run (its [n/N] lines show progress)."""
    cmake = tool("cmake")
    if cmake is None:
        raise UserError("setup needs CMake: uv tool install --reinstall 'bielik-lsp[setup]'")
    # Windows: CMake's default generator finds Visual Studio itself; Ninja needs its prompt.
    ninja = tool("ninja") if sys.platform != "win32" else None
    generator = ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"] if ninja else []
    command = [cmake, "-S", str(tree), "-B", str(objects), *generator, *flags]
    command.append(f"-DSKBUILD_PLATLIB_DIR={objects / 'platlib'}")  # never installed, but set
    print(f"setup: {shlex.join(command)}", file=sys.stderr)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise UserError(f"CMake could not configure llama.cpp:\n{tail}")


def compile_library(objects: Path, jobs: int, quiet: bool) -> None:
    """Build the `llama` target (it pulls ggml in) with a progress bar over the build's steps."""
    cmake = tool("cmake")
    command = [cmake, "--build", str(objects), "--config", "Release", "--target", "llama"]
    command += ["--parallel", str(jobs)]
    steps = re.compile(r"^\[(\d+)/(\d+)\]|^\[\s*(\d+)%\]")
    log: list[str] = []
    with (
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        ) as proc,
        tqdm(total=100, desc="compiling llama.cpp", unit="%", disable=quiet) as bar,
    ):
        for line in proc.stdout:
            log = [*log[-40:], line.rstrip()]
            hit = steps.match(line)
            if hit:
                done = int(hit[3]) if hit[3] else 100 * int(hit[1]) // int(hit[2])
                bar.update(max(0, done - bar.n))
    if proc.returncode != 0:
        raise UserError("compiling llama.cpp failed:\n" + "\n".join(log[-20:]))


def keep_libraries(objects: Path, into: Path) -> None:
    """Copy libllama and ggml's libraries (links kept) out of the build tree."""
    into.mkdir(parents=True)
    found = [p for p in objects.rglob("*") if SHARED.search(p.name) and "CMakeFiles" not in p.parts]
    for path in found:
        shutil.copy2(path, into / path.name, follow_symlinks=False)
    if not (into / llama_lib.LIBRARY).exists():
        raise UserError(f"the build made no {llama_lib.LIBRARY} (in {objects})")


def select(version: str, folder: Path) -> None:
    """Name `folder` as the build llama-cpp-python `version` loads from now on."""
    pointer = llama_lib.current_file(version)
    partial = pointer.with_name(f".{pointer.name}.{os.getpid()}")
    partial.write_text(folder.name + "\n")
    os.replace(partial, pointer)


def check_exactness() -> int:
    """Load the configured models and measure exactness, as `doctor --load` does."""
    print("setup: checking exactness on the configured models (bielik-lsp doctor --load)")
    command = [sys.executable, "-m", "app.cli", "doctor", "--load"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("exact")]
    print("\n".join(lines) or done.stdout + done.stderr)
    return done.returncode


# MLX calls these three; scipy-openblas32 exports them as scipy_cblas_*.
SHIM = """
#define ARGS o, ta, tb, m, n, k, al, a, la, b, lb, be, c, lc
#define GEMM(name, T, S) \\
  extern void scipy_##name(int, int, int, int, int, int, S, const T *, int, const T *, int, S, \\
                           T *, int); \\
  void name(int o, int ta, int tb, int m, int n, int k, S al, const T *a, int la, const T *b, \\
            int lb, S be, T *c, int lc) { scipy_##name(ARGS); }
GEMM(cblas_sgemm, float, float)
GEMM(cblas_dgemm, double, double)
GEMM(cblas_cgemm, void, const void *)
"""


def fast_blas() -> str:
    """The system's OpenBLAS, or scipy-openblas32 behind a compiled stand-in (made once)."""
    system = next((c for c in CANDIDATES if Path(c).exists()), None)
    if system:
        return f"the system's OpenBLAS ({system})"
    target = shim_path()
    if target.exists():
        return f"scipy-openblas32 ({target})"
    try:
        import scipy_openblas32
    except ImportError:
        return "its reference BLAS (no OpenBLAS: pip install scipy-openblas32, then setup)"
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        return "its reference BLAS (no C compiler for the OpenBLAS stand-in)"
    folder = scipy_openblas32.get_lib_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    source = partial.with_suffix(".c")
    source.write_text(SHIM)
    command = [compiler, "-shared", "-fPIC", "-O2", str(source), "-o", str(partial)]
    command += [f"-L{folder}", f"-l{scipy_openblas32.get_library()}", f"-Wl,-rpath,{folder}"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    source.unlink()
    if done.returncode != 0:
        partial.unlink(missing_ok=True)
        return f"its reference BLAS (the stand-in did not compile: {done.stderr.strip()[:200]})"
    os.replace(partial, target)
    return f"scipy-openblas32 ({target}, built now; from the next start)"
