"""Where neighbouring Polish words cannot agree, by Morfeusz's tags, and which forms would.

Polish marks agreement in the endings: an adjective takes its noun's case, number and gender
("amerykańska aktorka"), a verb its subject's number, gender and person ("moneta była"), a
preposition chooses its noun's case ("do schroniska"), a number its noun's case and number
("21 medali"). Morfeusz 2 (SGJP) gives every reading of every form, so a pair of neighbours
disagrees when *no* pair of their readings agrees: ambiguity only ever clears a word (a noun
that may be genitive or nominative is taken as either), never condemns it.

A `Conflict` names the word to change, the relation broken, and the other forms of its lemma
that would mend it: same class, same lemma, aspect, degree and negation, only case, number,
gender or person changed, and agreeing with the neighbour. Which of those (if any) the writer
meant is the model's question (polish/grammar.py); this module only says where to ask.

Relations (each between words with only spaces between them, in one sentence):
- `adj-noun`: an adjective or participle before or after its noun;
- `subject-verb`: a nominative noun or pronoun beside a finite verb or a past form;
- `prep-case`: a preposition and the case of the word after it (the preposition may be the
  wrong one too: the simple prepositions that take that case are its candidates);
- `numeral-noun`: a number written in digits and its noun ("21 medale" -> "21 medali"), and
  a number word of another gender than its noun ("dwa kobiety" -> "dwie");
- `government`: a verb with no object (its lemma has no passive participle: "jechać"), its
  subject before it, and a bare nominative/accusative noun after it ("Ona jedzie samochód");
- `subject-verb` too: a nominative noun before an impersonal form, which takes no subject
  ("Rodzina królewska często zatrzymywano orszak" -> "zatrzymywała");
- `subject-after`: a verb that takes no object, no subject before it, and a genitive after it
  that agrees with it in the nominative ("gdzie później powstał kościoła" -> "kościół");
- `relative`: "który" before a noun it does not agree with, which it owns ("wierzyciela,
  który sytuacja" -> "którego");
- `antecedent`: "który" after a comma, in a number and gender of no word of the phrase
  before the comma, which it stands for ("Kupiłem książkę, który czytam" -> "którą");
- `negation`: a negated verb that takes an accusative object, and a noun or number after it
  in the accusative: a negated verb's object is genitive ("nie wnoszące wiele walorów" ->
  "wielu", "nie mam czas" -> "czasu");
- `numeral-subject`: a count in digits that takes the genitive ("5", "12", "1,6 miliona"),
  its noun, and a past or present verb after it: such a subject takes the neuter singular
  ("Ponad 1,6 miliona dolarów trafiła" -> "trafiło");
- `participle`: an adverbial participle joined by "i" to an adjectival one, which it meant
  ("kanały przyspieszając i ukierunkowujące płyn" -> "przyspieszające");
- `count-noun`: a word that counts and governs its noun ("pięć", "kilka", "tysiące")
  and a noun after it in no genitive ("tysiące ludzie" -> "ludzi");
- `predicate`: an adjective in the instrumental as the predicate of "być" whose subject is a
  clause or a verbal noun: the neuter nominative ("Pożądanym jest, aby" -> "Pożądane").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import NamedTuple

from polish.morphology import analyse, is_abbreviation, paradigm
from polish.sentences import ends_sentence
from polish.words import prose_matches

CASES = frozenset({"nom", "gen", "dat", "acc", "inst", "loc", "voc"})
NUMBERS = frozenset({"sg", "pl"})
GENDERS = frozenset({"m1", "m2", "m3", "f", "n", "n1", "n2", "p1", "p2", "p3"})
PERSONS = frozenset({"pri", "sec", "ter"})
NEUTER = frozenset({"n", "n1", "n2"})
NOMINAL = frozenset({"subst", "depr", "ger"})
PRONOUN = frozenset({"ppron12", "ppron3"})
ADJECTIVAL = frozenset({"adj", "ppas", "pact"})
FINITE = frozenset({"fin", "praet", "bedzie", "winien"})
DECLINED = NOMINAL | PRONOUN | ADJECTIVAL | {"num", "siebie"}
VERBAL = FINITE | {"inf", "imps", "impt", "pcon", "pant", "pred"}
# Readings that cannot begin a noun phrase: a word with one of these may be something else.
UNDECLINED = frozenset(
    {"adv", "qub", "part", "conj", "comp", "prep", "interj", "brev", "adja", "adjp", "adjc"}
)
RARE = frozenset({"daw.", "arch.", "przest.", "gwar.", "daw._dziś_gwar.", "rzad.", "pot."})
# The simple prepositions: what a wrong one may have been meant as.
PREPOSITIONS = (
    "w", "we", "z", "ze", "na", "do", "od", "o", "po", "przy", "przez", "za", "nad", "pod",
    "przed", "dla", "bez", "u", "ku", "między", "od", "spod", "znad", "zza", "wśród",
)  # fmt: skip
PREP_OPTIONS = 4  # the commonest prepositions that take the case found
# Verbs that take a nominative or instrumental complement, not an object: "był lekarz".
COPULAS = frozenset({"być", "zostać", "zostawać", "bywać", "pozostać", "pozostawać", "stać"})
MONTHS = frozenset(
    "styczeń luty marzec kwiecień maj czerwiec lipiec sierpień wrzesień październik "
    "listopad grudzień".split()
)
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:-[^\W\d_]+)*")
_STOP = re.compile(r"[.!?…]+[\"'”»)]*(?=\s|$)|\n[ \t]*\n")


class Reading(NamedTuple):
    """One reading of a word: its lemma, class and the features agreement looks at."""

    lemma: str
    pos: str
    number: frozenset[str]
    case: frozenset[str]
    gender: frozenset[str]
    person: frozenset[str]
    rest: tuple[str, ...]  # aspect, degree, negation...: what a candidate keeps
    tag: str


@lru_cache(maxsize=1 << 15)
def reading(lemma: str, tag: str) -> Reading:
    """A tag's fields sorted by what they mean (each field may list alternatives: "nom.acc")."""
    pos, *fields = tag.split(":")
    sets: dict[str, frozenset[str]] = {}
    rest = []
    for field in fields:
        values = frozenset(field.split("."))
        for name, known in (
            ("case", CASES),
            ("number", NUMBERS),
            ("gender", GENDERS),
            ("person", PERSONS),
        ):
            if values <= known:
                sets[name] = values
                break
        else:
            rest.append(field)
    empty: frozenset[str] = frozenset()
    return Reading(
        lemma,
        pos,
        sets.get("number", empty),
        sets.get("case", empty),
        sets.get("gender", empty),
        sets.get("person", empty),
        tuple(rest),
        tag,
    )


@lru_cache(maxsize=1 << 16)
def readings(word: str) -> tuple[Reading, ...]:
    """The plausible readings of `word` as one segment (a form with a clitic has none).

    Left out where the word has others: archaic and dialect readings, vocatives, imperatives
    ("kraj" of "krajać": prose rarely commands), and indeclinable nouns (letter and note names:
    "te", "do"), which would agree with anything.
    """
    interps = analyse(word)
    end = max((i.end for i in interps), default=0)
    found = [
        (reading(i.lemma, i.tag), set(",".join(i.qualifiers).split(",")))
        for i in interps
        if i.start == 0 and i.end == end and i.pos not in ("ign", "interp")
    ]
    plausible = tuple(
        r
        for r, quals in found
        if not quals & RARE and r.case != {"voc"} and len(r.case) < len(CASES) and r.pos != "impt"
    )
    return plausible or tuple(r for r, _ in found)


@dataclass(frozen=True)
class Token:
    start: int  # code point offsets in the text
    end: int
    text: str
    readings: tuple[Reading, ...]
    joined: bool  # only spaces since the token before, in the same sentence
    sentence: int
    gap: str = ""  # the text since the token before

    def has(self, classes: Iterable[str]) -> bool:
        wanted = set(classes)
        return any(r.pos in wanted for r in self.readings)

    def only(self, classes: Iterable[str]) -> bool:
        wanted = set(classes)
        return bool(self.readings) and all(r.pos in wanted for r in self.readings)

    def of(self, classes: Iterable[str]) -> list[Reading]:
        wanted = set(classes)
        return [r for r in self.readings if r.pos in wanted]


def tokens(text: str) -> list[Token]:
    """The words and numbers of `text` outside code, URLs and markup, with their readings."""
    out: list[Token] = []
    sentence = 0
    for m, previous_end in prose_matches(_TOKEN, text):
        start, end = m.span()
        gap = text[previous_end:start]
        if out and _ends(text, previous_end, gap):
            sentence += 1
        joined = bool(out) and out[-1].sentence == sentence and gap != "" and not gap.strip()
        joined = joined and previous_end == out[-1].end
        word = m.group()
        glued = text[end : end + 1] in ("'", "’", ".") and text[end + 1 : end + 2].isalnum()
        short = text[end : end + 1] == "." and is_abbreviation(word)  # "art. 5", "ok. 600"
        found = () if word[0].isdigit() or glued or short else readings(word)
        token = Token(start, end, word, found, joined, sentence, gap)
        out.append(_governed(out[-1], token) if out and joined else token)
    return out


def _governed(before: Token, t: Token) -> Token:
    """After a preposition a word is declined, in a case it takes: other readings go.

    "o układzie" is no verb; "do szkoły" is the genitive singular, so "do szkoły podstawowe"
    cannot agree. Where no reading is left the preposition is wrong or the word is, which
    is agreement's question; a word such as "tak" ("w tak krótkim czasie") stays.
    """
    if not before.has({"prep"}) or before.has(DECLINED | FINITE) and not _is_preposition(before):
        return t
    kept = tuple(r for r in t.readings if r.pos not in VERBAL)
    if _is_preposition(before) and t.only(NOMINAL):
        cases = _prep_cases(before.text)
        kept = tuple(r for r in kept if r.case & cases) or kept
    return replace(t, readings=kept) if kept and len(kept) < len(t.readings) else t


def _is_preposition(t: Token) -> bool:
    """Only a preposition, or a simple one: "od" before a noun is no "ód" of "oda".

    Not "a", which is a conjunction as often.
    """
    return t.only({"prep"}) or t.has({"prep"}) and t.text.lower() in PREPOSITIONS


def _ends(text: str, at: int, gap: str) -> bool:
    """A sentence ends in `gap` (text from `at`): a full stop that is no abbreviation's."""
    for m in _STOP.finditer(gap):
        if m.group().startswith("\n") or ends_sentence(text, at + m.end()):
            return True
    return False


def agree(a: Reading, b: Reading, features: tuple[str, ...]) -> bool:
    """Every feature both readings mark shares a value."""
    for name in features:
        x, y = getattr(a, name), getattr(b, name)
        if x and y and not x & y:
            return False
    return True


NP = ("number", "case", "gender")


@dataclass(frozen=True)
class Conflict:
    """A word that does not agree with its neighbour, and the forms of it that would."""

    index: int  # the token to change
    relation: str
    other: int  # the neighbour it disagrees with
    options: tuple[str, ...]  # forms that agree, as written (capital kept)


def _forms(r: Reading, ok) -> list[str]:
    """Forms of `r`'s lemma in `r`'s class, keeping what is not inflection, that satisfy `ok`."""
    out = []
    for orth, tag, quals in paradigm(r.lemma):
        if set(",".join(quals).split(",")) & RARE:
            continue
        other = reading(r.lemma, tag)
        if other.pos != r.pos or other.rest != r.rest or not ok(other):
            continue
        if orth.startswith("nie") and not r.lemma.startswith("nie") and "neg" in other.rest:
            continue
        out.append(orth)
    return out


def _cased(form: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return form.upper()
    return form[:1].upper() + form[1:] if like[:1].isupper() else form


def _options(token: Token, readings_: list[Reading], ok) -> tuple[str, ...]:
    """Other forms of the token's lemmas (in the given readings) that satisfy `ok`."""
    low = token.text.lower()
    seen: dict[str, None] = {}
    for r in readings_:
        for form in _forms(r, ok):
            if form.lower() != low:
                seen.setdefault(_cased(form, token.text), None)
    return tuple(seen)


def conflicts(toks: list[Token]) -> list[Conflict]:
    """Every disagreement between neighbours in `toks`, with the forms that would mend it."""
    out: list[Conflict] = []
    for i, a in enumerate(toks):
        out += _noun_phrase(toks, i)
        if i + 1 < len(toks) and toks[i + 1].joined:
            for check in (
                _subject_verb, _preposition, _numeral, _government, _subject_after, _relative,
                _negated_object, _participles, _noun_genitive, _counted_noun, _collective,
                _numeral_gender,
            ):  # fmt: skip
                out += check(toks, i, a, toks[i + 1])
        out += _impersonal(toks, i) + _counted_subject(toks, i) + _participle_noun(toks, i)
        out += _predicate(toks, i) + _antecedent(toks, i) + _subject_far(toks, i)
        out += _name_adjective(toks, i)
    return _unique(out)


def _unique(found: list[Conflict]) -> list[Conflict]:
    seen: set[tuple[int, str, tuple[str, ...]]] = set()
    out = []
    for c in found:
        key = (c.index, c.relation, c.options)
        if c.options and key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _nominal(t: Token) -> list[Reading]:
    return t.of(NOMINAL)


def _noun_phrase(toks: list[Token], i: int) -> list[Conflict]:
    """An adjective and its noun (after it, or before it when none follows) that cannot agree.

    No shared case, number and gender; either may be the wrong one ("pewna rolę", "główną
    zasługa").
    """
    a = toks[i]
    if not _adjective(a, toks, i):
        return []
    right = _noun_after(toks, i)
    left = toks[i - 1] if i > 0 and a.joined and _noun(toks[i - 1], toks, i - 1) else None
    if i + 1 < len(toks) and right is toks[i + 1] and _demonstrative(a):
        left = None  # "za lidera tego okres": "ten" stands after its noun only in set phrases
    adjs = a.of({"adj"})
    if right is None and (not _closes(toks, i) or left and _head_before(toks, i - 1, adjs)):
        return []  # after a genitive, it may be the noun before's: "język znaczników podobny"
    nouns = [n for t in (left, right) if t is not None for n in _nominal(t)]
    if not nouns or any(agree(x, n, NP) for x in adjs for n in nouns):
        return []
    head = right if right is not None else left
    head_at = toks.index(head)
    heads = _nominal(head)
    relation = "pronoun-noun" if _pronoun_too(a) else "adj-noun"
    out = [Conflict(i, relation, head_at, _options(a, adjs, lambda r: _fits(r, heads, NP)))]
    if head is right and head_at == i + 1:
        out.append(
            Conflict(head_at, "adj-noun", i, _options(head, heads, lambda r: _fits(r, adjs, NP)))
        )
    return out


def _name_adjective(toks: list[Token], i: int) -> list[Conflict]:
    """A capitalised adjective that ends a name after a preposition, in another case.

    "w Pałacu Zimowego" -> "Zimowym": after a preposition the name's noun is in a case the
    preposition takes (`_governed`). Only a word that is an adjective and nothing else
    ("Słowackiego" is a surname's form too), ending the name ("w Katedrze Świętego Jana").
    """
    a = toks[i]
    if i < 2 or not a.joined or _common(a) or not a.only({"adj"}):
        return []
    noun, prep = toks[i - 1], toks[i - 2]
    if not (noun.joined and noun.only({"subst"}) and noun.text[:1].isupper()):
        return []
    goes_on = i + 1 < len(toks) and toks[i + 1].joined and not _common(toks[i + 1])
    if not _is_preposition(prep) or goes_on:
        return []
    adjs, nouns = a.readings, noun.readings
    if any(agree(x, n, NP) for x in adjs for n in nouns):
        return []
    return [Conflict(i, "adj-noun", i - 1, _options(a, list(adjs), lambda r: _fits(r, nouns, NP)))]


PRONOMINAL = frozenset({"który", "jaki", "czyj", "co", "kto"})  # head clauses, agree with none
DEMONSTRATIVE = frozenset({"ten", "tamten", "ów"})


def _demonstrative(t: Token) -> bool:
    return any(r.lemma in DEMONSTRATIVE for r in t.of({"adj"}))


def _pronoun_too(t: Token) -> bool:
    """A form of "ten" that is also the pronoun "to" ("tego", "tym").

    Often no adjective at all: "wymaga tego dobro państwa".
    """
    return any(r.pos == "subst" and r.lemma.split(":")[0] == "to" for r in t.readings)


def _closes(toks: list[Token], i: int) -> bool:
    """The word at i ends its phrase.

    Punctuation or the sentence's end follows, or a known word that cannot be a noun (not
    markup, not a word Morfeusz does not know, not a participle that may be one:
    "obsesyjnego zainteresowani" is `_participle_noun`'s).
    """
    if i + 1 >= len(toks) or toks[i + 1].sentence != toks[i].sentence:
        return True
    after = toks[i + 1]
    if after.joined:
        return bool(after.readings) and not (after.has(NOMINAL) and after.has({"ppas", "pact"}))
    return not after.gap.strip(" \t\n,;:–—-)")


def _head_before(toks: list[Token], j: int, adjs: list[Reading]) -> bool:
    """The noun at j is a genitive after a noun (up to 3 words back) the adjective agrees with.

    Only over a chain of genitives: "język znaczników podobny", not "dla Niemiec
    renegocjowaniu spłaty reparacji wojenny" (a locative breaks it).
    """
    k = j
    while k > 0 and j - k < 3 and toks[k].joined:
        if not any("gen" in n.case for n in _nominal(toks[k])):
            return False
        k -= 1
        if any(agree(x, n, NP) for x in adjs for n in _nominal(toks[k])):
            return True
    return False


def _adjective(t: Token, toks: list[Token], i: int) -> bool:
    """An adjective, or a noun as well (participles take objects: "kończący wojnę")."""
    return (
        t.has({"adj"})
        and t.only({"adj", "subst", "conj", "adv", "qub"})
        and not {r.lemma for r in t.readings} & PRONOMINAL
        and _common(t)
    )


def _common(t: Token) -> bool:
    """Not a name: lower case, or the first word of a sentence."""
    return t.text[:1].islower() or t.start == 0 or not t.joined


def _noun(t: Token, toks: list[Token], i: int) -> bool:
    return t.only(NOMINAL) and _common(t)


def _noun_after(toks: list[Token], i: int) -> Token | None:
    """The noun an adjective at `i` stands before, over other adjectives ("nowe polskie auta")."""
    j = i + 1
    while j < len(toks) and toks[j].joined and _adjective(toks[j], toks, j):
        j += 1
    if j < len(toks) and toks[j].joined and _noun(toks[j], toks, j):
        return toks[j]
    return None


def _fits(r: Reading, others: list[Reading], features: tuple[str, ...]) -> bool:
    return any(agree(r, o, features) for o in others)


def _person(r: Reading) -> frozenset[str]:
    """The grammatical person a subject reading gives its verb (nouns: third)."""
    return r.person or frozenset({"ter"})


def _subject_agrees(s: Reading, v: Reading) -> bool:
    if not agree(s, v, ("number", "gender")):
        return False
    if v.pos == "praet":
        return "ter" in _person(s)  # "ja był": a first person takes the clitic ("byłem")
    return not v.person or bool(_person(s) & v.person)


def _verb_options(
    verb: Token, readings_: list[Reading], subjects: list[Reading]
) -> tuple[str, ...]:
    """The verb's other forms (in `readings_`' classes) that one of `subjects` agrees with."""
    return _options(verb, readings_, lambda r: any(_subject_agrees(s, r) for s in subjects))


def _subject_of(t: Token, verbs: list[Reading]) -> bool:
    """`t` may be the subject of one of `verbs`: a nominative reading that agrees with it."""
    return any("nom" in r.case and _subject_agrees(r, v) for r in t.readings for v in verbs)


def _subject_verb(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A nominative noun or pronoun right before a finite verb that fits none of its readings.

    A "nie" may stand between them ("Ja nie umie" -> "umiem"), unless the noun follows a verb
    whose subject it is ("w których przebywał powód nie odbiegały": the cells did not).
    """
    j = i + 1
    if b.text.lower() == "nie" and j + 1 < len(toks) and toks[j + 1].joined:
        if i > 0 and toks[i - 1].has(FINITE):
            return []
        j, b = j + 1, toks[j + 1]
    if not (b.has(FINITE) and b.only(FINITE | {"adj", "subst"}) and a.only(NOMINAL | PRONOUN)):
        return []
    subjects = [r for r in a.readings if "nom" in r.case]
    if not subjects or a.text.lower() in ("to", "co", "pan", "pani"):
        return []  # "pan myślisz": an honorific with the second person, in older prose
    if i > 0 and toks[i].joined and toks[i - 1].text.lower() in ("i", "oraz", "lub", "albo"):
        return []  # a subject of two or more: "Jan i Maria poszli"
    verbs = b.of(FINITE)
    if any(_subject_agrees(s, v) for s in subjects for v in verbs):
        return []
    if any(agree(s, r, NP) for s in subjects for r in b.of({"adj"})):
        return []  # an adjective after its noun: "Dzieci małe"
    if any(r.case & {"dat", "inst", "loc"} for r in a.readings) or not _common(a):
        return []  # "We Lwowie odbyła się"
    if any(r.case - {"nom", "voc"} for r in a.readings):
        lemmas = {v.lemma for v in verbs}
        if any(_transitive(lemma) for lemma in lemmas) and any("acc" in r.case for r in a.readings):
            return []  # an object before its verb: "Dom kupili sąsiedzi"
        if any("gen" in r.case for r in a.readings) and any(
            v.number == {"sg"} and (v.gender <= {"n"} or v.pos == "fin") for v in verbs
        ):
            return []  # a genitive subject: "Dzieci było wiele"
    # "ja", "ty", "my", "wy" leave no doubt: a present or future verb in another person
    person = all(s.pos == "ppron12" for s in subjects) and all(v.pos == "fin" for v in verbs)
    return [
        Conflict(
            j,
            "osoba" if person else "subject-verb",
            i,
            _verb_options(b, verbs, subjects),
        )
    ]


GENITIVE_REACH = 3  # genitive words between a subject and its verb, at most


def _subject_far(toks: list[Token], i: int) -> list[Conflict]:
    """A subject opening its clause, its genitives, then a verb that fits none of its readings.

    "Większość ludności kolonii było emigrantami" -> "była", "Grupa studentów przyszli" ->
    "przyszła": the verb follows the nearer genitive, or nothing. Only words in the genitive
    stand between, none of them a subject the verb agrees with, and the subject opens its
    clause (`_opens`), adjectives before it or not.
    """
    verb = toks[i]
    if not (verb.has(FINITE) and verb.only(FINITE | {"adj", "subst"})):
        return []
    verbs = verb.of(FINITE)
    k = i
    while k > 0 and toks[k].joined and i - k < GENITIVE_REACH and _genitive(toks[k - 1], verbs):
        k -= 1
    if k == i or k == 0 or not toks[k].joined or not _noun(toks[k - 1], toks, k - 1):
        return []
    h = k - 1
    first = h
    while first > 0 and toks[first].joined and _attribute(toks[first - 1]):
        first -= 1
    head = toks[h].readings
    if any(r.lemma.split(":")[0].lower() in COUNT_NOUNS for r in head):
        return []  # "Tysiące ludzi przyszło": a count, its verb neuter singular or not
    subjects = [r for r in head if "nom" in r.case]
    if not subjects or any(r.case - {"nom", "acc", "voc"} for r in head) or not _opens(toks, first):
        return []
    if any(_subject_agrees(s, v) for s in subjects for v in verbs):
        return []
    if any("acc" in r.case for r in head) and _subject_follows(toks, i, verbs):
        return []  # an object first: "Pomnik ofiar wojny odsłonili mieszkańcy"
    if _impersonal_sie(toks, i):
        return []  # "Przepisy tego działu stosuje się": no subject, the noun is the object
    return [Conflict(i, "subject-far", h, _verb_options(verb, verbs, subjects))]


def _impersonal_sie(toks: list[Token], i: int) -> bool:
    """A present-tense verb in the third person singular with "się" right after it."""
    after = toks[i + 1] if i + 1 < len(toks) and toks[i + 1].joined else None
    return (
        after is not None
        and after.text.lower() == "się"
        and any(r.pos == "fin" and r.number == {"sg"} for r in toks[i].readings)
    )


def _attribute(t: Token) -> bool:
    """An adjective before its noun ("Nowa" is a name's and a short adjective's form too)."""
    return t.has({"adj"}) and t.only({"adj", "adjp", "subst"}) and _common(t)


def _genitive(t: Token, verbs: list[Reading]) -> bool:
    """A common noun or adjective in the genitive, and no subject of any of `verbs`."""
    return (
        _common(t)
        and t.only(NOMINAL | ADJECTIVAL)
        and any("gen" in r.case for r in t.readings)
        and not _subject_of(t, verbs)
    )


def _subject_follows(toks: list[Token], i: int, verbs: list[Reading]) -> bool:
    """A nominative the verb at i agrees with comes right after it (over one word at most)."""
    return any(_subject_of(t, verbs) for t in toks[i + 1 : i + 3] if t.joined)


def _impersonal(toks: list[Token], i: int) -> list[Conflict]:
    """A nominative noun (its adjectives and adverbs between) right before an impersonal form.

    "Rodzina królewska często zatrzymywano orszak": an impersonal form ("-no", "-to") has no
    subject, so a noun that can only be one meant the past form that agrees with it.
    """
    verb = toks[i]
    if not verb.only({"imps"}):
        return []
    k = i
    while k > 0 and toks[k].joined and toks[k - 1].only({"adv", "qub", "adj"}):
        k -= 1
    if k == 0 or not toks[k].joined or not _noun(toks[k - 1], toks, k - 1):
        return []
    subjects = toks[k - 1].readings
    if any(r.case != {"nom"} for r in subjects):
        return []  # an object or a genitive before the verb: "Tę książkę czytano"
    past = [r._replace(pos="praet") for r in verb.readings]
    return [
        Conflict(
            i,
            "subject-verb",
            k - 1,
            _verb_options(verb, past, subjects),
        )
    ]


def _subject_after(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A verb with no object and no subject before it, then a genitive that would be one.

    "gdzie później powstał kościoła" (-> "kościół"): the noun agrees with the verb in number
    and gender, only its case is wrong. Verbs that govern a genitive ("sięga końca") are the
    model's to clear.
    """
    if not a.only({"fin", "praet"}) or not b.only({"subst"}) or b.text[:1].isupper():
        return []
    if i > 0 and a.joined and toks[i - 1].has(NOMINAL | PRONOUN):
        return []
    verbs = a.of({"fin", "praet"})
    if any(v.lemma in COPULAS or _transitive(v.lemma) for v in verbs):
        return []
    nouns = b.readings
    if any(r.case != {"gen"} for r in nouns):
        return []
    if not any(agree(v, r, ("number", "gender")) for v in verbs for r in nouns):
        return []
    ok = lambda r: "nom" in r.case and _same_slot(r, nouns)  # noqa: E731
    return [Conflict(i + 1, "subject-after", i, _options(b, nouns, ok))]


RELATIVE = ("który", "która", "które", "którzy")


def _relative(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A "który" right before a noun it cannot agree with: it meant the genitive, the owner.

    "wierzyciela, który sytuacja pogorszyła się" (-> "którego"): the genitive in the number
    and gender written, which follow the noun it stands for; "które wywiad otrzymywał" (an
    object, then the subject) is the model's to clear.
    """
    if a.text.lower() not in RELATIVE or not b.only({"subst"}) or b.text[:1].isupper():
        return []
    if any(agree(x, n, NP) for x in a.readings for n in b.readings):
        return []
    ok = lambda r: "gen" in r.case and _same_slot(r, a.readings)  # noqa: E731
    return [Conflict(i, "relative", i + 1, _options(a, a.readings, ok))]


ANTECEDENT_REACH = 6  # words before the comma that may be what "który" stands for


def _antecedent(toks: list[Token], i: int) -> list[Conflict]:
    """A "który" opening a clause after a comma, in a number and gender of no word before it.

    It takes its noun's number and gender and its own clause's case: "książkę, który czytam"
    (-> "którą"), "dom, w której mieszkałem" (-> "którym"). Any declined word of the
    phrase before the comma clears it ("książka brata, która", "jeden z uczniów, który"); the
    forms offered keep the case and take the nearest noun's number and gender.
    """
    j = i + 1 if toks[i].only({"prep"}) and i + 1 < len(toks) and toks[i + 1].joined else i
    rel = toks[j]
    if i == 0 or toks[i].gap.strip() != ",":
        return []
    if not rel.readings or any(r.lemma != "który" for r in rel.readings):
        return []
    if toks[i - 1].sentence != toks[i].sentence or not toks[i - 1].only({"subst"}):
        return []
    if any(agree(x, r, ("number", "gender")) for x in rel.readings for r in _heads(toks, i)):
        return []
    cases = frozenset().union(*(r.case for r in rel.readings))
    if j > i:
        cases &= _prep_cases(toks[i].text)  # "w której" -> "w którym", not "któremu"
    nouns = toks[i - 1].readings

    def ok(r: Reading) -> bool:
        return bool(r.case & cases) and any(agree(r, n, ("number", "gender")) for n in nouns)

    return [Conflict(j, "antecedent", i - 1, _options(rel, list(rel.readings), ok))]


def _heads(toks: list[Token], i: int) -> list[Reading]:
    """The readings of the words before token i (up to its punctuation) that may head a phrase.

    A noun, pronoun or number; an adjective only where no noun follows it ("jeden z uczniów",
    not "tego" in "tego człowieka").
    """
    out: list[Reading] = []
    for k in range(i - 1, max(-1, i - 1 - ANTECEDENT_REACH), -1):
        after = toks[k + 1] if k + 1 < i else None
        modifier = after is not None and after.has(NOMINAL)
        out += [
            r
            for r in toks[k].readings
            if r.pos in DECLINED and (r.pos not in ADJECTIVAL or not modifier)
        ]
        if not toks[k].joined:
            break
    return out


@lru_cache(maxsize=1 << 12)
def _transitive(lemma: str) -> bool:
    """The verb takes an accusative object: SGJP gives it a passive participle."""
    return any(tag.startswith("ppas") for _, tag, _ in paradigm(lemma))


def _preposition(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A preposition and what follows it in a case it does not take.

    What follows: a noun, or adjectives and their noun ("do schronisko", "w kolejnych
    wyborów"). The preposition may be the wrong word instead ("na wojskami"): the simple ones
    that take the case found are its options.
    """
    preps = a.of({"prep"})
    if not preps or not b.only(DECLINED) or not a.only({"prep"}) and a.text.lower() != "na":
        return []
    cases = frozenset().union(*(p.case for p in preps))
    head, found = _phrase(toks, i + 1)
    if head is None or found & cases:
        return []
    target = toks[head]
    declined = list(target.readings)
    adjs = [r for t in toks[i + 1 : head] for r in t.of({"adj"})]

    def mends(r: Reading) -> bool:
        return bool(r.case & cases) and (not adjs or _fits(r, adjs, ("number", "gender")))

    others = tuple(
        _cased(p, a.text)
        for p in dict.fromkeys(PREPOSITIONS)
        if p != a.text.lower() and _prep_cases(p) & found
    )[:PREP_OPTIONS]
    return [
        Conflict(head, "prep-case", i, _options(target, declined, mends)),
        Conflict(i, "prep-choice", head, others),
    ]


def _phrase(toks: list[Token], j: int) -> tuple[int | None, frozenset[str]]:
    """The word a preposition at j-1 governs, and the cases its phrase can be in.

    The noun after any adjectives, or the word at j; no cases: none, or the words disagree.
    """
    k = j
    while k < len(toks) and toks[k].joined and _adjective(toks[k], toks, k):
        k += 1
    if k > j and k < len(toks) and toks[k].joined and _noun(toks[k], toks, k):
        adjs = [r for t in toks[j:k] for r in t.of({"adj"})]
        nouns = _nominal(toks[k])
        pairs = [(x, n) for x in adjs for n in nouns if agree(x, n, NP)]
        if not pairs:
            return None, frozenset()  # the phrase itself disagrees: adj-noun's question
        return k, frozenset().union(*(x.case & n.case for x, n in pairs))
    t = toks[j]
    if any(not r.case for r in t.readings):
        return None, frozenset()
    return j, frozenset().union(*(r.case for r in t.readings))


def _same_slot(r: Reading, originals: list[Reading]) -> bool:
    """Same number and gender as one of the word's readings: only the case changes."""
    return any(agree(r, o, ("number", "gender")) for o in originals)


@lru_cache(maxsize=64)
def _prep_cases(word: str) -> frozenset[str]:
    return frozenset().union(*(r.case for r in readings(word) if r.pos == "prep"))


def _numeral(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A count in digits (up to 3) and a noun in the nominative or accusative it cannot take."""
    if not a.text.isdigit() or len(a.text) > 3 or b.text[:1].isupper():
        return []
    nouns = b.of(NOMINAL)
    if not nouns or any(n.lemma in MONTHS for n in nouns):
        return []
    if not b.only(NOMINAL) and (not b.only(NOMINAL | ADJECTIVAL) or _noun_after(toks, i + 1)):
        return []  # "5 złote" is the currency; "5 złote medale" counts medals
    label = i > 0 and toks[i].joined and toks[i - 1].has(NOMINAL | {"brev"})
    if label and not toks[i - 1].has(FINITE):
        return []  # a label, not a count: "art. 5 ustawy", "rozdział 3" (but "Mam 5 złote")
    if any(n.case - {"nom", "acc", "voc"} for n in nouns):
        return []
    n = int(a.text)
    if n % 10 in (2, 3, 4) and n % 100 not in (12, 13, 14):
        return []  # "3 medale", "24 osoby"
    if n < 2 or any("pl" not in r.number for r in nouns):
        return []  # a singular after a number is an ordinal as often: "21 rok życia"
    ok = lambda r: "pl" in r.number and "gen" in r.case  # noqa: E731
    return [Conflict(i + 1, "numeral-noun", i, _options(b, nouns, ok))]


def _numeral_gender(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A number word and its noun of another gender: the number word takes the noun's.

    "dwa kobiety" -> "dwie", "obie psy" -> "oba", "trzy chłopcy" -> "trzej", "półtorej roku"
    -> "półtora": where the noun is in the case the number takes (its own, or the genitive
    after one that governs it, "półtora") and only the gender is wrong. Not a word that is
    something else too ("pięć" is also a gerund of "piąć").
    """
    nums = a.of({"num"})
    if not nums or not a.only({"num"}) or not b.only({"subst", "depr"}) or not _common(b):
        return []
    if any(_counts(r, n, ("number", "gender")) for r in nums for n in b.readings):
        return []
    near = [(r, n) for r in nums for n in b.readings if _counts(r, n, ("number",))]

    def ok(x: Reading) -> bool:
        return any(x.case & r.case and agree(x, n, ("number", "gender")) for r, n in near)

    return [Conflict(i, "numeral-noun", i + 1, _options(a, [r for r, _ in near], ok))]


def _counts(r: Reading, n: Reading, features: tuple[str, ...]) -> bool:
    """The number `r` counts the noun `n`: in its case (or the genitive it takes), agreeing."""
    case = "gen" in n.case if "rec" in r.rest else bool(r.case & n.case)
    return case and agree(r, n, features)


def _government(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A verb that takes no object, its subject before it, and a bare noun after it.

    The noun in the nominative or accusative: "Ona jedzie samochód" (-> "samochodem").
    """
    if i == 0 or not toks[i].joined or not a.only({"fin", "praet"}) or not b.only(NOMINAL):
        return []
    subject = toks[i - 1]
    verbs = a.of({"fin", "praet"})
    if any(v.lemma in COPULAS or _transitive(v.lemma) for v in verbs):
        return []
    subjects = [r for r in subject.readings if "nom" in r.case and r.pos in NOMINAL | PRONOUN]
    if not subject.only(NOMINAL | PRONOUN) or not subjects:
        return []
    if not any(_subject_agrees(s, v) for s in subjects for v in verbs):
        return []
    nouns = b.of(NOMINAL)
    if any(n.case - {"nom", "acc", "voc"} for n in nouns) or b.text[:1].isupper():
        return []
    oblique = {"dat", "inst"}  # a genitive object goes with a transitive verb ("szukać")
    return [
        Conflict(
            i + 1,
            "government",
            i,
            _options(b, nouns, lambda r: bool(r.case & oblique) and _same_slot(r, nouns)),
        )
    ]


NO_SUBJECT = frozenset({"inf", "pcon", "pant", "pact", "ger", "imps"})  # forms with no subject


def _negated_object(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A negated verb that takes an object, then a noun or number only in the accusative.

    "nie wnoszące wiele walorów" -> "wielu": a negated verb's object is genitive. A noun in
    the nominative too counts only where it cannot be the verb's subject ("nie mam czas").
    """
    verbs = [r for r in a.readings if r.pos in FINITE | NO_SUBJECT and _transitive(r.lemma)]
    if not verbs or b.text[:1].isupper():
        return []
    if not (i > 0 and a.joined and toks[i - 1].text.lower() == "nie"):
        if not a.only(VERBAL | {"ger", "pact"}) or not all("neg" in r.rest for r in verbs):
            return []  # no "nie" before: a participle written with it ("niewnoszące")
    nouns = b.of(NOMINAL | {"num"})
    if not nouns or not b.only(NOMINAL | {"num", "adv", "pred"}):
        return []
    if any("gen" in r.case or "acc" not in r.case for r in nouns):
        return []
    subjects = [r for r in nouns if "nom" in r.case]
    finite = [v for v in verbs if v.pos in FINITE]
    if any(_subject_agrees(s, v) for s in subjects for v in finite):
        return []  # "nie przyszedł Jan": a subject after its verb
    templates = [_agreeing(n) for n in nouns]
    ok = lambda r: "gen" in r.case and _same_slot(r, nouns)  # noqa: E731
    return [Conflict(i + 1, "negation", i, _options(b, templates, ok))]


def _agreeing(r: Reading) -> Reading:
    """A numeral's reading as its genitive has it: agreeing with its noun (SGJP's "congr").

    "wiele walorów": "wiele" governs its noun ("rec"); "wielu walorów": it agrees.
    """
    return r._replace(rest=tuple("congr" if x == "rec" else x for x in r.rest))


COUNT_WORDS = frozenset({"tysiąc", "milion", "miliard"})
# Words that may stand before a count that is a subject: "Ponad 1,6 miliona dolarów trafiło".
BEFORE_COUNT = frozenset("ponad około przeszło blisko prawie niemal aż tylko jedynie już".split())


def _counted_subject(toks: list[Token], i: int) -> list[Conflict]:
    """A count that takes the genitive, its noun, and a verb after them: neuter singular.

    "Ponad 1,6 miliona dolarów trafiła" -> "trafiło"; "5 osób przyszło". Only where nothing
    before the count governs it ("z 5 osób", "mając 5 lat"), and only for counts that take
    the genitive (not "3 osoby przyszły").
    """
    verb = toks[i]
    if i < 2 or not verb.joined or not verb.only({"fin", "praet", "bedzie"}):
        return []
    noun = toks[i - 1]
    if not noun.joined or not noun.only(NOMINAL) or noun.text[:1].isupper():
        return []
    if any(not r.case <= {"gen", "acc"} or r.number != {"pl"} for r in noun.readings):
        return []
    verbs = verb.of({"fin", "praet", "bedzie"})
    if any("acc" in r.case for r in noun.readings) and any(_transitive(v.lemma) for v in verbs):
        return []  # "300 żołnierzy zabili": an object before its verb
    k = i - 2
    if toks[k].joined and {r.lemma.split(":")[0] for r in toks[k].readings} & COUNT_WORDS:
        if any(r.case != {"gen"} for r in toks[k].readings):
            return []  # "22 tysiące osób": the count word is the subject
        k -= 1
    if k < 0 or not toks[k + 1].joined or not _genitive_count(toks[k].text):
        return []
    if k > 0 and toks[k].joined and toks[k - 1].text.lower() not in BEFORE_COUNT:
        return []
    if any(_neuter_singular(v) for v in verbs):
        return []
    return [Conflict(i, "numeral-subject", i - 1, _options(verb, verbs, _neuter_singular))]


def _genitive_count(text: str) -> bool:
    """A number in digits whose noun is genitive: a fraction, 0-1, 5-21, 25-31...; not 2-4."""
    if not text[:1].isdigit():
        return False
    if "," in text:
        return True
    if "." in text:
        return False  # "1.500" or a date: not ours to read
    n = int(text)
    return n >= 5 and (n % 10 not in (2, 3, 4) or n % 100 in (12, 13, 14))


def _neuter_singular(r: Reading) -> bool:
    if "sg" not in r.number:
        return False
    if r.pos == "praet":
        return bool(r.gender & NEUTER)
    return "ter" in r.person


JOINING = frozenset({"i", "oraz", "lub", "albo", "a"})


def _participles(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """An adverbial participle joined by "i" to an adjectival one: it meant the adjectival.

    "kanały przyspieszając i odpowiednio ukierunkowujące płyn" -> "przyspieszające": two
    participles joined describe one noun; an adjectival participle that begins a noun phrase
    of its own ("śpiewając i tańczące dzieci") is left alone.
    """
    if not a.only({"pcon"}) or b.text.lower() not in JOINING:
        return []
    j = _past(toks, i + 2, {"adv", "qub"})
    if j >= len(toks) or not toks[j].joined or not toks[j].only({"pact"}):
        return []
    after = toks[j].of({"pact"})
    following = _noun_after(toks, j)
    if following is not None and any(agree(x, n, NP) for x in after for n in _nominal(following)):
        return []
    templates = [r._replace(pos="pact", rest=(*r.rest, "aff")) for r in a.readings]
    return [Conflict(i, "participle", j, _options(a, templates, lambda r: _fits(r, after, NP)))]


def _noun_genitive(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A noun in an oblique case, then a bare noun in the nominative or accusative.

    "przedstawicielem związki plemion" -> "związku": the second meant the genitive that
    belongs to the first, in either number. It may also be the subject or object of the
    clause ("dał dziecku zabawki"), so the model must win by far.
    """
    if not a.only(NOMINAL) or not b.only(NOMINAL) or b.text[:1].isupper() or not _common(a):
        return []
    if _verb_with_clitic(a.text) or any(r.case & {"nom", "acc", "voc"} for r in a.readings):
        return []
    nouns = b.readings
    if any(not r.case & {"nom", "acc"} or "gen" in r.case for r in nouns):
        return []
    if _after_preposition(toks, i) or i + 2 < len(toks) and toks[i + 2].text[:1].isupper():
        return []  # "Po obiedzie pan Tomasz": a phrase of its own, then the subject
    ok = lambda r: "gen" in r.case and agree(r, nouns[0], ("gender",))  # noqa: E731
    return [Conflict(i + 1, "noun-genitive", i, _options(b, nouns, ok))]


def _verb_with_clitic(word: str) -> bool:
    """A past form with its person's clitic ("miałem": "miał" + "em"), which `readings` omits."""
    interps = analyse(word)
    end = max((i.end for i in interps), default=0)
    return any(i.pos == "praet" and i.start == 0 and i.end < end for i in interps)


def _after_preposition(toks: list[Token], i: int) -> bool:
    """The noun at i ends a phrase a preposition opens.

    Its adjectives between, or words Morfeusz does not know ("po termidoriańskim przewrocie").
    """
    k = i
    while (
        k > 0
        and toks[k].joined
        and (toks[k - 1].only({"adj", "adv", "qub"}) or not toks[k - 1].readings)
    ):
        k -= 1
    return k > 0 and toks[k].joined and toks[k - 1].has({"prep"})


def _participle_noun(toks: list[Token], i: int) -> list[Conflict]:
    """An adjective, then a participle that cannot agree with it: the verb's noun was meant.

    "Dowodem obsesyjnego zainteresowani własną śmiercią" -> "zainteresowania": the gerund of
    the participle's verb (same lemma in SGJP), in the adjective's case, number and gender.
    """
    a = toks[i]
    if i + 1 >= len(toks) or not toks[i + 1].joined or not _adjective(a, toks, i):
        return []
    b = toks[i + 1]
    participles = b.of({"ppas", "pact"})
    adjs = a.of({"adj"})
    if not participles or b.text[:1].isupper() or _noun_after(toks, i) is not None:
        return []
    if any(agree(x, r, NP) for x in adjs for r in b.readings):
        return []
    templates = [r._replace(pos="ger") for r in participles]
    options = _options(b, templates, lambda r: _fits(r, adjs, NP))
    return [Conflict(i + 1, "adj-noun", i, options)]


COUNT_NOUNS = COUNT_WORDS | {"setka", "dziesiątka", "tuzin"}


def _counted_noun(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A word that counts and governs its noun, then a noun in no genitive: the genitive plural.

    "tysiące ludzie" -> "ludzi", "pięć medale" -> "medali": "pięć", "kilka", "wiele" (SGJP's
    "rec") and "tysiące", "setki" take the genitive; "dwa medale" agrees instead, and a mass
    noun takes the singular ("trochę czasu"), so any genitive clears the noun.
    """
    counts = [r for r in a.readings if r.pos == "num" and "rec" in r.rest and "col" not in r.rest]
    if counts and not a.only({"num", "ger", "subst"}):
        return []
    agreeing = [r for r in a.readings if r.pos == "num" and "congr" in r.rest]
    if any(agree(r, n, NP) for r in agreeing for n in b.readings):
        return []  # "po pięciu latach": the count agrees in an oblique case
    if not counts:
        counts = [r for r in a.readings if r.lemma.split(":")[0] in COUNT_NOUNS]
        if not counts or not a.only({"subst"}) or any("pl" not in r.number for r in counts):
            return []
    if not any(r.case & {"nom", "acc"} for r in counts) or b.text[:1].isupper():
        return []
    if not b.only(NOMINAL) or any("gen" in r.case for r in b.readings):
        return []
    ok = lambda r: "pl" in r.number and "gen" in r.case  # noqa: E731
    return [Conflict(i + 1, "count-noun", i, _options(b, b.readings, ok))]


INDEFINITE = frozenset("kilka kilkanaście kilkadziesiąt kilkaset parę paręnaście wiele".split())


def _collective(toks: list[Token], i: int, a: Token, b: Token) -> list[Conflict]:
    """A plain count in the nominative or accusative before a noun that takes a collective one.

    SGJP marks such nouns "col" ("dzieci", "kociąt"): "Mam dwa dzieci" -> "dwoje", "pięć" ->
    "pięcioro". Only where the noun can be the genitive a collective takes ("we cztery oczy" is
    an idiom) and the count has no oblique reading ("z dwoma dziećmi" is accepted).
    """
    counts = a.of({"num"})
    if not counts or not a.only({"num", "ger"}) or any("ncol" not in r.rest for r in counts):
        return []  # "pięć" is also a gerund of "piąć"
    if any(r.lemma.split(":")[0] in INDEFINITE for r in counts):
        return []  # "kilka dzieci" is in common use beside "kilkoro"
    if any(r.case - {"nom", "acc", "voc"} for r in counts):
        return []
    nouns = b.of(NOMINAL)
    if not nouns or not b.only(NOMINAL) or any("col" not in r.rest for r in nouns):
        return []
    if not any("gen" in r.case for r in nouns):
        return []
    cases = frozenset().union(*(r.case for r in counts))
    templates = [r._replace(rest=("rec", "col")) for r in counts]  # "dwoje", "pięcioro"
    ok = lambda r: bool(r.case & cases)  # noqa: E731
    return [Conflict(i, "zbiorowy", i + 1, _options(a, templates, ok))]


CLAUSE_WORDS = frozenset("że aby żeby by iż gdy kiedy jeśli jeżeli czy".split())
BE_FORMS = frozenset({"jest", "było", "będzie", "byłoby"})  # "byłoby": Morfeusz splits it
LINKING = frozenset({"to", "również", "też", "także", "zatem", "więc"})


def _predicate(toks: list[Token], i: int) -> list[Conflict]:
    """An adjective in the instrumental as "być"'s predicate, a clause its subject: nominative.

    "Pożądanym jest, aby szkoły były umundurowane" -> "Pożądane", "Możliwym jest
    wykorzystanie" -> "Możliwe": with a clause or a verbal noun as its subject, "być" takes
    the adjective in the neuter nominative (the instrumental goes with a noun: "jest dobrym
    człowiekiem"). The adjective opens its clause, before "być" or right after it.
    """
    a = toks[i]
    adjs = a.of({"adj", "ppas"})  # "dobrym" is a noun's form too (of "dobro")
    if not a.only({"adj", "ppas", "subst"}) or not any(
        "inst" in r.case and "sg" in r.number for r in adjs
    ):
        return []
    if _opens(toks, i):  # "Pożądanym jest, aby ...", "Możliwym jest wykorzystanie ..."
        j = _past(toks, i + 1, {"adv", "qub"}, LINKING)
        be = j < len(toks) and toks[j].joined and toks[j].text.lower() in BE_FORMS
        found = be and _clause_subject(toks, _past(toks, j + 1, {"adv", "qub"}, LINKING))
    else:  # "Jest pożądanym, aby ..."
        be = i > 0 and a.joined and toks[i - 1].text.lower() in BE_FORMS
        found = be and _opens(toks, i - 1) and _clause_after(toks, i + 1)
    if not found:
        return []
    return [Conflict(i, "predicate", i, _options(a, adjs, _neuter_nominative))]


def _neuter_nominative(r: Reading) -> bool:
    return "nom" in r.case and "sg" in r.number and bool(r.gender & NEUTER)


def _opens(toks: list[Token], i: int) -> bool:
    """The word at i opens its clause: the sentence's start, or after adverbs, "że", "aby".

    Adverbs and a preposition with its word ("Bez wątpienia dobrym jest") come first.
    """
    k = i
    while k > 0 and toks[k].joined:
        if toks[k - 1].only({"adv", "qub"}):
            k -= 1
        elif k > 1 and toks[k - 1].joined and _is_preposition(toks[k - 2]):
            k -= 2
        else:
            break
    if k == 0 or toks[k - 1].sentence != toks[k].sentence:
        return True
    return not toks[k].joined or toks[k - 1].text.lower() in CLAUSE_WORDS


def _past(toks: list[Token], j: int, classes: set[str], words: frozenset[str] = frozenset()) -> int:
    """The first index from j on that is not a joined word of `classes` or in `words`."""
    while (
        j < len(toks)
        and toks[j].joined
        and (toks[j].only(classes) or toks[j].text.lower() in words)
    ):
        j += 1
    return j


def _clause_subject(toks: list[Token], j: int) -> bool:
    """At j: a clause after a comma ("..., aby"), or a verbal noun in the nominative."""
    if _clause_after(toks, j):
        return True
    if j >= len(toks) or not toks[j].joined:
        return False
    t = toks[j]
    nominative = [r for r in t.readings if "nom" in r.case and "sg" in r.number]
    return t.only(NOMINAL) and any(r.pos == "ger" or r.gender & NEUTER for r in nominative)


def _clause_after(toks: list[Token], j: int) -> bool:
    """At j, after a comma: a word that opens a clause ("że", "aby")."""
    return j < len(toks) and "," in toks[j].gap and toks[j].text.lower() in CLAUSE_WORDS
