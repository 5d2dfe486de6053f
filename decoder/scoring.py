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
