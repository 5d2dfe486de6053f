"""Words a writer accepts, at the level of the lemma: adding "Zełenski" accepts "Zełenskiego".

Polish inflects every noun, adjective and verb, so a dictionary of forms (what Hunspell
plugins and LanguageTool keep) makes a writer add "influencerów", "influencerom", ... one at a
time (languagetool #6486). Here an added word brings all its forms:

- a word Morfeusz knows (a rare form the checker questioned, a name): every form of each of
  its lemmas, as Morfeusz generates them;
- a word it does not know ("Zełenski", "commitów"): it is inflected like the known form that
  shares the longest ending with it ("Kowalski" for "Zełenski"), the known lemma's forms with
  their stem swapped for the new word's. A guess, so only where the ending is long enough to
  say something (MIN_ENDING letters).

Words are kept as written, one per line (a file a writer can edit); forms are compared in
lower case.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from polish.lexicon import load as load_lexicon
from polish.lexicon import polish_zipf
from polish.morphology import analyse, forms, is_known

MIN_ENDING = 3  # letters an unknown word must share with a known form to inflect like it
MIN_STEM = 2  # letters of the new word kept before the borrowed endings
EXEMPLARS = 8  # known forms with that ending tried, most common first

_lock = threading.Lock()
_reversed: list[str] | None = None


def _endings() -> list[str]:
    """Every known form, spelt backwards, sorted: forms sharing an ending sit together."""
    global _reversed
    if _reversed is None:
        with _lock:
            if _reversed is None:
                _reversed = sorted(word[::-1] for word in load_lexicon().polish)
    return _reversed


def _lemmas(word: str) -> set[str]:
    return {i.lemma for i in analyse(word) if i.pos not in ("ign", "interp") and i.end == 1}


def _sharing(word: str) -> tuple[int, list[str]]:
    """(ending length, the known forms with the longest ending `word` shares with any)."""
    table = _endings()
    back = word[::-1]
    for length in range(len(word) - MIN_STEM, MIN_ENDING - 1, -1):
        ending = back[:length]
        at = bisect.bisect_left(table, ending)
        found = []
        while at < len(table) and table[at].startswith(ending) and len(found) < 200:
            if table[at] != back:
                found.append(table[at][::-1])
            at += 1
        if found:
            return length, sorted(found, key=polish_zipf, reverse=True)[:EXEMPLARS]
    return 0, []


@lru_cache(maxsize=1024)
def inflect(word: str) -> frozenset[str]:
    """The lower-case forms that adding `word` accepts (the word itself always among them)."""
    low = word.lower()
    if is_known(word):
        lemmas = _lemmas(word)
        return frozenset({low}.union(*(forms(lemma) for lemma in lemmas)))
    length, exemplars = _sharing(low)
    for exemplar in exemplars:
        stem_at = len(exemplar) - length
        paradigm = set().union(*(forms(lemma) for lemma in _lemmas(exemplar)))
        if exemplar not in paradigm:
            continue
        ours = {
            low[: len(low) - length] + f[stem_at:]
            for f in paradigm
            if f[:stem_at] == exemplar[:stem_at]
        }
        if low in ours:
            return frozenset(ours)
    return frozenset({low})


class Accepted:
    """Forms a writer accepted: from words (each inflected), kept in a set for the checker."""

    def __init__(self, words: Iterable[str] = ()):
        self.words: list[str] = []
        self.forms: set[str] = set()
        for word in words:
            self.add(word)

    def add(self, word: str) -> bool:
        """Accept `word` and its forms; False when it was already accepted."""
        word = word.strip()
        if not word or word in self.words:
            return False
        self.words.append(word)
        self.forms |= inflect(word)
        return True

    def __contains__(self, word: str) -> bool:
        return word.lower() in self.forms


def read_words(path: Path) -> list[str]:
    """One word per line; blank lines and `#` comments skipped; a missing file is empty."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def append_word(path: Path, word: str) -> None:
    """Add `word` on a line of its own at the end of `path` (created with its folders)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if text and not text.endswith("\n"):
        text += "\n"
    path.write_text(f"{text}{word}\n", encoding="utf-8")
