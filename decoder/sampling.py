"""Greedy and temperature/top-p choice of tokens, with the distributions verification needs.

mlx-lm's samplers return only a token; lossless speculative sampling also needs the
probabilities behind it, so we build the same distribution mlx-lm's `make_sampler` samples
from (top-p on the log-probabilities, then temperature) and sample from it ourselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import mlx.core as mx
from mlx_lm.sample_utils import apply_top_p


@dataclass(frozen=True)
class Sampling:
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.temperature < 0 or not 0 < self.top_p <= 1:
            raise ValueError("temperature must be >= 0 and top_p in (0, 1]")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


GREEDY = Sampling()


def probabilities(logits: mx.array, sampling: Sampling) -> mx.array:
    """Row-wise distribution that `sampling` draws from (rows: positions)."""
    logprobs = logits.astype(mx.float32)
    logprobs = logprobs - mx.logsumexp(logprobs, axis=-1, keepdims=True)
    if sampling.top_p < 1:
        logprobs = apply_top_p(logprobs, sampling.top_p)
    return mx.softmax(logprobs / sampling.temperature, axis=-1)


def choose(logits: mx.array, sampling: Sampling, key: mx.array | None = None) -> mx.array:
    """One token per row: the argmax, or a draw from `probabilities`."""
    if sampling.greedy:
        return mx.argmax(logits, axis=-1)
    return draw(probabilities(logits, sampling), key)


def draw(probs: mx.array, key: mx.array | None) -> mx.array:
    return mx.random.categorical(mx.log(probs), axis=-1, key=key)


class Keys:
    """A reproducible stream of PRNG keys (one per draw) from the run's seed."""

    def __init__(self, seed: int | None):
        self._key = mx.random.key(seed) if seed is not None else None

    def next(self) -> mx.array | None:
        if self._key is None:
            return None
        self._key, sub = mx.random.split(self._key)
        return sub
