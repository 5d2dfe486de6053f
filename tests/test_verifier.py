"""Lossless sampling: what verification emits is distributed exactly as the target's sampling."""

from __future__ import annotations

import numpy as np

from decoder.drafting.drafter import Draft
from decoder.sampling import Keys, Sampling, draw, probabilities
from decoder.verifier import accept

V = 6


def first_token_histogram(logits, draft_of, sampling, trials=4000):
    keys = Keys(0)
    counts = np.zeros(V)
    for _ in range(trials):
        draft = draft_of(keys)
        n, nxt = accept(logits, draft, sampling, keys)
        counts[draft.ids[0] if n > 0 else nxt] += 1
    return counts / trials


def test_rejection_sampling_preserves_target_distribution():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, V)) * 2
    q_logits = rng.normal(size=(2, V)) * 2
    sampling = Sampling(temperature=1.0)
    p = np.array(probabilities(logits, sampling)[0])
    q = probabilities(q_logits, sampling)

    def draft_of(keys):
        ids = draw(q, keys.next()).tolist()
        return Draft(ids, q)

    freq = first_token_histogram(logits, draft_of, sampling)
    assert np.abs(freq - p).max() < 0.03


def test_equality_acceptance_preserves_target_distribution():
    """A draft without probabilities (lookup, translated) is accepted iff it equals the draw."""
    logits = np.random.default_rng(1).normal(size=(2, V)) * 2
    sampling = Sampling(temperature=0.7, top_p=0.9)
    p = np.array(probabilities(logits, sampling)[0])
    freq = first_token_histogram(logits, lambda keys: Draft([2]), sampling)
    assert np.abs(freq - p).max() < 0.03
    assert p.min() == 0.0  # top-p really removed the tail, and the tail is never emitted
    assert freq[p == 0].sum() == 0


def test_greedy_accepts_the_longest_agreeing_prefix():
    logits = np.eye(V, dtype=np.float32)[[1, 2, 4, 5]]
    assert accept(logits, Draft([1, 2, 3]), Sampling(), Keys(None)) == (2, 4)
    assert accept(logits, Draft([1, 2, 4]), Sampling(), Keys(None)) == (3, 5)
    assert accept(logits[:1], Draft([]), Sampling(), Keys(None)) == (0, 1)


def test_drafter_narrower_than_the_target_logits_is_padded():
    """A drafter narrower than the target's padded logits keeps rejection sampling exact.

    Qwen-style: the drafter sees the real vocabulary (151,665 ids), the target's logits are
    padded (151,936 columns).
    """
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(2, V + 3)) * 2
    logits[:, V:] = -1e9  # padding columns are never likely
    sampling = Sampling(temperature=1.0)
    p = probabilities(logits, sampling)[0]
    q = probabilities(rng.normal(size=(1, V)) * 2, sampling)

    def draft_of(keys):
        return Draft(draw(q, keys.next()).tolist(), q)

    keys = Keys(0)
    counts = np.zeros(V + 3)
    for _ in range(4000):
        draft = draft_of(keys)
        n, nxt = accept(logits, draft, sampling, keys)
        counts[draft.ids[0] if n > 0 else nxt] += 1
    assert np.abs(counts / 4000 - p).max() < 0.03
