"""How likely each of several continuations is after a shared prefix: a model reads a sentence.

The spelling checker (polish/spelling.py) asks which correction fits a sentence best: the text
before the word is the prefix, each candidate with the rest of the sentence a continuation.
All continuations are tokenized with the prefix (so the boundary splits as the model would),
the ids they share are fed once, and each continuation's own ids are fed in one pass after
them and rewound: the log-probabilities compare whole sentences, since what they share adds
the same amount to each. Works on any Backend (llama.cpp, MLX, OpenVINO); an inference server
answers the same question through the OpenAI `echo` + `logprobs` API (decoder/remote.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from decoder.backends.base import Backend, common_prefix

SCORING_KEY = "bielik-spelling"  # the prefix cache the scoring runs on (documents keep theirs)


class Cancelled(Exception):
    """`should_stop` turned true between two continuations."""


def log_softmax_at(logits: np.ndarray, ids: list[int]) -> float:
    """Sum over rows of log p(ids[row]) under each row of `logits` (rows, vocab)."""
    peak = logits.max(axis=1, keepdims=True)
    norm = np.log(np.exp(logits - peak).sum(axis=1, dtype=np.float64)) + peak[:, 0]
    return float((logits[np.arange(len(ids)), ids] - norm).sum())


def score(
    backend: Backend,
    prefix: str,
    continuations: list[str],
    should_stop: Callable[[], bool] | None = None,
) -> list[float]:
    """Log-probability of each continuation after `prefix`, in nats, on `backend`.

    Runs on the prefix cache SCORING_KEY: a document's own cache is left as it was.
    Raises Cancelled when `should_stop()` turns true between continuations.
    """
    if not continuations:
        return []
    encoded = [backend.tokenizer.encode(prefix + c) for c in continuations]
    shared = min(common_prefix(encoded[0], ids) for ids in encoded)
    shared = max(1, min(shared, *(len(ids) - 1 for ids in encoded)))
    backend.select(SCORING_KEY)
    first = backend.sync(encoded[0][:shared])  # logits for the first id after what is shared
    out = []
    for ids in encoded:
        if should_stop is not None and should_stop():
            raise Cancelled()
        tail = ids[shared:]
        total = log_softmax_at(first[None, :], tail[:1])
        if len(tail) > 1:
            rows = backend.forward(tail[:-1])
            backend.rewind(len(tail) - 1)
            total += log_softmax_at(rows, tail[1:])
        out.append(total)
    return out


# An edit of a text for `compare`: the model reads text[left:right], with text[start:end]
# replaced by each option in turn (left <= start <= end <= right).
Edit = tuple[int, int, int, int, tuple[str, ...]]


def _logprobs(rows: np.ndarray) -> np.ndarray:
    """Log-softmax of each row (rows, vocab), in float64 where it is summed."""
    peak = rows.max(axis=1, keepdims=True)
    return rows - (np.log(np.exp(rows - peak).sum(axis=1, dtype=np.float64))[:, None] + peak)


def compare(
    backend: Backend,
    text: str,
    edits: list[Edit],
    floor: float | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[list[float | None]]:
    """For each edit, how much likelier (nats) its window reads with each option in place.

    One pass reads the original window from where the options part from it (the sentence
    before is the cached prefix, kept between edits of one sentence); each option then costs
    one pass over its own tokens after the first one that differs, the options taken from the
    one that parts latest to the earliest, so the cache is only ever rewound. An option whose
    best case cannot reach `floor` is not read: its first differing token (its probability is
    in the original's pass) with every later token certain would still lose by more than
    `floor`; its gain is None. Raises Cancelled when `should_stop()` turns true between passes.
    """
    backend.select(SCORING_KEY)
    out = []
    for left, start, end, right, options in edits:
        if should_stop is not None and should_stop():
            raise Cancelled()
        encode = backend.tokenizer.encode
        orig = encode(text[left:right])
        variants = [encode(text[left:start] + o + text[end:right]) for o in options]
        shared = max(1, min(common_prefix(orig, v) for v in [orig[:-1], *variants]))
        first = backend.sync(orig[:shared], should_stop)
        rows = np.concatenate([first[None, :], backend.forward(orig[shared:])])
        logp = _logprobs(rows)  # logp[k]: after orig[:shared + k]
        token_lp = logp[np.arange(len(orig) - shared), orig[shared:]]
        gains: list[float | None] = [None] * len(variants)
        order = sorted(range(len(variants)), key=lambda i: -common_prefix(orig, variants[i]))
        for i in order:
            v = variants[i]
            d = max(shared, common_prefix(orig, v))
            if d >= len(v):
                continue  # the option is a prefix of the original: nothing to read
            rest = float(token_lp[d - shared :].sum())
            head = float(logp[d - shared, v[d]])
            if floor is not None and head - rest < floor:
                continue
            if should_stop is not None and should_stop():
                raise Cancelled()
            backend.rewind(len(backend.ids) - d)
            total = head
            if len(v) - d > 1:
                own = _logprobs(backend.forward(v[d:-1]))
                total += float(own[np.arange(len(v) - d - 1), v[d + 1 :]].sum())
                backend.rewind(len(v) - d - 1)
            gains[i] = total - rest
        out.append(gains)
    return out


def compare_by_score(
    score_fn: Callable[[str, list[str]], list[float] | None], text: str, edits: list[Edit]
) -> list[list[float | None]] | None:
    """`compare` through a `score(prefix, continuations)` (an inference server): no pruning."""
    out = []
    for left, start, end, right, options in edits:
        after = text[end:right]
        found = score_fn(text[left:start], [text[start:end] + after, *(o + after for o in options)])
        if found is None:
            return None
        out.append([lp - found[0] for lp in found[1:]])
    return out
