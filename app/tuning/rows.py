"""Training rows in the drafter's own tokens: the prompt's tail, then the target's continuation.

The drafter reads the prompt in its own terms (`Vocab.encode_prompt`, as the cross-tokenizer
drafter does) and the generated text spelled byte for byte in its vocabulary (`spell`, the same
encoding the drafter's resync falls back to), so a row is what the drafter holds when it drafts
the continuation. The loss covers the continuation's tokens only: the target's choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.tuning.data import Example
from decoder.drafting.translator import Vocab, spell


@dataclass(frozen=True)
class Row:
    ids: list[int]
    scored: int  # the last `scored` ids are the continuation (the loss is on predicting them)
    below: Any = field(default=None, compare=False, repr=False)  # train.keep_frozen


def make_row(vocab: Vocab, example: Example, max_tokens: int) -> Row | None:
    """One example as a row of at most `max_tokens` (the prompt is cut from the left)."""
    continuation = spell(vocab, example.continuation.encode("utf-8"))
    continuation = continuation[: max_tokens // 2]
    if not continuation:
        return None
    prompt = vocab.encode_prompt(example.prompt)
    room = max_tokens - len(continuation)
    return Row(prompt[-room:] + continuation, len(continuation))


def make_rows(tokenizer, examples: list[Example], max_tokens: int) -> dict[str, list[Row]]:
    """Rows by task."""
    vocab = Vocab(tokenizer)
    out: dict[str, list[Row]] = {}
    for example in examples:
        row = make_row(vocab, example, max_tokens)
        if row is not None:
            out.setdefault(example.task, []).append(row)
    return out


def batch(rows: list[Row]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(inputs, targets, mask) padded to the longest row; mask marks the scored targets."""
    width = max(len(r.ids) for r in rows) - 1
    inputs = np.zeros((len(rows), width), np.int32)
    targets = np.zeros((len(rows), width), np.int32)
    mask = np.zeros((len(rows), width), np.float32)
    for i, row in enumerate(rows):
        n = len(row.ids) - 1
        inputs[i, :n] = row.ids[:-1]
        targets[i, :n] = row.ids[1:]
        mask[i, n - row.scored : n] = 1.0
    return inputs, targets, mask
