"""GGUF files with the shapes of Bielik-11B and its drafters, random weights, for cost curves.

Speculation pays when verifying n tokens in one pass costs little more than one token, and
when a drafter token costs little against a target token. Both depend on the machine and on the
model's shape (a 2-core CPU has little compute beyond its memory bandwidth; Gemma-3-270M's
262k-entry head makes its own curve steep), so they are measured on the shapes that matter.
Values do not matter for the time of a pass, so each file holds one random quantized tensor per
shape and type, written for every layer: writing several GB takes a minute, not an hour.
`bielik-lsp bench costs` (app/bench/costs.py) writes them and measures them.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFWriter, TokenType

from decoder.backends.files import cache_root

CACHE = cache_root() / "bench"
SIZES = (1, 2, 3, 5, 9, 17, 33)  # the widths the auto policy prices (decoder/pricing.py)


@dataclass(frozen=True)
class Shape:
    """A decoder's dimensions (llama architecture; biases and norms left out of the timing)."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    tied: bool  # the output projection reuses the token embeddings


# config.json of speakleash/Bielik-11B-v3.0-Instruct, speakleash/Bielik-1.5B-v3.0-Instruct
# (APT4 tokenizer; attention and MLP biases, left out here) and Qwen/Qwen2.5-1.5B-Instruct
# (QKV biases, left out here).
SHAPES = {
    "bielik-11b-v3": Shape(50, 4096, 32, 8, 14336, 32128, tied=False),
    "bielik-1.5b-v3": Shape(32, 1536, 12, 2, 8960, 32000, tied=False),
    "qwen2.5-1.5b": Shape(28, 1536, 12, 2, 8960, 151936, tied=True),
}
T = GGMLQuantizationType


def more_bits(layer: int, layers: int) -> bool:
    """Layers whose attn_v and ffn_down Q4_K_M keeps in Q6_K (llama.cpp's use_more_bits)."""
    eighth = layers // 8
    return layer < eighth or layer >= 7 * layers // 8 or (layer - eighth) % 3 == 2


def tensor_types(shape: Shape, quant: str) -> dict[str, T]:
    """Each tensor's type: Q4_K_M's mix (Q6_K for the output and half the V/down layers) or Q4_0."""
    names = {"token_embd.weight": T.Q6_K if shape.tied else T.Q4_K}
    if not shape.tied:
        names["output.weight"] = T.Q6_K
    for i in range(shape.layers):
        more = T.Q6_K if more_bits(i, shape.layers) else T.Q4_K
        for part in ("attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"):
            names[f"blk.{i}.{part}.weight"] = T.Q4_K
        names[f"blk.{i}.attn_v.weight"] = more
        names[f"blk.{i}.ffn_down.weight"] = more
    if quant == "q4_0":
        names = dict.fromkeys(names, T.Q4_0)
    return names


def tensor_shape(name: str, s: Shape) -> tuple[int, int]:
    """(rows, columns) of a weight, as a GGUF stores it (columns = the input dimension)."""
    head = s.hidden // s.heads
    part = name.split(".")[-2]
    return {
        "token_embd": (s.vocab, s.hidden),
        "output": (s.vocab, s.hidden),
        "attn_q": (s.hidden, s.hidden),
        "attn_k": (s.kv_heads * head, s.hidden),
        "attn_v": (s.kv_heads * head, s.hidden),
        "attn_output": (s.hidden, s.hidden),
        "ffn_gate": (s.ffn, s.hidden),
        "ffn_up": (s.ffn, s.hidden),
        "ffn_down": (s.hidden, s.ffn),
    }[part]


def random_blocks(kind: T, rows: int, cols: int, rng: np.random.Generator) -> np.ndarray:
    """Random quantized bytes with small, finite block scales (fp16 d, dmin)."""
    block, size = GGML_QUANT_SIZES[kind]
    data = rng.integers(0, 256, size=(rows, cols // block, size), dtype=np.uint8)
    scale = np.array([1e-4], np.float16).view(np.uint8)
    if kind == T.Q6_K:
        data[..., -2:] = scale  # d comes last
    else:
        data[..., 0:2] = scale  # d first (Q4_0, Q4_K)
        if kind == T.Q4_K:
            data[..., 2:4] = np.array([8e-4], np.float16).view(np.uint8)  # dmin
    return data.reshape(rows, -1)


def synthetic_vocab(writer: GGUFWriter, n: int) -> None:
    """A SentencePiece-style vocabulary of `n` placeholder pieces (byte tokens included)."""
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    pieces += [f"\u2581t{i}" for i in range(n - len(pieces))]
    types = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL] + [TokenType.BYTE] * 256
    writer.add_tokenizer_model("llama")
    writer.add_token_list(pieces)
    writer.add_token_scores([0.0] * n)
    writer.add_token_types(types + [TokenType.NORMAL] * (n - len(types)))
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)


def file_size(shape: Shape, quant: str) -> int:
    total = 0
    for name, kind in tensor_types(shape, quant).items():
        rows, cols = tensor_shape(name, shape)
        block, size = GGML_QUANT_SIZES[kind]
        total += rows * cols // block * size
    return total


def write(name: str, quant: str, directory: Path = CACHE) -> Path:
    """The GGUF of SHAPES[name] (written once; an existing file is reused)."""
    shape = SHAPES[name]
    path = directory / f"{name}-{quant}.gguf"
    if path.exists() and path.stat().st_size >= file_size(shape, quant):
        return path
    directory.mkdir(parents=True, exist_ok=True)
    need = file_size(shape, quant) * 1.05
    free = shutil.disk_usage(directory).free
    if free < need:
        raise OSError(f"{path} needs {need / 1e9:.1f} GB, {free / 1e9:.1f} GB free")
    writer = GGUFWriter(path.with_suffix(".part"), "llama")
    header(writer, shape)
    rng, made = np.random.default_rng(0), {}
    for tensor, kind in tensor_types(shape, quant).items():
        dims = tensor_shape(tensor, shape)
        if (dims, kind) not in made:
            made[dims, kind] = random_blocks(kind, *dims, rng)
        writer.add_tensor(tensor, made[dims, kind], raw_dtype=kind)
    for norm in ["output_norm.weight"] + [f"blk.{i}.attn_norm.weight" for i in range(shape.layers)]:
        writer.add_tensor(norm, np.ones(shape.hidden, np.float32))
    for i in range(shape.layers):
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(shape.hidden, np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file(progress=True)  # a tqdm bar over the bytes written
    writer.close()
    path.with_suffix(".part").rename(path)
    return path


def header(writer: GGUFWriter, s: Shape) -> None:
    writer.add_context_length(4096)
    writer.add_embedding_length(s.hidden)
    writer.add_block_count(s.layers)
    writer.add_feed_forward_length(s.ffn)
    writer.add_head_count(s.heads)
    writer.add_head_count_kv(s.kv_heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(s.hidden // s.heads)
    writer.add_rope_freq_base(1e6)
    writer.add_file_type(15)  # MOSTLY_Q4_K_M (for display only; tensors carry their own types)
    synthetic_vocab(writer, s.vocab)


def measure(path: Path, exact: bool, prompt: int = 64, reps: int = 3) -> dict:
    """t(1), t(n)/t(1) (medians, warm cache of `prompt` ids) and prefill tok/s, in this process."""
    from decoder.backends.llamacpp import LlamaCppBackend

    backend = LlamaCppBackend(path, exact=exact, context=1024)
    ids = np.random.default_rng(1).integers(300, backend.vocab_size, prompt + max(SIZES)).tolist()
    start = time.perf_counter()
    backend.prefill_chunk(ids[:prompt])
    prefill = prompt / (time.perf_counter() - start)
    backend.forward([ids[prompt]])
    times = {}
    for n in SIZES:
        runs = []
        for _ in range(reps):
            start = time.perf_counter()
            backend.forward(ids[:n])
            runs.append(time.perf_counter() - start)
            backend.rewind(n)
        times[n] = statistics.median(runs)
    ratios = {n: round(times[n] / times[1], 2) for n in SIZES}
    return {"t1_ms": round(times[1] * 1000, 1), "ratios": ratios, "prefill_tok_s": prefill}


def run_isolated(path: Path, exact: bool) -> dict:
    """`measure` in a fresh process: llama.cpp reads some kernel switches once per process."""
    code = (
        "import json, sys; from pathlib import Path; from app.bench.shapes import measure;"
        f"print(json.dumps(measure(Path({str(path)!r}), {exact})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])
