"""`bielik-lsp check FILE... [--json]`: Polish spelling and grammar for scripts and CI.

The same checkers as the editors' diagnostics: spelling (polish/spelling.py: Morfeusz decides
what is a word, the configured model ranks corrections in their sentence and questions common
words a far likelier near form would replace) and grammar (polish/grammar.py: certain rules,
and words that disagree with their neighbours, flagged where the model reads the sentence far
likelier with a form that agrees). The model (the target; an inference server that gives
log-probabilities) loads only when some word needs it. Words accepted in the user's
dictionary and in the `.bielik/dictionary.txt` of the file's folder or any folder above it
are accepted here too, with all their forms. Exit status: 0 nothing questioned, 1 something
questioned, 2 a file could not be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from app.errors import UserError
from decoder.config import Settings
from lsp_server.grammar import merged
from lsp_server.settings import GRAMMAR_CODES
from lsp_server.spelling import FOLDER, user_dictionary
from polish import grammar, spelling
from polish.dictionary import Accepted, read_words
from polish.words import paragraphs, switched_off


def add_parser(sub) -> None:
    p = sub.add_parser(
        "check",
        allow_abbrev=False,
        help="Polish spelling and grammar of text files: questioned words and corrections; "
        "exit 1 if any",
    )
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per finding: path, line (0-based), start, end (code points in "
        "the line), word, suggestions (best first), kind (spelling or grammar), reason",
    )
    p.add_argument(
        "--model",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="let the model rank corrections in their sentence and weigh grammar's "
        "questions (default: on)",
    )
    p.add_argument(
        "--grammar",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="check grammar too (default: on)",
    )
    p.add_argument(
        "--disable",
        action="append",
        default=[],
        choices=GRAMMAR_CODES,
        metavar="RULE",
        help=f"a grammar rule not to report (repeatable): {', '.join(GRAMMAR_CODES)}",
    )


def read_text(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{path} is not UTF-8 text (byte {e.start})") from None


def accepted_for(path: Path, user: list[str]) -> Accepted:
    """The user's words and those of every .bielik/dictionary.txt from the file's folder up."""
    words = list(user)
    for folder in path.resolve().parents:
        words += read_words(folder / FOLDER / "dictionary.txt")
    return Accepted(words)


class Model:
    """The engine, loaded on first need; None as `score` where it cannot rank."""

    def __init__(self, settings: Settings, wanted: bool):
        self.settings, self.wanted, self.engine = settings, wanted, None

    def score(self, prefix: str, continuations: list[str]) -> list[float] | None:
        if self.engine is None:
            from decoder.pipeline import load_scorer

            self.engine = load_scorer(self.settings, progress=False)
        return self.engine.score(prefix, continuations)

    def compare(self, text: str, edits: list, floor: float | None) -> list | None:
        if self.engine is None:
            from decoder.pipeline import load_scorer

            self.engine = load_scorer(self.settings, progress=False)
        return self.engine.compare(text, edits, floor)


def grammar_findings(text: str, model: Model, disabled: tuple[str, ...]) -> list:
    """Grammar per paragraph, as the editor checks it (magic comments switch it off too)."""
    off = switched_off(text)
    out = []
    for start, end in paragraphs(text):
        if any(a <= start and end <= b for a, b in off):
            continue
        paragraph = text[start:end]
        found, questions = grammar.check(paragraph, disabled)
        if model.wanted and questions:
            found += grammar.ask(paragraph, questions, model.compare) or []
        out += [replace(f, start=f.start + start, end=f.end + start) for f in found]
    return out


def check_file(
    path: str, text: str, allowed, model: Model, disabled: tuple[str, ...] | None = ()
) -> list[dict]:
    """The findings of one file as the JSON objects `--json` prints, in order.

    `disabled`: grammar codes not reported; None: no grammar at all.
    """
    found = spelling.check(text, allowed)
    if model.wanted:
        found = spelling.rank(text, found, model.score)
    else:
        found = spelling.questioned(found)
    if disabled is not None:
        found = merged(found, grammar_findings(text, model, disabled))
    starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n")]
    out = []
    line = 0
    for f in sorted(found, key=lambda f: f.start):
        while line + 1 < len(starts) and starts[line + 1] <= f.start:
            line += 1
        start = f.start - starts[line]
        out.append(
            {
                "path": path,
                "line": line,
                "start": start,
                "end": start + (f.end - f.start),
                "word": f.word,
                "suggestions": list(f.suggestions),
                "kind": f.kind,
                "reason": f.reason,
                **({"detail": f.detail} if f.detail else {}),
            }
        )
    return out


def run_check(settings: Settings, args: argparse.Namespace) -> int:
    user = read_words(user_dictionary())
    model = Model(settings, args.model)
    questioned = unreadable = 0
    for path in args.files:
        try:
            text = read_text(path)
        except UserError as e:
            print(f"bielik-lsp: error: {e}", file=sys.stderr)
            unreadable += 1
            continue
        accepted = accepted_for(Path(path), user)
        disabled = tuple(args.disable) if args.grammar else None
        for item in check_file(path, text, accepted.__contains__, model, disabled):
            questioned += 1
            if args.json:
                print(json.dumps(item, ensure_ascii=False), flush=True)
            else:
                fixes = ", ".join(item["suggestions"][:3]) or "no suggestion"
                print(
                    f"{path}:{item['line'] + 1}:{item['start'] + 1}: {item['word']} -> {fixes} "
                    f"({_why(item)})",
                    flush=True,
                )
    return 2 if unreadable else 1 if questioned else 0


def _why(item: dict) -> str:
    if item["kind"] == "grammar" and item.get("detail"):
        return f"grammar: does not agree with {item['detail']}"
    if item["kind"] == "grammar":
        return f"grammar, {item['reason']}: {grammar.REASONS[item['reason']]}"
    return spelling.REASONS[item["reason"]]
