"""Grammar's state in the server: per-paragraph results, and findings as diagnostics.

One cache, keyed by a paragraph's text and the rules switched off: the certain rules' findings
and the questions for the model (polish/grammar.check), then the model's verdicts once it has
read them. An edit re-checks only the paragraphs whose text changed; the rest come from here.
The flow (debounce, the scoring queue, push or pull) is lsp_server/diagnostics.py's, shared
with spelling; the model's work goes through `ScoringQueue`, which spelling uses too.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from lsprotocol import types

from decoder.backends.base import Stopped
from decoder.generation import Generator
from decoder.scoring import Cancelled
from polish import grammar
from polish.spelling import Finding

from .spelling import replacements
from .worker import Ticket, Worker

SOURCE = "bielik-grammar"
T = TypeVar("T")


@dataclass
class Entry:
    """One paragraph's grammar: what the rules found, what the model is asked, its answer."""

    findings: list[Finding]
    questions: list[grammar.Question]
    verdicts: list[Finding] | None = None  # None: the model has not answered yet


class GrammarCache:
    """Per paragraph text (and rules switched off), its Entry; least recently used dropped."""

    def __init__(self, size: int = 4096):
        self.size = size
        self._entries: OrderedDict[tuple[str, tuple[str, ...]], Entry] = OrderedDict()

    def get(self, paragraph: str, disabled: tuple[str, ...]) -> tuple[Entry, bool]:
        """(the paragraph's entry, whether it was checked just now)."""
        key = (paragraph, disabled)
        entry = self._entries.get(key)
        fresh = entry is None
        if entry is None:
            found, questions = grammar.check(paragraph, disabled)
            entry = Entry(found, questions, None if questions else [])
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return entry, fresh


class ScoringQueue:
    """The checkers' model work, one call at a time on the engine thread, behind completions.

    Each call runs with a background ticket that yields as soon as an inline request waits for
    the engine (the call stops between passes: Cancelled, or Stopped inside a prefill); it is
    then run again once no request waits. Spelling's ranking and grammar's questions share it,
    so neither ever delays ghost text and they never run beside each other.
    """

    def __init__(self, worker: Worker):
        self.worker = worker

    async def run(self, fn: Callable[[Generator, Callable[[], bool]], T]) -> T:
        """`fn(engine, should_stop)` on the engine thread; again after each yield."""
        while True:
            ticket = Ticket(yields_to=lambda: self.worker.urgent > 0, background=True)
            try:
                return await self.worker.call(self._call, fn, ticket)
            except (Cancelled, Stopped):
                await self.worker.calm()

    def _call(self, fn, ticket: Ticket):
        if ticket.should_stop():
            raise Cancelled()
        return fn(self.worker.pipe, ticket.should_stop)


def ask(engine: Generator, should_stop, paragraph: str, entry: Entry) -> list[Finding]:
    """On the engine thread: the model's verdicts on a paragraph's questions."""

    def compare(text, edits, floor):
        return engine.compare(text, edits, floor, should_stop)

    return grammar.ask(paragraph, entry.questions, compare) or []


def diagnostic(finding: Finding, positions) -> types.Diagnostic:
    return types.Diagnostic(
        range=types.Range(start=positions.at(finding.start), end=positions.at(finding.end)),
        message=grammar.message(finding),
        severity=types.DiagnosticSeverity.Information,
        source=SOURCE,
        code=finding.reason,
        data={"word": finding.word, "suggestions": list(finding.suggestions), "kind": "grammar"},
    )


def code_actions(uri: str, diagnostics: list[types.Diagnostic]) -> list[types.CodeAction]:
    """Per grammar diagnostic: its fixes, the first preferred."""
    actions = []
    for d in diagnostics:
        data = d.data if isinstance(d.data, dict) else {}
        if d.source == SOURCE:
            actions += replacements(uri, d, data.get("suggestions") or [])
    return actions


def merged(spelling: list[Finding], found: list[Finding]) -> list[Finding]:
    """Both checkers' findings; a spelling one left out where a grammar rule says more.

    "niewiem": not a word, and "nie" is written apart from verbs.
    """
    taken = [(f.start, f.end) for f in found if f.reason != "model"]
    return [f for f in spelling if not any(a < f.end and f.start < b for a, b in taken)] + found
