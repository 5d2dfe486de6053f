"""Work done ahead of inline requests, on the engine thread whenever no request needs it.

- The prompt of a document just opened is prefilled (as llama.vim's 0-token request), its
  end's short prompt first (suggestions.py), so the first suggestion pays for neither; so is
  the whole prompt of a request that was answered from the short one meanwhile.
- While the user reads a suggestion, the one that follows it is prepared as if it were accepted.

Both step aside for any inline request (their tickets yield to it) and land only in caches.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, replace
from functools import partial

from .completion import Item
from .language_server import BielikServer
from .suggestions import Job, from_result, generate, job_for
from .worker import Ticket


@dataclass
class Prepared:
    """Suggestions being computed for the text the document will have once one is accepted."""

    before: str
    after: str
    job: Job
    ticket: Ticket
    task: asyncio.Future


def _background(ls: BielikServer) -> Ticket:
    return Ticket(yields_to=lambda: ls.worker.urgent > 0, background=True)


def _spawn(coroutine) -> asyncio.Future:
    task = asyncio.ensure_future(coroutine)
    task.add_done_callback(lambda t: t.cancelled() or t.exception())  # never "never retrieved"
    return task


def warm(ls: BielikServer, uri: str, cursor: tuple[str, str] | None = None) -> None:
    """Prefill the whole prompt for `cursor` (before, after), or a document's end.

    At a document's end its short prompt goes first: a writer often goes on where the text ends,
    and the first request then pays for neither prompt. Resumes after each inline request it
    stepped aside for; ends when done, when the document gets a request of its own (which then
    prefills from where this stopped), or another opens.
    """
    cancel_warm(ls)
    doc = ls.documents.get(uri)
    if ls.worker.state != "ready" or doc is None or not doc.source.strip():
        return
    if not ls.config.server.serves(uri, doc.language_id):
        return
    before, after = cursor or (doc.source, "")
    job = job_for(ls, uri, before, after, max_tokens=1)
    jobs = [replace(job, near=None)]
    if cursor is None and job.near is not None:  # just opened: the end's short prompt first
        jobs.insert(0, job)
    ticket = _background(ls)
    ls.warming = (uri, ticket)

    async def run() -> None:
        for job in jobs:
            while not ticket.cancelled:
                result = await ls.worker.call(partial(generate, ls, uri, job, ticket))
                if result.stop != "cancelled":
                    break
                await ls.worker.calm()
        if not ticket.cancelled:
            ls.stats.count(uri, "warmups")  # the whole prompt is in its cache

    _spawn(run())


def cancel_warm(ls: BielikServer, uri: str | None = None) -> None:
    """Stop prefilling in the background (only for `uri`, when given)."""
    if ls.warming is not None and uri in (None, ls.warming[0]):
        ls.warming[1].cancel()
        ls.warming = None


def prepare(ls: BielikServer, uri: str, before: str, after: str) -> None:
    """Compute, while the user reads a suggestion, the one that follows once it is accepted.

    Lands in the suggestion cache.
    """
    cancel_prepared(ls, uri)
    if ls.documents.get(uri) is None or not before.strip():
        return
    job = job_for(ls, uri, before, after)
    ticket = _background(ls)

    async def run() -> list[Item]:
        result = await ls.worker.call(partial(generate, ls, uri, job, ticket))
        ls.stats.add_run(uri, result.stats, result.stop)
        if ticket.should_stop():
            return []  # stepped aside or cancelled: a partial text is not a suggestion
        items = from_result(result, job, "model")
        if items:
            ls.cache.put(uri, before, after, items)
            ls.stats.count(uri, "prepared")
        return items

    ls.prepared[uri] = Prepared(before, after, job, ticket, _spawn(run()))


def cancel_prepared(ls: BielikServer, uri: str) -> None:
    old = ls.prepared.pop(uri, None)
    if old is not None:
        old.ticket.cancel()


async def await_prepared(
    ls: BielikServer, uri: str, before: str, after: str, arrived: float
) -> list[Item]:
    """The prepared suggestions if this request is at the text they were prepared for.

    Waits for them within the time budget, and from then on the run stops where a request's
    own would (`Deadlines`): a prepared run writes up to a whole sentence, which takes half a
    second on a busy core. Any other request cancels the preparation.
    """
    prepared = ls.prepared.get(uri)
    if prepared is None:
        return []
    if (prepared.before, prepared.after) != (before, after):
        if not prepared.task.done():
            cancel_prepared(ls, uri)
        return []
    del ls.prepared[uri]
    if not prepared.task.done():  # it now has a writer waiting: it stops as a request would
        prepared.job.times.start(arrived, ls.config.server.suggestion_ms / 1000)
    remaining = ls.config.server.time_budget_ms / 1000 - (time.monotonic() - arrived)
    try:
        items = await asyncio.wait_for(asyncio.shield(prepared.task), max(0.0, remaining))
    except TimeoutError:
        prepared.ticket.cancel()
        return []
    except Exception:
        return []
    if items:
        ls.stats.count(uri, "prepared_used")
    return items
