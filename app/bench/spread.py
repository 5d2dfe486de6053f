"""How far a `bench ab` ratio can be trusted: a bootstrap interval, and when to stop measuring.

A ratio there is the median over excerpts of each excerpt's ratio of medians over rounds
(`ratio`). Its spread comes from two places: which excerpts were chosen, and the noise of each
timed run. So the interval resamples both (`interval`): excerpts with replacement, then, within
each drawn excerpt, rounds with replacement. A round's two numbers (this side and REF, or a
side's speculative run and its plain one) ran next to each other in time, so they are drawn
together: drift that hit both cancels in the resample as it does in the measure. Seeded, so the
same runs give the same report.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
LEVEL = 0.90  # the interval's coverage
SEED = 49


@dataclass(frozen=True)
class Spread:
    """A ratio, its 90% bootstrap interval, and how many excerpts and rounds it rests on."""

    ratio: float
    low: float
    high: float
    excerpts: int
    rounds: int

    @property
    def half(self) -> float:
        """The interval's half-width as a share of the ratio (0.03: ±3%)."""
        return (self.high - self.low) / 2 / self.ratio


def ratio(top: np.ndarray, bottom: np.ndarray) -> float:
    """Median over excerpts (rows) of median(top's rounds) / median(bottom's rounds)."""
    return float(_ratios(top[None], bottom[None])[0])


def interval(
    top, bottom, seed: int = SEED, resamples: int = RESAMPLES, level: float = LEVEL
) -> Spread | None:
    """`ratio(top, bottom)` with its bootstrap interval; None where no excerpt has a ratio.

    `top` and `bottom` are (excerpts, rounds) arrays, NaN where a run gave no number; row i,
    column r of both ran in the same round.
    """
    top, bottom = _rows_with_ratios(np.asarray(top, float), np.asarray(bottom, float))
    if not len(top):
        return None
    n, rounds = top.shape
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n, (resamples, n))[..., None]
    cols = rng.integers(0, rounds, (resamples, n, rounds))
    draws = _ratios(top[rows, cols], bottom[rows, cols])
    tail = (1 - level) / 2 * 100
    low, high = np.nanpercentile(draws, [tail, 100 - tail])
    return Spread(ratio(top, bottom), float(low), float(high), n, rounds)


def _ratios(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """Per resample (first axis): the median over excerpts of their ratios of medians."""
    with warnings.catch_warnings():  # a resample of a row's NaN rounds only: no ratio there
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmedian(np.nanmedian(top, axis=-1) / np.nanmedian(bottom, axis=-1), axis=-1)


def _rows_with_ratios(top: np.ndarray, bottom: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The excerpts where both sides have a positive number in some round."""
    keep = [
        bool(np.any(t > 0) and np.any(b > 0)) for t, b in zip(top, bottom, strict=True)
    ]  # NaN > 0 is False
    return top[keep], bottom[keep]
