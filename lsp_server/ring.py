"""Context from elsewhere: a bounded ring of chunks, placed before the document's own context.

As llama.vim's ring buffer: chunks of the other open documents and of places recently edited.
Chunks are chosen by similarity to the text at the cursor, and the choice changes only when the
pool of candidates changes (a document opened, closed or left after edits, an edited place left
behind), never per keystroke: the prompt then keeps its beginning and the model's prefix cache
keeps hitting. Chunks that overlap the text before the cursor are left out (a model copies them).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass

_WORD = re.compile(r"\w{3,}")
_MAX_CHUNKS_PER_SOURCE = 256
_MIN_SIMILARITY = 0.02
_SAME = 0.9  # a candidate this similar to a chosen chunk adds nothing


@dataclass(frozen=True)
class Candidate:
    order: tuple[int, int]  # (source's age, position in it): the order chunks appear in
    text: str
    words: frozenset[str]


def words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two sets of words."""
    return len(a & b) / len(a | b) if a and b else 0.0


def chunks_of(text: str, chunk_chars: int) -> list[str]:
    """`text` in pieces of at most `chunk_chars`, cut at line ends (long lines at spaces)."""
    out: list[str] = []
    current = ""
    for line in _pieces(text, chunk_chars):
        if current and len(current) + len(line) > chunk_chars:
            out.append(current)
            current = ""
        current += line
        if len(out) >= _MAX_CHUNKS_PER_SOURCE:
            break
    if current.strip() and len(out) < _MAX_CHUNKS_PER_SOURCE:
        out.append(current)
    return [c.strip() for c in out if c.strip()]


def _pieces(text: str, limit: int):
    """Lines with their ends; a line longer than `limit` in pieces cut after a space."""
    for line in text.splitlines(keepends=True):
        while len(line) > limit:
            cut = line.rfind(" ", 0, limit) + 1 or limit
            yield line[:cut]
            line = line[cut:]
        yield line


class Ring:
    """The pool of candidate chunks, and per document the chunks chosen for its prompt."""

    def __init__(self, size: int = 4, chunk_chars: int = 600, places: int = 16):
        self.size, self.chunk_chars, self.max_places = size, chunk_chars, places
        self.version = 0  # changes whenever the pool does
        self._ages: dict[str, int] = {}  # source key -> age (first seen), for a stable order
        self._docs: dict[str, str] = {}  # uri -> its text as of opening or last leaving it
        self._live: dict[str, str] = {}  # uri -> its text now
        self._places: OrderedDict[str, str] = OrderedDict()  # "uri@offset" -> chunk, oldest first
        self._editing: dict[str, int] = {}  # uri -> offset of the latest edit
        self._active: str | None = None
        self._chosen: dict[str, tuple[int, tuple[str, ...]]] = {}  # uri -> (version, chunks)

    def configure(self, size: int, chunk_chars: int) -> None:
        if (size, chunk_chars) != (self.size, self.chunk_chars):
            self.size, self.chunk_chars = size, chunk_chars
            self._changed()

    def opened(self, uri: str, text: str) -> None:
        self._docs[uri] = self._live[uri] = text
        self._age(uri)
        self._changed()

    def closed(self, uri: str) -> None:
        """A closed document leaves the pool; the place last edited in it stays a while."""
        if uri in self._editing:
            self._keep_place(uri, self._editing.pop(uri))
        self._docs.pop(uri, None)
        self._live.pop(uri, None)
        self._chosen.pop(uri, None)
        if self._active == uri:
            self._active = None
        self._changed()

    def edited(self, uri: str, text: str, offset: int) -> None:
        """An edit at `offset`; `text` is the document after it.

        Leaving another document refreshes its text in the pool; an edit far from the previous
        one in this document keeps the place left behind as a chunk.
        """
        self._live[uri] = text
        self.visit(uri)
        last = self._editing.get(uri)
        if last is not None and abs(offset - last) > 2 * self.chunk_chars:
            self._keep_place(uri, last)
        self._editing[uri] = offset

    def visit(self, uri: str) -> None:
        """The user works in `uri` now (an edit or a request there)."""
        left, self._active = self._active, uri
        if left is None or left == uri or left not in self._docs:
            return
        if self._docs[left] != self._live.get(left):
            self._docs[left] = self._live[left]
            self._changed()

    def chosen(self, uri: str, window: str) -> tuple[str, ...]:
        """The chunks for a prompt in `uri` whose text before the cursor ends with `window`.

        Chosen anew only when the pool has changed since the last choice for `uri`.
        """
        kept = self._chosen.get(uri)
        if kept is not None and kept[0] == self.version:
            return kept[1]
        texts = self._choose(uri, window) if self.size > 0 else ()
        self._chosen[uri] = (self.version, texts)
        return texts

    def _choose(self, uri: str, window: str) -> tuple[str, ...]:
        near = words(window[-2000:])
        scored = sorted(
            ((similarity(c.words, near), c) for c in self._candidates(uri, window)),
            key=lambda sc: (-sc[0], sc[1].order),
        )
        picked: list[Candidate] = []
        for score, c in scored:
            if len(picked) == self.size or score < _MIN_SIMILARITY:
                break
            if all(similarity(c.words, p.words) < _SAME for p in picked):
                picked.append(c)
        return tuple(c.text for c in sorted(picked, key=lambda c: c.order))

    def _candidates(self, uri: str, window: str):
        """Chunks of the other open documents and of kept places, none overlapping `window`."""
        sources = [(f"@{key}", text) for key, text in self._places.items()]
        sources += [(u, text) for u, text in self._docs.items() if u != uri]
        for key, text in sources:
            for i, chunk in enumerate(chunks_of(text, self.chunk_chars)):
                if not _overlaps(chunk, window):
                    yield Candidate((self._age(key), i), chunk, words(chunk))

    def _keep_place(self, uri: str, offset: int) -> None:
        text = self._live.get(uri, "")
        half = self.chunk_chars // 2
        start = text.rfind("\n", 0, max(0, offset - half)) + 1
        place = text[start : start + self.chunk_chars].strip()
        if not place:
            return
        key = f"{uri}@{start}"
        self._places[key] = place
        self._places.move_to_end(key)
        while len(self._places) > self.max_places:
            self._places.popitem(last=False)
        self._changed()

    def _age(self, key: str) -> int:
        return self._ages.setdefault(key, len(self._ages))

    def _changed(self) -> None:
        self.version += 1


def _overlaps(chunk: str, window: str, probe: int = 48) -> bool:
    """Whether `chunk` and `window` share text: one of its `probe`-character slices is in it."""
    return any(chunk[i : i + probe] in window for i in range(0, len(chunk) - probe + 1, probe))
