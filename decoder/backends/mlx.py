"""MLX: one model with a rewindable KV cache, keyed by the exact token ids it has consumed.

Both the target and a model drafter use it. Because the cache is keyed by ids, a new request
whose ids share a prefix with the previous one (the next keystroke, the next cycle) only feeds
what is new: this is the prefix cache across keystrokes and the drafter's resync in one place.

The caches rewind exactly, for every layer type the engine speculates on. Speculative decoding feeds drafted tokens and then removes the rejected ones. mlx-lm's
RotatingKVCache (Gemma-3's sliding-window layers) refuses to trim once the context is longer
than its window, because it has already overwritten the keys it would need. We give such
layers a plain KVCache instead: mlx-lm builds their mask with `window_size`, so attention
still sees exactly the last `window` positions, and trimming stays exact at any length. The
price is memory linear in the context, which the callers bound by trimming the prompt.
"""

from __future__ import annotations

import mlx.core as mx
from mlx_lm.models.cache import KVCache, RotatingKVCache, can_trim_prompt_cache, make_prompt_cache

PREFILL_CHUNK = 512


def make_cache(model) -> list:
    """A per-layer cache list for `model` in which every layer can be trimmed."""
    cache = make_prompt_cache(model)
    return [KVCache() if isinstance(c, RotatingKVCache) else c for c in cache]


def can_rewind(cache: list) -> bool:
    """False for models with recurrent state (SSM layers), which cannot speculate."""
    return can_trim_prompt_cache(cache)


def rewind(cache: list, n: int) -> None:
    """Drop the last `n` positions from every layer; exact, so callers may rely on it."""
    if n <= 0:
        return
    for c in cache:
        if c.offset < n:
            raise ValueError(f"cannot rewind {n} positions: layer holds {c.offset}")
        c.trim(n)


def cache_length(cache: list) -> int:
    return cache[0].offset if cache else 0


class ModelRunner:
    def __init__(self, model):
        self.model = model
        self.cache = make_cache(model)
        self.ids: list[int] = []  # exactly the ids whose keys and values are in the cache
        self.prefilled = 0  # ids fed by the last `sync` (for prefix-cache statistics)

    @property
    def can_rewind(self) -> bool:
        return can_rewind(self.cache)

    def forward(self, ids: list[int]) -> mx.array:
        """Feed `ids` after what the cache holds; logits (len(ids), vocab)."""
        logits = self.model(mx.array(ids)[None], cache=self.cache)[0]
        self.ids.extend(ids)
        return logits

    def rewind(self, n: int) -> None:
        if n > 0:
            rewind(self.cache, n)
            del self.ids[-n:]

    def sync(self, ids: list[int]) -> mx.array:
        """Make the cache hold `ids` and return the logits after the last one.

        Keeps the longest common prefix with what is cached, rewinds the rest, and feeds the
        new tail in chunks. At least the last id is fed again, since its logits are needed.
        """
        if not ids:
            raise ValueError("cannot run a model on an empty prompt")
        common = 0
        for a, b in zip(self.ids, ids):
            if a != b:
                break
            common += 1
        common = min(common, len(ids) - 1)
        if not self.can_rewind and common < len(self.ids):
            self.cache, self.ids, common = make_cache(self.model), [], 0
        self.rewind(len(self.ids) - common)
        tail = ids[common:]
        self.prefilled = len(tail)
        for start in range(0, len(tail) - 1, PREFILL_CHUNK):
            chunk = tail[start : min(start + PREFILL_CHUNK, len(tail) - 1)]
            self.forward(chunk)
            mx.eval([c.state for c in self.cache])
        return self.forward(tail[-1:])[-1]

    def reset(self) -> None:
        self.cache, self.ids = make_cache(self.model), []
