"""bielik-llama-cpp: load ggml's backend modules from this package, the best CPU level first.

This module is added to llama-cpp-python's `llama_cpp` package as `llama_cpp/_backends.py` by
packaging/llama/build.py; `llama_cpp/llama_cpp.py` calls `load()` right after it loads libllama.

The package's llama.cpp is built with GGML_BACKEND_DL: each backend, and each instruction-set
level of the CPU backend (GGML_CPU_ALL_VARIANTS: x64, sse42, ..., haswell, ..., zen4), is a
module of its own that libggml loads at run time. llama.cpp looks for them beside the executable
and in the working directory (ggml_backend_load_all), which under Python are neither, so it would
find no backend. `load()` loads them from the package's lib folder before llama.cpp's first call:
the CPU level with ggml's highest score on this machine (the score ggml_backend_load_best
compares: 0 where the CPU lacks an instruction the level uses), or the one named in the
environment variable LLAMA_CPP_CPU_VARIANT. A libllama whose backends are linked in (a build
without GGML_BACKEND_DL, e.g. one that LLAMA_CPP_LIB_PATH points to) needs nothing loaded.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from pathlib import Path

VARIANT_ENV = "LLAMA_CPP_CPU_VARIANT"
PREFIX = "ggml-" if sys.platform == "win32" else "libggml-"
SUFFIX = ".dll" if sys.platform == "win32" else ".so"
NOT_BACKENDS = ("base",)  # libggml-base: the tensor library every backend links


@dataclass(frozen=True)
class Backends:
    """What `load()` found in the folder and loaded."""

    folder: str
    scores: dict[str, int]  # each CPU level the folder holds: ggml's score here (0: cannot run)
    cpu: str | None  # the level loaded (None: the folder's one unlevelled CPU module)
    chosen_by: str  # "score" (the best this CPU runs) or VARIANT_ENV
    others: tuple[str, ...]  # other backend modules loaded (GPUs)

    def runnable(self) -> tuple[str, ...]:
        """The levels this CPU can run, lowest score first."""
        return tuple(sorted((n for n, s in self.scores.items() if s > 0), key=self.scores.get))


LOADED: Backends | None = None  # set by load(); None where the backends are linked in

_LOG = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


@_LOG
def _quiet(level, text, user_data):
    """Say nothing: ggml logs every module it loads to stderr; load() reports failures itself."""


def modules(folder: Path) -> dict[str, Path]:
    """Backend modules in `folder` by name: `cpu-haswell`, `cuda`..."""
    found = {}
    for path in sorted(folder.iterdir()):
        name = path.name
        if name.startswith(PREFIX) and name.endswith(SUFFIX):
            found[name[len(PREFIX) : -len(SUFFIX)]] = path
    return {name: path for name, path in found.items() if name not in NOT_BACKENDS}


def score(path: Path) -> int:
    """The score ggml_backend_load_best reads from a backend module: 0 where it cannot run.

    The module is opened and closed again, as ggml does it (its feature check is compiled
    without the level's instructions, so this runs on any CPU).
    """
    module = ctypes.CDLL(str(path))
    try:
        function = getattr(module, "ggml_backend_score", None)
        if function is None:
            return 0
        function.restype = ctypes.c_int
        return int(function())
    finally:
        import _ctypes

        (getattr(_ctypes, "FreeLibrary", None) or _ctypes.dlclose)(module._handle)


def load(lib: ctypes.CDLL, folder: Path) -> Backends | None:
    """Load the backend modules beside libllama (`lib`), unless its backends are linked in."""
    global LOADED
    lib.ggml_backend_reg_count.restype = ctypes.c_size_t
    if lib.ggml_backend_reg_count():
        return None
    found = modules(folder)
    levels = {name[len("cpu-") :]: path for name, path in found.items() if name.startswith("cpu-")}
    scores = {name: score(path) for name, path in levels.items()}
    wanted = os.environ.get(VARIANT_ENV, "").strip()
    if wanted:
        if wanted not in levels:
            raise RuntimeError(
                f"{VARIANT_ENV}={wanted}: no such CPU level in {folder} "
                f"(it has: {', '.join(levels) or 'none'})"
            )
        if scores[wanted] == 0:
            raise RuntimeError(f"{VARIANT_ENV}={wanted}: this CPU cannot run that level")
        cpu: str | None = wanted
    else:
        runnable = {name: s for name, s in scores.items() if s > 0}
        cpu = max(runnable, key=runnable.get) if runnable else None
    if cpu is None and levels:
        raise RuntimeError(f"none of the CPU levels in {folder} runs on this CPU")
    chosen = [levels[cpu]] if cpu else ([found["cpu"]] if "cpu" in found else [])
    others = [p for n, p in found.items() if n != "cpu" and not n.startswith("cpu-")]
    lib.ggml_backend_load.argtypes = [ctypes.c_char_p]
    lib.ggml_backend_load.restype = ctypes.c_void_p
    lib.ggml_log_set.argtypes = [_LOG, ctypes.c_void_p]
    lib.ggml_log_set(_quiet, None)
    try:
        if chosen and not lib.ggml_backend_load(os.fsencode(chosen[0])):
            raise RuntimeError(f"ggml could not load its CPU backend {chosen[0]}")
        loaded = tuple(p.name for p in others if lib.ggml_backend_load(os.fsencode(p)))
    finally:
        lib.ggml_log_set(_LOG(), None)  # ggml's own logger again
    LOADED = Backends(str(folder), scores, cpu, VARIANT_ENV if wanted else "score", loaded)
    return LOADED
