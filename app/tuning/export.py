"""The MLX adapter as a llama.cpp LoRA GGUF, so the default engine drafts with it too.

llama.cpp's LoRA format (src/llama-adapter.cpp): general.type = adapter, adapter.type = lora,
adapter.lora.alpha, and per adapted weight `<gguf name>.lora_a` (rank x in) and `.lora_b`
(out x rank); the update is scale * B (A x) with scale = alpha / rank. mlx-lm's LoRALinear
computes scale * (x a) b with a (in x rank), b (rank x out): A = a^T, B = scale * b^T, alpha =
rank. llama.cpp's converter stores a Llama model's attn_q / attn_k rows permuted for its rotary
layout (decoder/backends/gguf.py undoes that on import), so B's rows for those are permuted the
same way here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

GGUF_FILE = "drafter-lora.gguf"


def permute_rows(array: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's permute() of q/k rows (the inverse of decoder/backends/gguf.py's)."""
    return array.reshape(heads, 2, -1, *array.shape[1:]).swapaxes(1, 2).reshape(array.shape)


def lora_pairs(adapters: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """mlx-lm module path -> (a, b) from an adapters.safetensors' arrays."""
    pairs: dict[str, dict[str, np.ndarray]] = {}
    for name, array in adapters.items():
        module, _, kind = name.rpartition(".")
        pairs.setdefault(module, {})[kind] = array
    return {m: (p["lora_a"], p["lora_b"]) for m, p in pairs.items() if len(p) == 2}


def write_lora_gguf(folder: Path, base_gguf: Path, out: Path | None = None) -> Path:
    """The LoRA of `folder` (mlx-lm's files) as a llama.cpp LoRA GGUF for `base_gguf`."""
    import gguf
    import mlx.core as mx

    from decoder.backends.gguf import gguf_config, read_gguf

    reader = read_gguf(base_gguf)
    arch = reader.fields["general.architecture"].contents()
    config = gguf_config(reader, base_gguf.name)
    params = json.loads((folder / "adapter_config.json").read_text())["lora_parameters"]
    scale, rank = float(params["scale"]), int(params["rank"])
    names = gguf.get_tensor_name_map(
        {v: k for k, v in gguf.MODEL_ARCH_NAMES.items()}[arch], config["num_hidden_layers"]
    )
    saved = mx.load(str(folder / "adapters.safetensors"))
    adapters = {name: np.array(array.astype(mx.float32)) for name, array in saved.items()}
    out = out or folder / GGUF_FILE
    temp = out.with_name(f".{out.name}.tmp")
    writer = gguf.GGUFWriter(str(temp), arch)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(rank))
    for module, (a, b) in sorted(lora_pairs(adapters).items()):
        name = names.get_name(module)
        if name is None:
            raise ValueError(f"{module}: no llama.cpp tensor of {arch} for this LoRA layer")
        lora_b = scale * b.T
        if config["model_type"] == "llama" and name.endswith((".attn_q", ".attn_k")):
            heads = config["num_attention_heads" if name.endswith("q") else "num_key_value_heads"]
            lora_b = permute_rows(lora_b, heads)
        writer.add_tensor(f"{name}.weight.lora_a", np.ascontiguousarray(a.T, np.float32))
        writer.add_tensor(f"{name}.weight.lora_b", np.ascontiguousarray(lora_b, np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    temp.replace(out)
    return out
