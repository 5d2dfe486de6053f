"""KV caches that rewind exactly, for every layer type the engine speculates on.

Speculative decoding feeds drafted tokens and then removes the rejected ones. mlx-lm's
RotatingKVCache (Gemma-3's sliding-window layers) refuses to trim once the context is longer
than its window, because it has already overwritten the keys it would need. We give such
layers a plain KVCache instead: mlx-lm builds their mask with `window_size`, so attention
still sees exactly the last `window` positions, and trimming stays exact at any length. The
price is memory linear in the context, which the callers bound by trimming the prompt.
"""

from __future__ import annotations

from mlx_lm.models.cache import KVCache, RotatingKVCache, can_trim_prompt_cache, make_prompt_cache


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
