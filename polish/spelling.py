"""Polish spelling that understands inflection: Morfeusz says what is a word, a model what fits.

Two passes, so that the first can run on every keystroke and the second only where it pays:

1. `check(text)`: the dictionary pass. Each prose word (polish/words.py leaves code, URLs,
   paths, options and markup alone) is looked up in Morfeusz 2 (SGJP: every inflected form of
   every lemma). A word is questioned when Morfeusz does not know it, or when it knows it only
   as an archaic form, a proper name written in lower case or an acronym not in capitals, and
   a near form is far more common ("sie" -> "się", "Sa" -> "Są"). Not questioned: abbreviations
   ("tzw", "np", "r"), acronyms, identifiers, capitalised words inside a sentence (names) unless
   a near form is certain, English words and runs of them. Candidates come from Polish typing
   errors (polish/typos.py), ranked by a noisy channel: how common the form is, less how
   unlikely the error.
2. `rank(text, findings, score)`: the model pass. For each questioned word with several
   candidates, and for common words that a far commoner near form could replace ("tez" ->
   "też"), the sentence is read by the model with each candidate in place; the log-probability
   of the sentence from the word on replaces the frequency in the same noisy channel. A known
   word is questioned only when a candidate beats it by MODEL_MARGIN.

`score(prefix, continuations) -> [log-probability of each continuation after prefix]` is the
engine's (decoder/scoring.py); the dictionary pass needs none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from polish.agreement import reading
from polish.lexicon import english_zipf, odd_trigrams, other_zipf, polish_zipf, sjp_knows
from polish.morphology import Interp, analyse, is_abbreviation, is_known, paradigm
from polish.typos import (
    EDIT_COST,
    Candidate,
    candidates,
    listed,
    names_near,
    same_key,
    wider,
)
from polish.words import Word, paragraphs, switched_off, words

Score = Callable[[str, list[str]], "list[float] | None"]

LN10 = math.log(10)
ERROR_NATS = 3.5  # log-odds lost per unit of typing-error cost (polish/typos.py)
MAX_SUGGESTIONS = 5
SUGGESTION_SPREAD = 10.0  # nats: a correction this much less likely than the best is not shown
MODEL_CANDIDATES = 3  # candidates read by the model, best by the dictionary first
CLEAR_LEAD = 3.0  # nats: a dictionary lead this large needs no model
MODEL_MARGIN = 3.0  # nats a candidate must beat a known word by, in its sentence
# A known word that a near form could replace: only a diacritic away, and the near form this
# much more common (Zipf units), before the model reads the sentence.
CONTEXT_MAX_COST = 0.8
CONTEXT_MIN_LEAD = 1.0
UNSEEN_NEAR_ZIPF = 3.0  # a known form Polish text never writes: a slip of a form this common
UNSEEN_MIN_LEN = 5  # ... if it is this long ("f" is a variable, not a slip of "w")
RARE_MIN_LEAD = 1.0  # an archaic/lower-case-name/acronym form: a near form this much commoner
RARE_MAX_COST = 1.2  # ... and this near
NAME_MIN_ZIPF = 3.0  # a rare form's correction: this common at least
# A capitalised word Morfeusz does not know that Polish text writes (wordfreq) is a slip
# where a near form's log-odds beat the word's own by this margin (nats); one it never
# writes, a slip of any known form this near (two edits, or one and a sounds-alike).
NAME_MARGIN = 0.0
NAME_NEAR_COST = 3.0  # a name no one writes: asked about a name this near (a slip, not two edits)
NAME_NEAR_ZIPF = 1.5  # ... that Polish text writes this often
UNSEEN_MAX_COST = 3.4
CASE_COST = 1.0  # a name written small, capitals typed inside a word
SLIP_COST = 2.5  # a correction this near is offered as "did you mean", a farther one as nearest
ENGLISH_ZIPF = 3.0  # an unknown word this common in English is English
ENGLISH_WEAK_ZIPF = 2.5  # ... or this common, when no cheap slip would make it Polish
ENGLISH_SLIP_ZIPF = 4.0  # ... but amid Polish words, a slip of a form this common is asked about
CHEAP_COST = 1.2  # a slip this cheap (diacritics, sounds-alike, double, swap)
GLUED_ZIPF = 3.5  # both halves of two glued English words this common ("tar"+"file")
ENGLISH_EDGE = 0.5  # Zipf units: a Polish slip must be this much commoner to beat English
STEM_LEAD = 1.5  # ... or, an English stem with a Polish ending, a one-edit slip this much
STRAY_ZIPF = 5.0  # a one- or two-letter slip: corrections among the commonest words only
NEIGHBOUR_MAX = 1.4  # ... a neighbouring key away at most
ODD_TRIGRAM = 2  # a letter trigram in this few Polish forms is odd
ODD_SHARE = 5  # a word looks Polish with one odd trigram in this many at most (a slip's)
LIKELY_ZIPF = 2.0  # ... unless a near form this common explains it
TERM_REPEATS = 3  # an unknown word this often in one document is a term (drop_terms)
TERM_MIN_COST = 2.0  # ... unless a correction cheaper than a random edit explains it
LEFT_CHARS = 80  # context the model reads before a word, from its sentence's start at most
RIGHT_WORDS = 1  # and the words after it, to its sentence's end at most
# Endings Polish gives a borrowed word (nouns, adjectives and verbs in -ować), longest first.
LOAN_ENDINGS = tuple(
    sorted(
        "a u owi em ie y i ów om ami ach e ą ę owy owa owe owego owej owym owych owymi ową "
        "ować owania owanie owaniu owaniem owany owana owane owanych owanym owanego owanej "
        "owaną uje ujesz ujemy ujecie ują ujący ująca ujące ującego ował owała owało owali "
        "owały owałem owano".split(),
        key=len,
        reverse=True,
    )
)
MIN_STEM = 3  # ... after a stem this long
RARE_QUALIFIERS = frozenset({"daw.", "arch.", "przest.", "gwar.", "daw._dziś_gwar.", "rzad."})
POLISH_LETTERS = set("ąćęłńóśźżĄĆĘŁŃÓŚŹŻ")
VOWELS = set("aąeęioóuy")
POLISH_ALPHABET = set("aąbcćdeęfghijklłmnńoóprsśtuwyzźżqvx")  # and q, v, x of loanwords
_SENTENCE_END = re.compile(r"[.!?…](?=\s)|\n\s*\n")
_NEXT_WORD = re.compile(r"[ \t]*[,;:]?[ \t]*[^\W_]+|[ \t]*[.!?…]")


@dataclass(frozen=True)
class Finding:
    """One questioned word: where it is, why, and its corrections, best first."""

    start: int  # code point offsets in the checked text
    end: int
    word: str
    suggestions: tuple[str, ...]
    reason: str  # unknown | case | rare-form | context; grammar: its rule, or "model"
    kind: str = "spelling"  # or "grammar" (polish/grammar.py)
    detail: str = ""  # what the message adds (grammar: the word it does not agree with)
    known: bool = False  # Morfeusz knows the word (the model must find a far likelier form)
    candidates: tuple[Candidate, ...] = ()
    ranked_by: str = "dictionary"  # or "model"

    def to_dict(self) -> dict:
        return {
            "start": self.start,
            "end": self.end,
            "word": self.word,
            "suggestions": list(self.suggestions),
            "kind": self.kind,
            "reason": self.reason,
        }


REASONS = {
    "unknown": "unknown word (neither Morfeusz 2 nor hunspell-pl's word list has it)",
    "case": "wrong case (a name takes a capital; no capitals inside a word)",
    "rare-form": "an archaic or unusual form where a common one is near",
    "context": "the sentence reads far likelier with a near form",
}


def _cased(text: str, like: str) -> str:
    """`text` (lower-case) written with the capital of `like`, or of a name ("Kazimierza")."""
    if like[:1].isupper() or " " not in text and must_capitalise(text):
        return text[:1].upper() + text[1:]
    return text


def _zipf(text: str) -> float:
    """How common a candidate is; a split is as common as its rarer half, less a little."""
    if " " in text:
        return min(polish_zipf(part) for part in text.split()) - 0.5
    return polish_zipf(text)


def prior(candidate: Candidate) -> float:
    """The dictionary's log-odds for a candidate: how common, less how unlikely the error."""
    return _zipf(candidate.text) * LN10 - ERROR_NATS * candidate.cost


def _lemmas(word: str) -> set[str]:
    return {i.lemma.split(":")[0] for i in analyse(word) if i.pos not in ("ign", "interp")}


def _proper_only(interps: tuple[Interp, ...]) -> bool:
    return all(i.lemma[:1].isupper() for i in interps)


def _acronym_only(interps: tuple[Interp, ...]) -> bool:
    return all(i.lemma.split(":")[0].isupper() and len(i.lemma.split(":")[0]) > 1 for i in interps)


def rare_form(word: str) -> bool:
    """Morfeusz knows `word` only as an odd form: archaic, a name or an acronym.

    An archaic or dialect form ("sie", "łaczność"), a proper name written in lower case
    ("bedzie"), an acronym not written in capitals ("Sa").
    """
    interps = tuple(i for i in analyse(word) if i.pos not in ("interp", "ign"))
    if not interps:
        return False
    quals = [{q for field in i.qualifiers for q in field.split(",")} for i in interps]
    if all(q & RARE_QUALIFIERS for q in quals):
        return True
    if word.islower() and _proper_only(interps):
        return True
    return not word.isupper() and _acronym_only(interps)


def _english(word: str, neighbours: Iterable[str], found: tuple[Candidate, ...]) -> bool:
    """An English word: one of a run of them, or commoner in English than a slip's Polish.

    Commoner than the Polish forms a cheap slip would give ("line", not "linę"), an English
    stem with a Polish ending unless a slip gives a far commoner form ("triggera", but "masta"
    is "miasta"), or two English words glued ("tarfile"). A word of two letters only in a run
    ("ns" alone is a slip of "na" far more often).
    """
    if POLISH_LETTERS.intersection(word):
        return False
    z = english_zipf(word)
    if z >= ENGLISH_WEAK_ZIPF and any(
        english_zipf(n) >= ENGLISH_ZIPF and not is_known(n) for n in neighbours
    ):
        return True
    if len(word) < 3:
        return False
    cheap = [c for c in found if c.cost <= CHEAP_COST and " " not in c.text]
    polish = max((polish_zipf(c.text) for c in cheap), default=0.0)
    if z >= ENGLISH_ZIPF and z + ENGLISH_EDGE >= polish:
        return True  # "line", "date": commoner in English than "linę", "datę" are in Polish
    if z >= ENGLISH_WEAK_ZIPF and not cheap:
        return True  # "debug", "const": no cheap slip makes them Polish
    stem = 0.0 if cheap else max(map(english_zipf, _stems(word)), default=0.0)
    if stem >= ENGLISH_WEAK_ZIPF and not _slips(found, stem + STEM_LEAD):
        return True  # "triggera", "hostowania", "commitów": an English word, Polish endings
    return not cheap and any(
        english_zipf(word[:i]) >= GLUED_ZIPF and english_zipf(word[i:]) >= GLUED_ZIPF
        for i in range(3, len(word) - 2)
    )


def _slips(found: tuple[Candidate, ...], zipf: float) -> list[Candidate]:
    """The candidates of `found` one edit away or nearer that make a Polish form this common."""
    near = (c for c in found if c.cost <= EDIT_COST and " " not in c.text)
    return [c for c in near if polish_zipf(c.text) >= zipf]


def _stems(word: str) -> list[str]:
    """`word` (lower-case) without a Polish ending a borrowed word takes ("debian|em").

    The endings follow a consonant: a name ending in a vowel is not declined so ("Verdiego",
    "Tokio"), so "hesji|i" is a slip of "Hesji", not its form.
    """
    return [
        stem
        for end in LOAN_ENDINGS
        if word.endswith(end)
        and len(stem := word[: -len(end)]) >= MIN_STEM
        and stem[-1] not in VOWELS
    ]


def _seen(low: str) -> float:
    """How often Polish text writes a name (wordfreq), or its stem, Polish endings off.

    "Debianem", "Vimie": Debian and Vim are names Polish text writes (and English words).
    """
    stems = [max(other_zipf(s), english_zipf(s)) for s in _stems(low)]
    return max([other_zipf(low), *stems])


def _shift_held(w: str) -> bool:
    """Two capitals, then small letters: the shift key held too long ("NAdolski", "NNa")."""
    return (
        len(w) >= 3
        and w[0].isupper()
        and w[1].isupper()
        and w[2:].islower()
        and (len(w) >= 4 or w[0] == w[1])
    )


def _inner_capitals_known(w: str) -> bool:
    """Morfeusz knows the word with its capitals inside ("PKiN", "iPhone")."""
    return any(
        i.pos not in ("ign", "interp") and any(c.isupper() for c in i.lemma.split(":")[0][1:])
        for i in analyse(w)
    )


def _skipped(word: Word, text: str) -> bool:
    """Not a word to question: too short, an acronym, an identifier, an abbreviation."""
    w = word.text
    if _shift_held(w):
        return _inner_capitals_known(w)
    if len(w) < 2 or len(w) > 40 or w.isupper() or any(c.isupper() for c in w[1:]):
        return True
    if "'" in w or "’" in w:
        return True  # an English contraction or a transcribed foreign name
    dot = text[word.end : word.end + 1] == "."
    return is_abbreviation(w) or (dot and len(w) <= 4 and not VOWELS.intersection(w))


def must_capitalise(word: str) -> bool:
    """Morfeusz knows `word` only as a form of names ("Francją", "Japończyków", "Lesiaka")."""
    interps = tuple(i for i in analyse(word) if i.pos not in ("interp", "ign"))
    return bool(interps) and _proper_only(interps)


def _capitals_only(word: str) -> bool:
    """Every lemma Morfeusz knows `word` by has a capital somewhere ("oddac": "odDac")."""
    interps = tuple(i for i in analyse(word) if i.pos not in ("interp", "ign"))
    bases = [i.lemma.split(":")[0] for i in interps]  # "on:S": the base, not its mark
    return bool(bases) and all(b != b.lower() for b in bases)


def _question(
    word: Word, neighbours: list[str], in_compound: bool = False, in_name: bool = False
) -> Finding | None:
    """The dictionary's verdict on one word (its parts, if it is hyphenated, go separately).

    `in_compound`: the word is a part of a hyphenated word ("san-stefańskim": a name's
    adjective, small); `in_name`: of one whose parts are all capitalised ("Sacher-Masoch").
    """
    w = word.text
    if _shift_held(w):  # "NAdolski" -> "Nadolski"; "ZSkłonny" questioned as "Zskłonny"
        if is_known(w) or sjp_knows(w[0] + w[1:].lower()):
            return _finding(word, (Candidate(w.lower(), CASE_COST),), "case")
        finding = _question(replace(word, text=w[0] + w[1:].lower()), neighbours)
        return replace(finding, word=w) if finding is not None else None
    low = w.lower()
    if is_known(w):
        if w.islower() and _capitals_only(w) and not in_compound:
            return _lower_case_name(word, neighbours)
        if not rare_form(w):
            return _context_candidate(word, low)
        found = candidates(low)
        if _english(low, neighbours, found):
            return None
        zipf = polish_zipf(low)
        found = tuple(c for c in found if " " not in c.text and _beats_rare(c, zipf))
        return _finding(word, found, "rare-form") if found else None
    if sjp_knows(w):  # a rare correct form only hunspell-pl's list has ("termidoriańskim")
        return None
    found = candidates(low)
    if _english(low, neighbours, found):
        return _english_amid_polish(word, neighbours, found)
    if w[0].isupper():
        return (
            _name_or_slip(word, found, in_name)
            or _unknown_first(word, found, in_name)
            or _name_near(word)
        )
    return _unknown(word, found)


def _english_amid_polish(
    word: Word, neighbours: list[str], found: tuple[Candidate, ...]
) -> Finding | None:
    """An English word among Polish ones, a slip from a common Polish form: the model's question.

    "ma zawsze take samo stężenie" (PlEWi: "takie"). Alone in Polish prose an English word is
    a slip as often as a term; the model clears the terms ("suwak slider przełącznik", "wybierz
    yes przy"). Small letters only, with two known words about it at least, all small.
    """
    if not word.text.islower() or len(neighbours) < 2:
        return None
    if not all(n.islower() and is_known(n) for n in neighbours):
        return None
    near = tuple(_slips(found, ENGLISH_SLIP_ZIPF))
    if not near:
        return None
    return _model_question(word, near)


def _unknown_first(word: Word, found: tuple[Candidate, ...], in_name: bool) -> Finding | None:
    """A sentence's first word that no list knows, even as a name: judged as if written small.

    The capital there says nothing of a name, so "Thermidorianie" is as unknown as
    "thermidorianie"; a word Polish or English text writes ("Kaddafi" is counted) stays a name,
    unless it is a common misspelling (`_misspelt_first`).
    """
    low = word.text.lower()
    if not word.sentence_start or in_name or english_zipf(low):
        return None
    if seen := _seen(low):
        return _misspelt_first(word, found, seen)
    finding = _unknown(replace(word, text=low), found)
    if finding is None:
        return None
    cased = tuple(_cased(s, word.text) for s in finding.suggestions)
    return replace(finding, word=word.text, suggestions=cased)


def _misspelt_first(word: Word, found: tuple[Candidate, ...], seen: float) -> Finding | None:
    """A sentence's first word Polish text writes, a cheap slip of a form as common: asked.

    wordfreq counts the commonest misspellings with the names: "Poprostu" is "Po prostu" (a
    missing space). Asked of the model where a slip cheaper than an edit gives a form at least
    as common as the word; "Kaddafi" ("Kadafi" is rarer) is not asked, and the model clears
    "Nelli" ("Belli"). With a Polish letter, no foreign name, it is questioned outright: the
    embedded model reads "Wogóle" only 4.5 nats less likely than "W ogóle" there.
    """
    near = tuple(c for c in found if c.cost < EDIT_COST and _zipf(c.text) >= seen)
    if near and POLISH_LETTERS.intersection(word.text):
        return _finding(word, found, "unknown")  # all its corrections: "Wziąść" -> "Wziąć"
    return _model_question(word, near) if near else None


def _unknown(word: Word, found: tuple[Candidate, ...]) -> Finding | None:
    """A small-letter word Morfeusz does not know: questioned where it looks Polish.

    It does with a Polish letter, with a likely slip of a known form (`_likely`), or with
    letter trigrams that occur in Polish forms, but for one in ODD_SHARE (a slip's: "watwch"),
    where no word list knows it (neither hunspell-pl's, checked before, nor wordfreq's of
    Polish text or English: "thermidorianie"); without any it is a command, code, or another
    language's word ("passwd", "dpkg", "uvicorn"), left alone. Questioned with the nearest
    forms (two edits away where no slip explains it: `wider`), or, with a Polish letter or
    unknown to every list, with none: an unknown word, which the writer may add to the
    dictionary.
    """
    low = word.text
    polish = bool(POLISH_LETTERS.intersection(low))
    unseen = not (other_zipf(low) or english_zipf(low)) and _polish_looking(low)
    if not (polish or unseen) and found and not any(map(_likely, found)):
        return None
    if not found or found[0].cost >= EDIT_COST:
        wide = wider(low)
        found = _merged(found, wide if polish or unseen or found else tuple(filter(_likely, wide)))
    if not found and not unseen and (not polish or other_zipf(low)):
        return None
    return _finding(word, found, "unknown")


def _name_near(word: Word) -> Finding | None:
    """A name Polish text never writes, a slip from one it does: the model's question.

    "Wilhelm Libknecht" (-> "Liebknecht"), "w Lyonie i w Anniens" (-> "Amiens"): the model
    knows the famous name and reads it far likelier. Only names NAME_NEAR_ZIPF common a slip
    NAME_NEAR_COST away: past that, the slip's cost leaves the model no room to win by its
    margin. A name Polish text writes is its bearer's ("Hozer", a character of Prus's, not
    the singer Hozier): `_name_or_slip` weighs it against near Polish forms, no name is asked.
    """
    low = word.text.lower()
    if not set(low) <= POLISH_ALPHABET or _seen(low) or english_zipf(low):
        return None
    near = _names_near(low)
    return _model_question(word, near) if near else None


def _names_near(low: str) -> tuple[Candidate, ...]:
    """Names Polish text writes NAME_NEAR_ZIPF often, a slip NAME_NEAR_COST from `low`."""
    return tuple(
        c
        for c in names_near(low)
        if c.cost <= NAME_NEAR_COST and other_zipf(c.text) >= NAME_NEAR_ZIPF
    )


def _polish_looking(low: str) -> bool:
    """Letter trigrams Polish writes, but for one in ODD_SHARE: a slip's ("rozrgearno")."""
    odd, total = odd_trigrams(low, ODD_TRIGRAM)
    return odd * ODD_SHARE <= total


def _likely(c: Candidate) -> bool:
    """A correction a slip explains well.

    A cheap one, or one as likely as a single edit of a word of Zipf LIKELY_ZIPF (a farther
    one must be commoner).
    """
    return c.cost < EDIT_COST or prior(c) >= LIKELY_ZIPF * LN10 - ERROR_NATS * EDIT_COST


def _merged(*groups: tuple[Candidate, ...]) -> tuple[Candidate, ...]:
    """Candidates of several searches, each form once at its lowest cost."""
    best: dict[str, Candidate] = {}
    for c in (c for g in groups for c in g):
        if c.text not in best or c.cost < best[c.text].cost:
            best[c.text] = c
    return tuple(sorted(best.values(), key=lambda c: (c.cost, c.text)))


def _lower_case_name(word: Word, neighbours: list[str]) -> Finding | None:
    """A name's form written small ("francją"): the capital, unless a slip explains it better.

    "bedzie" is a form of the name Beda too, but "będzie" is far likelier; a name that is also
    an English word in an English run ("polish jokes") is left alone.
    """
    low = word.text
    found = candidates(low)
    if _english(low, neighbours, found):
        return None
    zipf = polish_zipf(low)
    near = tuple(c for c in found if " " not in c.text and _beats_rare(c, zipf))
    if must_capitalise(low):
        near = (Candidate(low, CASE_COST), *near, *_common_forms(low))
    if not near:
        return None
    finding = _finding(word, near, "case")
    return finding if finding.candidates[0].text == low else replace(finding, reason="rare-form")


def _common_forms(word: str) -> tuple[Candidate, ...]:
    """Where a name is also a common noun, that noun's forms in the name's number and case.

    "koniami" is a form of the Koń family only; the horses are "końmi", a likelier slip than a
    lost capital (SGJP declines the name regularly, the noun not).
    """
    out = []
    for i in analyse(word):
        name = reading(i.lemma, i.tag)
        base = i.lemma.split(":")[0]
        if name.pos != "subst" or base == base.lower():
            continue
        for orth, tag, quals in paradigm(base.lower()):
            noun = reading(base.lower(), tag)
            if (
                noun.pos != "subst"
                or orth == word
                or RARE_QUALIFIERS & set(",".join(quals).split(","))
            ):
                continue
            if name.number & noun.number and name.case & noun.case:
                out.append(Candidate(orth, CASE_COST))
    return tuple(dict.fromkeys(out))


def _name_or_slip(word: Word, found: tuple[Candidate, ...], in_name: bool) -> Finding | None:
    """A capitalised word Morfeusz does not know: a slip of a known form, or a name.

    A word Polish text never writes (not in wordfreq's list, where the names and foreign words
    Morfeusz lacks are counted) is a slip of any known form UNSEEN_MAX_COST near, and then of
    the names a slip away too (`_names_near`: "Hesjii" is "Hesji", not "Heski"); one it does
    write (or its stem: "Debian|em"), or a part of a hyphenated name ("Sacher-Masoch"), only
    where the noisy channel prefers a near form (how common, less how unlikely the slip) to the
    word as written by NAME_MARGIN. A word no known form is near, or with a letter Polish does
    not use, is a name. At a sentence's start alike: a capital there hides no slip.
    """
    low = word.text.lower()
    if not set(low) <= POLISH_ALPHABET:
        return None
    if not found or found[0].cost >= EDIT_COST:
        found = _merged(found, wider(low))
    seen = _seen(low)
    found = tuple(c for c in found if " " not in c.text)
    if seen == 0 and not in_name:
        near = tuple(c for c in found if c.cost <= UNSEEN_MAX_COST)
        near = _merged(near, _names_near(low)) if near else ()  # "Hesjii": "Hesji" too
    else:
        near = tuple(c for c in found if prior(c) >= seen * LN10 + NAME_MARGIN)
    return _finding(word, near, "unknown") if near else None


def _beats_rare(c: Candidate, zipf: float) -> bool:
    """A correction of a rare form: near and far commoner, or a slip away and commoner still."""
    if c.cost <= RARE_MAX_COST:
        return polish_zipf(c.text) >= max(zipf + RARE_MIN_LEAD, NAME_MIN_ZIPF)
    return c.cost <= EDIT_COST and polish_zipf(c.text) >= max(zipf + 2 * RARE_MIN_LEAD, 4.0)


def _stray(tokens: list[Word], k: int, text: str) -> bool:
    """A one- or two-letter slip between two Polish words ("lichtarz x rączką", "ww obecności").

    Not a Polish word, not before "." or ")" (an abbreviation, a list label), both neighbours
    lower-case Polish words a single space away: no variable, initial or label sits there.
    """
    w = tokens[k].text
    if len(w) > 2 or not w.islower() or w in "aiouwz" or not 0 < k < len(tokens) - 1:
        return False
    if text[tokens[k].end : tokens[k].end + 1] in (".", ")"):
        return False
    if is_known(w) and not all(i.pos == "brev" for i in analyse(w + ".") if i.orth != "."):
        return False
    before, after = tokens[k - 1], tokens[k + 1]
    if text[before.end : tokens[k].start] != " " or text[tokens[k].end : after.start] != " ":
        return False
    return all(len(t.text) > 2 and t.text.islower() and is_known(t.text) for t in (before, after))


def _stray_finding(word: Word) -> Finding | None:
    """A question for the model only: "zmienna x oraz y" is right, "lichtarz x rączką" not."""
    found = tuple(
        c
        for c in candidates(word.text)
        if c.cost <= NEIGHBOUR_MAX and " " not in c.text and polish_zipf(c.text) >= STRAY_ZIPF
    )
    if not found:
        return None
    return _model_question(word, found)


def _context_candidate(word: Word, low: str) -> Finding | None:
    """A known word with a far commoner near form: questioned only if the model agrees.

    The near form is a diacritic away and CONTEXT_MIN_LEAD commoner; or, where Polish text
    never writes the word (no wordfreq count: a rare derivation Morfeusz generates,
    "przysosowane", "substacją"), a slip away and UNSEEN_NEAR_ZIPF common. Not for a capital
    inside a sentence: a rare name ("Klejn", "Latoń") is written as its bearer writes it.
    """
    if len(low) < 2:
        return None
    lead = polish_zipf(low) + CONTEXT_MIN_LEAD
    near = [c for c in same_key(low) if c.cost <= CONTEXT_MAX_COST and polish_zipf(c.text) >= lead]
    unseen = len(low) >= UNSEEN_MIN_LEN and not (polish_zipf(low) or other_zipf(low))
    if unseen and (word.sentence_start or low == word.text):
        near += _slips(listed(low), UNSEEN_NEAR_ZIPF)
    # another form of the same word is grammar's question
    near = tuple(c for c in _merged(tuple(near)) if not _lemmas(c.text) & _lemmas(low))
    if not near:
        return None
    return _model_question(word, near)


def _model_question(word: Word, near: tuple[Candidate, ...]) -> Finding:
    """A word only the model may question: flagged where it reads a near form far likelier."""
    return Finding(word.start, word.end, word.text, (), "context", known=True, candidates=near)


def _finding(word: Word, found: tuple[Candidate, ...], reason: str) -> Finding:
    ranked = tuple(sorted(found, key=prior, reverse=True))
    best = prior(ranked[0]) if ranked else 0.0
    shown = [c for c in ranked[:MAX_SUGGESTIONS] if prior(c) >= best - SUGGESTION_SPREAD]
    suggestions = tuple(_cased(c.text, word.text) for c in shown)
    return Finding(word.start, word.end, word.text, suggestions, reason, candidates=ranked)


def _parts(word: Word) -> list[Word]:
    """A hyphenated word Morfeusz does not know as a whole: each part on its own."""
    if "-" not in word.text or is_known(word.text):
        return [word]
    out, offset = [], word.start
    for i, part in enumerate(word.text.split("-")):
        first = word.sentence_start and i == 0
        out.append(Word(offset, offset + len(part), part, first))
        offset += len(part) + 1
    return out


def check(
    text: str, allowed: Callable[[str], bool] = lambda word: False, terms: bool = True
) -> list[Finding]:
    """The dictionary pass over `text`: questioned words, with candidates best first.

    `allowed(word)` says whether the user accepted a word (dictionaries, ignore lists);
    `terms`: leave out the terms `text` repeats (drop_terms; a paragraph of a document is
    checked without, the document's findings are filtered whole). Known
    words that only the model may question come back with reason "context" and no
    suggestions: `rank` decides them, `questioned` drops them where no model reads.
    """
    found: list[Finding] = []
    tokens: list[Word] = []
    compound: set[int] = set()  # where the parts of hyphenated words start
    name_parts: set[int] = set()  # ... of hyphenated names ("Sacher-Masoch")
    for w in words(text):
        parts = _parts(w)
        tokens += parts
        if len(parts) > 1:
            compound |= {p.start for p in parts}
            if all(p.text[:1].isupper() for p in parts):
                name_parts |= {p.start for p in parts}
    for k, word in enumerate(tokens):
        if allowed(word.text):
            continue
        if _stray(tokens, k, text):
            found += [f for f in [_stray_finding(word)] if f is not None]
            continue
        if _skipped(word, text):
            continue
        neighbours = [t.text for t in tokens[max(0, k - 2) : k + 3] if t is not word]
        finding = _question(word, neighbours, word.start in compound, word.start in name_parts)
        if finding is not None:
            found.append(finding)
    return drop_terms(found) if terms else found


def _slip_like(finding: Finding) -> bool:
    """Explained by a slip a writer may repeat.

    Lost diacritics, a sounds-alike spelling, a doubled or swapped letter, a missing space
    ("napewno").
    """
    return bool(POLISH_LETTERS.intersection(finding.word)) or any(
        c.cost < TERM_MIN_COST or " " in c.text for c in finding.candidates
    )


def drop_terms(findings: list[Finding]) -> list[Finding]:
    """Without the unknown words one document writes the same way TERM_REPEATS times or more.

    Such a word is a command, a project's or a product's name, not a slip of the keyboard,
    unless a slip a writer repeats explains it: "sie" and "napewno" stay questioned.
    """
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.word.lower()] = counts.get(f.word.lower(), 0) + 1
    return [
        f
        for f in findings
        if f.reason != "unknown" or counts[f.word.lower()] < TERM_REPEATS or _slip_like(f)
    ]


def slip(finding: Finding) -> bool:
    """Its first correction undoes a usual slip (up to a moved letter), not any two edits."""
    if not finding.suggestions:
        return False
    first = finding.suggestions[0].lower()
    return any(c.cost <= SLIP_COST for c in finding.candidates if c.text == first)


def questioned(findings: Iterable[Finding]) -> list[Finding]:
    """Findings to show: the model's "context" questions are left out until it answers."""
    return [f for f in findings if f.reason != "context"]


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the model's reading starts and ends around text[start:end].

    From the sentence's (or paragraph's) start, LEFT_CHARS at most, to RIGHT_WORDS words after
    the word, the sentence's end at most: the words on both sides that agreement depends on.
    """
    left = max(0, start - LEFT_CHARS)
    for m in _SENTENCE_END.finditer(text, left, start):
        left = m.end()
    if left == start - LEFT_CHARS and left > 0:
        space = text.find(" ", left, start)
        left = space + 1 if space >= 0 else start
    while left < start and text[left].isspace():
        left += 1
    right = end
    for _ in range(RIGHT_WORDS):
        m = _NEXT_WORD.match(text, right)
        if m is None:
            break
        right = m.end()
    return left, right


def rank_one(text: str, finding: Finding, score: Score) -> Finding | None:
    """One finding, re-ranked by the model in its sentence; None when the model clears it.

    An unknown word stays questioned whatever the model says: the model only orders its
    corrections. Returns the finding unchanged where the model gives no log-probabilities.
    """
    top = sorted(finding.candidates, key=prior, reverse=True)[:MODEL_CANDIDATES]
    if not top:
        return finding
    if not finding.known and (len(top) == 1 or prior(top[0]) - prior(top[1]) >= CLEAR_LEAD):
        return finding
    left, right = _sentence_bounds(text, finding.start, finding.end)
    prefix, after = text[left : finding.start], text[finding.end : right]
    options = [_cased(c.text, finding.word) for c in top]
    if finding.known:
        options.append(finding.word)
    logprobs = score(prefix, [option + after for option in options])
    if logprobs is None:
        return finding if not finding.known else None
    noisy = [lp - ERROR_NATS * c.cost for lp, c in zip(logprobs, top, strict=False)]
    order = sorted(range(len(top)), key=lambda i: noisy[i], reverse=True)
    if finding.known and noisy[order[0]] < logprobs[-1] + MODEL_MARGIN:
        return None
    best = tuple(options[i] for i in order)
    rest = tuple(s for s in finding.suggestions if s not in best)
    reason = "context" if finding.known else finding.reason
    return replace(
        finding,
        suggestions=(best + rest)[:MAX_SUGGESTIONS],
        reason=reason,
        ranked_by="model",
    )


def rank(text: str, findings: Iterable[Finding], score: Score) -> list[Finding]:
    """The model pass over the dictionary's findings (see rank_one)."""
    out = []
    for finding in findings:
        ranked = rank_one(text, finding, score)
        if ranked is not None:
            out.append(ranked)
    return out


class Paragraphs:
    """The dictionary pass over a whole document, kept per paragraph across edits.

    An edit changes one paragraph or two; only those are checked again, the others come from
    the cache (keyed by their text and the user's dictionaries' version), moved to where the
    paragraph now starts. Bounded: the least recently used paragraphs are dropped past `size`.
    """

    def __init__(self, size: int = 4096):
        self.size = size
        self._cache: dict[tuple[str, int], list[Finding]] = {}

    def walk(
        self, text: str, allowed: Callable[[str], bool] = lambda word: False, version: int = 0
    ) -> Iterator[tuple[int, int, list[Finding], bool]]:
        """Per paragraph: (start, end, its findings in document offsets, whether checked anew).

        A caller may pause between paragraphs (the server yields to completion requests).
        """
        off = switched_off(text)
        for start, end in paragraphs(text):
            if any(a <= start and end <= b for a, b in off):
                continue
            key = (text[start:end], version)
            found = self._cache.pop(key, None)
            fresh = found is None
            if found is None:
                found = check(key[0], allowed, terms=False)
            self._cache[key] = found
            yield (
                start,
                end,
                [_moved(f, start) for f in found if not _inside(start + f.start, off)],
                fresh,
            )
        while len(self._cache) > self.size:
            del self._cache[next(iter(self._cache))]

    def check(
        self, text: str, allowed: Callable[[str], bool] = lambda word: False, version: int = 0
    ) -> tuple[list[Finding], list[tuple[int, int]]]:
        """(findings of `text` in document offsets, the paragraphs checked anew)."""
        found: list[Finding] = []
        fresh: list[tuple[int, int]] = []
        for start, end, findings, new in self.walk(text, allowed, version):
            found += findings
            if new:
                fresh.append((start, end))
        return drop_terms(found), fresh


def _moved(finding: Finding, by: int) -> Finding:
    return replace(finding, start=finding.start + by, end=finding.end + by) if by else finding


def _inside(offset: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= offset < b for a, b in spans)


def needs_model(finding: Finding) -> bool:
    """Whether `rank_one` would ask the model: a known word's question, or close candidates."""
    if finding.known:
        return True
    top = sorted(finding.candidates, key=prior, reverse=True)[:2]
    return len(top) == 2 and prior(top[0]) - prior(top[1]) < CLEAR_LEAD
