"""Which libllama llama-cpp-python loads: the one its install compiled, or an exact build.

A package install (`uv tool install`, pipx, pip) compiles llama-cpp-python with llama.cpp's
default CPU kernels, tinyBLAS among them, and with tinyBLAS a pass over several tokens never
gives the logits of one-token passes, so speculation cannot be exact. `bielik-lsp setup`
(app/setup.py) builds the same llama.cpp version without it (and with a GPU backend if asked)
into the cache, one folder per version and build flags, and names it as the build this
environment loads. Before llama-cpp-python is first imported, `select()` points it there with
LLAMA_CPP_LIB_PATH, the variable llama-cpp-python reads for that purpose. The C API changes
between releases, so a build is only ever used for the llama-cpp-python version it was made for.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from decoder.backends.files import cache_root

LIB_ENV = "LLAMA_CPP_LIB_PATH"  # read by llama-cpp-python when it loads libllama
CHOICE_ENV = "BIELIK_LSP_LLAMA_LIB"  # "bundled": the library the install compiled, never ours
PACKAGE = "llama-cpp-python"
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
        return f"{self.gpu} build of llama.cpp for {PACKAGE} {self.version} ({self.folder})"


def installed_version() -> str | None:
    """The llama-cpp-python version installed beside us, read without importing it."""
    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        return None


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
        return f"the one {PACKAGE} was installed with ({CHOICE_ENV}=bundled)"
    build = current_build()
    if build is None:
        return f"the one {PACKAGE} was installed with"
    os.environ[LIB_ENV] = str(build.folder)
    return build.describe()
