"""Peers: what a user would run instead of us, timed in the same run on the same prompt ids.

Each backend names its own (`peers` in its module): mlx-lm's `stream_generate` on the MLX model
we load; llama-cpp-python's own generation on the same GGUF, plain and with its prompt-lookup
speculation (`LlamaPromptLookupDecoding`, the library's defaults).

Each peer is a generator of token ids; `time_peer` times it like our engine's statistics
(prefill up to the first token, decode tokens/s after it), so the ratios compare like with like.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from decoder.backends.base import Backend
from decoder.backends.registry import BACKENDS
from decoder.stats import count_chars


@dataclass
class Peer:
    name: str
    generate: Callable[[list[int], int], Iterator[int]]  # (prompt ids, max tokens) -> token ids


def backend_peers(engine: str, backend: Backend) -> list[Peer]:
    """The library's own generation on the model `backend` runs (decoder/backends/registry.py)."""
    return [Peer(name, fn) for name, fn in BACKENDS[engine].implementation().peers(backend)]


def time_peer(
    peer: Peer, prompt: list[int], max_tokens: int, table: tuple[bytes, ...] | None = None
) -> dict:
    """Token ids and statistics shaped like our runs' (decode tokens/s excludes the prefill).

    With the model's bytes `table`, characters/s too: Unicode characters the decoded tokens spell.
    """
    start = time.perf_counter()
    ids, stamps = [], []
    for token in peer.generate(prompt, max_tokens):
        ids.append(int(token))
        stamps.append(time.perf_counter())
    decode_s = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    chars = count_chars(b"".join(table[t] for t in ids[1:])) if table else 0
    return {
        "ids": ids,
        "stats": {
            "prefill_seconds": stamps[0] - start if stamps else 0.0,
            "generated_tokens": len(ids),
            "decode_tokens": len(ids) - 1,
            "decode_seconds": decode_s,
            "tokens_per_second": (len(ids) - 1) / decode_s if decode_s else 0.0,
            "decode_chars": chars,
            "chars_per_second": chars / decode_s if decode_s and table else float("nan"),
        },
    }
