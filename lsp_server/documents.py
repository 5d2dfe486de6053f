r"""Document text as the server sees it: the open documents, LSP positions, magic comments.

LSP positions count UTF-16 code units by default (UTF-8 bytes when negotiated), while Python
strings count code points; every conversion goes through here so that a Polish letter, an emoji
or a CRLF never shifts a cursor. LSP lines end at \n, \r\n and \r only, so the documents are
kept here rather than in pygls's store (which also splits at \f, \v, U+2028 and the like).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsprotocol import types

# LSP lines end at \n, \r\n or \r only (not at the other breaks str.splitlines knows).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_MAGIC = re.compile(
    r"(?:<!--|%|#|//|;)\s*bielik:\s*speculation\s*=\s*(on|off|auto)\b", re.IGNORECASE
)
MODES = ("on", "off", "auto")


class PositionError(ValueError):
    """A position that does not exist in the document (reported to the client as invalid params)."""


class NotText(ValueError):
    """Content that is not text a writing assistant should continue (binary, control bytes)."""


@dataclass(frozen=True)
class Cursor:
    """The document split at the cursor; `offset` is the code point index of the cursor."""

    before: str
    after: str
    offset: int


def line_starts(text: str) -> list[int]:
    """Code point offsets at which each LSP line starts."""
    return [0, *(m.end() for m in _LINE_BREAK.finditer(text))]


def column_to_index(line: str, character: int, encoding: str = "utf-16") -> int:
    """Code point index in `line` (without its line break) for an LSP `character`.

    Past the end clamps to the end (as the LSP spec asks); inside a surrogate pair or inside a
    UTF-8 sequence snaps back to the start of that character, so a cursor never splits a letter.
    """
    if character < 0:
        raise PositionError(f"negative character offset {character}")
    if encoding == "utf-32":
        return min(character, len(line))
    unit = 2 if encoding == "utf-16" else 1
    used = 0
    for i, ch in enumerate(line):
        width = len(ch.encode("utf-16-le" if unit == 2 else "utf-8")) // unit
        if used + width > character:
            return i
        used += width
    return len(line)


def index_to_column(line: str, index: int, encoding: str = "utf-16") -> int:
    """The LSP `character` of code point index `index` in `line`."""
    head = line[:index]
    if encoding == "utf-32":
        return len(head)
    if encoding == "utf-16":
        return len(head.encode("utf-16-le")) // 2
    return len(head.encode("utf-8"))


def offset_at(text: str, line: int, character: int, encoding: str = "utf-16") -> int:
    """Code point offset of an LSP position; PositionError when the line does not exist."""
    starts = line_starts(text)
    if line < 0 or line >= len(starts):
        raise PositionError(f"line {line} is outside the document ({len(starts)} lines)")
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    body = _LINE_BREAK.sub("", text[start:end])
    return start + column_to_index(body, character, encoding)


def position_at(text: str, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    """(line, character) of a code point offset."""
    starts = line_starts(text)
    line = max(i for i, s in enumerate(starts) if s <= offset)
    return line, index_to_column(text[starts[line] : offset], offset - starts[line], encoding)


def split_at(text: str, line: int, character: int, encoding: str = "utf-16") -> Cursor:
    offset = offset_at(text, line, character, encoding)
    return Cursor(text[:offset], text[offset:], offset)


def check_text(text: str) -> None:
    """Refuse binary-looking content: NUL bytes or mostly control characters."""
    if "\x00" in text:
        raise NotText("the document looks binary (it contains NUL characters)")
    sample = text[:4096]
    controls = sum(1 for c in sample if ord(c) < 32 and c not in "\t\n\r\f")
    if sample and controls > len(sample) // 10:
        raise NotText("the document looks binary (too many control characters)")


def magic_mode(text: str) -> str | None:
    """The speculation mode a magic comment asks for, or None; the first one wins.

    `<!-- bielik: speculation=off -->`, `% bielik: speculation=on`, `# bielik: speculation=auto`.
    """
    m = _MAGIC.search(text)
    return m.group(1).lower() if m else None


@dataclass
class Document:
    uri: str
    language_id: str
    version: int
    source: str


class Documents:
    """The open documents, edited exactly as the client edits them."""

    def __init__(self) -> None:
        self._open: dict[str, Document] = {}

    def get(self, uri: str) -> Document | None:
        return self._open.get(uri)

    def open(self, item: types.TextDocumentItem) -> Document:
        doc = Document(item.uri, item.language_id, item.version, item.text)
        self._open[item.uri] = doc
        return doc

    def close(self, uri: str) -> None:
        self._open.pop(uri, None)

    def change(
        self, params: types.DidChangeTextDocumentParams, encoding: str = "utf-16"
    ) -> Document | None:
        """Apply a didChange's changes in order.

        PositionError if a range does not exist; the document is then closed (its text is no
        longer known).
        """
        doc = self._open.get(params.text_document.uri)
        if doc is None:
            return None
        try:
            for change in params.content_changes:
                doc.source = apply_change(doc.source, change, encoding)
        except PositionError:
            self.close(doc.uri)
            raise
        doc.version = params.text_document.version
        return doc


def edit_end(text: str, change: types.TextDocumentContentChangeEvent, encoding: str) -> int:
    """Where a change applied to a document left the cursor: after the text it inserted.

    `text` is the document after the change (what precedes the change's start is unchanged).
    """
    if isinstance(change, types.TextDocumentContentChangeWholeDocument):
        return len(text)
    return _edit_offset(text, change.range.start, encoding) + len(change.text)


def apply_change(
    text: str, change: types.TextDocumentContentChangeEvent, encoding: str = "utf-16"
) -> str:
    """`text` after one content change (whole-text or ranged)."""
    if isinstance(change, types.TextDocumentContentChangeWholeDocument):
        return change.text
    start, end = (_edit_offset(text, p, encoding) for p in (change.range.start, change.range.end))
    if end < start:
        raise PositionError(f"range ends before it starts: {change.range}")
    return text[:start] + change.text + text[end:]


def _edit_offset(text: str, position: types.Position, encoding: str) -> int:
    """offset_at for an edit's range.

    A range may also end at the start of the line after the last one (some clients send that
    for a range covering the final line break).
    """
    if position.character == 0 and position.line == len(line_starts(text)):
        return len(text)
    return offset_at(text, position.line, position.character, encoding)
