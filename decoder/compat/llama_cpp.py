"""llama-cpp-python names that changed between releases, resolved once.

Checked against llama-cpp-python 0.3.36 (llama.cpp's `llama_memory_*` API), as bielik-llama-cpp
0.3.36 ships it (packaging/llama/). Releases before the memory API (up to 0.3.9) named the same
calls `llama_kv_self_*` / `llama_kv_cache_*`, on the context rather than on its memory. Importing
this module loads libllama: the build `bielik-lsp setup` made, where there is one
(decoder/backends/llama_lib.py), else the one installed with the bindings, which loads its best
CPU level (`cpu_levels`).
"""

from __future__ import annotations

import ctypes
import os
import re
from importlib import import_module

from decoder.backends import llama_lib

LIBRARY = llama_lib.select()  # before the import below loads libllama

import llama_cpp as lib  # noqa: E402

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


def set_lora(ctx, lora, scale: float) -> int:
    """Make `lora` the context's one LoRA adapter at `scale` (0 on success).

    llama_set_adapters_lora (a list) since 0.3.3x; before it, llama_set_adapter_lora (one).
    """
    if hasattr(lib, "llama_set_adapters_lora"):
        adapters = (lib.llama_adapter_lora_p_ctypes * 1)(lora)
        scales = (ctypes.c_float * 1)(scale)
        return int(lib.llama_set_adapters_lora(ctx, adapters, 1, scales))
    return int(lib.llama_set_adapter_lora(ctx, lora, scale))


def build() -> str:
    """CPU, CUDA, Metal or Vulkan: what this build of libllama offloads to, from its system info."""
    info = lib.llama_print_system_info().decode("utf-8", "replace").upper()
    for name in ("CUDA", "METAL", "VULKAN", "HIP", "SYCL"):
        if f"{name} :" in info or f"{name} =" in info or f"{name}:" in info.replace(" ", ""):
            return {"METAL": "Metal", "VULKAN": "Vulkan"}.get(name, name)
    return "CPU"


# Batch-invariant numerics on the CPU (checked against the llama.cpp vendored in 0.3.36):
# - weight repacking (llama_model_params.use_extra_bufts) runs a gemm at >= 4 rows and a gemv
#   below (ggml-cpu/repack.cpp, forward_mul_mat_one_chunk);
# - flash attention (llama_context_params.flash_attn_type) decodes one token with a split-KV
#   kernel once the attended cache (padded to 256) reaches 512 positions, and batches with
#   another (ggml-cpu/ops.cpp, ggml_compute_forward_flash_attn_ext_f16);
# - the tiled K-quant matmul (ggml-cpu/tiled/tiled.cpp) takes batches of >= 8 rows; its switch,
#   the environment variable below, is read once per process, at the first matmul;
# - tinyBLAS (a build option, GGML_LLAMAFILE) multiplies batches of >= 2 rows.
TILED_ENV = "GGML_CPU_TILED_MM"
TILED_MIN_ROWS = 8


def tiled_enabled() -> bool:
    """The tiled switch as llama.cpp reads it: on unless the variable's leading integer is 0."""
    value = os.environ.get(TILED_ENV)
    if value is None:
        return True
    digits = re.match(r"\s*[+-]?\d+", value)
    return bool(digits and int(digits.group()) != 0)


def exact_model_params(mparams) -> None:
    """No weight repacking: one-token and batched passes then share the vec_dot kernels."""
    mparams.use_extra_bufts = False


def flash_attention(cparams, enabled: bool | None) -> None:
    """Flash attention on, off, or llama.cpp's choice (None)."""
    cparams.flash_attn_type = {
        None: lib.LLAMA_FLASH_ATTN_TYPE_AUTO,
        True: lib.LLAMA_FLASH_ATTN_TYPE_ENABLED,
        False: lib.LLAMA_FLASH_ATTN_TYPE_DISABLED,
    }[enabled]


def llamafile_compiled() -> bool:
    """Whether this libllama has tinyBLAS (GGML_LLAMAFILE): its batches are never bit-identical."""
    info = lib.llama_print_system_info().decode("utf-8", "replace").upper().replace(" ", "")
    return "LLAMAFILE=1" in info


def cpu_levels():
    """The CPU levels beside bielik-llama-cpp's libllama, and the one loaded (`_backends.Backends`).

    None where the bindings are llama-cpp-python's own, or the CPU backend is linked in (a
    `setup` build): one level, the one it was compiled for.
    """
    try:
        return import_module("llama_cpp._backends").LOADED
    except ImportError:
        return None


CPU_LEVEL_ENV = "LLAMA_CPP_CPU_VARIANT"  # bielik-llama-cpp loads this CPU level, not the best
