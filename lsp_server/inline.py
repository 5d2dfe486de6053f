"""`textDocument/inlineCompletion`: suggestions at the cursor.

Debounce, cache, supersession, one engine run, cutting, alternatives (a lookup continuation,
and on an explicit request a sampled one), and the suggestion prepared ahead (as if the first
one shown were accepted).

A request only reaches the model if no newer request or edit for its document arrived during
the debounce; a result that became stale meanwhile is dropped rather than shown. Failures never
answer with an error (a client may pop one up per keystroke): the request gets no suggestion and
the cause goes to the status, and once to a message.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from dataclasses import replace
from functools import partial

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .background import await_prepared, cancel_warm, prepare, warm
from .completion import Item
from .errors import engine_work
from .language_server import BielikServer
from .suggestions import (
    SAMPLED,
    Deadlines,
    Job,
    adds_to,
    context,
    from_result,
    generate,
    job_for,
    lookup_item,
    ranked,
)
from .worker import Generated, Ticket

ALTERNATIVE_DRAWS = 4  # sampled runs tried for an alternative that differs from what is shown

log = logging.getLogger(__name__)

ACCEPTED = "bielik.accepted"  # the command each item carries; editors run it on accept
NOTHING = types.InlineCompletionList(items=[])
_DELIVERED_MAX = 256
_ids = itertools.count(1)


async def complete(
    ls: BielikServer, params: types.InlineCompletionParams, arrived: float
) -> types.InlineCompletionList:
    """Suggestions, or none; never an error answer (except for `$/cancelRequest`)."""
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
    ls.ring.visit(uri)
    cancel_warm(ls, uri)  # this request prefills from where the warm-up got to
    invoked = params.context.trigger_kind == types.InlineCompletionTriggerKind.Invoked
    model = await _ready(ls, uri, before, after, arrived)
    if not model:
        model = await _compute(ls, uri, before, after, arrived, invoked)
    elif invoked and all(item.kind != "sampled" for item in model):
        model = await _add_sampled(ls, uri, before, after, arrived, model)
    else:  # typing through a suggestion: meanwhile the engine prefills what is typed
        warm(ls, uri, (before, after))
    if model is None:
        return NOTHING  # superseded
    items = ranked([*model, *lookup_item(before, after, context(ls, uri, before))])
    if not items or await _moved_on(ls, uri, version):
        return NOTHING
    return _deliver(ls, uri, params.position, items)


async def _moved_on(ls: BielikServer, uri: str, version: int) -> bool:
    """Whether the document changed since the request: the editor would show a stale answer.

    Every message the client has already sent is handled first (an edit on its way counts). Over
    stdin, input not seen caught up within its patience counts as moved on: the client has sent
    something since the request, most likely the next keystroke.
    """
    checked = time.monotonic()
    if ls.input is not None:
        checked = await ls.input.caught_up()
    await asyncio.sleep(0)
    current = ls.documents.get(uri)
    if checked is not None and current is not None and current.version == version:
        log.debug("answer sent: %s version %d checked at %.6f", uri, version, checked)
        return False
    ls.stats.count(uri, "stale_dropped")
    return True


async def _ready(ls: BielikServer, uri: str, before: str, after: str, arrived: float) -> list[Item]:
    """Suggestions already made for this text: prepared ahead, or in the cache."""
    if prepared := await await_prepared(ls, uri, before, after, arrived):
        return prepared
    cached = ls.cache.get(uri, before, after)
    if cached:
        ls.stats.count(uri, "cache_hits")
    return cached


async def _compute(
    ls: BielikServer, uri: str, before: str, after: str, arrived: float, invoked: bool
) -> list[Item] | None:
    """New suggestions from the engine ([] when there is none, None when superseded).

    An explicit request (`invoked`) also gets a sampled alternative, within the time budget.
    The next suggestion is prepared behind the first, and the whole prompt where the short
    one answered.
    """
    if ls.worker.state in ("loading", "unavailable") or not before.strip():
        return []  # the status already says why
    ls.require_engine()
    options = ls.config.server
    ticket = Ticket(options.time_budget_ms / 1000, arrived=arrived)
    times = Deadlines.after(arrived, options.suggestion_ms / 1000)
    job = job_for(ls, uri, before, after, times=times)
    result = await _run(ls, uri, before + after, job, ticket)
    if result is None or ticket.cancelled:
        ls.stats.count(uri, "superseded")
        return None
    items = from_result(result, job, "model")
    if invoked and not ticket.should_stop():
        more = await _sampled(ls, uri, before + after, job, ticket, items)
        if more is None:
            return None
        items += more
    if result.key != uri:  # the short prompt answered: the whole one is prefilled behind, first
        ls.stats.count(uri, "near")
        warm(ls, uri, (before, after))
    if items:
        ls.cache.put(uri, before, after, items)
        if options.prepare_next and result.stop != "eos" and not items[0].joins:
            prepare(ls, uri, before + items[0].text, after)
    return items


async def _add_sampled(
    ls: BielikServer, uri: str, before: str, after: str, arrived: float, items: list[Item]
) -> list[Item] | None:
    """A sampled alternative added to an answer already made, on an explicit request.

    VS Code's Alt+] asks again, explicitly, when it has a single item to cycle through.
    """
    if ls.worker.state in ("loading", "unavailable"):
        return items
    ticket = Ticket(ls.config.server.time_budget_ms / 1000, arrived=arrived)
    job = job_for(ls, uri, before, after)
    more = await _sampled(ls, uri, before + after, job, ticket, items)
    if more is None:
        return None
    items = [*items, *more]
    ls.cache.put(uri, before, after, items)
    return items


async def _sampled(
    ls: BielikServer, uri: str, source: str, job: Job, ticket: Ticket, shown: list[Item]
) -> list[Item] | None:
    """A sampled run of `job` that shows something `shown` does not (None when superseded).

    A small model's draw often repeats the greedy item, or its start, and would be dropped:
    Alt+] would then show nothing new. So its first token begins none of the items shown, and
    a draw that still shows nothing new (cut to what is shown) is drawn again, within the
    ticket's budget.
    """
    avoid = tuple(i.text for i in shown)
    sampled = replace(job, sampling=SAMPLED, times=Deadlines(), avoid=avoid)
    for _ in range(ALTERNATIVE_DRAWS):
        more = await _run(ls, uri, source, sampled, ticket)
        if more is None or ticket.cancelled:
            return None
        found = [i for i in from_result(more, sampled, "sampled") if adds_to(shown, i)]
        if found or ticket.should_stop():
            return found
    return []


async def _run(
    ls: BielikServer, uri: str, source: str, job: Job, ticket: Ticket
) -> Generated | None:
    """After the debounce, unless a newer request came, one engine run ahead of background work."""
    ls.supersession.start(uri, ticket)
    try:
        with engine_work(ticket):
            await asyncio.sleep(ls.config.server.debounce_ms / 1000)
            if not ls.supersession.is_current(uri, ticket):
                return None
            result = await ls.worker.call(partial(generate, ls, uri, job, ticket), urgent=True)
    finally:
        ls.supersession.finish(uri, ticket)
    ls.stats.add_run(uri, result.stats, result.stop)
    ls.publish_speculation(uri, source)
    return result


def _deliver(
    ls: BielikServer, uri: str, position: types.Position, items: list[Item]
) -> types.InlineCompletionList:
    """The answer: each item with its own id in its accept command, its kind recorded."""
    ls.stats.count(uri, "suggestions")
    out = []
    for item in items:
        item_id = str(next(_ids))
        ls.delivered[item_id] = (uri, item.kind)
        ls.stats.count_kind(uri, item.kind, "delivered")
        out.append(
            types.InlineCompletionItem(
                insert_text=item.text,
                range=types.Range(position, position),
                command=types.Command(
                    title="Bielik: suggestion accepted", command=ACCEPTED, arguments=[uri, item_id]
                ),
            )
        )
    while len(ls.delivered) > _DELIVERED_MAX:
        old = next(iter(ls.delivered))
        del ls.delivered[old]
        ls.accepted_lengths.pop(old, None)
    return types.InlineCompletionList(items=out)


def shown(ls: BielikServer, params: object) -> None:
    """textDocument/didShowCompletion, counted for the item's document and kind."""
    found = _delivered(ls, params)
    if found is not None:
        ls.stats.count(found[0], "shown")
        ls.stats.count_kind(found[0], found[1], "shown")


def partially_accepted(ls: BielikServer, params: object) -> None:
    """textDocument/didPartiallyAcceptCompletion, counted for the item's document and kind.

    `acceptedLength` is how much of the item the text holds now (typed or accepted, as VS Code
    reports it): an item taken word by word counts each character once.
    """
    found = _delivered(ls, params)
    if found is None:
        return
    (uri, kind), item_id = found, params.item.command.arguments[1]
    ls.stats.count(uri, "partially_accepted")
    ls.stats.count_kind(uri, kind, "partially_accepted")
    length = getattr(params, "acceptedLength", 0)
    if not isinstance(length, int) or isinstance(length, bool):
        return
    counted = ls.accepted_lengths.get(item_id, 0)
    if length > counted:
        ls.accepted_lengths[item_id] = length
        ls.stats.count(uri, "accepted_chars", length - counted)
        ls.stats.count_kind(uri, kind, "accepted_chars", length - counted)


def _delivered(ls: BielikServer, params: object) -> tuple[str, str] | None:
    """(document, kind) of a shown or accepted item: its command's arguments name it."""
    item = getattr(params, "item", None)
    command = getattr(item, "command", None)
    args = getattr(command, "arguments", None)
    if not isinstance(args, (list, tuple)) or len(args) != 2:
        return None
    found = ls.delivered.get(args[1]) if isinstance(args[1], str) else None
    return found if found is not None and found[0] == args[0] else None
