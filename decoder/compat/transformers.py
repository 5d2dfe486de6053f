"""transformers internals used to read tokenizers byte-exactly. Checked against transformers 5.23.0.

- `convert_slow_tokenizer.bytes_to_unicode`: GPT-2's byte <-> printable-character map, to spell
  byte-level BPE tokens as bytes.
- `integrations.gguf.gguf_tokenizer_mapping`: the GGUF tokenizer field names and converter;
  transformers' own GGUF loading imports torch, which is not a dependency here.
- `convert_slow_tokenizer.SentencePieceExtractor` and `tokenization_utils_base.generate_merges`:
  the pieces of a SentencePiece model and their BPE merges (the tests build Mistral v1's fast
  tokenizer from its .model file).
"""

from __future__ import annotations

CHECKED = "5.23.0"


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map from each byte to the printable character byte-level BPE spells it with."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode as table

    return table()


def gguf_tokenizer_mapping() -> dict[str, dict[str, str]]:
    """GGUF metadata keys -> transformers tokenizer fields, by group."""
    from transformers.integrations.gguf.gguf_tokenizer_mapping import GGUF_TOKENIZER_MAPPING

    return GGUF_TOKENIZER_MAPPING


def convert_gguf_tokenizer(architecture: str, tokenizer_dict: dict):
    """(tokenizers backend, extra tokenizer kwargs) for a GGUF's tokenizer fields."""
    from transformers.integrations.gguf.gguf_tokenizer_mapping import (
        convert_gguf_tokenizer as convert,
    )

    return convert(architecture, tokenizer_dict)


def sentencepiece_extractor(model_file: str):
    """Transformers' reader of a SentencePiece .model into vocabulary and merges."""
    from transformers.convert_slow_tokenizer import SentencePieceExtractor

    return SentencePieceExtractor(model_file)


def generate_merges(vocab: dict[str, int], scores: dict[str, float]) -> list[tuple[str, str]]:
    """BPE merges of a SentencePiece vocabulary, ranked by the merged pieces' scores."""
    from transformers.tokenization_utils_base import generate_merges as merges

    return merges(vocab, scores)
