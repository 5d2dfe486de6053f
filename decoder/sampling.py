"""Greedy and temperature/top-p choice of tokens, with the distributions verification needs.

Samplers of inference libraries return only a token; lossless speculative sampling also needs
the probabilities behind it, so we build the distribution mlx-lm's `make_sampler` samples from
(top-p on the log-probabilities, then temperature) on numpy and sample from it ourselves. Numpy
keeps the decoding core free of any inference library: every backend hands back numpy logits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


def _log_softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def apply_top_p(logprobs: np.ndarray, top_p: float) -> np.ndarray:
    """mlx-lm's top-p: drop the least likely tokens whose mass stays below 1 - top_p."""
    ordered = np.sort(logprobs, axis=-1)
    probs = np.exp(ordered)
    above = np.cumsum(probs[..., ::-1], axis=-1)[..., ::-1] - probs  # mass strictly above
    total = above[..., :1] + probs[..., :1]
    dropped = (above >= top_p * total).sum(axis=-1, keepdims=True)
    threshold = np.take_along_axis(ordered, np.minimum(dropped, ordered.shape[-1] - 1), axis=-1)
    return np.where(logprobs < threshold, -np.inf, logprobs)


def probabilities(logits, sampling: Sampling) -> np.ndarray:
    """Row-wise distribution that `sampling` draws from (rows: positions)."""
    logprobs = _log_softmax(np.asarray(logits, dtype=np.float32))
    if sampling.top_p < 1:
        logprobs = apply_top_p(logprobs, sampling.top_p)
    return np.exp(_log_softmax(logprobs / sampling.temperature))


def choose(logits, sampling: Sampling, key: np.random.Generator | None = None) -> np.ndarray:
    """One token per row: the argmax, or a draw from `probabilities`."""
    if sampling.greedy:
        return np.argmax(np.asarray(logits), axis=-1)
    return draw(probabilities(logits, sampling), key)


def draw(probs: np.ndarray, key: np.random.Generator | None) -> np.ndarray:
    """One index per row of `probs` (rows sum to 1), by inverse CDF."""
    rng = key if key is not None else np.random.default_rng()
    cdf = np.cumsum(np.asarray(probs, dtype=np.float64), axis=-1)
    u = rng.random(cdf.shape[:-1] + (1,)) * cdf[..., -1:]
    return np.minimum((cdf <= u).sum(axis=-1), cdf.shape[-1] - 1)


class Keys:
    """A reproducible stream of random generators (one per draw) from the run's seed."""

    def __init__(self, seed: int | None):
        self._seq = np.random.SeedSequence(seed) if seed is not None else None

    def next(self) -> np.random.Generator | None:
        if self._seq is None:
            return None
        return np.random.default_rng(self._seq.spawn(1)[0])
