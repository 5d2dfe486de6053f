"""Peers: what a user would run instead of us, timed in the same run on the same prompt ids.

- mlx-lm's own `stream_generate` on the MLX model we load (same directory, same weights);
- llama-cpp-python's own generation on the same GGUF, plain and with its prompt-lookup
  speculation (`LlamaPromptLookupDecoding`, the library's defaults).

Each peer is a generator of token ids; `time_peer` times it like our engine's statistics
(prefill up to the first token, decode tokens/s after it), so the ratios compare like with like.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

MLX_LM = "mlx-lm stream_generate"
LLAMA_CPP = "llama-cpp-python generate"
LLAMA_CPP_LOOKUP = "llama-cpp-python + LlamaPromptLookupDecoding"


@dataclass
class Peer:
    name: str
    generate: Callable[[list[int], int], Iterator[int]]  # (prompt ids, max tokens) -> token ids


def mlx_lm_peer(model, tokenizer) -> Peer:
    """mlx-lm's generation loop on an already loaded mlx-lm model (greedy: no sampler given)."""
    from mlx_lm import stream_generate

    def generate(prompt: list[int], max_tokens: int) -> Iterator[int]:
        # The last response carries the final token (the EOS or the max_tokens-th) once.
        for response in stream_generate(model, tokenizer, prompt, max_tokens=max_tokens):
            yield response.token

    return Peer(MLX_LM, generate)


def llama_cpp_peers(gguf: Path, *, threads: int, n_ctx: int, eos: frozenset[int]) -> list[Peer]:
    """llama-cpp-python's plain and prompt-lookup generation on `gguf`, `threads` like ours.

    Two `Llama` objects: prompt lookup makes the library keep logits for every position
    (`logits_all`), which plain generation does not need. Greedy is `temp=0`; generation stops
    at the same EOS ids as our engine.
    """
    from llama_cpp import Llama
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    def load(**extra) -> Llama:
        return Llama(model_path=str(gguf), n_ctx=n_ctx, n_threads=threads, verbose=False, **extra)

    def peer(name: str, llm: Llama) -> Peer:
        def generate(prompt: list[int], max_tokens: int) -> Iterator[int]:
            tokens = llm.generate(prompt, temp=0.0, top_k=1, top_p=1.0, min_p=0.0, reset=True)
            for n, token in enumerate(tokens, 1):
                yield token
                if token in eos or n >= max_tokens:
                    return

        return Peer(name, generate)

    return [
        peer(LLAMA_CPP, load()),
        peer(LLAMA_CPP_LOOKUP, load(draft_model=LlamaPromptLookupDecoding())),
    ]


def time_peer(peer: Peer, prompt: list[int], max_tokens: int) -> dict:
    """Token ids and statistics shaped like our runs' (decode tokens/s excludes the prefill)."""
    start = time.perf_counter()
    ids, stamps = [], []
    for token in peer.generate(prompt, max_tokens):
        ids.append(int(token))
        stamps.append(time.perf_counter())
    decode_s = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    return {
        "ids": ids,
        "stats": {
            "prefill_seconds": stamps[0] - start if stamps else 0.0,
            "generated_tokens": len(ids),
            "decode_tokens": len(ids) - 1,
            "decode_seconds": decode_s,
            "tokens_per_second": (len(ids) - 1) / decode_s if decode_s else 0.0,
        },
    }
