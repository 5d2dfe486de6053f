"""The machine a benchmark ran on, in one line, and how busy it was."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from decoder.backends.blas import loaded_blas


def cpu_name() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def describe() -> str:
    """OS, CPU and core count, Python, and MLX's version, device and BLAS where installed."""
    try:
        import mlx.core as mx

        mlx = f", MLX {mx.__version__} ({mx.default_device()}), BLAS {loaded_blas()}"
    except ImportError:  # llama.cpp only (Windows)
        mlx = ""
    return (
        f"{platform.system()} {platform.machine()}, {cpu_name()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}{mlx}"
    )


def load_average() -> float | None:
    """The 1-minute load average (None where the OS has none, e.g. Windows)."""
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
