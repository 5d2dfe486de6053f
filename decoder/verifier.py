"""Verification: how many drafted tokens the target accepts, and the token it adds.

Greedy: accept while the draft equals the target's argmax, so the output is exactly plain
greedy decoding. Sampling stays lossless: with the drafter's distribution, standard speculative
rejection sampling (Leviathan et al., 2023; Chen et al., 2023); without it (lookup drafts, or
drafts translated from another vocabulary), accept a token iff it equals the target's own draw
at that position, which leaves the target's distribution untouched.
"""

from __future__ import annotations

import mlx.core as mx

from decoder.drafting.drafter import Draft
from decoder.sampling import Keys, Sampling, draw, probabilities


def accept(logits: mx.array, draft: Draft, sampling: Sampling, keys: Keys) -> tuple[int, int]:
    """(number of drafted tokens accepted, the target's next token after them).

    `logits` has one row per drafted token plus one: row i predicts the token after the
    context and the first i drafted tokens.
    """
    if sampling.greedy:
        return _first_mismatch(draft.ids, mx.argmax(logits, axis=-1).tolist())
    p = probabilities(logits, sampling)
    if draft.probs is None:
        return _first_mismatch(draft.ids, draw(p, keys.next()).tolist())
    return _rejection_sample(p, draft, keys)


def _first_mismatch(draft: list[int], target: list[int]) -> tuple[int, int]:
    n = 0
    while n < len(draft) and draft[n] == target[n]:
        n += 1
    return n, target[n]


def _rejection_sample(p: mx.array, draft: Draft, keys: Keys) -> tuple[int, int]:
    q = draft.probs
    ids = mx.array(draft.ids)
    rows = mx.arange(len(draft.ids))
    ratio = p[rows, ids] / mx.maximum(q[rows, ids], 1e-20)
    u = mx.random.uniform(shape=(len(draft.ids),), key=keys.next())
    ok = (u < ratio).tolist()
    n = next((i for i, good in enumerate(ok) if not good), len(ok))
    if n == len(ok):
        return n, draw(p[n], keys.next()).item()
    residual = mx.maximum(p[n] - q[n], 0.0)
    total = residual.sum()
    # p == q at this row makes the residual empty; any draw from p is then exact.
    dist = mx.where(total > 0, residual / mx.maximum(total, 1e-20), p[n])
    return n, draw(dist, keys.next()).item()
