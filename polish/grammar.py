"""Polish grammar that a spelling checker cannot see: real words in the wrong form.

Two passes, as in polish/spelling.py, so the first can run on every pause and the second only
where it pays:

1. `check(text)`: the rules that are certain (polish/rules.py: "nie" together or apart,
   "w/we", "z/ze", commas, dates, "tę/tą", "dwiema", "Rzeczypospolitej", "żebym", "złoty")
   give findings at once; Morfeusz's tags say where neighbouring words cannot agree
   (polish/agreement.py), and those words become `Question`s: the other forms of the word's
   lemma that would agree (same class, only case, number, gender or person changed), for the
   model to weigh.
2. `ask(text, questions, compare)`: the model reads each question's sentence with each form in
   place (decoder/scoring.compare: the sentence before the word is read once, each form in one
   short pass after it, forms that cannot win are never read). A word is flagged only when a
   form reads likelier than what was written by the relation's MARGIN, tuned on half of the
   development set for precision; the forms are offered best first.

Why not ask the model about every word (LM-Critic's minimal pairs)? A model as small as the
default (Gemma-3-270M) prefers the commoner form far too often ("Ona poszedł" over "Ona
poszła"); morphology first makes the question one the model can answer: which of these
agreeing forms did the writer mean, and is it clearly better than what is there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from polish.agreement import Conflict, Token, conflicts, tokens
from polish.rules import RULES
from polish.spelling import Finding

Compare = Callable[[str, list[tuple[int, int, int, int, tuple[str, ...]]], float | None], object]

# Nats a form must read likelier than the written word, per relation (tuned on the dev half A).
# Where the tags leave little doubt (a count and its noun, a verb with no object), the model
# only has to not object; a preposition swapped for another is a question of meaning, which a
# small model answers by frequency, so it must win by far.
MARGIN = {
    "adj-noun": 4.25,
    "pronoun-noun": 10.0,
    "subject-verb": 0.5,
    "subject-far": 0.5,
    "prep-case": 3.0,
    "prep-choice": 9.0,
    "numeral-noun": -3.0,
    "government": -3.0,
    "subject-after": 3.0,
    "relative": 3.0,
    "antecedent": 3.0,
    "negation": 0.0,
    "numeral-subject": -3.0,
    "participle": 0.0,
    "noun-genitive": 6.0,
    "predicate": 0.0,
    "count-noun": 0.0,
    "razem": 2.0,
}
# Relations the tags decide alone, each a rule code a writer can turn off: a personal pronoun
# and its verb's person ("Ja umie" -> "umiem"), a noun SGJP marks collective and a plain count
# ("dwa dzieci" -> "dwoje"). The small model prefers the commoner, wrong form in both.
CERTAIN = ("osoba", "zbiorowy")
# Two words that Polish writes as one, where both are words and the pair can be right elsewhere
# ("Postawił na prawdę", "z resztą pieniędzy"): the model's question, with its own code.
JOINED = {
    ("na", "prawdę"): "naprawdę",
    ("nie", "prawda"): "nieprawda",
    ("z", "resztą"): "zresztą",
    ("na", "wzajem"): "nawzajem",
    ("nie", "dawno"): "niedawno",
    ("na", "przód"): "naprzód",
    ("co", "raz"): "coraz",
    ("za", "razem"): "zarazem",
}
ASKED = ("razem",)  # codes of the model's questions that are no agreement
# A form that differs only in a nasal's or another letter's diacritic ("pewna" -> "pewną",
# "pasje" -> "pasję") is the commonest slip of all: it needs this much less from the model.
DIACRITIC_BONUS = 3.0
_PLAIN = str.maketrans("ąćęłńóśźżĄĆĘŁŃÓŚŹŻ", "acelnoszzACELNOSZZ")
MAX_OPTIONS = 8  # forms read per question, the nearest in spelling first
MAX_SUGGESTIONS = 3
LEFT_CHARS = 200  # the model reads from the sentence's start, this far back at most
RIGHT_WORDS = 2  # and this many words past the later of the two words that disagree
REASONS = {
    "model": "another form of this word agrees with its neighbours, and the sentence reads far "
    "likelier with it",
    "nie-razem": "“nie” is written together with adjectives, participles and gerunds",
    "nie-osobno": "“nie” is written apart from verbs",
    "w-we": "“we” before w or f and a consonant, “w” before a vowel",
    "z-ze": "“ze” before s, z, ś, ź, ż, sz and a consonant, “z” before a vowel",
    "przecinek": "a comma goes before this conjunction or relative pronoun",
    "data": "a day of the month takes the month in the genitive; a month with no day, heading "
    "an entry, the nominative",
    "tę-tą": "the accusative of “ta” is “tę” (“tą” is the instrumental)",
    "te-to": "“te” is plural; with a neuter singular noun the form is “to” (“to zdjęcie”)",
    "dwiema": "with a feminine noun, careful Polish writes “dwiema” (“obiema”), not “dwoma”",
    "rzeczpospolita": "in careful and official writing both parts of “Rzeczpospolita” decline",
    "żebym": "after “żeby”, “aby”, “gdyby” the person's ending goes on the conjunction",
    "razem": "written as one word here (“naprawdę”, “nieprawda”, “zresztą”, “niedawno”), "
    "the sentence reads far likelier so",
    "złoty": "after a number the currency takes the count's form: 1 złoty, 2–4 złote, 5 złotych",
    "przyimek-razem": "a compound preposition is one word (“spod”, “znad”, “sprzed”, “poza”, "
    "“naprzeciw”), and the idiom is “przede wszystkim”",
    "osoba": "the verb takes the person of “ja”, “ty”, “my”, “wy”",
    "zbiorowy": "“dzieci” and other nouns that SGJP marks collective take a collective number "
    "(“dwoje dzieci”, “pięcioro kociąt”)",
}
RELATIONS = {
    "adj-noun": "adjective and noun",
    "pronoun-noun": "adjective and noun",
    "subject-verb": "subject and verb",
    "subject-far": "subject and verb, over the subject's genitives",
    "prep-case": "preposition and case",
    "prep-choice": "preposition and case",
    "numeral-noun": "number and noun",
    "government": "verb and its complement",
    "subject-after": "subject and verb",
    "relative": "“który” and the noun it owns",
    "antecedent": "“który” and the noun it stands for",
    "negation": "a negated verb and its object, which is genitive",
    "numeral-subject": "a count and its verb, which is neuter singular",
    "participle": "the participle it is joined to",
    "noun-genitive": "the noun before it, whose genitive it would be",
    "predicate": "a clause as the subject of “być”, which takes the neuter nominative",
    "count-noun": "number and noun",
    "razem": "written as one word",
}


@dataclass(frozen=True)
class Question:
    """A word that disagrees with a neighbour, the forms that would not, and what to read."""

    start: int
    end: int
    word: str
    options: tuple[str, ...]
    relation: str
    pair: tuple[int, int]  # the two words that disagree (their starts): one finding per pair
    left: int  # the model reads text[left:right]
    right: int
    other: str = ""  # the word it disagrees with
    reason: str = "model"  # the finding's code, if the model agrees

    @property
    def margin(self) -> float:
        return MARGIN[self.relation]


def check(text: str, disabled: Iterable[str] = ()) -> tuple[list[Finding], list[Question]]:
    """The certain rules' findings and the model's questions for `text` (offsets in it)."""
    off = set(disabled)
    toks = tokens(text)
    found = [f for rule in RULES for f in rule(text, toks) if f.reason not in off]
    needed = "model" not in off or any(r not in off for r in CERTAIN)
    disagree = conflicts(toks) if needed else []
    found += [
        _certain(toks, c) for c in disagree if c.relation in CERTAIN and c.relation not in off
    ]
    if "model" in off:
        return sorted(found, key=lambda f: f.start), []
    taken = [(f.start, f.end) for f in found]
    asked = [c for c in disagree if c.relation not in CERTAIN]
    joined = _joined(text, toks) if "razem" not in off else []
    questions = [
        q
        for q in _questions(text, toks, asked) + joined
        if not any(a < q.end and q.start < b for a, b in taken)
    ]
    return sorted(found, key=lambda f: f.start), questions


def _joined(text: str, toks: list[Token]) -> list[Question]:
    """Two words of JOINED, with only spaces between: is the one word likelier?"""
    out = []
    for i in range(len(toks) - 1):
        a, b = toks[i], toks[i + 1]
        fix = JOINED.get((a.text.lower(), b.text.lower())) if b.joined else None
        if fix is None:
            continue
        option = fix[0].upper() + fix[1:] if a.text[0].isupper() else fix
        left, right = _window(text, toks, i, i + 1)
        pair = (a.start, b.start)
        out.append(
            Question(
                a.start,
                b.end,
                text[a.start : b.end],
                (option,),
                "razem",
                pair,
                left,
                right,
                reason="razem",
            )
        )
    return out


def _certain(toks: list[Token], c: Conflict) -> Finding:
    t = toks[c.index]
    fixes = _nearest(t.text, c.options)[:MAX_SUGGESTIONS]
    return Finding(t.start, t.end, t.text, fixes, c.relation, kind="grammar")


def _questions(text: str, toks: list[Token], found: list[Conflict]) -> list[Question]:
    """One question per word in conflict (its options merged), with the window to read."""
    merged: dict[int, Conflict] = {}
    for c in found:
        if c.index in merged:
            old = merged[c.index]
            options = tuple(dict.fromkeys(old.options + c.options))
            relation = min((old.relation, c.relation), key=lambda r: MARGIN[r])
            merged[c.index] = Conflict(c.index, relation, old.other, options)
        else:
            merged[c.index] = c
    out = []
    for c in merged.values():
        t = toks[c.index]
        options = _nearest(t.text, c.options)[:MAX_OPTIONS]
        left, right = _window(text, toks, min(c.index, c.other), max(c.index, c.other))
        pair = tuple(sorted((t.start, toks[c.other].start)))
        other = toks[c.other].text
        out.append(Question(t.start, t.end, t.text, options, c.relation, pair, left, right, other))
    return out


def _nearest(word: str, options: tuple[str, ...]) -> tuple[str, ...]:
    """Options by how much of the word they keep (a writer's slip changes an ending)."""
    low = word.lower()

    def kept(o: str) -> int:
        n = 0
        for x, y in zip(low, o.lower(), strict=False):
            if x != y:
                break
            n += 1
        return -n

    return tuple(sorted(options, key=kept))


def _window(text: str, toks: list[Token], first: int, last: int) -> tuple[int, int]:
    """From the sentence's start (LEFT_CHARS back at most) to RIGHT_WORDS words past `last`."""
    sentence = toks[first].sentence
    k = first
    while k > 0 and toks[k - 1].sentence == sentence:
        if toks[first].start - toks[k - 1].start > LEFT_CHARS:
            break
        k -= 1
    cut = k > 0 and toks[k - 1].sentence == sentence  # inside a long sentence: at a word
    left = toks[k].start if cut else _sentence_start(text, toks[k].start)
    j = last
    while j + 1 < len(toks) and toks[j + 1].sentence == sentence and j < last + RIGHT_WORDS:
        j += 1
    right = toks[j].end
    if j + 1 >= len(toks) or toks[j + 1].sentence != sentence:
        right = _sentence_end(text, right)
    return left, right


def _sentence_start(text: str, at: int) -> int:
    """Back over an opening quote or bracket to where the sentence's text begins."""
    while at > 0 and text[at - 1] in "„\"'«(“":
        at -= 1
    return at


def _sentence_end(text: str, at: int) -> int:
    """On over the punctuation that closes the sentence (the model reads the full stop)."""
    while at < len(text) and text[at] in ".!?…\"'”»)":
        at += 1
    return at


def ask(text: str, questions: list[Question], compare: Compare) -> list[Finding] | None:
    """The model's verdicts: a finding for each question a form wins by its margin.

    `compare(text, edits, floor)` is the engine's (decoder/scoring.compare); None where the
    engine gives no log-probabilities (then nothing is flagged: the model must agree).
    """
    if not questions:
        return []
    edits = [(q.left, q.start, q.end, q.right, q.options) for q in questions]
    gains = compare(text, edits, min(q.margin for q in questions) - DIACRITIC_BONUS)
    if gains is None:
        return None
    return decide(questions, gains)


def decide(questions: list[Question], gains: list[list[float | None]]) -> list[Finding]:
    """Per question, the forms that beat the written word by its margin, best first.

    One finding per pair of words that disagree: the one whose best form wins by more.
    """
    best: dict[tuple[int, int], tuple[float, Finding]] = {}
    for q, found in zip(questions, gains, strict=True):
        scored = sorted(
            (
                (g + _bonus(q.word, o), o)
                for g, o in zip(found, q.options, strict=True)
                if g is not None
            ),
            reverse=True,
        )
        winners = [o for g, o in scored if g >= q.margin]
        if not winners:
            continue
        top = scored[0][0] - q.margin
        finding = Finding(
            q.start,
            q.end,
            q.word,
            tuple(winners[:MAX_SUGGESTIONS]),
            q.reason,
            kind="grammar",
            detail=f"“{q.other}” ({RELATIONS[q.relation]})" if q.other else "",
            ranked_by="model",
        )
        if q.pair not in best or best[q.pair][0] < top:
            best[q.pair] = (top, finding)
    return sorted((f for _, f in best.values()), key=lambda f: f.start)


def _bonus(word: str, option: str) -> float:
    """DIACRITIC_BONUS where `option` is `word` with other diacritics."""
    return DIACRITIC_BONUS if word.translate(_PLAIN) == option.translate(_PLAIN) else 0.0


def message(finding: Finding) -> str:
    """What the editor shows: why, and the fix."""
    if finding.reason == "model" and finding.detail:
        text = f"“{finding.word}” does not agree with {finding.detail}"
    else:
        text = f"“{finding.word.strip()}”: {REASONS.get(finding.reason, finding.reason)}"
    if finding.suggestions:
        text += f". Did you mean: {', '.join(s.strip() for s in finding.suggestions)}?"
    return text
