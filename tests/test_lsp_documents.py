"""Document state follows LSP exactly: random incremental edits against a model of the editor.

The editor model keeps its text as code units of the negotiated encoding (UTF-16 as VS Code,
UTF-8 bytes) and breaks lines only at \\n, \\r\\n and \\r, as the LSP specification says; the
edits insert every Unicode line-like character and surrogate pairs.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types

from lsp_server.documents import Documents, PositionError

PIECES = [
    "a", "ż", "😀", "𝄞", " ", "\n", "\r", "\r\n", "\f", "\v", "\x1c", "\x1d", "\x1e",
    "\x85", "\u2028", "\u2029", "\t",
]  # fmt: skip
CODEC = {"utf-16": ("utf-16-le", 2), "utf-8": ("utf-8", 1)}


class Editor:
    """What the editor holds: code units, lines as LSP defines them."""

    def __init__(self, text: str, encoding: str):
        self.codec, self.width = CODEC[encoding]
        self.units = self._encode(text)

    def _encode(self, text: str) -> list[int]:
        raw = text.encode(self.codec)
        return [
            int.from_bytes(raw[i : i + self.width], "little")
            for i in range(0, len(raw), self.width)
        ]

    @property
    def text(self) -> str:
        return b"".join(u.to_bytes(self.width, "little") for u in self.units).decode(self.codec)

    def lines(self) -> list[tuple[int, int]]:
        """(first unit, unit after the last non-break unit) of each line."""
        out, start, i, u = [], 0, 0, self.units
        while i < len(u):
            if u[i] == 0x0A or u[i] == 0x0D:
                out.append((start, i))
                i += 2 if u[i] == 0x0D and i + 1 < len(u) and u[i + 1] == 0x0A else 1
                start = i
            else:
                i += 1
        out.append((start, len(u)))
        return out

    def _boundary(self, i: int) -> bool:
        if i >= len(self.units):
            return True
        unit = self.units[i]
        return not (0xDC00 <= unit <= 0xDFFF) if self.width == 2 else not (0x80 <= unit <= 0xBF)

    def positions(self) -> list[types.Position]:
        return [
            types.Position(line=n, character=i - start)
            for n, (start, end) in enumerate(self.lines())
            for i in range(start, end + 1)
            if self._boundary(i)
        ]

    def offset(self, p: types.Position) -> int:
        return self.lines()[p.line][0] + p.character

    def edit(self, a: types.Position, b: types.Position, text: str) -> None:
        i, j = sorted((self.offset(a), self.offset(b)))
        self.units[i:j] = self._encode(text)


def change(uri: str, version: int, start, end, text: str) -> types.DidChangeTextDocumentParams:
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[
            types.TextDocumentContentChangePartial(range=types.Range(start, end), text=text)
        ],
    )


def open_doc(docs: Documents, uri: str, text: str) -> None:
    docs.open(types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text))


texts = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["utf-16", "utf-8"]), texts, st.data())
def test_random_edits_match_the_editor(encoding, initial, data):
    editor, docs = Editor(initial, encoding), Documents()
    open_doc(docs, "file:///d.md", initial)
    for version in range(2, 2 + data.draw(st.integers(1, 8))):
        positions = editor.positions()
        a = data.draw(st.sampled_from(positions))
        b = data.draw(st.sampled_from(positions))
        if editor.offset(b) < editor.offset(a):
            a, b = b, a
        text = data.draw(texts)
        editor.edit(a, b, text)
        docs.change(change("file:///d.md", version, a, b, text), encoding)
        assert docs.get("file:///d.md").source == editor.text
        assert docs.get("file:///d.md").version == version


def test_form_feed_does_not_shift_the_next_line():
    docs = Documents()
    open_doc(docs, "file:///f.md", "Art. 1.\fArt. 2.\nUst. 1.")
    # LSP line 1 is "Ust. 1." (the form feed is inside line 0); insert at its end.
    end = types.Position(line=1, character=7)
    docs.change(change("file:///f.md", 2, end, end, " Koniec."))
    assert docs.get("file:///f.md").source == "Art. 1.\fArt. 2.\nUst. 1. Koniec."


def test_whole_document_changes_and_bad_ranges():
    docs = Documents()
    open_doc(docs, "file:///w.md", "abc")
    docs.change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri="file:///w.md", version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="x\ny\n")],
        )
    )
    assert docs.get("file:///w.md").source == "x\ny\n"
    # A range ending at the start of the line after the last one covers the final break.
    docs.change(change("file:///w.md", 3, types.Position(1, 1), types.Position(3, 0), ""))
    assert docs.get("file:///w.md").source == "x\ny"
    with pytest.raises(PositionError):
        docs.change(change("file:///w.md", 4, types.Position(9, 0), types.Position(9, 0), "z"))
    assert docs.get("file:///w.md") is None  # its text is unknown from now on
