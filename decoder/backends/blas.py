"""Give MLX an optimised BLAS on Linux, and say which BLAS is in use.

MLX's Linux CPU wheel links a bundled reference BLAS: a float32 matmul runs at ~5-7 GFLOPS,
and prefill is ~20x slower than with OpenBLAS. The dynamic linker only honours LD_PRELOAD at
process start, so the fix is to re-execute the process once with OpenBLAS preloaded in place
of libblas.so.3, before anything imports mlx. The OpenBLAS is the system's (Debian:
libopenblas0-pthread) or, with no root to install that, PyPI's scipy-openblas32 behind a small
library that `bielik-lsp setup` compiles (app/setup.py): its symbols carry a `scipy_` prefix,
so MLX's `cblas_sgemm` needs a stand-in that forwards to `scipy_cblas_sgemm`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from decoder.backends.files import cache_root

OVERRIDE_ENV = "BIELIK_LSP_BLAS"  # path to a libblas.so.3 to preload, or "off"
_MARK_ENV = "BIELIK_LSP_BLAS_REEXEC"
CANDIDATES = [
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3",
    "/usr/lib/aarch64-linux-gnu/openblas-pthread/libblas.so.3",
    "/usr/lib64/libopenblas.so.0",
    "/usr/lib/libopenblas.so.0",
]


def find_openblas() -> str | None:
    """Path of an OpenBLAS that can stand in for libblas.so.3, if this machine has one."""
    override = os.environ.get(OVERRIDE_ENV)
    if override:
        return None if override == "off" else override
    found = [*CANDIDATES, str(shim_path())]
    return next((c for c in found if Path(c).exists()), None)


def shim_path() -> Path:
    """Where `bielik-lsp setup` puts the cblas stand-in over scipy-openblas32."""
    return cache_root() / "blas" / "libcblas-scipy-openblas.so"


def ensure_fast_blas() -> None:
    """Re-exec this process with OpenBLAS preloaded when MLX would otherwise get the slow one.

    Must run before `import mlx`. A no-op on macOS (Accelerate), when already preloaded, when
    no OpenBLAS is installed (`doctor` then warns), or when BIELIK_LSP_BLAS=off.
    """
    if not sys.platform.startswith("linux") or os.environ.get(_MARK_ENV):
        return
    lib = find_openblas()
    preload = os.environ.get("LD_PRELOAD", "")
    if lib is None or lib in preload.split(":") or "mlx.core" in sys.modules:
        return
    env = dict(os.environ, LD_PRELOAD=":".join(p for p in (lib, preload) if p))
    env[_MARK_ENV] = "1"
    argv = [sys.executable, *sys.orig_argv[1:]]
    os.execve(sys.executable, argv, env)


def loaded_blas() -> str:
    """Which BLAS library this process has mapped (read from /proc/self/maps on Linux)."""
    if sys.platform == "darwin":
        return "Accelerate (macOS)"
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return "unknown"
    libs = sorted(
        {line.split()[-1] for line in maps.splitlines() if "blas" in line.lower() and "/" in line}
    )
    # numpy's scipy_openblas has prefixed symbols and cannot serve MLX; only a preloaded one can.
    fast = [lib for lib in libs if "openblas" in lib and "scipy_openblas" not in lib]
    if fast:
        return f"OpenBLAS ({fast[0]})"
    mlx_libs = [lib for lib in libs if "mlx" in lib]
    if mlx_libs:
        return f"reference BLAS, slow ({mlx_libs[0]})"
    return "not loaded yet"
