"""Tiny randomly initialised GGUF files over real vocabularies, written with the `gguf` package.

`mistral_gguf` has Bielik-11B's shape: llama architecture and the Mistral v1 SentencePiece
vocabulary (32,000 tokens, the base of Bielik's), a few layers and small dimensions. `smollm_gguf`
carries a second, byte-level BPE vocabulary (SmolLM2's, read from the embedded GGUF), so drafts
must cross tokenizers. llama.cpp loads them exactly as it loads a published GGUF.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gguf import GGUFReader, GGUFValueType, GGUFWriter, TokenType

DIMS = dict(embd=64, layers=2, heads=4, kv_heads=2, ff=128, context=2048)


def mistral_vocab(writer: GGUFWriter) -> int:
    """The Mistral v1 SentencePiece vocabulary as llama.cpp's converter writes it."""
    from sentencepiece import SentencePieceProcessor

    from tests.mistral_tokenizer import MODEL_FILE

    sp = SentencePieceProcessor(model_file=str(MODEL_FILE))
    n = sp.vocab_size()
    types = []
    for i in range(n):
        kind = TokenType.NORMAL
        if sp.is_unknown(i):
            kind = TokenType.UNKNOWN
        elif sp.is_control(i):
            kind = TokenType.CONTROL
        elif sp.is_byte(i):
            kind = TokenType.BYTE
        elif sp.is_unused(i):
            kind = TokenType.UNUSED
        types.append(kind)
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list([sp.id_to_piece(i) for i in range(n)])
    writer.add_token_scores([sp.get_score(i) for i in range(n)])
    writer.add_token_types(types)
    writer.add_bos_token_id(sp.bos_id())
    writer.add_eos_token_id(sp.eos_id())
    writer.add_unk_token_id(sp.unk_id())
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_add_space_prefix(True)
    return n


def copied_vocab(source: Path):
    """A vocabulary writer copying every tokenizer.* key of another GGUF."""

    def write(writer: GGUFWriter) -> int:
        reader = GGUFReader(source)
        n = 0
        for name, field in reader.fields.items():
            if not name.startswith("tokenizer."):
                continue
            value = field.contents()
            sub = field.types[-1] if field.types[0] == GGUFValueType.ARRAY else None
            writer.add_key_value(name, value, field.types[0], sub)
            if name == "tokenizer.ggml.tokens":
                n = len(value)
        return n

    return write


def random_llama(
    path: Path, vocab, *, seed: int, noise_of: int | None = None, noise: float = 0.03
) -> Path:
    """A llama-architecture GGUF with random float32 weights.

    With `noise_of`, the weights of that seed plus a little noise (a drafter that agrees often,
    not always).
    """
    d = DIMS
    head = d["embd"] // d["heads"]
    writer = GGUFWriter(path, "llama")
    n_vocab = vocab(writer)
    writer.add_context_length(d["context"])
    writer.add_embedding_length(d["embd"])
    writer.add_block_count(d["layers"])
    writer.add_feed_forward_length(d["ff"])
    writer.add_head_count(d["heads"])
    writer.add_head_count_kv(d["kv_heads"])
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(head)
    writer.add_rope_freq_base(10000.0)
    writer.add_file_type(0)  # all float32
    shapes = {"token_embd.weight": (n_vocab, d["embd"]), "output_norm.weight": (d["embd"],)}
    for i in range(d["layers"]):
        b = f"blk.{i}."
        shapes |= {
            b + "attn_norm.weight": (d["embd"],),
            b + "attn_q.weight": (d["embd"], d["embd"]),
            b + "attn_k.weight": (d["kv_heads"] * head, d["embd"]),
            b + "attn_v.weight": (d["kv_heads"] * head, d["embd"]),
            b + "attn_output.weight": (d["embd"], d["embd"]),
            b + "ffn_norm.weight": (d["embd"],),
            b + "ffn_gate.weight": (d["ff"], d["embd"]),
            b + "ffn_up.weight": (d["ff"], d["embd"]),
            b + "ffn_down.weight": (d["embd"], d["ff"]),
        }
    base = np.random.default_rng(seed if noise_of is None else noise_of)
    jitter = np.random.default_rng(seed)
    for name, shape in shapes.items():
        if name.endswith("norm.weight"):
            w = np.ones(shape, np.float32)
        else:
            scale = 1.0 if name == "token_embd.weight" else 0.3
            w = (base.standard_normal(shape) * scale).astype(np.float32)
            if noise_of is not None:
                w += (jitter.standard_normal(shape) * noise * scale).astype(np.float32)
        writer.add_tensor(name, w)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
