"""Grammar's state in the server: per-paragraph results, and findings as diagnostics.

One cache, keyed by a paragraph's text and the rules switched off: the certain rules' findings
and the questions for the model (polish/grammar.check), then the model's verdicts once it has
read them. An edit re-checks only the paragraphs whose text changed; the rest come from here.
The flow (debounce, the scoring queue, push or pull) is lsp_server/diagnostics.py's, shared
with spelling; the model's work goes through `ScoringQueue`, which spelling uses too.
"""

from __future__ import annotations

import asyncio
import math
import time
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
# Model work (grammar's questions, spelling's ranking) starts once the writer has left the
# editor alone this long: a thinking pause, not the gap between two words.
SETTLE_S = 1.5
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

    def has(self, paragraph: str, disabled: tuple[str, ...]) -> bool:
        return (paragraph, disabled) in self._entries

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
    """The checkers' model work, one call at a time on the engine thread, behind the writer.

    A call starts only once the writer has left the editor alone (no edit, no inline request)
    for `settle_s`: while they type, each pause would otherwise hand the engine a pass that the
    next keystroke's ghost text waits behind. A call runs with a background ticket that yields
    as soon as the writer acts again (the call stops between passes: Cancelled, or Stopped
    inside a prefill); it is then run again after the next quiet spell. Spelling's ranking and
    grammar's questions share it, so neither ever delays ghost text by more than the pass in
    flight, and they never run beside each other.
    """

    def __init__(self, worker: Worker, settle_s: float = SETTLE_S):
        self.worker = worker
        self.settle_s = settle_s
        self.stirred = -math.inf  # when the writer last edited or asked for ghost text

    def stir(self) -> None:
        """The writer edited or asked for ghost text: model work waits for a quiet spell."""
        self.stirred = time.monotonic()

    def quiet(self) -> bool:
        """The writer has left the editor alone for `settle_s` and no inline request waits."""
        return time.monotonic() - self.stirred >= self.settle_s and not self.worker.urgent

    async def settle(self) -> None:
        """Return once no inline request waits and the writer has been quiet for `settle_s`."""
        while not self.quiet():
            await self.worker.calm()
            await asyncio.sleep(max(self.stirred + self.settle_s - time.monotonic(), 0.0))

    async def run(self, fn: Callable[[Generator, Callable[[], bool]], T]) -> T:
        """`fn(engine, should_stop)` on the engine thread after a quiet spell; again on a yield."""
        while True:
            await self.settle()
            ticket = Ticket(yields_to=self._stirred_since(time.monotonic()), background=True)
            try:
                return await self.worker.call(self._call, fn, ticket)
            except (Cancelled, Stopped):
                continue

    def _stirred_since(self, began: float) -> Callable[[], bool]:
        return lambda: self.worker.urgent > 0 or self.stirred > began

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
