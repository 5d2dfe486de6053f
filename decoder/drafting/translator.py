"""Translating a draft from the drafter's vocabulary into the target's, through exact bytes.

Four modes, selectable by name so they can be compared:
  none      the drafter's ids passed through unchanged (meaningful only for a shared vocabulary)
  naive     encode(decode(draft)) with no context (Universal Assisted Generation's simplest form)
  context   decode(last p target ids) + decode(draft), re-encoded, sliced by the prefix's length
            (p=5, as published)
  anchored  ours: re-encode the committed tail from a checked anchor plus the draft's bytes, keep
            the tokens that begin exactly at the committed boundary (byte offsets, never counts),
            hold back only what can still change: incomplete UTF-8, and the final token when
            the word it ends may still grow (whitespace, or Morfeusz 2 says a suffix or clitic
            can follow).

Everything is a function of a `Vocab` (a tokenizer seen as bytes) and token ids; no model here.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import accumulate

import numpy as np

from decoder.compat.mlx_lm import hf_tokenizer
from decoder.drafting.drafter import TRANSLATIONS
from decoder.vocab import Beginnings, ids_to_bytes, special_ids, token_bytes
from polish.boundary import merge_risk, safe_to_cut

CONTEXT_TOKENS = 5  # p of the `context` mode, as published
ANCHOR_MIN = 2  # committed tokens kept between the anchor and the boundary, as left context
ANCHOR_MAX = 16  # how far back an anchor is looked for


class Vocab:
    """A tokenizer as bytes: what each id spells, and an encoder that spells exactly its input."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.hf = hf_tokenizer(tokenizer)
        self.table = token_bytes(tokenizer)
        self.special = special_ids(tokenizer)
        self.size = len(self.table)
        self.byte_id: dict[int, int] = {}
        for i, piece in enumerate(self.table):
            if len(piece) == 1 and i not in self.special:
                self.byte_id.setdefault(piece[0], i)
        self._encode = lru_cache(maxsize=4096)(self._encode_text)
        self.beginnings = Beginnings(self.table, self.special)

    def extending(self, head: bytes, logits: np.ndarray) -> np.ndarray:
        """`logits` with every token that does not begin with `head` (nor is special) ruled out."""
        if not head:
            return logits
        out = np.full_like(logits, -np.inf)
        allowed = self.beginnings.ids(head)
        out[allowed] = logits[allowed]
        return out

    def bytes(self, ids) -> bytes:
        return ids_to_bytes(self.table, ids)

    def encode_prompt(self, text: str) -> list[int]:
        """The prompt in this tokenizer's own terms (its own BOS, its own leading-space rule)."""
        return list(self.tokenizer.encode(text))

    def _encode_text(self, text: str) -> tuple[tuple[int, ...], int] | None:
        """(ids, lead): ids spell `lead` extra leading bytes (a dummy-prefix space) then `text`."""
        ids = tuple(self.hf(text, add_special_tokens=False, split_special_tokens=True)["input_ids"])
        spelled, want = self.bytes(ids), text.encode("utf-8")
        lead = len(spelled) - len(want)
        if lead < 0 or spelled[lead:] != want or any(i in self.special for i in ids):
            return None  # a normalizer changed the text: no exact spelling this way
        return ids, lead

    def tokenize(self, data: bytes) -> tuple[list[int], list[int]] | None:
        """Ids spelling exactly `data`, with each token's start offset in `data`.

        Valid UTF-8 runs go through the tokenizer; bytes that are not (a character cut by a
        byte-level token, random bytes) become single-byte tokens. The first token may start
        before 0 when the tokenizer prepends a space. None when no exact spelling exists.
        """
        ids: list[int] = []
        pos = 0
        while pos < len(data):
            try:
                data[pos:].decode("utf-8")
                end = len(data)
            except UnicodeDecodeError as e:
                end = pos + e.start
            if end > pos:
                got = self._encode(data[pos:end].decode("utf-8"))
                if got is None or (got[1] and ids):  # no exact encoding here: spell it bytewise
                    if any(b not in self.byte_id for b in data[pos:end]):
                        return None
                    got = ([self.byte_id[b] for b in data[pos:end]], 0)
                ids.extend(got[0])
                pos = end
            if end < len(data):
                if data[end] not in self.byte_id:
                    return None
                ids.append(self.byte_id[data[end]])
                pos = end + 1
        lead = len(self.bytes(ids)) - len(data)
        starts = [s - lead for s in accumulate((len(self.table[i]) for i in ids), initial=0)]
        return ids, starts[:-1]


def spell(vocab: Vocab, data: bytes) -> list[int]:
    """Ids for `data`: exact when the vocabulary allows, else the tokenizer's closest reading.

    How the cross-tokenizer drafter re-spells text it did not draft, and how the drafter's
    tuning (app/tuning) spells the target's text, so both see the same tokens.
    """
    got = vocab.tokenize(data)
    if got is not None and got[1][:1] in ([], [0]):
        return got[0]
    if all(b in vocab.byte_id for b in data):
        return [vocab.byte_id[b] for b in data]
    text = data.decode("utf-8", "replace")
    return list(vocab.hf(text, add_special_tokens=False)["input_ids"])


def split(vocab: Vocab, parts: list[bytes]) -> list[list[int]] | None:
    """Tokenize the joined `parts` and cut the ids at the junctions between them.

    None unless a token boundary falls at every junction: that is how an anchor is checked
    (the tokenizer does not merge across it), not assumed.
    """
    got = vocab.tokenize(b"".join(parts))
    if got is None:
        return None
    ids, starts = got
    where = {s: i for i, s in enumerate(starts)} | {sum(map(len, parts)): len(ids)}
    cuts = [0]
    for offset in accumulate(map(len, parts[:-1])):
        if offset not in where:
            return None
        cuts.append(where[offset])
    cuts.append(len(ids))
    return [ids[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]


def anchor(vocab: Vocab, ids: list[int], end: int, floor: int = 0) -> int:
    """An index in ids[floor:end] where tokenization may restart.

    ANCHOR_MIN or more tokens before `end`, after any special token, and no merge risk between
    the tokens around it. This is a candidate; callers confirm it by encoding (`split` finds a
    boundary there).
    """
    lo = max(floor, end - ANCHOR_MAX)
    for i in range(end - 1, lo, -1):
        if ids[i - 1] in vocab.special:
            return i
        if i > end - ANCHOR_MIN:
            continue
        left = vocab.table[ids[i - 1]].decode("utf-8", "replace")
        right = vocab.table[ids[i]].decode("utf-8", "replace")
        if not merge_risk(left, right):
            return i
    return lo


def complete_utf8(data: bytes) -> bytes:
    """`data` without a trailing incomplete UTF-8 character (it may complete differently)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:  # a lead byte: is its character complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= need else data[:-back]
    return data


def may_grow(vocab: Vocab, text: bytes, last: int) -> bool:
    r"""The draft's last token (ending `text`) may be part of a longer token in the true text.

    Whitespace joins what follows ("▁" + word, "\\n" + "\\n"); otherwise the token is kept only
    when the Polish fragment it ends is a complete word form that nothing written without a
    space can extend (polish/boundary).
    """
    piece = vocab.table[last]
    if not piece or piece[-1:].isspace():
        return True
    return not safe_to_cut(text.decode("utf-8", "ignore"))


def stable(vocab: Vocab, left: bytes, ids: list[int]) -> list[int]:
    """The ids that cannot change as the text goes on: all but a final token that may grow.

    Every token that ends before the draft's last boundary is verified; a wrong split inside
    the last word ("▁oc" + "zym" where the truth is "▁ocz" + "yma") costs one verified
    position, while holding the whole word back would cost every token in it.
    """
    if ids and may_grow(vocab, left + vocab.bytes(ids), ids[-1]):
        return ids[:-1]
    return ids


def restart(vocab: Vocab, data: bytes) -> list[list[int]] | None:
    """`data` tokenized as the continuation of a token that ends mid-word.

    With no space prepended (SentencePiece's dummy prefix would make "a" into "▁a"), so after a
    newline, which never merges with what follows it.
    """
    return split(vocab, [b"", data]) or split(vocab, [b"\n", data])


def anchored(target: Vocab, committed: list[int], draft: bytes, limit: int) -> list[int]:
    """Target ids for `draft` (bytes following the committed ids), at most `limit` of them.

    The committed tail from an anchor is re-encoded with the draft, so the tokens at the
    boundary are split as the target's tokenizer would split the whole text; one token before
    the anchor goes along to confirm that no token spans the anchor.
    """
    n = start = len(committed)
    for _ in range(3):
        start = anchor(target, committed, start)
        check, tail = target.bytes(committed[start - 1 : start]), target.bytes(committed[start:])
        text = complete_utf8(tail + draft)
        if len(text) <= len(tail):
            return []
        parts = split(target, [check, tail, text[len(tail) :]])
        if parts is not None or start <= 1:
            break
    if parts is None:  # no boundary at the committed end: the target went on mid-word there
        parts = restart(target, text[len(tail) :])
        if parts is None:
            return []
    return stable(target, target.bytes(committed[max(0, n - 8) :]), parts[-1])[:limit]


def none(target: Vocab, draft_ids: list[int], limit: int) -> list[int]:
    """The ids as they are, up to the first one the target lacks or treats as special."""
    out = []
    for i in draft_ids[:limit]:
        if i >= target.size or i in target.special:
            break
        out.append(i)
    return out


def naive(target: Vocab, drafter: Vocab, draft_ids: list[int], limit: int) -> list[int]:
    text = drafter.hf.decode(draft_ids, skip_special_tokens=True)
    return none(target, target.hf.encode(text, add_special_tokens=False), limit)


def context(
    target: Vocab,
    drafter: Vocab,
    committed: list[int],
    draft_ids: list[int],
    limit: int,
    p: int = CONTEXT_TOKENS,
) -> list[int]:
    prefix = target.hf.decode(committed[-p:], skip_special_tokens=True)
    text = prefix + drafter.hf.decode(draft_ids, skip_special_tokens=True)
    skip = len(target.hf.encode(prefix, add_special_tokens=False))
    return none(target, target.hf.encode(text, add_special_tokens=False)[skip:], limit)


def translate(
    mode: str,
    target: Vocab,
    drafter: Vocab,
    committed: list[int],
    draft_ids: list[int],
    draft_bytes: bytes,
    limit: int,
) -> list[int]:
    """Target ids for a draft, by the named mode."""
    if mode == "anchored":
        return anchored(target, committed, draft_bytes, limit)
    if mode == "context":
        return context(target, drafter, committed, draft_ids, limit)
    if mode == "naive":
        return naive(target, drafter, draft_ids, limit)
    if mode == "none":
        return none(target, draft_ids, limit)
    raise ValueError(f"translation must be one of {', '.join(TRANSLATIONS)}, not {mode!r}")
