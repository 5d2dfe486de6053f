"""llama-cpp-python names that changed between releases, resolved once.

Checked against llama-cpp-python 0.3.36 (llama.cpp's `llama_memory_*` API). Releases before the
memory API (up to 0.3.9) named the same calls `llama_kv_self_*` / `llama_kv_cache_*`, on the
context rather than on its memory.
"""

from __future__ import annotations

import llama_cpp as lib

VERSION_CHECKED = "0.3.36"


def seq_rm(ctx, seq: int, start: int, end: int) -> bool:
    """Remove positions [start, end) of sequence `seq` (end < 0: to the end)."""
    if hasattr(lib, "llama_memory_seq_rm"):
        return bool(lib.llama_memory_seq_rm(lib.llama_get_memory(ctx), seq, start, end))
    return bool(lib.llama_kv_self_seq_rm(ctx, seq, start, end))


def clear(ctx) -> None:
    """Empty the KV cache (every sequence)."""
    if hasattr(lib, "llama_memory_clear"):
        lib.llama_memory_clear(lib.llama_get_memory(ctx), True)
    else:
        lib.llama_kv_self_clear(ctx)


def build() -> str:
    """CPU, CUDA, Metal or Vulkan: what this build of libllama offloads to, from its system info."""
    info = lib.llama_print_system_info().decode("utf-8", "replace").upper()
    for name in ("CUDA", "METAL", "VULKAN", "HIP", "SYCL"):
        if f"{name} :" in info or f"{name} =" in info or f"{name}:" in info.replace(" ", ""):
            return {"METAL": "Metal", "VULKAN": "Vulkan"}.get(name, name)
    return "CPU"
