"""Which libllama the `llama_cpp` bindings load: the one installed with them, or a `setup` build.

The bindings come from bielik-llama-cpp (packaging/llama/): llama-cpp-python's release rebuilt
without tinyBLAS, as wheels, so the library installed with them is exact and nothing compiles.
`bielik-lsp setup` (app/setup.py) is for what no wheel carries: a CUDA or Vulkan build, or a
source build of llama-cpp-python's own release. It builds into the cache, one folder per version
and build flags, and names the build this environment loads. Before `llama_cpp` is first
imported, `select()` points it there with LLAMA_CPP_LIB_PATH, the variable the bindings read for
that purpose. The C API changes between releases, so a build is only ever used for the
llama-cpp-python version it was made for (bielik-llama-cpp's version is that release's).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from decoder.backends.files import cache_root

LIB_ENV = "LLAMA_CPP_LIB_PATH"  # read by llama-cpp-python when it loads libllama
CHOICE_ENV = "BIELIK_LSP_LLAMA_LIB"  # "bundled": the library installed with the bindings
PACKAGE = "bielik-llama-cpp"  # the bindings with exact wheels (packaging/llama/)
UPSTREAM = "llama-cpp-python"  # the same bindings from source, where installed instead
SETUP_COMMAND = "bielik-lsp setup"
LIBRARY = {"win32": "llama.dll", "darwin": "libllama.dylib"}.get(sys.platform, "libllama.so")


@dataclass(frozen=True)
class Build:
    """A finished `setup` build: where its libraries are and what it was built with."""

    folder: Path  # holds the shared libraries
    version: str  # llama-cpp-python version whose vendored llama.cpp was compiled
    flags: tuple[str, ...]  # CMake flags
    gpu: str  # cpu, cuda, metal or vulkan

    def describe(self) -> str:
        return f"{self.gpu} build of llama.cpp for {UPSTREAM} {self.version} ({self.folder})"


def bindings() -> tuple[str, str] | None:
    """The distribution that installed the `llama_cpp` bindings here, and its version."""
    for name in (PACKAGE, UPSTREAM):
        try:
            return name, version(name)
        except PackageNotFoundError:
            continue
    return None


def installed_version() -> str | None:
    """The llama-cpp-python release of the bindings installed beside us, read without importing.

    bielik-llama-cpp 0.3.36 (or 0.3.36.post1, 0.3.36+haswell) is llama-cpp-python 0.3.36.
    """
    found = bindings()
    return re.match(r"\d+(\.\d+)*", found[1]).group() if found else None


def builds_root() -> Path:
    return cache_root() / "llama.cpp"


def current_file(package_version: str) -> Path:
    """Names the build this environment's llama-cpp-python `package_version` loads.

    One per environment (a uv tool, a pipx venv, a clone's .venv): `setup` in one never
    changes which library another loads; the builds themselves are shared.
    """
    where = hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]
    return builds_root() / f"current-{package_version}-{where}"


def read_build(folder: Path) -> Build | None:
    """The build in `folder`, if it finished (its manifest is written last) and is loadable."""
    try:
        manifest = json.loads((folder / "build.json").read_text())
    except (OSError, ValueError):
        return None
    if not (folder / LIBRARY).is_file():
        return None
    return Build(folder, manifest["version"], tuple(manifest["flags"]), manifest["gpu"])


def current_build(package_version: str | None = None) -> Build | None:
    """The exact build `setup` made for the installed llama-cpp-python, if any."""
    package_version = package_version or installed_version()
    if package_version is None:
        return None
    try:
        name = current_file(package_version).read_text().strip()
    except OSError:
        return None
    build = read_build(builds_root() / name)
    return build if build and build.version == package_version else None


def select() -> str:
    """Point llama-cpp-python at `setup`'s build, unless the user chose a library; say which.

    Must run before `import llama_cpp`: the library is loaded at import.
    """
    if os.environ.get(LIB_ENV):
        return f"{os.environ[LIB_ENV]} (set in {LIB_ENV})"
    if os.environ.get(CHOICE_ENV) == "bundled":
        return f"the one installed with the bindings ({CHOICE_ENV}=bundled)"
    build = current_build()
    if build is None:
        return "the one installed with the bindings"
    os.environ[LIB_ENV] = str(build.folder)
    return build.describe()
