"""Verification: how many drafted tokens the target accepts, and the token it adds.

Greedy: accept while the draft equals the target's argmax, so the output is exactly plain
greedy decoding. Sampling stays lossless: with the drafter's distribution, standard speculative
rejection sampling (Leviathan et al., 2023; Chen et al., 2023); without it (lookup drafts, or
drafts translated from another vocabulary), accept a token iff it equals the target's own draw
at that position, which leaves the target's distribution untouched.
"""

from __future__ import annotations

import numpy as np

from decoder.backends.base import common_prefix
from decoder.drafting.drafter import Draft
from decoder.sampling import Keys, Sampling, draw, probabilities


def accept(logits, draft: Draft, sampling: Sampling, keys: Keys) -> tuple[int, int]:
    """(number of drafted tokens accepted, the target's next token after them).

    `logits` has one row per drafted token plus one: row i predicts the token after the
    context and the first i drafted tokens.
    """
    if sampling.greedy:
        return _first_mismatch(draft.ids, np.argmax(np.asarray(logits), axis=-1).tolist())
    p = probabilities(logits, sampling)
    if draft.probs is None:
        return _first_mismatch(draft.ids, draw(p, keys.next()).tolist())
    return _rejection_sample(p, draft, keys)


def _first_mismatch(draft: list[int], target: list[int]) -> tuple[int, int]:
    n = common_prefix(draft, target)
    return n, target[n]


def fit_width(q: np.ndarray, width: int) -> np.ndarray:
    """The drafter's distribution over the target's logit width.

    A drafter with the same tokenizer may have a narrower (unpadded) or wider output; ids it
    cannot emit get probability 0.
    """
    q = np.asarray(q, dtype=np.float32)
    if q.shape[-1] >= width:
        return q[..., :width]
    return np.pad(q, [(0, 0)] * (q.ndim - 1) + [(0, width - q.shape[-1])])


def _rejection_sample(p: np.ndarray, draft: Draft, keys: Keys) -> tuple[int, int]:
    q = fit_width(draft.probs, p.shape[-1])
    ids = np.array(draft.ids)
    rows = np.arange(len(draft.ids))
    ratio = p[rows, ids] / np.maximum(q[rows, ids], 1e-20)
    rng = keys.next() or np.random.default_rng()
    ok = (rng.random(len(draft.ids)) < ratio).tolist()
    n = next((i for i, good in enumerate(ok) if not good), len(ok))
    if n == len(ok):
        return n, int(draw(p[n], keys.next()))
    residual = np.maximum(p[n] - q[n], 0.0)
    total = residual.sum()
    # p == q at this row makes the residual empty; any draw from p is then exact.
    dist = residual / total if total > 0 else p[n]
    return n, int(draw(dist, keys.next()))
