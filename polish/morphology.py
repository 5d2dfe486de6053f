"""Cached Morfeusz 2 (SGJP) look-ups for Polish word forms.

Boundary checks run every decoding cycle, so every Morfeusz call is memoised: a
cache hit costs an lru_cache lookup, a miss one Morfeusz call (~20 µs analyse,
~50-400 µs generate). One Morfeusz instance is created lazily and every call into
it is serialised by a lock, because the C++ object is not documented as
thread-safe. All inputs are NFC-normalised first: Morfeusz does not know NFD
("e" + U+0328 is not "ę").

Observed segmentation (SGJP 1.99) that the helpers below rely on:
  zrobiłbyś -> zrobił/praet + by/part + ś/aglt;  zrobiłem -> zrobił/praet + em/aglt
  Gdzieś    -> Gdzieś/adv  and  Gdzie/adv + ś/aglt (both paths in the DAG)
  czyż      -> czyż/part;  zróbże -> zrób/impt + że/part
  np. / tzw. / m.in. / p.n.e. -> <abbr>/brev:pun + ./interp;  "np", "tzw" alone -> ign
  m.in      -> m/brev:npun + . + in (no abbreviation without the final dot)
  dr / nr / m -> brev:npun (no dot);  ul / ok -> noun, plus brev:pun only before "."
  2024 -> dig;  2024r. -> 2024/dig + r/brev:pun + .;  2024r -> ign;  XX -> romandig
  biało -> adv and adja (first part of "biało-czerwony");  XX-wieczny -> one adj
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple

import morfeusz2

_lock = threading.Lock()
_instance: morfeusz2.Morfeusz | None = None

# Tags that do not make a string a Polish word form.
_NOT_WORD = frozenset({"ign", "interp", "sym"})


class Interp(NamedTuple):
    """One Morfeusz interpretation of one segment (an edge of the analysis DAG)."""

    start: int
    end: int
    orth: str
    lemma: str
    tag: str
    names: tuple[str, ...]
    qualifiers: tuple[str, ...]

    @property
    def pos(self) -> str:
        """Grammatical class, the first field of the tag ("praet", "brev", ...)."""
        return self.tag.split(":", 1)[0]


def nfc(text: str) -> str:
    """NFC form: the only one Morfeusz and the tokenizers treat consistently."""
    return unicodedata.normalize("NFC", text)


def _call(method: str, arg: str) -> list:
    """Run one Morfeusz call under the lock, creating the instance on first use."""
    global _instance
    with _lock:
        if _instance is None:
            _instance = morfeusz2.Morfeusz()
        return getattr(_instance, method)(arg)


@lru_cache(maxsize=1 << 16)
def _analyse_nfc(word: str) -> tuple[Interp, ...]:
    return tuple(
        Interp(start, end, orth, lemma, tag, tuple(names), tuple(quals))
        for start, end, (orth, lemma, tag, names, quals) in _call("analyse", word)
    )


def analyse(word: str) -> tuple[Interp, ...]:
    """All interpretations (the analysis DAG) of `word`, cached."""
    return _analyse_nfc(nfc(word)) if word else ()


def tags(word: str) -> frozenset[str]:
    """Every tag of every segment of `word`."""
    return frozenset(i.tag for i in analyse(word))


def _final(interps: tuple[Interp, ...]) -> tuple[Interp, ...]:
    """Interpretations of segments that end the string (the last DAG edges)."""
    end = max((i.end for i in interps), default=0)
    return tuple(i for i in interps if i.end == end)


def final_pos(word: str) -> frozenset[str]:
    """Classes of the segment(s) `word` ends with: for "zrobiłem" {"aglt"}."""
    return frozenset(i.pos for i in _final(analyse(word)))


@lru_cache(maxsize=1 << 16)
def _is_known_nfc(word: str) -> bool:
    interps = _analyse_nfc(word)
    return bool(interps) and all(i.pos not in _NOT_WORD for i in interps)


def is_known(word: str) -> bool:
    """`word` is one Polish word form, possibly with clitics ("zrobiłbyś"), no punctuation."""
    return bool(word) and _is_known_nfc(nfc(word))


def known_among(guesses: Iterable[str]) -> list[str]:
    """The strings of `guesses` that are word forms, looked up without filling the caches.

    For a spelling checker's guesses (hundreds per unknown word, nearly all not words): cached,
    they would push out the look-ups that decoding repeats every cycle.
    """
    out = []
    for guess in guesses:
        interps = _call("analyse", nfc(guess)) if guess else []
        if interps and all(
            tag.split(":", 1)[0] not in _NOT_WORD for *_, (_, _, tag, _, _) in interps
        ):
            out.append(guess)
    return out


def ends_with_abbreviation_dot(text: str) -> bool:
    """`text` ends with a dotted abbreviation including its dot ("np.", "m.in.", "2024r.")."""
    interps = analyse(text)
    dots = {i.start for i in _final(interps) if i.orth == "." and i.pos == "interp"}
    return any(i.end in dots and i.tag == "brev:pun" for i in interps)


def is_abbreviation(word: str) -> bool:
    """Morfeusz reads `word` as an abbreviation, with or without a dot ("np", "dr", "ul")."""
    return bool(word) and any(i.pos == "brev" for i in analyse(word + "."))


def takes_abbreviation_dot(word: str) -> bool:
    """`word` + "." would be a dotted abbreviation ("np", "tzw", "m.in", "ul", "2024r")."""
    return bool(word) and ends_with_abbreviation_dot(word + ".")


@lru_cache(maxsize=1 << 14)
def forms(lemma: str) -> frozenset[str]:
    """Lower-cased NFC word forms Morfeusz generates for `lemma` (as analyse spells it)."""
    return frozenset(nfc(orth).lower() for orth, *_ in _call("generate", lemma))


@lru_cache(maxsize=1 << 16)
def _has_longer_form_nfc(word: str) -> bool:
    interps = _analyse_nfc(word)
    end = max((i.end for i in interps), default=0)
    lemmas = {i.lemma for i in interps if i.start == 0 and i.end == end and i.pos not in _NOT_WORD}
    low = word.lower()
    return any(f.startswith(low) and len(f) > len(low) for lemma in lemmas for f in forms(lemma))


def has_longer_form(word: str) -> bool:
    """Some inflected form of a lemma of `word` strictly extends it ("dom" -> "domu")."""
    return bool(word) and _has_longer_form_nfc(nfc(word))


@lru_cache(maxsize=1 << 14)
def paradigm(lemma: str) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Every form Morfeusz generates for `lemma` ("pójść", "on:S"): (NFC orth, tag, qualifiers).

    Each (orth, tag) once: SGJP lists some forms twice (a lemma in two dictionaries).
    """
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for orth, _, tag, _, quals in _call("generate", lemma):
        out.setdefault((nfc(orth), tag), tuple(quals))
    return tuple((orth, tag, quals) for (orth, tag), quals in out.items())
