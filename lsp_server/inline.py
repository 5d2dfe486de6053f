"""`textDocument/inlineCompletion`: one suggestion at the cursor.

Debounce, cache, supersession, one engine run, cutting, and the suggestion prepared ahead (as if
the one shown were accepted).

A request only reaches the model if no newer request or edit for its document arrived during
the debounce; a result that became stale meanwhile is dropped rather than shown. Failures never
answer with an error (a client may pop one up per keystroke): the request gets no suggestion and
the cause goes to the status, and once to a message.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from functools import partial

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .completion import Prompt, align, avoid_repeat, build_prompt, cut, unit_end
from .errors import engine_work
from .language_server import BielikServer
from .worker import Generated, Ticket

ACCEPTED = "bielik.accepted"  # the command each item carries; editors run it on accept
NOTHING = types.InlineCompletionList(items=[])
_DELIVERED_MAX = 256
_ids = itertools.count(1)


@dataclass
class Prepared:
    """A suggestion being computed for the text the document will have once one is accepted."""

    before: str
    after: str
    ticket: Ticket
    task: asyncio.Future


async def complete(
    ls: BielikServer, params: types.InlineCompletionParams, arrived: float
) -> types.InlineCompletionList:
    """A suggestion, or none; never an error answer (except for `$/cancelRequest`)."""
    uri = params.text_document.uri
    try:
        return await _complete(ls, params, arrived)
    except JsonRpcException as e:
        ls.stats.session.failed += 1
        known = ls.documents.get(uri) is not None
        ls.report_once(uri if known else None, str(e).strip().splitlines()[0])
        return NOTHING


async def _complete(
    ls: BielikServer, params: types.InlineCompletionParams, arrived: float
) -> types.InlineCompletionList:
    uri = params.text_document.uri
    doc = ls.document(uri)
    if not ls.config.server.serves(uri, doc.language_id):
        return NOTHING
    offset = ls.offset(doc, params.position)
    before, after, version = doc.source[:offset], doc.source[offset:], doc.version
    ls.stats.count(uri, "requests")
    suggestion = await _ready(ls, uri, before, after, arrived)
    if suggestion is None:
        suggestion = await _compute(ls, uri, before, after, arrived)
    if not suggestion or await _moved_on(ls, uri, version):
        return NOTHING
    return _deliver(ls, uri, params.position, suggestion)


async def _moved_on(ls: BielikServer, uri: str, version: int) -> bool:
    """Whether the document changed since the request: the editor would show a stale answer."""
    await asyncio.sleep(0)  # an edit already read from the client is applied first
    current = ls.documents.get(uri)
    if current is not None and current.version == version:
        return False
    ls.stats.count(uri, "stale_dropped")
    return True


async def _ready(ls: BielikServer, uri: str, before: str, after: str, arrived: float) -> str | None:
    """A suggestion already made for this text: prepared ahead, or in the cache."""
    if (prepared := await _await_prepared(ls, uri, before, after, arrived)) is not None:
        return prepared
    cached = ls.cache.get(uri, before, after)
    if cached is not None:
        ls.stats.count(uri, "cache_hits")
    return cached


async def _compute(ls: BielikServer, uri: str, before: str, after: str, arrived: float) -> str:
    """A new suggestion from the engine ("" when there is none); the next one prepared behind."""
    if ls.worker.state in ("loading", "unavailable"):
        return ""  # the status already says why
    ls.require_engine()
    options = ls.config.server
    prompt = build_prompt(before, options.max_prompt_chars)
    if not prompt.text.strip():
        return ""
    ticket = Ticket(options.time_budget_ms / 1000, arrived=arrived)
    show_at = arrived + options.suggestion_ms / 1000
    result = await _run(ls, uri, before + after, prompt, ticket, show_at)
    if result is None or ticket.cancelled:
        ls.stats.count(uri, "superseded")
        return ""
    suggestion = _suggestion(result, prompt, after)
    if suggestion:
        ls.cache.put(uri, before, after, suggestion)
        if options.prepare_next and result.stop != "eos":
            prepare(ls, uri, before + suggestion, after)
    return suggestion


async def _run(
    ls: BielikServer, uri: str, source: str, prompt: Prompt, ticket: Ticket, show_at: float
) -> Generated | None:
    """After the debounce, unless a newer request came, one engine run ahead of background work."""
    options = ls.config.server
    mode, _, drafter, _ = ls.speculation(uri, source)
    ls.supersession.start(uri, ticket)
    try:
        with engine_work(ticket):
            await asyncio.sleep(options.debounce_ms / 1000)
            if not ls.supersession.is_current(uri, ticket):
                return None
            budget = options.inline_max_tokens
            work = partial(_generate, ls, uri, prompt, drafter, mode, ticket, budget, show_at)
            result = await ls.worker.call(work, urgent=True)
    finally:
        ls.supersession.finish(uri, ticket)
    ls.stats.add_run(uri, result.stats, result.stop)
    ls.publish_speculation(uri, source)
    return result


def _generate(
    ls: BielikServer,
    uri: str,
    prompt: Prompt,
    drafter: str,
    mode: str,
    ticket: Ticket,
    max_tokens: int,
    show_at: float | None = None,
) -> Generated:
    """On the engine thread: one suggestion's worth of text, from the document's prefix cache."""
    return ls.worker.generate(
        prompt.text,
        key=uri,
        max_tokens=max_tokens,
        drafter=drafter,
        override=mode,
        ticket=ticket,
        enough=partial(_enough, prompt=prompt, show_at=show_at),
    )


def _suggestion(result: Generated, prompt: Prompt, after: str) -> str:
    """What to show from generated text: aligned to the cursor, cut at a unit, not repeating."""
    text = align(result.text, prompt)
    if text is None:
        return ""
    suggestion = avoid_repeat(cut(text, finished=result.stop == "eos"), after)
    return suggestion if suggestion.strip() else ""


def _enough(text: str, prompt: Prompt, show_at: float | None = None) -> bool:
    """Stop at a whole sentence or line (or a glued word), or at `show_at` with a whole word.

    The user sees a short suggestion soon rather than a long one late; the prepared follow-up
    brings the rest.
    """
    aligned = align(text, prompt)
    if aligned is None or unit_end(aligned) is not None:
        return True
    return (
        show_at is not None and time.monotonic() >= show_at and bool(cut(aligned, finished=False))
    )


def prepare(ls: BielikServer, uri: str, before: str, after: str) -> None:
    """Compute, while the user reads a suggestion, the one that follows once it is accepted.

    Background work: it steps aside for any inline request, and lands in the suggestion cache.
    """
    cancel_prepared(ls, uri)
    doc = ls.documents.get(uri)
    prompt = build_prompt(before, ls.config.server.max_prompt_chars)
    if doc is None or not prompt.text.strip():
        return
    mode, _, drafter, _ = ls.speculation(uri, doc.source)
    ticket = Ticket(yields_to=lambda: ls.worker.urgent > 0)
    max_tokens = ls.config.server.inline_max_tokens

    async def run() -> str:
        result = await ls.worker.call(
            partial(_generate, ls, uri, prompt, drafter, mode, ticket, max_tokens)
        )
        ls.stats.add_run(uri, result.stats, result.stop)
        if ticket.should_stop():
            return ""  # stepped aside or cancelled: a partial text is not a suggestion
        suggestion = _suggestion(result, prompt, after)
        if suggestion:
            ls.cache.put(uri, before, after, suggestion)
            ls.stats.count(uri, "prepared")
        return suggestion

    task = asyncio.ensure_future(run())
    task.add_done_callback(lambda t: t.cancelled() or t.exception())  # never "never retrieved"
    ls.prepared[uri] = Prepared(before, after, ticket, task)


def cancel_prepared(ls: BielikServer, uri: str) -> None:
    old = ls.prepared.pop(uri, None)
    if old is not None:
        old.ticket.cancel()


async def _await_prepared(
    ls: BielikServer, uri: str, before: str, after: str, arrived: float
) -> str | None:
    """The prepared suggestion if this request is at the text it was prepared for.

    Waits for it within the time budget; any other request cancels the preparation.
    """
    prepared = ls.prepared.get(uri)
    if prepared is None:
        return None
    if (prepared.before, prepared.after) != (before, after):
        if not prepared.task.done():
            cancel_prepared(ls, uri)
        return None
    del ls.prepared[uri]
    remaining = ls.config.server.time_budget_ms / 1000 - (time.monotonic() - arrived)
    try:
        text = await asyncio.wait_for(asyncio.shield(prepared.task), max(0.0, remaining))
    except TimeoutError:
        prepared.ticket.cancel()
        return None
    except Exception:
        return None
    if not text:
        return None
    ls.stats.count(uri, "prepared_used")
    return text


def _deliver(
    ls: BielikServer, uri: str, position: types.Position, text: str
) -> types.InlineCompletionList:
    ls.stats.count(uri, "suggestions")
    item_id = str(next(_ids))
    ls.delivered[item_id] = uri
    while len(ls.delivered) > _DELIVERED_MAX:
        old = next(iter(ls.delivered))
        del ls.delivered[old]
        ls.accepted_lengths.pop(old, None)
    item = types.InlineCompletionItem(
        insert_text=text,
        range=types.Range(position, position),
        command=types.Command(
            title="Bielik: suggestion accepted", command=ACCEPTED, arguments=[uri, item_id]
        ),
    )
    return types.InlineCompletionList(items=[item])


def partially_accepted(ls: BielikServer, params: object) -> None:
    """textDocument/didPartiallyAcceptCompletion, counted for the item's document.

    `acceptedLength` is how much of the item the text holds now (typed or accepted, as VS Code
    reports it): an item taken word by word counts each character once.
    """
    uri = uri_of_item(ls, params)
    if uri is None:
        return
    ls.stats.count(uri, "partially_accepted")
    length = getattr(params, "acceptedLength", 0)
    if not isinstance(length, int) or isinstance(length, bool):
        return
    item_id = params.item.command.arguments[1]
    counted = ls.accepted_lengths.get(item_id, 0)
    if length > counted:
        ls.accepted_lengths[item_id] = length
        ls.stats.count(uri, "accepted_chars", length - counted)


def uri_of_item(ls: BielikServer, params: object) -> str | None:
    """The document a shown/accepted item came from: its command's arguments name it."""
    item = getattr(params, "item", None)
    command = getattr(item, "command", None)
    args = getattr(command, "arguments", None)
    if isinstance(args, (list, tuple)) and len(args) == 2 and ls.delivered.get(args[1]) == args[0]:
        return args[0]
    return None
