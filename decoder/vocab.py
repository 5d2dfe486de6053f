"""Token ids as bytes: the exact text each token spells, and a streaming decoder.

`tokenizer.decode` on a slice is not a function of the slice's tokens alone (SentencePiece
strips a leading space; byte-level BPE splits UTF-8 characters), so everything that must stay
byte-exact (streaming, committed text, translation) goes through this per-token bytes table.
"""

from __future__ import annotations

import codecs
import json
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from functools import cached_property, lru_cache

import numpy as np

from decoder.compat.mlx_lm import hf_tokenizer
from decoder.compat.transformers import bytes_to_unicode


def _is_byte_level(hf) -> bool:
    decoder = json.loads(hf.backend_tokenizer.to_str()).get("decoder") or {}
    parts = decoder.get("decoders", [decoder]) if decoder.get("type") == "Sequence" else [decoder]
    return any(p.get("type") == "ByteLevel" for p in parts)


@lru_cache(maxsize=8)
def _table(hf) -> tuple[bytes, ...]:
    n = len(hf)
    pieces = hf.convert_ids_to_tokens(list(range(n)))
    added = {i: t for i, t in hf.added_tokens_decoder.items()}
    special = set(hf.all_special_ids) | {i for i, t in added.items() if t.special}
    if _is_byte_level(hf):
        to_byte = {c: b for b, c in bytes_to_unicode().items()}
        spell = lambda p: bytes(to_byte[c] for c in p)  # noqa: E731
    else:
        spell = _spm_bytes
    out = []
    for i, piece in enumerate(pieces):
        if i in special or piece is None:
            out.append(b"")
        elif i in added:
            out.append(added[i].content.encode("utf-8"))
        else:
            out.append(spell(piece))
    return tuple(out)


def _spm_bytes(piece: str) -> bytes:
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        return bytes([int(piece[3:5], 16)])
    return piece.replace("\u2581", " ").encode("utf-8")


def token_bytes(tokenizer) -> tuple[bytes, ...]:
    """Bytes spelled by every token id; special and control tokens spell nothing.

    A tokenizer that knows its own table (llama.cpp's, read from the GGUF) gives it directly.
    """
    hf = hf_tokenizer(tokenizer)
    own = getattr(hf, "token_table", None)
    return own if own is not None else _table(hf)


def special_ids(tokenizer) -> frozenset[int]:
    """Ids that must never reach the user as text (BOS, EOS, pad, control tokens)."""
    hf = hf_tokenizer(tokenizer)
    if getattr(hf, "special_ids", None) is not None:
        return hf.special_ids
    table = token_bytes(tokenizer)
    return frozenset(i for i in range(len(hf)) if not table[i]) | frozenset(hf.all_special_ids)


def ids_to_bytes(table: tuple[bytes, ...], ids: Iterable[int]) -> bytes:
    return b"".join(table[i] for i in ids)


class Beginnings:
    """The ids whose bytes begin with given bytes, for a token that must continue known text.

    Token healing: a first token constrained to those that begin with a space the prompt left
    out, or a drafter's token redrawn to begin with a cut token's bytes.
    """

    def __init__(self, table: tuple[bytes, ...], special: frozenset[int] = frozenset()):
        self.table, self.special = table, special
        self.ids = lru_cache(maxsize=4096)(self._ids)

    @cached_property
    def _sorted(self) -> tuple[list[bytes], np.ndarray]:
        """Every token's bytes in order, and their ids: those beginning with a head are a slice."""
        order = sorted(range(len(self.table)), key=self.table.__getitem__)
        return [self.table[i] for i in order], np.array(order, dtype=int)

    def _ids(self, head: bytes) -> np.ndarray:
        """The ids (special ones excepted) whose bytes begin with `head` (not empty)."""
        pieces, ids = self._sorted
        start, stop = bisect_left(pieces, head), len(pieces)
        if last := head.rstrip(b"\xff"):  # the first bytes after every piece beginning with head
            stop = bisect_left(pieces, last[:-1] + bytes([last[-1] + 1]))
        found = ids[start:stop]
        return found[~np.isin(found, list(self.special))] if self.special else found

    def restrict(self, head: bytes, logits: np.ndarray) -> np.ndarray:
        """`logits` with every token that does not begin with `head` ruled out (-inf).

        Unchanged when `head` is empty or no token begins with it.
        """
        allowed = self.ids(head) if head else ()
        if not len(allowed):
            return logits
        out = np.full_like(logits, -np.inf)
        out[..., allowed] = logits[..., allowed]
        return out

    def exclude(self, texts: tuple[bytes, ...], logits: np.ndarray) -> np.ndarray:
        """`logits` with every token that spells a start of one of `texts` ruled out (-inf).

        An alternative to text already shown then begins otherwise, so it cannot repeat it.
        Unchanged where no token would be left.
        """
        pieces, ids = self._sorted
        starts = {text[:n] for text in texts for n in range(1, len(text) + 1)}
        spans = ((bisect_left(pieces, s), bisect_right(pieces, s)) for s in starts)
        banned = [t for lo, hi in spans for t in ids[lo:hi] if t not in self.special]
        if not banned:
            return logits
        out = np.array(logits, copy=True)
        out[..., banned] = -np.inf
        return logits if np.isneginf(out).all() else out


class TextStream:
    """Turns token ids into text pieces without ever emitting a split UTF-8 character.

    Incomplete sequences are held back until the next bytes complete them; bytes that can never
    form valid UTF-8 are dropped, so no U+FFFD reaches the user.
    """

    def __init__(self, table: tuple[bytes, ...]):
        self.table = table
        self._decoder = codecs.getincrementaldecoder("utf-8")("ignore")

    def add(self, ids: Iterable[int]) -> str:
        return self._decoder.decode(ids_to_bytes(self.table, ids))

    def flush(self) -> str:
        return self._decoder.decode(b"", final=True)
