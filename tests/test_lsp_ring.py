"""The ring of context from elsewhere: what it picks, and that it changes only with its pool."""

from __future__ import annotations

from lsp_server.ring import Ring, chunks_of

LAW = (
    "Art. 1. Rzeczpospolita Polska jest dobrem wspólnym wszystkich obywateli.\n"
    "Art. 2. Rzeczpospolita Polska jest demokratycznym państwem prawnym.\n"
)
NOVEL = "Wokulski siedział w sklepie i patrzył na ulicę, gdzie padał deszcz.\n" * 3
COOKING = "Mąkę przesiać, dodać jajka i mleko, wymieszać na gładkie ciasto.\n" * 3


def test_chunks_are_cut_at_line_ends_and_long_lines_at_spaces():
    text = "krótka linia\n" + "słowo " * 40 + "\nkoniec\n"
    chunks = chunks_of(text, 64)
    assert all(len(c) <= 64 for c in chunks)
    assert chunks[0].startswith("krótka linia") and chunks[-1].endswith("koniec")
    assert " ".join(chunks).split() == text.split()


def test_the_most_similar_chunks_of_other_documents_in_a_stable_order():
    ring = Ring(size=2, chunk_chars=200)
    ring.opened("file:///novel.md", NOVEL)
    ring.opened("file:///law.md", LAW)
    ring.opened("file:///cooking.md", COOKING)
    ring.opened("file:///mine.md", "Art. 3. Rzeczpospolita Polska")
    chosen = ring.chosen("file:///mine.md", "Art. 3. Rzeczpospolita Polska")
    assert chosen and chosen[0].startswith("Art. 1.")  # the law first: the most similar
    assert not any("Mąkę" in c for c in chosen)  # nothing in common with the cursor's text
    assert len(chosen) <= 2
    assert ring.chosen("file:///law.md", LAW) == ring.chosen("file:///law.md", LAW)
    assert not any("Art. 1." in c for c in ring.chosen("file:///law.md", LAW))  # not its own


def test_the_choice_changes_with_the_pool_not_with_each_keystroke():
    ring = Ring(size=2, chunk_chars=200)
    ring.opened("file:///law.md", LAW)
    ring.opened("file:///mine.md", "Art. 3. Rzeczpospolita")
    text = "Art. 3. Rzeczpospolita"
    first = ring.chosen("file:///mine.md", text)
    version = ring.version
    for char in " Polska jest wolnym krajem":  # typing at one place
        text += char
        ring.edited("file:///mine.md", text, len(text))
        assert ring.chosen("file:///mine.md", text) == first  # even though the text changed
    assert ring.version == version
    ring.opened("file:///novel.md", NOVEL)
    assert ring.version > version  # a new candidate: chosen anew on the next request


def test_leaving_an_edited_document_refreshes_it_and_far_edits_keep_their_place():
    ring = Ring(size=4, chunk_chars=100)
    ring.opened("file:///a.md", LAW)
    ring.opened("file:///b.md", "Państwo prawne")
    edited = LAW + "Art. 3. Nowy przepis o państwie prawnym.\n"
    ring.edited("file:///a.md", edited, len(edited))
    ring.visit("file:///b.md")  # the user goes to b: a's new text joins the pool
    assert any("Nowy przepis" in c for c in ring.chosen("file:///b.md", "państwie prawnym"))
    long = "Nowy przepis o państwie prawnym.\n" + "x\n" * 200 + NOVEL
    ring.opened("file:///c.md", long)
    ring.edited("file:///c.md", long, 10)
    ring.edited("file:///c.md", long, len(long))  # far away: the first place is kept
    ring.closed("file:///c.md")  # and outlives the document
    assert any("Nowy przepis" in c for c in ring.chosen("file:///b.md", "o państwie prawnym"))


def test_chunks_that_overlap_the_text_before_the_cursor_are_left_out():
    ring = Ring(size=4, chunk_chars=400)
    ring.opened("file:///copy.md", LAW)
    ring.opened("file:///mine.md", LAW)
    assert ring.chosen("file:///mine.md", LAW) == ()  # a model would only copy it
