"""Polish grammar rules that are certain and cheap: no model, a few dictionary look-ups.

Each rule is a function `(text, tokens) -> [Finding]`, named for the diagnostic code a writer
can turn off (`grammarDisabledRules`):

- `nie-razem`: "nie" is written together with adjectives, adjectival participles and
  gerunds ("nie łączenie" -> "niełączenie", "nie dobry" -> "niedobry"), unless a contrast
  follows ("nie dobry, lecz zły");
- `nie-osobno`: and apart from verbs ("niewiem" -> "nie wiem");
- `w-we`, `z-ze`: "we" before w/f and a consonant ("w współczesnej" -> "we współczesnej"),
  "ze" before s/z/ś/ź/ż/sz and a consonant, or "mną" ("z szkoły" -> "ze szkoły"), and the short
  form before a vowel ("we Anglii" -> "w Anglii");
- `przecinek`: a comma before "że", "który" (any form), "ale", "lecz" and a "więc" that opens
  a clause, where the word before cannot join them ("mimo że", "w którym", "i który");
- `data`: a day's number and its month in the genitive ("20 luty 1981" -> "20 lutego 1981",
  and a slip one letter from it before a year: "23 styczni 1982" -> "23 stycznia 1982"); a
  month with no day that heads a dated entry, in the nominative ("czerwca – Stephen Crane,
  pisarz" -> "czerwiec – Stephen Crane", as a year's list of events writes it);
- `tę-tą`: the accusative of "ta" is "tę" ("na tą podprzestrzeń" -> "na tę podprzestrzeń",
  "Przez wyspę tą" -> "Przez wyspę tę");
- `te-to`: the neuter singular of "ten" is "to" ("te zdjęcie" -> "to zdjęcie", "tamte"
  alike);
- `dwiema`: in careful Polish the instrumental of "dwie" ("obie", "obydwie") with a feminine
  noun is "dwiema" ("z dwoma wieżami" -> "z dwiema wieżami");
- `rzeczpospolita`: both parts of "Rzeczpospolita" decline ("Rzeczpospolitej" ->
  "Rzeczypospolitej"), except in a newspaper's name in quotes ("w „Rzeczpospolitej”");
- `żebym`: after "żeby", "aby", "gdyby" (and "jakby", "by", "choćby"...) the person's ending
  goes on the conjunction ("żeby przyznałem" -> "żebym przyznał"), and on it alone
  ("Gdybyś zrobiłeś" -> "Gdybyś zrobił");
- `złoty`: after a number in digits the currency takes the count's form ("42 złoty" -> "42
  złote", "14 złoty" -> "14 złotych", "1 złote" -> "1 złoty");
- `przyimek-razem`: a compound preposition is one word ("z pod stołu" -> "spod stołu", "po za
  tym" -> "poza tym"), and "przed wszystkim" is "przede wszystkim".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from rapidfuzz.distance import OSA

from polish.agreement import MONTHS, NP, Reading, Token, agree, reading, readings
from polish.lexicon import polish_zipf
from polish.morphology import analyse, is_known, paradigm
from polish.spelling import Finding

Rule = Callable[[str, list[Token]], list[Finding]]
VOWELS = set("aąeęioóuyAĄEĘIOÓUY")
CONSONANTS = set("bcćdfghjklłmnńprsśtwzźżBCĆDFGHJKLŁMNŃPRSŚTWZŹŻ")
# Determiners and numerals: "nie taki", "nie jeden", "nie każdy" stay apart.
DETERMINERS = frozenset(
    "ten taki tamten ów każdy wszelki żaden jeden sam swój mój twój nasz wasz inny "
    "który jaki czyj wszystek pierwszy drugi".split()
)
CONTRAST = re.compile(r"^[^.!?;]*?,\s*(?:lecz|ale|tylko|a)\b", re.IGNORECASE)
JOINED_ZIPF = 2.0  # an adjective with "nie" this common written together: "niedobry"
# Words before "że" that make one conjunction with it: the comma goes before them.
ZE_PARTNERS = frozenset(
    "mimo pomimo chyba tyle zwłaszcza tym dlatego tak toteż przy bo czy i oraz lub albo ani "
    "a tylko już jako to że by aż pewnie nawet także również też".split()
)
# Before a form of "który": a preposition or conjunction joins it, "mało który" is no clause.
KTORY_PARTNERS = frozenset("i oraz lub albo ani czy a bądź mało rzadko lada byle co".split())
CLAUSE_VERBS = frozenset({"fin", "praet", "bedzie", "impt", "winien", "pred"})


def _finding(token: Token, fix: str, rule: str) -> Finding:
    return Finding(token.start, token.end, token.text, (fix,), rule, kind="grammar")


def _span(text: str, start: int, end: int, fix: str, rule: str) -> Finding:
    return Finding(start, end, text[start:end], (fix,), rule, kind="grammar")


def _next(tokens: list[Token], i: int) -> Token | None:
    return tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1].joined else None


def _past_adjectives(
    tokens: list[Token], i: int, adjective: Callable[[Token], bool]
) -> Token | None:
    """The word after token i and the adjectives right after it: the noun they go with."""
    j = i + 1
    while j < len(tokens) and tokens[j].joined and adjective(tokens[j]):
        j += 1
    return tokens[j] if j < len(tokens) and tokens[j].joined else None


# -- nie ---------------------------------------------------------------------------------------
def _negated(word: str) -> bool:
    """Whether "nie" + `word` is one word Polish writes together.

    A gerund, an adjectival participle, or a common adjective ("niedobry"); not a determiner
    ("nie taki").
    """
    joined = "nie" + word.lower()
    found = readings(joined)
    if not found or not is_known(joined):
        return False
    base = readings(word)
    if any(r.pos in CLAUSE_VERBS | {"inf"} for r in base):
        return False  # "nie być": a verb, apart
    if any(r.pos in ("ger", "pact", "ppas") and "neg" in r.rest for r in found):
        return any(r.pos in ("ger", "pact", "ppas") for r in base)
    adjs = [r for r in base if r.pos == "adj" and "pos" in r.rest]
    if not adjs or any(r.lemma.split(":")[0] in DETERMINERS for r in base):
        return False
    if any(r.pos not in ("adj", "subst") for r in base):
        return False  # "nie było", "nie ma": a verb reading too
    return polish_zipf(joined) >= JOINED_ZIPF


def nie_razem(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "nie dobry" -> "niedobry"; left alone before a contrast ("nie dobry, lecz zły")."""
    out = []
    for i, t in enumerate(tokens):
        after = _next(tokens, i)
        if t.text.lower() != "nie" or after is None or not _negated(after.text):
            continue
        if CONTRAST.match(text[after.end :]):
            continue
        joined = t.text + after.text.lower() if t.text[0].isupper() else "nie" + after.text
        out.append(_span(text, t.start, after.end, joined, "nie-razem"))
    return out


def _verb(word: str) -> bool:
    return any(r.pos in CLAUSE_VERBS | {"inf"} for r in readings(word))


def nie_osobno(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "niewiem" -> "nie wiem": "nie" glued to a verb, where no such word exists."""
    out = []
    for t in tokens:
        low = t.text.lower()
        if not low.startswith("nie") or len(low) < 5 or t.text[1:].lower() != t.text[1:]:
            continue
        rest = t.text[3:]
        if _plausibly_known(t.text) or not _verb(rest) or not is_known(rest):
            continue
        out.append(_finding(t, f"{t.text[:3]} {rest}", "nie-osobno"))
    return out


def _plausibly_known(word: str) -> bool:
    """Morfeusz knows `word` other than as a rare name ("Niewiem", a surname)."""
    return any(not r.lemma[:1].isupper() for r in readings(word)) or (
        is_known(word) and word[:1].isupper()
    )


# -- w/we, z/ze --------------------------------------------------------------------------------
def _sounds(word: str) -> list[str]:
    """The first two sounds of `word`, digraphs as one ("szkoła" -> ["sz", "k"])."""
    out, i = [], 0
    low = word.lower()
    while i < len(low) and len(out) < 2:
        pair = low[i : i + 2]
        step = 2 if pair in ("sz", "cz", "rz", "ch", "dz", "dź", "dż") else 1
        out.append(low[i : i + step])
        i += step
    return out


def _consonant(sound: str) -> bool:
    return bool(sound) and sound[0] in CONSONANTS


def vowel_forms(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "w współczesnej" -> "we współczesnej", "z szkoły" -> "ze szkoły", "we" -> "w"."""
    out = []
    for i, t in enumerate(tokens):
        after = _next(tokens, i)
        low = t.text.lower()
        if low not in ("w", "we", "z", "ze") or after is None or after.text[0].isdigit():
            continue
        if after.text.isupper() or after.has({"prep"}):
            continue  # an acronym is read by its letters ("z ZWZ"); "z zza" is another error
        if not any(r.pos == "prep" for r in readings(low)):
            continue
        sounds = _sounds(after.text)
        second = sounds[1] if len(sounds) > 1 else ""
        if low == "w" and sounds[0] in ("w", "f") and _consonant(second):
            fix = "we"
        elif low == "z" and (
            sounds[0] in ("s", "z", "ś", "ź", "ż", "sz")
            and _consonant(second)
            or after.text.lower() == "mną"
        ):
            fix = "ze"
        elif low in ("we", "ze") and after.text[0] in VOWELS:
            fix = low[0]
        else:
            continue
        fix = fix.capitalize() if t.text[0].isupper() else fix
        out.append(_finding(t, fix, "w-we" if low[0] == "w" else "z-ze"))
    return out


# -- commas ------------------------------------------------------------------------------------
def _needs_comma(text: str, tokens: list[Token], i: int) -> bool:
    """Nothing but spaces between tokens[i-1] and tokens[i], in one sentence."""
    return i > 0 and tokens[i].joined and text[tokens[i - 1].end : tokens[i].start] == " "


def _clause_verb(t: Token) -> bool:
    """A finite verb ("poszedłem": a past form and its clitic), and nothing else."""
    first = [i for i in analyse(t.text) if i.start == 0]
    return any(i.pos in CLAUSE_VERBS for i in first) and not any(
        i.pos in ("subst", "adj") for i in first
    )


def _ktory(t: Token) -> bool:
    return t.text.lower().startswith("któr") and any(r.lemma == "który" for r in t.readings)


def commas(text: str, tokens: list[Token]) -> list[Finding]:
    """A comma before "że", "który", "ale", "lecz", and "więc" between two clauses."""
    out = []
    for i, t in enumerate(tokens):
        low = t.text.lower()
        if not _needs_comma(text, tokens, i) or not t.text[0].islower():
            continue
        before = tokens[i - 1]
        prev = before.text.lower()
        if low == "że" and prev not in ZE_PARTNERS and not before.has({"prep"}):
            pass
        elif _ktory(t) and prev not in KTORY_PARTNERS and not _governed(tokens, i):
            pass
        elif low in ("ale", "lecz") and prev not in ZE_PARTNERS and not before.has({"conj"}):
            if low == "lecz" and (after := _next(tokens, i)) is not None and after.text == "się":
                continue  # "lecz się": the imperative of "leczyć"
        elif low == "więc" and _clauses_joined(tokens, i):
            pass
        else:
            continue
        out.append(_span(text, before.end, t.end, f", {t.text}", "przecinek"))
    return out


def _governed(tokens: list[Token], i: int) -> bool:
    """A preposition (or a noun after one: "w wyniku którego") takes the form of "który"."""
    before = tokens[i - 1]
    if before.has({"prep"}):
        return True
    two = tokens[i - 2] if i > 1 and before.joined else None
    return two is not None and two.has({"prep"}) and before.has({"subst"})


def _clauses_joined(tokens: list[Token], i: int) -> bool:
    """Whether "więc" joins two clauses (not after "tak" or a conjunction).

    After "a" or "gdyby" ("a więc", "gdyby więc") it is a particle of the clause they open.
    """
    before = tokens[i - 1]
    if before.text.lower() == "tak" or before.has({"conj", "comp"}):
        return False
    return _between_clauses(tokens, i)


def _between_clauses(tokens: list[Token], i: int) -> bool:
    """A finite verb before "więc" in its sentence and one after it, up to the punctuation."""
    sentence = tokens[i].sentence
    before = [t for t in tokens[:i] if t.sentence == sentence]
    after = []
    for t in tokens[i + 1 :]:
        if not t.joined:
            break
        after.append(t)
    if not before or not _clause_verb(tokens[i - 1]) and not any(map(_clause_verb, before)):
        return False
    return any(map(_clause_verb, after)) and not _clause_verb(tokens[i - 1])


# -- dates, tę/tą ------------------------------------------------------------------------------
def _month(r: Reading) -> bool:
    return r.lemma.split(":")[0] in MONTHS


def _month_form(month: Reading, case: str = "gen") -> str | None:
    for orth, tag, _ in paradigm(month.lemma):
        if tag.startswith(f"subst:sg:{case}"):
            return orth
    return None


def dates(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "20 luty 1981" -> "20 lutego 1981": a day of the month takes the month's genitive.

    And a month heading an entry without its day is in the nominative (`_heading_month`).
    """
    out = []
    for i, t in enumerate(tokens):
        after = _next(tokens, i)
        if not t.text.isdigit() or not 1 <= int(t.text) <= 31 or after is None:
            continue
        months = [r for r in after.readings if _month(r)]
        if any("gen" in r.case and "sg" in r.number for r in months):
            continue
        if months:
            nouns = [r for r in months if r.pos == "subst"]  # "luty" is an adjective too
            fix = _month_form(nouns[0]) if nouns else None
        else:
            fix = _month_slip(tokens, i + 1)
        if fix:
            out.append(_finding(after, fix if after.text.islower() else fix.capitalize(), "data"))
    return out + [f for i in range(len(tokens)) if (f := _heading_month(text, tokens, i))]


ENTRY_DASH = re.compile(r"[ \t]+[–—-][ \t]")


def _heading_month(text: str, tokens: list[Token], i: int) -> Finding | None:
    """A month in the genitive with no day before it, heading an entry: the nominative.

    "czerwca – Stephen Crane, pisarz" -> "czerwiec": a year's list dates an entry by its day
    ("5 czerwca – ...") or, with none, by the month alone. Only where nothing before the month
    could govern a genitive: the line's start, or an adjective that cannot agree with it (the
    end of the entry before: "pisarz amerykański lipca – ..."), and no range follows
    ("czerwca – lipca").
    """
    t = tokens[i]
    months = [r for r in t.readings if _month(r) and r.pos == "subst"]
    if not months or any("gen" not in r.case or "nom" in r.case for r in t.readings):
        return None
    if not ENTRY_DASH.match(text, t.end) or not _entry_start(tokens, i):
        return None
    after = tokens[i + 1] if i + 1 < len(tokens) else None
    if after is not None and (
        after.text[0].isdigit() or after.has({"subst"}) and any(_month(r) for r in after.readings)
    ):
        return None
    fix = _month_form(months[0], "nom")
    return _finding(t, fix if t.text.islower() else fix.capitalize(), "data") if fix else None


def _entry_start(tokens: list[Token], i: int) -> bool:
    """Nothing before the word at i that could govern its genitive."""
    t = tokens[i]
    if i == 0 or tokens[i - 1].sentence != t.sentence or "\n" in t.gap:
        return True
    before = tokens[i - 1]
    if before.text[0].isdigit():
        return False
    month = [r for r in t.readings if r.pos == "subst"]
    return before.only({"adj"}) and not any(agree(a, m, NP) for a in before.readings for m in month)


@lru_cache(maxsize=1)
def _month_genitives() -> tuple[str, ...]:
    return tuple(
        dict.fromkeys(
            g
            for m in sorted(MONTHS)
            for r in readings(m)
            if r.lemma.split(":")[0] == m and (g := _month_form(r))
        )
    )


def _month_slip(tokens: list[Token], j: int) -> str | None:
    """The month's genitive one slip from the word at j, where a year follows it."""
    year = _next(tokens, j)
    if year is None or not (year.text.isdigit() and len(year.text) in (3, 4)):
        return None
    low = tokens[j].text.lower()
    near = [g for g in _month_genitives() if OSA.distance(low, g) == 1]
    return near[0] if len(near) == 1 else None


def te_ta(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "na tą podprzestrzeń" -> "na tę": "tą" with an accusative noun, no instrumental.

    The noun after it (over adjectives) or, where none follows, the noun right before it
    ("Przez wyspę tą przebiegał szlak").
    """
    out = []
    for i, t in enumerate(tokens):
        if t.text.lower() != "tą":
            continue
        after = _past_adjectives(tokens, i, lambda w: w.has({"adj"}))
        noun = after if after is not None and after.has({"subst"}) else None
        if noun is None and t.joined and not _declined_next(tokens, i):
            noun = tokens[i - 1]
        if noun is not None and noun.only({"subst"}) and _accusative_only(noun):
            out.append(_finding(t, "Tę" if t.text[0].isupper() else "tę", "tę-tą"))
    return out


PLURAL_DEMONSTRATIVES = {"te": "to", "tamte": "tamto"}
NOMINATIVE = frozenset({"nom", "acc"})


def te_to(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "te zdjęcie" -> "to zdjęcie": "te" before a noun that is neuter singular only.

    "te" is the plural; the neuter singular of "ten" is "to" ("tamte": "tamto"). Over
    adjectives that may be neuter singular ("te nowe zdjęcie"); a noun with a plural reading
    ("te wideo", "te dzieci") agrees with "te".
    """
    out = []
    for i, t in enumerate(tokens):
        fix = PLURAL_DEMONSTRATIVES.get(t.text.lower())
        if fix is None:
            continue
        noun = _past_adjectives(tokens, i, _neuter_adjective)
        if noun is not None and _neuter_noun(noun):
            out.append(_finding(t, fix.capitalize() if t.text[0].isupper() else fix, "te-to"))
    return out


def _neuter_adjective(t: Token) -> bool:
    """An adjective that may be neuter singular nominative or accusative ("nowe")."""
    return any(_neuter_singular(r) for r in t.of({"adj"}))


def _neuter_noun(t: Token) -> bool:
    """A noun (or gerund) only, and only neuter singular: "zdjęcie", not "wideo", "dzieci"."""
    return t.only({"subst", "ger"}) and all(_neuter_singular(r) for r in t.readings)


def _neuter_singular(r: Reading) -> bool:
    return r.number == {"sg"} and r.gender == {"n"} and bool(r.case & NOMINATIVE)


def _declined_next(tokens: list[Token], i: int) -> bool:
    after = _next(tokens, i)
    return after is not None and any(r.case for r in after.readings)


def _accusative_only(noun: Token) -> bool:
    """A feminine singular that may be accusative and never instrumental."""
    cases = [r.case for r in noun.readings if "sg" in r.number and "f" in r.gender]
    return any("acc" in c for c in cases) and not any("inst" in c for c in cases)


# -- przyimek-razem ----------------------------------------------------------------------------
# Compound prepositions, one word ("z" + "pod": "spod"); no sentence writes the pair apart.
COMPOUND_PREPOSITIONS = {
    ("z", "pod"): "spod",
    ("z", "nad"): "znad",
    ("z", "przed"): "sprzed",
    ("z", "pośród"): "spośród",
    ("z", "poza"): "spoza",
    ("z", "za"): "zza",
    ("z", "ponad"): "sponad",
    ("z", "pomiędzy"): "spomiędzy",
    ("po", "za"): "poza",
    ("po", "mimo"): "pomimo",
    ("na", "przeciwko"): "naprzeciwko",
    ("na", "przeciw"): "naprzeciw",
    ("w", "śród"): "wśród",
    ("przed", "wszystkim"): "przede wszystkim",
}
# ... where a third word must follow ("raz w raz" is an idiom, "w raz z" a slip of "wraz z")
COMPOUND_BEFORE = {("w", "raz"): ("wraz", frozenset({"z", "ze"}))}


def compound_prepositions(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "z pod stołu" -> "spod stołu", "po za tym" -> "poza tym": one word.

    And "przed wszystkim" -> "przede wszystkim", "w raz z" -> "wraz z". Only the words with
    spaces between.
    """
    out = []
    for i, t in enumerate(tokens):
        after = _next(tokens, i)
        pair = (t.text.lower(), after.text.lower()) if after else ("", "")
        fix = COMPOUND_PREPOSITIONS.get(pair)
        if pair in COMPOUND_BEFORE:
            third = _next(tokens, i + 1)
            fix, then = COMPOUND_BEFORE[pair]
            fix = fix if third and third.text.lower() in then else None
        if fix:
            cased = fix[0].upper() + fix[1:] if t.text[0].isupper() else fix
            out.append(_span(text, t.start, after.end, cased, "przyimek-razem"))
    return out


# -- dwiema, Rzeczypospolitej ------------------------------------------------------------------
QUOTES = "„\"«“'"
FEMININE_INSTRUMENTAL = {"dwoma": "dwiema", "oboma": "obiema", "obydwoma": "obydwiema"}


def dwiema(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "z dwoma wieżami" -> "z dwiema wieżami": the noun (over adjectives) is feminine."""
    out = []
    for i, t in enumerate(tokens):
        fix = FEMININE_INSTRUMENTAL.get(t.text.lower())
        if fix is None:
            continue
        noun = _past_adjectives(tokens, i, lambda w: w.only({"adj"}))
        if noun is None or not noun.only({"subst"}) or noun.text[:1].isupper():
            continue
        if all(r.gender == {"f"} and "inst" in r.case for r in noun.readings):
            out.append(_finding(t, fix.capitalize() if t.text[0].isupper() else fix, "dwiema"))
    return out


def rzeczpospolita(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "Rzeczpospolitej" -> "Rzeczypospolitej", not in quotes (a newspaper's name)."""
    return [
        _finding(t, t.text[:5] + "y" + t.text[5:], "rzeczpospolita")
        for t in tokens
        if t.text.lower() == "rzeczpospolitej" and (t.gap.rstrip()[-1:] or " ") not in QUOTES
    ]


# -- złoty -------------------------------------------------------------------------------------
ZLOTY = ("złoty", "złote", "złotych")


def zloty(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "42 złoty" -> "42 złote", "14 złoty" -> "złotych", "1 złote" -> "złoty".

    After a number in digits the currency takes the count's form. Only forms that no case makes
    right there: "2 złotych" may be a genitive ("nie mam 2 złotych"). Not after a preposition
    ("o 5 złotych"), after a year ("W 1924 złoty zastąpił markę") or before a noun ("3 złote
    medale": the adjective).
    """
    out = []
    for i, t in enumerate(tokens):
        after = _next(tokens, i)
        if not t.text.isdigit() or after is None or after.text.lower() not in ZLOTY:
            continue
        first = i
        while first > 0 and tokens[first].joined and tokens[first - 1].text.isdigit():
            first -= 1  # "1 234 złote": digits grouped by spaces
        before = tokens[first - 1] if first > 0 and tokens[first].joined else None
        noun = _next(tokens, i + 1)
        year = first == i and len(t.text) == 4 and 1000 <= int(t.text) <= 2100
        if before is not None and before.has({"prep"}) or year or noun and noun.has({"subst"}):
            continue
        right = _zloty_form(int(t.text), first < i)
        written = after.text.lower()
        if written != right and not (written == "złotych" and right != "złotych"):
            out.append(
                _finding(after, right if after.text.islower() else right.capitalize(), "złoty")
            )
    return out


def _zloty_form(n: int, grouped: bool) -> str:
    """The nominative's form after the number n: 1, 2-4 (not 12-14), or any other."""
    if n == 1 and not grouped:
        return "złoty"
    return "złote" if n % 10 in (2, 3, 4) and n % 100 not in (12, 13, 14) else "złotych"


# -- żebym -------------------------------------------------------------------------------------
CONDITIONAL = frozenset("żeby aby ażeby gdyby jakby by iżby czyby choćby".split())
# Short words that may stand between the conjunction and its verb: "żeby się nie przyznał".
CLITICS = frozenset("się nie mi mu ci go cię ją je jej im nam wam nas was to już też tak".split())
PERSON_ENDINGS = {
    ("sg", "pri"): "m",
    ("sg", "sec"): "ś",
    ("pl", "pri"): "śmy",
    ("pl", "sec"): "ście",
}


def conditional(text: str, tokens: list[Token]) -> list[Finding]:
    """Rule: "żeby przyznałem" -> "żebym przyznał", "Gdybyś zrobiłeś" -> "Gdybyś zrobił".

    After "żeby", "aby", "gdyby" (and "jakby", "by", "choćby"...) the person's ending goes on
    the conjunction, not on the past form; written on both, the verb's goes.
    """
    out = []
    for i, t in enumerate(tokens):
        conj = _conditional(t.text)
        if conj is None:
            continue
        j = i + 1
        while j < len(tokens) and tokens[j].joined and tokens[j].text.lower() in CLITICS:
            j += 1
        if j >= len(tokens) or not tokens[j].joined:
            continue
        verb = _past_with_ending(tokens[j].text)
        if verb is None:
            continue
        past, ending = verb
        v = tokens[j]
        if conj[1]:
            out.append(_finding(v, past, "żebym"))
        else:
            fix = conj[0] + ending + text[t.end : v.start] + past
            out.append(_span(text, t.start, v.end, fix, "żebym"))
    return out


def _conditional(word: str) -> tuple[str, str] | None:
    """A conditional conjunction, and the person's ending it carries ("Gdybyś": "Gdyby", "ś")."""
    low = word.lower()
    for conj in CONDITIONAL:
        if low.startswith(conj) and low[len(conj) :] in ("", *PERSON_ENDINGS.values()):
            return word[: len(conj)], word[len(conj) :]
    return None


def _past_with_ending(word: str) -> tuple[str, str] | None:
    """A past form with the person's ending on it ("przyznałem"): the form without, the ending."""
    interps = analyse(word)
    past = [i for i in interps if i.pos == "praet" and i.start == 0 and i.end == 1]
    ending = [i for i in interps if i.pos == "aglt" and i.start == 1 and i.end == 2]
    if not past or not ending or any(i.pos not in ("praet", "aglt") for i in interps):
        return None
    a = reading(ending[0].lemma, ending[0].tag)
    key = (next(iter(a.number), ""), next(iter(a.person), ""))
    if key not in PERSON_ENDINGS:
        return None
    return past[0].orth, PERSON_ENDINGS[key]


RULES: tuple[Rule, ...] = (
    nie_razem, nie_osobno, vowel_forms, commas, dates, te_ta, te_to, dwiema, rzeczpospolita,
    conditional, zloty, compound_prepositions,
)  # fmt: skip
NAMES = (
    "nie-razem", "nie-osobno", "w-we", "z-ze", "przecinek", "data", "tę-tą", "te-to", "dwiema",
    "rzeczpospolita", "żebym", "złoty", "przyimek-razem",
)  # fmt: skip
