"""Where a Polish sentence ends: terminal punctuation that is not an abbreviation's dot.

A period after an abbreviation Morfeusz knows ("np.", "ul.", "dr.", "art."), an ordinal
("3.") or an initial ("J.") does not end the sentence, so a suggestion is never cut there.
"""

from __future__ import annotations

import re

from polish.morphology import is_abbreviation

SENTENCE_END = re.compile(r"[.!?…]+[\"'”»)]*(?=\s)")
CLOSERS = "\"'”»)"
WORD_REACH = 100  # chars read back for the word before a dot: no abbreviation is this long


def ends_sentence(text: str, end: int) -> bool:
    """The punctuation just before `end` (a SENTENCE_END match's end) ends a sentence.

    Reads only the WORD_REACH chars before `end`: a paragraph's every sentence is asked about,
    and reading back to the paragraph's start made that quadratic (21 s for 200 KB).
    """
    head = text[max(0, end - WORD_REACH) : end].rstrip(CLOSERS)
    if not head.endswith(".") or head.endswith(".."):
        return True
    word = re.split(r"\s", head[:-1])[-1]
    return not (len(word) <= 1 or word.isdigit() or is_abbreviation(word))


def first_sentence_end(text: str, start: int = 0, stop: int | None = None) -> int | None:
    """The end of the first complete sentence in text[start:stop], if one ends there."""
    stop = len(text) if stop is None else stop
    for match in SENTENCE_END.finditer(text, start, min(stop + 1, len(text))):
        if match.end() <= stop and ends_sentence(text, match.end()):
            return match.end()
    return None
