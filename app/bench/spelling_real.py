"""`bielik-lsp bench spelling --data FILE.jsonl`: real writers' errors, against hunspell-pl.

The file holds one sentence a line as PlEWi gives it (the corpus of Polish errors mined from
Wikipedia's edit history): `text` as a writer left it, `new_text` as another corrected it, and
`errors`, each `{error, correction, position (index of its first whitespace-separated word),
type, category}`; `type` is `nonword`, `realword`, `multiword`, `unknown`..., `category` the
corpus's own (noisy) label: `pisownia`, `znaki diakrytyczne`, `wielkość liter`, `fleksja`...

Every sentence is checked twice by each checker, as written and as corrected, each as a
document of its own (so a term a whole article repeats is not recognised as one). Measured:
which errors are flagged (a flag overlapping the error's words), by type and by category;
whether the first suggestion, or one of the first three, is the correction (one-word
errors); how many corrected words are flagged in `new_text`; flags per 1,000 words of
`new_text`; time (checking and suggestions, start-up included).

Splits: even lines (0, 2, ...) are `train`, odd lines `test`. The checker's constants for real
errors were set looking at the even lines of the project's development file (PlEWi's sample
file 1) only; `--split test` is the half they never saw.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from decoder.config import ConfigError

WORD = re.compile(r"\S+")
EDGE = re.compile(r"^[^\w]+|[^\w]+$")
CAPITALS = "wielkość liter"
HEADLINE_TYPE = "nonword"


@dataclass
class RealError:
    start: int  # the error's words in `text`, punctuation around them left out
    end: int
    typo: str
    correct: str  # the correction's words, punctuation around them left out
    type: str
    category: str
    clean_start: int | None = None  # the correction in `new_text`, where it was found
    clean_end: int | None = None

    @property
    def one_word(self) -> bool:
        return " " not in self.typo and bool(self.typo) and bool(self.correct)

    @property
    def capitals(self) -> bool:
        """A non-word whose fix is its case ("francją" -> "Francją", "NAdolski")."""
        return self.category == CAPITALS and self.type == HEADLINE_TYPE


@dataclass
class Sentence:
    id: str
    text: str
    clean: str
    errors: list[RealError] = field(default_factory=list)


def _core(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) without the punctuation around the words ("sie," -> "sie")."""
    piece = text[start:end]
    left = EDGE.match(piece)
    right = EDGE.search(piece)
    a = start + (left.end() if left else 0)
    b = end - (len(right.group()) if right and right.start() > 0 else 0)
    return (a, b) if a < b else (start, start)


def _locate(tokens: list[re.Match], at: int, want: list[str]) -> tuple[int, int] | None:
    """Character span of the whitespace words `want` at token `at`, or the nearest match."""
    if not want:
        return None
    for shift in sorted(range(-4, 5), key=abs):
        k = at + shift
        if 0 <= k and [t.group() for t in tokens[k : k + len(want)]] == want:
            return tokens[k].start(), tokens[k + len(want) - 1].end()
    return None


def parse(line_no: int, row: dict) -> Sentence:
    """One line of the file: its errors placed in both texts."""
    text, clean = row["text"], row["new_text"]
    words, clean_words = list(WORD.finditer(text)), list(WORD.finditer(clean))
    out = Sentence(str(line_no), text, clean)
    shift = 0
    for e in sorted(row.get("errors", []), key=lambda e: e.get("position", 0)):
        typo, correct = e.get("error") or "", e.get("correction") or ""
        at = int(e.get("position", 0))
        span = _locate(words, at, typo.split())
        fixed = _locate(clean_words, at + shift, correct.split())
        shift += len(correct.split()) - len(typo.split())
        if span is None:
            continue  # an insertion, or a position that does not hold the error
        a, b = _core(text, *span)
        error = RealError(
            a, b, text[a:b], EDGE.sub("", correct), e.get("type") or "", e.get("category") or ""
        )
        if fixed is not None:
            error.clean_start, error.clean_end = _core(clean, *fixed)
        if error.typo and error.typo != error.correct:
            out.errors.append(error)
    return out


def load(path: str, split: str) -> list[Sentence]:
    """The sentences of `path` in `split` (even lines train, odd lines test, or all)."""
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ConfigError(f"--data {path}: {e.strerror}") from None
    out = []
    for n, line in enumerate(lines):
        if not line.strip() or split == "train" and n % 2 or split == "test" and not n % 2:
            continue
        try:
            row = json.loads(line)
            out.append(parse(n, row))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ConfigError(
                f"--data {path}, line {n + 1}: not a PlEWi sentence (text, new_text, errors): {e}"
            ) from None
    if not out:
        raise ConfigError(f"--data {path}: no sentences in the {split} split")
    return out


# -- measuring ----------------------------------------------------------------------------------
Check = Callable[[str], list]  # text -> flags with .start, .end, .suggestions


def _hit(start: int, end: int, flags: list) -> object | None:
    return next((f for f in flags if f.start < end and start < f.end), None)


def run_checker(sentences: list[Sentence], check: Check) -> tuple[list, list, float]:
    """The flags of every sentence as written and as corrected, and the seconds it took."""
    began = time.perf_counter()
    written = [check(s.text) for s in sentences]
    corrected = [check(s.clean) for s in sentences]
    return written, corrected, time.perf_counter() - began


def score(
    sentences: list[Sentence],
    written: list[list],
    corrected: list[list],
    count_words: Callable[[str], int],
) -> dict:
    """What one checker's flags (`run_checker`) found, missed and flagged wrongly."""
    tallies: dict[str, dict[str, list[int]]] = {"type": {}, "category": {}}
    top1 = top3 = scored = fixed_flagged = fixed_seen = 0
    capitals = [0, 0]
    misses: list[dict] = []  # non-words not flagged
    alarms: list[dict] = []  # corrections flagged
    for s, flags, clean_flags in zip(sentences, written, corrected, strict=True):
        for e in s.errors:
            hit = _hit(e.start, e.end, flags)
            for axis, label in (("type", e.type or "-"), ("category", e.category or "-")):
                tally = tallies[axis].setdefault(label, [0, 0])
                tally[0] += hit is not None
                tally[1] += 1
            if e.type != HEADLINE_TYPE:
                continue
            if e.capitals:
                capitals[0] += hit is not None
                capitals[1] += 1
            if hit is None:
                misses.append({"id": s.id, "word": e.typo, "correct": e.correct})
            if e.one_word:
                scored += 1
                suggestions = list(hit.suggestions) if hit is not None else []
                top1 += suggestions[:1] == [e.correct]
                top3 += e.correct in suggestions[:3]
            if e.clean_start is not None:
                fixed_seen += 1
                if _hit(e.clean_start, e.clean_end, clean_flags) is not None:
                    fixed_flagged += 1
                    alarms.append({"id": s.id, "word": e.correct})
    clean_words = sum(count_words(s.clean) for s in sentences)
    clean_flags = sum(len(f) for f in corrected)
    nonword = tallies["type"].get(HEADLINE_TYPE, [0, 0])
    return {
        "sentences": len(sentences),
        "nonword": nonword[1],
        "recall": nonword[0] / max(1, nonword[1]),
        "capitals": capitals[1],
        "capitals_recall": capitals[0] / max(1, capitals[1]),
        "top1": top1 / max(1, scored),
        "top3": top3 / max(1, scored),
        "clean_words": clean_words,
        "clean_flags": clean_flags,
        "flags_per_1000": 1000 * clean_flags / max(1, clean_words),
        "corrections_flagged": fixed_flagged / max(1, fixed_seen),
        "recall_by": {a: {k: v[0] / v[1] for k, v in t.items()} for a, t in tallies.items()},
        "counts_by": {a: {k: v[1] for k, v in t.items()} for a, t in tallies.items()},
        "misses": misses,
        "corrections_flagged_words": alarms,
    }


def halves(
    sentences: list[Sentence], written: list, corrected: list, count_words
) -> dict[str, dict]:
    """`score` of the even lines (train) and the odd lines (test) apart."""
    out = {}
    for name, odd in (("train", False), ("test", True)):
        keep = [i for i, s in enumerate(sentences) if (int(s.id) % 2 == 1) == odd]
        out[name] = score(
            [sentences[i] for i in keep],
            [written[i] for i in keep],
            [corrected[i] for i in keep],
            count_words,
        )
    return out
