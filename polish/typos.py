"""Near forms of a misspelt Polish word: the typing errors Polish writers make, undone.

The errors, cheapest first (the classes LanguageTool's Polish speller also knows):

1. diacritics dropped or wrong ("zrodlo" -> "źródło", "sie" -> "się"), one or several at once:
   by far the largest class;
2. spelling pairs that sound alike: rz/ż, ó/u, ch/h, ą/om/on, ę/em/en, ci/ć, sz/ż;
3. a doubled or dropped letter, two letters swapped, a neighbouring key, a space left out
   ("wogóle" -> "w ogóle");
4. any other single edit, on top of any number of the first two ("wogule" -> "w ogóle");
5. for a word none of those explains (`wider`): two edits of any kind ("reluztacie" ->
   "rezultacie", "poperiali" -> "popierali", "abberacji" -> "aberracji"), and the forms
   Morfeusz knows one edit away that are too rare for the frequency table ("przysosowane" ->
   "przystosowane").

polish/lexicon.py indexes every form Morfeusz knows by a key that forgets what classes 1 and 2
change (diacritics, rz/ż, ch/h, ó/u), so a word's candidates are the forms sharing its
key, or a key one edit away: a few hundred dictionary look-ups, about a millisecond. Each
candidate's cost (`error_cost`) is a weighted edit distance with those classes cheap, so the
ranking knows that "sie" is far likelier "się" than "sił". The wider search compares the key
with every key of about its length (rapidfuzz's optimal string alignment distance, a swap
counting one edit: some 20 ms), so it runs only where the first finds nothing near.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import distance, process

from polish.lexicon import (
    forms_by_key,
    key,
    keys_like,
    names_like,
    polish_zipf,
    trigram_count,
)
from polish.morphology import is_known, known_among

_STRIP = str.maketrans("ąćęłńóśźżu", "acelnoszzo")  # letters as the keyboard's base key
KEY_ALPHABET = "abcdefghijklmnoprstwyzqvx"
DIACRITIC_GROUPS = ("aą", "cć", "eę", "lł", "nń", "oó", "sś", "zżź")
DIACRITIC_PAIRS = {frozenset((a, b)) for g in DIACRITIC_GROUPS for a in g for b in g if a != b}
# Multi-letter spellings that sound alike: (in the intended word, as typed, cost).
SOUNDS_ALIKE: tuple[tuple[str, str, float], ...] = (
    ("rz", "ż", 0.8), ("ż", "rz", 0.8), ("ch", "h", 0.8), ("h", "ch", 0.8),
    ("ó", "u", 0.8), ("u", "ó", 0.8),
    ("ą", "om", 1.0), ("ą", "on", 1.0), ("ę", "em", 1.0), ("ę", "en", 1.0),
    ("om", "ą", 1.0), ("on", "ą", 1.0), ("em", "ę", 1.0), ("en", "ę", 1.0),
    ("ą", "o", 1.0), ("ę", "e", 0.45),
    ("ć", "ci", 1.0), ("ś", "si", 1.0), ("ź", "zi", 1.0), ("ń", "ni", 1.0),
    ("ci", "ć", 1.0), ("si", "ś", 1.0), ("zi", "ź", 1.0), ("ni", "ń", 1.0),
    ("ż", "sz", 1.2), ("rz", "sz", 1.2), ("sz", "rz", 1.2), ("w", "f", 1.2), ("f", "w", 1.2),
    ("i", "j", 1.2), ("j", "i", 1.2), ("y", "i", 1.2), ("i", "y", 1.2),
    # Foreign spellings of words Polish spells its own way ("Schlezwik", "Povazhny", "pixeli").
    ("sz", "sch", 1.2), ("w", "v", 1.2), ("ż", "zh", 1.2), ("t", "th", 1.2), ("ks", "x", 1.2),
    ("f", "ph", 1.2), ("k", "c", 1.2), ("k", "ck", 1.2),
)  # fmt: skip
KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
DIACRITIC_COST = 0.45  # per letter
SWAP_COST = 1.0
MOVE_COST = 2.5  # a letter moved two places, or two swapped across a third
DOUBLE_COST = 1.0  # a doubled letter typed once, or a letter typed twice
SPACE_COST = 1.6  # a space left out
LONE_LETTER_COST = 1.0  # ... before a one-letter word ("porównaja" is rarely "porównaj a")
NEIGHBOUR_COST = 1.4
EDIT_COST = 2.0
MAX_COST = 3.5  # a candidate further than this is no correction
SPLIT_MIN_ZIPF = 3.5  # the first half of a word split in two: a common word
SPLIT_RIGHT_ZIPF = 2.0  # the second: a word in use
MAX_WORD = 30  # longer tokens are not words a writer misspelt (hashes, glued text)
WIDE_EDITS = 2  # the wider search: keys this many edits away (a swap is one edit)
WIDE_MIN_KEY = 6  # ... for keys this long (a short word is two edits from too many)
LONG_KEY = 9  # ... and three edits away for keys this long ("rozrgearno" -> "rozegrano")
WIDE_MAX_COST = 2 * EDIT_COST + 0.5  # ... two random edits, or one and a diacritic
WIDE_LETTERS = "aąbcćdeęfghijklłmnńoóprsśtuwyzźż"  # letters Morfeusz is asked to insert
GUESS_TRIGRAM = 10  # ... where the trigrams the letter makes are in this many known forms


@dataclass(frozen=True)
class Candidate:
    text: str  # lower-case; may hold one space (a split)
    cost: float  # how unlikely the error that turns `text` into the word is


def _neighbours() -> dict[str, frozenset[str]]:
    near: dict[str, set[str]] = {}
    for r, row in enumerate(KEYBOARD_ROWS):
        for c, letter in enumerate(row):
            keys = {row[i] for i in (c - 1, c + 1) if 0 <= i < len(row)}
            for other in KEYBOARD_ROWS[max(0, r - 1) : r + 2]:
                if other is not row:
                    keys |= {other[i] for i in (c - 1, c) if 0 <= i < len(other)}
            near[letter] = keys
    return {k: frozenset(v) for k, v in near.items()}


NEIGHBOURS = _neighbours()


def _substitution(a: str, b: str) -> float:
    """Cost of typing `b` where `a` was meant."""
    if frozenset((a, b)) in DIACRITIC_PAIRS:
        return DIACRITIC_COST
    a0, b0 = a.translate(_STRIP), b.translate(_STRIP)
    if b0 in NEIGHBOURS.get(a0, ()):
        return NEIGHBOUR_COST
    return EDIT_COST


def _rules_at(typed: str) -> list[list[tuple[str, int, float]]]:
    """For each position of `typed`: the sounds-alike spellings that start there."""
    return [
        [(want, len(got), cost) for want, got, cost in SOUNDS_ALIKE if typed.startswith(got, i)]
        for i in range(len(typed))
    ]


def error_cost(typed: str, meant: str, rules: list | None = None) -> float:
    """How unlikely typing `typed` for `meant` is: a weighted Damerau-Levenshtein distance.

    With one more operation than Damerau's: a letter moved two places (`_moved`).

    `rules` is `_rules_at(typed)`, for callers comparing one word with many.
    """
    rules = _rules_at(typed) if rules is None else rules
    n, m = len(typed), len(meant)
    inf = float("inf")
    d = [[inf] * (m + 1) for _ in range(n + 1)]
    d[0][0] = 0.0
    for i in range(n + 1):
        row, below = d[i], d[i + 1] if i < n else None
        for j in range(m + 1):
            here = row[j]
            if here == inf:
                continue
            if below is not None:
                t = typed[i]
                if j < m:
                    step = 0.0 if t == meant[j] else _substitution(meant[j], t)
                    below[j + 1] = min(below[j + 1], here + step)
                extra = DOUBLE_COST if i and t == typed[i - 1] else EDIT_COST
                below[j] = min(below[j], here + extra)
                for want, got, cost in rules[i]:
                    if meant.startswith(want, j):
                        target = d[i + got]
                        target[j + len(want)] = min(target[j + len(want)], here + cost)
                if i + 1 < n and j + 1 < m and t == meant[j + 1] and typed[i + 1] == meant[j]:
                    d[i + 2][j + 2] = min(d[i + 2][j + 2], here + SWAP_COST)
                if i + 2 < n and j + 2 < m and _moved(typed[i : i + 3], meant[j : j + 3]):
                    d[i + 3][j + 3] = min(d[i + 3][j + 3], here + MOVE_COST)
            if j < m:  # a letter meant that was not typed
                if meant[j] == " ":
                    missing = SPACE_COST
                elif j and meant[j] == meant[j - 1]:
                    missing = DOUBLE_COST
                else:
                    missing = EDIT_COST
                row[j + 1] = min(row[j + 1], here + missing)
    return d[n][m]


def _moved(typed: str, meant: str) -> bool:
    """Three letters with one moved two places or two swapped across a third.

    "cza" for "acz" ("jednoznczanie"), "eri" for "ier" ("poperiali"), "luz" for "zul"
    ("reluztacie").
    """
    if typed == meant or sorted(typed) != sorted(meant):
        return False
    return typed in (meant[1:] + meant[0], meant[2] + meant[:2], meant[::-1])


def _one_edit(k: str) -> set[str]:
    """Keys one deletion, insertion, substitution or swap away from `k`."""
    out = set()
    for i in range(len(k) + 1):
        head, tail = k[:i], k[i:]
        if tail:
            out.add(head + tail[1:])
            if len(tail) > 1:
                out.add(head + tail[1] + tail[0] + tail[2:])
        for c in KEY_ALPHABET:
            out.add(head + c + tail)
            if tail:
                out.add(head + c + tail[1:])
    return out


def _forms(keys: set[str]) -> set[str]:
    return {form for k in keys for form in forms_by_key(k)}


def _splits(word: str) -> set[str]:
    """A space left out: a common short word, then any known form.

    Each half perhaps with its diacritics or sounds-alike spellings lost ("wogule" ->
    "w ogóle").
    """
    out = set()
    for i in range(1, len(word)):
        left, right = word[:i], word[i:]
        if len(left) == 1 and left not in "aiouwz" or len(right) == 1 and right not in "aiouwz":
            continue
        lefts = [w for w in forms_by_key(key(left)) if polish_zipf(w) >= SPLIT_MIN_ZIPF]
        if lefts:
            rights = [w for w in forms_by_key(key(right)) if polish_zipf(w) >= SPLIT_RIGHT_ZIPF]
            out |= {f"{a} {b}" for a in lefts for b in rights}
    return out


def _lone_letter(text: str) -> float:
    return LONE_LETTER_COST if text[-2:-1] == " " else 0.0


def _spelt(word: str) -> set[str]:
    """The word with one cheap error undone, letter by letter.

    A sounds-alike spelling, a doubled or dropped letter, a swap, up to two diacritics: what
    the key cannot reach (ą/om, ę/en, sz/ż, and forms too rare for the lexicon).
    """
    out = set()
    for want, got, _ in SOUNDS_ALIKE:
        at = word.find(got)
        while at >= 0:
            out.add(word[:at] + want + word[at + len(got) :])
            at = word.find(got, at + 1)
    for i in range(len(word)):
        out.add(word[:i] + word[i + 1 :])
        out.add(word[:i] + word[i] + word[i:])
        if i + 1 < len(word):
            out.add(word[:i] + word[i + 1] + word[i] + word[i + 2 :])
    out |= _diacritics(word, 2)
    out.discard(word)
    return out


def _diacritics(word: str, limit: int) -> set[str]:
    """Every way of changing up to `limit` letters to another of their diacritic group."""
    out = {word}
    for _ in range(limit):
        out |= {
            w[:i] + other + w[i + 1 :]
            for w in out
            for i, ch in enumerate(w)
            for group in DIACRITIC_GROUPS
            if ch in group
            for other in group
            if other != ch
        }
    return out


@lru_cache(maxsize=1 << 14)
def same_key(word: str) -> tuple[Candidate, ...]:
    """Known forms that differ from `word` (lower-case) only in diacritics or sounds-alike.

    Spellings rz/ż, ch/h, ó/u: cheap enough for every word of a document.
    """
    found = (f for f in forms_by_key(key(word)) if f != word)
    return _ranked(word, found)


@lru_cache(maxsize=4096)
def candidates(word: str) -> tuple[Candidate, ...]:
    """Known forms near `word` (lower-case), cheapest error first; () for unusable input."""
    ranked = listed(word)
    if ranked and ranked[0].cost < EDIT_COST:
        return ranked
    spelt, found = _near(word)  # a form too rare for the lexicon?
    return _ranked(word, found | {w for w in spelt if is_known(w)})


@lru_cache(maxsize=4096)
def listed(word: str) -> tuple[Candidate, ...]:
    """`candidates` among the lexicon's forms only: no Morfeusz lookups, so cheaper."""
    return _ranked(word, _near(word)[1])


@lru_cache(maxsize=4096)
def _near(word: str) -> tuple[frozenset[str], frozenset[str]]:
    """The word with one cheap error undone, and the lexicon's forms near it."""
    if not word or len(word) > MAX_WORD or word != word.lower():
        return frozenset(), frozenset()
    k = key(word)
    spelt = _spelt(word)
    found = _forms({k} | _one_edit(k) | {key(w) for w in spelt}) | _splits(word)
    found.discard(word)
    return frozenset(spelt), frozenset(found)


def _ranked(word: str, forms) -> tuple[Candidate, ...]:
    if not forms:
        return ()
    rules = _rules_at(word)
    scored = [(f, error_cost(word, f, rules) + _lone_letter(f)) for f in forms]
    return tuple(
        Candidate(f, cost)
        for f, cost in sorted(scored, key=lambda x: (x[1], x[0]))
        if cost <= MAX_COST
    )


def _plausible(padded: str, at: int) -> bool:
    """The letter at `at` makes no trigram that Polish forms rarely have (GUESS_TRIGRAM)."""
    return all(trigram_count(padded[k : k + 3]) >= GUESS_TRIGRAM for k in range(at - 2, at + 1))


@lru_cache(maxsize=4096)
def wider(word: str) -> tuple[Candidate, ...]:
    """Known forms two edits from `word` (lower-case), cheapest first; () for unusable input.

    For a word no cheap slip explains: the frequency table's forms whose key starts with the
    same letter and is two edits (insertions, deletions, substitutions, adjacent swaps) from
    the word's (three for a long one), and where none of those is a single edit away, the
    forms Morfeusz knows with one letter more, which the table may lack ("kantabryjkie" ->
    "kantabryjskie"; only guesses where the letter added makes trigrams common in Polish
    forms are asked). Costs as `error_cost`, up to WIDE_MAX_COST.
    """
    if not word or len(word) > MAX_WORD or word != word.lower() or not word.isalpha():
        return ()
    k = key(word)
    found: set[str] = set()
    if len(k) >= WIDE_MIN_KEY:
        edits = WIDE_EDITS + (len(k) >= LONG_KEY)
        found = {form for hit in _within(k, keys_like, edits) for form in forms_by_key(hit)}
    found.discard(word)
    rules = _rules_at(word)
    scored = [(error_cost(word, f, rules), f) for f in found]
    if not any(cost <= EDIT_COST for cost, _ in scored):  # a rare form a letter away?
        guesses = {
            word[:i] + c + word[i:]
            for i in range(1, len(word) + 1)
            for c in WIDE_LETTERS
            if _plausible(f"^{word[:i]}{c}{word[i:]}$", i + 1)
        }
        rare = known_among(sorted(g for g in guesses if polish_zipf(g) == 0))
        scored += [(error_cost(word, f, rules), f) for f in rare]
    return tuple(Candidate(f, cost) for cost, f in sorted(scored) if cost <= WIDE_MAX_COST)


@lru_cache(maxsize=4096)
def names_near(word: str) -> tuple[Candidate, ...]:
    """Names Polish text writes (`names_like`) near `word` (lower-case), cheapest first.

    One edit away for a short word, two for one of WIDE_MIN_KEY letters or more ("libknecht"
    -> "liebknecht", "anniens" -> "amiens"); costs as `error_cost`, up to WIDE_MAX_COST.
    """
    if not word or len(word) > MAX_WORD or word != word.lower() or not word.isalpha():
        return ()
    found = _within(word, names_like, 1 if len(word) < WIDE_MIN_KEY else WIDE_EDITS)
    found.discard(word)
    rules = _rules_at(word)
    scored = sorted((error_cost(word, f, rules), f) for f in found)
    return tuple(Candidate(f, cost) for cost, f in scored if cost <= WIDE_MAX_COST)


def _within(k: str, pool: Callable[[str, int], list[str]], edits: int) -> set[str]:
    """The strings of `pool(first letter, length)` at most `edits` away from `k`.

    Edits as rapidfuzz's optimal string alignment counts them (an adjacent swap is one).
    """
    found: set[str] = set()
    for n in range(len(k) - edits, len(k) + edits + 1):
        near = process.extract(
            k, pool(k[0], n), scorer=distance.OSA.distance, score_cutoff=edits, limit=None
        )
        found |= {hit for hit, _, _ in near}
    return found
