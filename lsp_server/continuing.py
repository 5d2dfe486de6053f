"""`bielik.continueDocument`: write on at a position, streaming versioned edits into the editor.

A run stops at its token budget, at the end of a paragraph, on a progress or request cancel, or
as soon as the document differs from what its own edits made of it (the user typed). Inline
requests go first: the run steps aside between cycles and resumes after them.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from decoder.stats import RunStats

from .compat import progress_cancelled
from .completion import Prompt, align
from .documents import position_at
from .errors import engine_work
from .language_server import BielikServer
from .worker import Generated, Ticket

EDIT_ECHO_S = 2.0  # how long to wait for the didChange that echoes our own applyEdit


class Continuation:
    """One run: the text streamed so far, what reached the editor, and why it stopped."""

    def __init__(self, ls: BielikServer, uri: str, prompt: Prompt, offset: int, max_tokens: int):
        self.ls, self.uri, self.prompt, self.offset = ls, uri, prompt, offset
        self.max_tokens = max_tokens
        doc = ls.documents.get(uri)
        self.expected, self.version = doc.source, doc.version  # what our edits made of it
        self.mode, _, self.drafter, _ = ls.speculation(uri, doc.source)
        self.ticket = Ticket(yields_to=lambda: ls.worker.urgent > 0)
        self.arrived: asyncio.Queue[str] = asyncio.Queue()
        self.streamed, self.applied, self.stop = "", "", ""
        self.generated, self.resumed, self.stats = 0, 0, RunStats()
        self.token: str | None = None  # work-done progress, when the client takes it
        self.started = time.monotonic()
        self.job: asyncio.Future | None = None

    async def run(self) -> dict:
        title = "Bielik: continuing the document"
        self.token = await self.ls.start_progress(title, cancellable=True)
        if self.token is not None and (cancel := progress_cancelled(self.ls, self.token)):
            cancel.add_done_callback(lambda _: self.ticket.cancel())
        self.job = self._generate(self.prompt.text, self.max_tokens)
        with engine_work(self.ticket):
            try:
                while not self.stop:
                    await self._receive()
                    await self._step()
            except BaseException as e:  # the editor's progress bar ends whatever stopped the run
                failed = "cancelled" if isinstance(e, asyncio.CancelledError) else "failed"
                self.ls.end_progress(self.token, failed)
                raise
            finally:
                self.ticket.cancel()
        await asyncio.gather(self.job, return_exceptions=True)
        self.ls.end_progress(self.token, f"stopped: {self.stop}")
        self.ls.send_status(self.uri)
        return self.result()

    def _generate(self, text: str, budget: int) -> asyncio.Future:
        """Engine work on its thread; each new piece of text lands in `arrived`."""
        loop = asyncio.get_running_loop()

        def arrived(text: str, _stats: RunStats) -> None:
            loop.call_soon_threadsafe(self.arrived.put_nowait, text)

        work = partial(
            self.ls.worker.generate,
            text,
            max_tokens=budget,
            drafter=self.drafter,
            override=self.mode,
            ticket=self.ticket,
            key=self.uri,
            enough=lambda text: paragraph_end(text) is not None,
            on_text=arrived,
            first_bytes=b"" if self.streamed else self.prompt.first_bytes,
        )
        return asyncio.ensure_future(self.ls.worker.call(work))

    async def _receive(self) -> None:
        """Wait for more text or for the engine to stop; take everything that arrived."""
        if self.arrived.empty() and not self.job.done():
            waiter = asyncio.ensure_future(self.arrived.get())
            await asyncio.wait([waiter, self.job], return_when=asyncio.FIRST_COMPLETED)
            if waiter.done():
                self.streamed += waiter.result()
            else:
                waiter.cancel()
        while not self.arrived.empty():
            self.streamed += self.arrived.get_nowait()

    async def _step(self) -> None:
        """Send what is new as an edit; decide whether the run goes on."""
        text = align(self.streamed, self.prompt)
        if text is None:
            self.stop = "glued"  # the model went on with the word before a typed space
            return
        end = paragraph_end(text)
        pending = (text if end is None else text[:end])[len(self.applied) :]
        if pending and not await self._apply(pending):
            return
        if end is not None:
            self.stop = "paragraph"
        elif self.job.done() and self.arrived.empty():
            await self._finish_job(self.job.result())

    async def _apply(self, pending: str) -> bool:
        """Insert `pending` after what was applied; False (and why) if the document moved on."""
        if not unchanged(self.ls, self.uri, self.expected):
            self.stop = "edited"
            return False
        at = self.offset + len(self.applied)
        if not await insert(self.ls, self.uri, self.version, self.expected, at, pending):
            self.stop = "rejected"
            return False
        self.expected = self.expected[:at] + pending + self.expected[at:]
        self.applied += pending
        if not await echoed(self.ls, self.uri, self.expected):
            self.stop = "edited"
            return False
        self.version = self.ls.documents.get(self.uri).version
        if self.token is not None:
            seconds = time.monotonic() - self.started
            message = f"{len(self.applied)} characters in {seconds:.1f}s"
            self.ls.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message)
            )
        return True

    async def _finish_job(self, result: Generated) -> None:
        """The engine stopped: record it, and resume if it only stepped aside for inline work."""
        self.stats = result.stats
        self.generated += result.stats.generated_tokens
        if result.stats.generated_tokens:
            self.ls.stats.add_run(self.uri, result.stats, result.stop)
        stepped_aside = result.stop == "cancelled" and self.ticket.yielding
        if not stepped_aside or self.ticket.cancelled:
            self.stop = result.stop
        elif self.generated < self.max_tokens:
            await self.ls.worker.calm()
            self.resumed += 1
            budget = self.max_tokens - self.generated
            self.job = self._generate(self.prompt.text + self.streamed, budget)
        else:
            self.stop = "max_tokens"

    def result(self) -> dict:
        return {
            "uri": self.uri,
            "text": self.applied,
            "stopReason": self.stop,
            "tokens": self.generated,
            "resumed": self.resumed,  # times it stepped aside for inline requests
            "stats": self.stats.to_dict(per_cycle=False),  # of the last stretch
        }


async def insert(ls: BielikServer, uri: str, version: int, text: str, at: int, new: str) -> bool:
    """Ask the client to insert `new` at code point `at` of version `version`."""
    line, character = position_at(text, at, ls.encoding)
    pos = types.Position(line=line, character=character)
    document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
    edit = types.TextDocumentEdit(
        text_document=document, edits=[types.TextEdit(range=types.Range(pos, pos), new_text=new)]
    )
    params = types.ApplyWorkspaceEditParams(edit=types.WorkspaceEdit(document_changes=[edit]))
    try:
        result = await ls.workspace_apply_edit_async(params)
    except JsonRpcException:  # a client without workspace/applyEdit
        return False
    return result.applied


def paragraph_end(text: str) -> int | None:
    """Where the first paragraph of generated text ends (a blank line after some content)."""
    content = len(text) - len(text.lstrip())
    blank = text.find("\n\n", content)
    return blank if blank >= 0 and text[content:blank].strip() else None


def unchanged(ls: BielikServer, uri: str, expected: str) -> bool:
    doc = ls.documents.get(uri)
    return doc is not None and doc.source == expected


async def echoed(ls: BielikServer, uri: str, expected: str) -> bool:
    """Wait for the didChange that echoes our edit; False if the text became anything else."""
    deadline = time.monotonic() + EDIT_ECHO_S
    while not unchanged(ls, uri, expected):
        event = ls.changes.get(uri)
        remaining = deadline - time.monotonic()
        if event is None or remaining <= 0:
            return False
        event.clear()
        if unchanged(ls, uri, expected):
            return True
        try:
            await asyncio.wait_for(event.wait(), remaining)
        except TimeoutError:
            return False
    return True
