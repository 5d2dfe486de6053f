"""`bielik-lsp bench grammar --data FILE`: the grammar checker on real writers' errors.

Data: a file in the development set's format (one JSON object a line: `text` as the writer left
it, `new_text` after another writer's correction, `errors` with `error`, `correction`,
`position` (word index), `type` and `category`), e.g. PlEWi's; and/or `--languagetool FILE`,
LanguageTool's Polish grammar.xml, whose rules carry `<example correction="...">` sentences
with the error between `<marker>` tags. Rows are split by a hash of their text into halves A
and B (`--half`): the checker's margins were tuned on A; the other half is the honest report.

Measured (our grammar findings only, `kind` "grammar"):
- recall on real-word errors (`type` realword) by category: a finding overlapping the error;
- first suggestion right: applying it gives the correction there;
- precision: the share of corrected sentences (`new_text`) flagged, flags per 1,000 words on
  them, and flags per 1,000 words on clean text (the project's corpus, polish/data/devset.jsonl,
  the spelling bench's split);
- time per 1,000 words, rules and model together (the model loaded before timing starts).
"""

from __future__ import annotations

import argparse
import json
import re
import time
import xml.etree.ElementTree as ET
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from app.bench.machine import describe as describe_machine
from app.bench.machine import load_average
from app.bench.report import table, write_report
from app.bench.spelling import corpus, count_words
from decoder.config import ConfigError, Settings
from polish import grammar
from polish.spelling import Finding

INFLECTION = "fleksja"  # fleksja, fleksja/liczba, fleksja/czas: the probe's "inflection"
_WORDS = re.compile(r"\S+")


@dataclass
class Case:
    """One sentence with one known error: where it is and what it should read."""

    source: str  # plewi | languagetool
    category: str
    text: str
    start: int
    end: int
    correction: str
    corrected: str  # the whole sentence corrected (flags there are false alarms)


@dataclass
class Checked:
    findings: list[Finding]
    questions: int
    seconds: float


@dataclass
class Tally:
    cases: int = 0
    flagged: int = 0
    right: int = 0
    by: Counter = field(default_factory=Counter)


# -- data -----------------------------------------------------------------------------------
def half_of(text: str) -> str:
    """A or B, by a hash of the sentence: A tunes, B reports."""
    return "AB"[zlib.crc32(text.encode("utf-8")) % 2]


def _error_span(text: str, error: str, position: int) -> tuple[int, int] | None:
    """Where `error` (word index `position`) is in `text`: the occurrence nearest that word."""
    starts = [m.start() for m in _WORDS.finditer(text)]
    found = [m.start() for m in re.finditer(re.escape(error), text)]
    if not found:
        return None
    at = starts[position] if position < len(starts) else 0
    best = min(found, key=lambda s: abs(s - at))
    return best, best + len(error)


def plewi(path: str, half: str) -> tuple[list[Case], list[str]]:
    """Real-word errors (one case each) and the corrected sentences of the chosen half."""
    cases, corrected = [], []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ConfigError(f"--data {path}: {e.strerror}") from None
    for line in lines:
        if not line.strip():
            continue
        row = json.loads(line)
        if half != "all" and half_of(row["text"]) != half:
            continue
        corrected.append(row["new_text"])
        for e in row.get("errors", []):
            if e.get("type") != "realword":
                continue
            span = _error_span(row["text"], e["error"], int(e.get("position", 0)))
            if span is None:
                continue
            cases.append(
                Case(
                    "plewi",
                    e.get("category") or "?",
                    row["text"],
                    *span,
                    e["correction"],
                    row["new_text"],
                )
            )
    return cases, corrected


def languagetool(path: str, half: str) -> list[Case]:
    """LanguageTool's examples with a correction: the sentence, the marked span, the first fix."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise ConfigError(f"--languagetool {path}: {e}") from None
    cases = []
    for category in root.iter("category"):
        name = category.get("name") or "?"
        for example in category.iter("example"):
            fixes = example.get("correction")
            marker = example.find("marker")
            if not fixes or marker is None:
                continue
            raw = f"{example.text or ''}\x00{''.join(marker.itertext())}\x01{marker.tail or ''}"
            raw = " ".join(raw.split()).replace(" \x01", "\x01 ").replace("\x00 ", " \x00")
            text = " ".join(raw.replace("\x00", "").replace("\x01", "").split())
            start = len(" ".join(raw[: raw.index("\x00")].split()))
            start += 1 if start and text[start : start + 1] == " " else 0
            marked = raw[raw.index("\x00") + 1 : raw.index("\x01")]
            if half != "all" and half_of(text) != half or not marked.strip():
                continue
            end = start + len(marked.strip())
            fix = fixes.split("|")[0]
            if text[start:end] != marked.strip():
                continue
            cases.append(
                Case("languagetool", name, text, start, end, fix, text[:start] + fix + text[end:])
            )
    return cases


# -- the runs ---------------------------------------------------------------------------------
class Checker:
    """The grammar checker as the editor runs it: rules, then the model's questions."""

    def __init__(self, compare):
        self.compare = compare
        self.cache: dict[str, Checked] = {}
        self.seconds = 0.0
        self.words = 0

    def __call__(self, text: str) -> Checked:
        if text in self.cache:
            return self.cache[text]
        began = time.perf_counter()
        found, questions = grammar.check(text)
        if self.compare is not None:
            found += grammar.ask(text, questions, self.compare) or []
        took = time.perf_counter() - began
        self.seconds += took
        self.words += count_words(text)
        checked = Checked(sorted(found, key=lambda f: f.start), len(questions), took)
        self.cache[text] = checked
        return checked


def _applied(text: str, start: int, end: int, fix: str) -> str:
    return text[:start] + fix + text[end:]


def _right(case: Case, f: Finding) -> bool:
    """Applying the finding's first suggestion gives the correction at the error's place."""
    if not f.suggestions:
        return False
    ours = _applied(case.text, f.start, f.end, f.suggestions[0])
    theirs = _applied(case.text, case.start, case.end, case.correction)
    lo, hi = min(f.start, case.start), max(f.end, case.end)
    tail = len(case.text) - hi
    return ours[lo : len(ours) - tail].strip() == theirs[lo : len(theirs) - tail].strip()


def score_cases(cases: list[Case], check: Checker, bar) -> dict[str, Tally]:
    by: dict[str, Tally] = defaultdict(Tally)
    for case in cases:
        found = check(case.text).findings
        hits = [f for f in found if f.start < case.end and case.start < f.end]
        keys = [case.category, "all"] + (
            ["fleksja*"] if case.category.startswith(INFLECTION) else []
        )
        for key in keys:
            tally = by[key]
            tally.cases += 1
            if hits:
                tally.flagged += 1
                tally.right += _right(case, hits[0])
                tally.by[hits[0].reason] += 1
        bar.update()
    return dict(by)


def false_alarms(texts: list[str], check: Checker, bar) -> dict:
    """Flags on text that needs none: sentences flagged, flags per 1,000 words, by reason."""
    flagged = words = flags = 0
    reasons: Counter = Counter()
    examples = []
    for text in texts:
        found = check(text).findings
        words += count_words(text)
        flags += len(found)
        flagged += bool(found)
        reasons.update(f.reason for f in found)
        examples += [
            {"text": text[max(0, f.start - 60) : f.end + 40], "word": f.word, "fix": f.suggestions}
            for f in found[:1]
        ]
        bar.update()
    return {
        "texts": len(texts),
        "flagged": flagged,
        "share_flagged": flagged / max(1, len(texts)),
        "words": words,
        "flags": flags,
        "per_1000": 1000 * flags / max(1, words),
        "reasons": dict(reasons),
        "examples": examples[:40],
    }


def _engine(settings: Settings, model: bool):
    if not model:
        return None, "rules and morphology only (no model)"
    from decoder.pipeline import load_scorer

    engine = load_scorer(settings, progress=False)
    return engine.compare, f"model: {settings.target}"


def run(settings: Settings, args: argparse.Namespace) -> str:
    if not args.data and not args.languagetool:
        raise ConfigError("bench grammar: give --data FILE (dev-set format) or --languagetool FILE")
    compare, note = _engine(settings, args.model)
    cases, corrected = plewi(args.data, args.half) if args.data else ([], [])
    lt = languagetool(args.languagetool, "all") if args.languagetool else []
    clean = [] if args.no_clean else [t for _, t in corpus(args.split, None)]
    corrected_lt = [c.corrected for c in lt]
    total = len(cases) + len(corrected) + len(lt) + len(corrected_lt) + len(clean)
    check = Checker(compare)
    results: dict = {}
    with tqdm(total=total, desc="grammar", disable=args.quiet) as bar:
        if cases or corrected:
            results["plewi"] = {
                "errors": _tallies(score_cases(cases, check, bar)),
                "corrected": false_alarms(corrected, check, bar),
            }
        if lt:
            results["languagetool"] = {
                "errors": _tallies(score_cases(lt, check, bar)),
                "corrected": false_alarms(corrected_lt, check, bar),
            }
        if clean:
            results["clean"] = false_alarms(clean, check, bar)
    results["seconds_per_1000_words"] = 1000 * check.seconds / max(1, check.words)
    header = (
        f"# Polish grammar: bielik-lsp on real-word errors\n\n"
        f"{note}. Data: {args.data or '–'} (half {args.half}), LanguageTool examples: "
        f"{args.languagetool or '–'}, clean text: polish/data/devset.jsonl ({args.split} split"
        f"{', not run' if args.no_clean else ''}). Machine: {describe_machine()}; load average "
        f"{load_average()} at the end.\n\nCommand: `{args.command_line}`"
    )
    text = report(results, header)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_report(out, "grammar", text, results)
    return text


def _tallies(by: dict[str, Tally]) -> dict:
    return {
        k: {
            "cases": t.cases,
            "flagged": t.flagged,
            "right": t.right,
            "recall": t.flagged / max(1, t.cases),
            "first_right": t.right / max(1, t.flagged),
            "by_reason": dict(t.by),
        }
        for k, t in sorted(by.items(), key=lambda kv: -kv[1].cases)
    }


def report(results: dict, header: str) -> str:
    parts = [header]
    for name, title in (("plewi", "Real-word errors (--data)"), ("languagetool", "LanguageTool")):
        if name not in results:
            continue
        errors, corrected = results[name]["errors"], results[name]["corrected"]
        rows = [
            [
                k,
                str(t["cases"]),
                f"{t['recall']:.1%}",
                f"{t['first_right']:.0%}",
                ", ".join(f"{r} {n}" for r, n in t["by_reason"].items()),
            ]
            for k, t in errors.items()
        ]
        parts += [
            f"## {title}",
            table(["category", "errors", "flagged", "first suggestion right", "by"], rows),
            f"Corrected sentences flagged: {corrected['flagged']}/{corrected['texts']} "
            f"({corrected['share_flagged']:.1%}); {corrected['per_1000']:.2f} flags per 1,000 "
            f"words; by reason: {corrected['reasons']}.",
        ]
    if "clean" in results:
        c = results["clean"]
        parts.append(
            f"## Clean text\n\n{c['flags']} flags in {c['words']} words "
            f"({c['per_1000']:.2f} per 1,000); by reason: {c['reasons']}."
        )
    parts.append(f"Time: {results['seconds_per_1000_words']:.2f} s per 1,000 words checked.")
    return "\n\n".join(parts) + "\n"
