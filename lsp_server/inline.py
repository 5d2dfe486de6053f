"""`textDocument/inlineCompletion`: debounce, cache, supersession, one engine run, cutting.

A request only reaches the model if no newer request or edit for its document arrived during
the debounce; a result that became stale meanwhile is dropped rather than shown.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import TYPE_CHECKING

from lsprotocol import types

from decoder.backends.remote import ServerError, ServerUnavailable
from decoder.config import ConfigError
from decoder.engine import PromptTooLong

from .completion import align, avoid_repeat, build_prompt, cut, unit_end
from .errors import RequestFailed
from .worker import Ticket

if TYPE_CHECKING:
    from .server import BielikServer

NOTHING = types.InlineCompletionList(items=[])
_DELIVERED_MAX = 256


async def complete(
    ls: BielikServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    uri = params.text_document.uri
    doc = ls.document(uri)
    options = ls.config.server
    if not options.serves(uri, doc.language_id):
        return NOTHING
    offset = ls.offset(doc, params.position)
    before, after = doc.source[:offset], doc.source[offset:]
    ls.stats.count(uri, "requests")

    cached = ls.cache.get(uri, before, after)
    if cached is not None:
        ls.stats.count(uri, "cache_hits")
        return _deliver(ls, uri, params.position, cached)
    if ls.engine.state in ("loading", "unavailable"):
        return NOTHING  # no error popups while the user types: the status already says why
    ls.require_engine()

    prompt = build_prompt(before, options.max_prompt_chars)
    if not prompt.text.strip():
        return NOTHING
    mode, source, drafter, reason = ls.speculation(uri, doc.source)
    ticket = Ticket(options.time_budget_ms / 1000)
    ls.supersession.start(uri, ticket)
    try:
        await asyncio.sleep(options.debounce_ms / 1000)
        if not ls.supersession.is_current(uri, ticket):
            ls.stats.count(uri, "superseded")
            return NOTHING
        result = await ls.engine.call(
            partial(
                ls.engine.generate,
                prompt.text,
                max_tokens=options.inline_max_tokens,
                drafter=drafter,
                override=mode,
                ticket=ticket,
                enough=partial(_enough, prompt=prompt),
            )
        )
    except asyncio.CancelledError:
        ticket.cancel()  # $/cancelRequest: stop the engine between cycles
        raise
    except ServerUnavailable:
        return NOTHING  # reported once through the status; the server comes back by itself
    except (ConfigError, PromptTooLong, ServerError) as e:
        raise RequestFailed(str(e)) from None
    finally:
        ls.supersession.finish(uri, ticket)

    f = ls.stats.file(uri)
    f.speculation, f.source, f.drafter, f.reason = mode, source, drafter, reason
    ls.stats.add_run(uri, result.stats, result.stop)
    ls.send_status(uri)
    if ticket.cancelled:
        ls.stats.count(uri, "superseded")
        return NOTHING
    text = align(result.text, prompt)
    if text is None:
        return NOTHING
    suggestion = avoid_repeat(cut(text, finished=result.stop == "eos"), after)
    if not suggestion.strip():
        return NOTHING
    ls.cache.put(uri, before, after, suggestion)
    return _deliver(ls, uri, params.position, suggestion)


def _enough(text: str, prompt) -> bool:
    """Stop generating once a whole sentence or line is there (or the model glued a word)."""
    aligned = align(text, prompt)
    return aligned is None or unit_end(aligned) is not None


def _deliver(
    ls: BielikServer, uri: str, position: types.Position, text: str
) -> types.InlineCompletionList:
    ls.stats.count(uri, "suggestions")
    ls.delivered[text] = uri
    while len(ls.delivered) > _DELIVERED_MAX:
        del ls.delivered[next(iter(ls.delivered))]
    item = types.InlineCompletionItem(insert_text=text, range=types.Range(position, position))
    return types.InlineCompletionList(items=[item])


def uri_of_item(ls: BielikServer, params) -> str:
    """The document a shown/accepted suggestion came from (the notifications carry only the item)."""
    item = getattr(params, "item", None)
    text = getattr(item, "insertText", None)
    if isinstance(text, str):
        return ls.delivered.get(text, "unknown")
    return "unknown"
