"""`workspace/executeCommand`: continue the document, toggle speculation per file, show stats."""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from decoder.backends.remote import RemoteEngine, ServerError
from decoder.config import ConfigError
from decoder.engine import PromptTooLong

from .completion import align, build_prompt
from .documents import MODES, position_at
from .errors import RequestFailed
from .worker import Ticket

if TYPE_CHECKING:
    from .server import BielikServer

CONTINUE = "bielik.continueDocument"
TOGGLE = "bielik.toggleSpeculation"
STATS = "bielik.showStats"
EDIT_ECHO_S = 2.0  # how long to wait for the didChange that echoes our own applyEdit


def _args(args: tuple, names: tuple[str, ...]) -> dict:
    """Command arguments given either positionally or as one object with named fields."""
    if len(args) == 1 and isinstance(args[0], dict):
        return args[0]
    if len(args) > len(names):
        raise JsonRpcInvalidParams(
            f"expected at most {len(names)} arguments ({', '.join(names)}), got {len(args)}"
        )
    return dict(zip(names, args))


def _uri(values: dict) -> str:
    uri = values.get("uri")
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams(f"a document uri is required, got {uri!r}")
    return uri


def toggle_speculation(ls: BielikServer, args: tuple) -> dict:
    """Set a file's speculation to on/off/auto, or cycle auto -> off -> on -> auto."""
    values = _args(args, ("uri", "mode"))
    uri = _uri(values)
    doc = ls.document(uri)
    mode = values.get("mode")
    if mode is None:
        current = ls.speculation(uri, doc.source)[0]
        mode = {"auto": "off", "off": "on", "on": "auto"}[current]
    if mode not in MODES:
        raise JsonRpcInvalidParams(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    ls.toggles[uri] = mode
    mode, _, drafter, reason = ls.publish_speculation(uri, doc.source)
    return {"uri": uri, "speculation": mode, "drafter": drafter, "reason": reason}


def show_stats(ls: BielikServer, args: tuple) -> dict:
    """Per-file and session statistics, plus the model state and effective configuration."""
    values = _args(args, ("uri",))
    report = ls.stats.report(values.get("uri"))
    report.update(state=ls.engine.state, error=ls.engine.error, config=ls.config.describe())
    if isinstance(ls.engine.pipe, RemoteEngine):
        report["server"] = ls.engine.pipe.describe()  # never the API key
    return report


async def continue_document(ls: BielikServer, args: tuple) -> dict:
    """Generate at a position (default: end of the document), streaming versioned edits.

    Stops at the token budget, the end of a paragraph, a progress or request cancel, or as soon
    as the document differs from what our own edits made of it (the user typed).
    """
    values = _args(args, ("uri", "position", "maxTokens"))
    uri = _uri(values)
    doc = ls.document(uri)
    max_tokens = values.get("maxTokens", ls.config.server.continue_max_tokens)
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise JsonRpcInvalidParams(f"maxTokens must be a positive integer, not {max_tokens!r}")
    position = values.get("position")
    if position is None:
        offset = len(doc.source)
    elif (
        isinstance(position, dict)
        and isinstance(position.get("line"), int)
        and isinstance(position.get("character"), int)
    ):
        offset = ls.offset(
            doc, types.Position(line=position["line"], character=position["character"])
        )
    else:
        raise JsonRpcInvalidParams(f"position must be {{line, character}}, not {position!r}")
    ls.require_engine()
    ls.supersession.supersede(uri)

    prompt = build_prompt(doc.source[:offset], ls.config.server.max_prompt_chars)
    mode, _, drafter, _ = ls.speculation(uri, doc.source)
    ticket = Ticket()
    token = await ls.start_progress("Bielik: continuing the document", cancellable=True)
    if token is not None:
        ls.work_done_progress.tokens[token].add_done_callback(lambda _: ticket.cancel())

    loop = asyncio.get_running_loop()
    arrived: asyncio.Queue[str] = asyncio.Queue()
    job = asyncio.ensure_future(
        ls.engine.call(
            partial(
                ls.engine.generate,
                prompt.text,
                max_tokens=max_tokens,
                drafter=drafter,
                override=mode,
                ticket=ticket,
                enough=lambda text: _paragraph_end(text) is not None,
                on_text=lambda text, _: loop.call_soon_threadsafe(arrived.put_nowait, text),
            )
        )
    )
    expected, version, streamed, applied, stop = doc.source, doc.version, "", "", ""
    started = time.monotonic()
    try:
        while not stop:
            if arrived.empty() and not job.done():
                waiter = asyncio.ensure_future(arrived.get())
                await asyncio.wait([waiter, job], return_when=asyncio.FIRST_COMPLETED)
                if waiter.done():
                    streamed += waiter.result()
                else:
                    waiter.cancel()
            while not arrived.empty():
                streamed += arrived.get_nowait()
            text = align(streamed, prompt)
            if text is None:
                stop = "glued"  # the model went on with the word before a typed space
                break
            end = _paragraph_end(text)
            pending = (text if end is None else text[:end])[len(applied) :]
            if pending:
                if not _unchanged(ls, uri, expected):
                    stop = "edited"
                    break
                at = offset + len(applied)
                line, character = position_at(expected, at, ls.encoding)
                pos = types.Position(line=line, character=character)
                result = await ls.workspace_apply_edit_async(
                    types.ApplyWorkspaceEditParams(
                        edit=types.WorkspaceEdit(
                            document_changes=[
                                types.TextDocumentEdit(
                                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                                        uri=uri, version=version
                                    ),
                                    edits=[
                                        types.TextEdit(
                                            range=types.Range(start=pos, end=pos), new_text=pending
                                        )
                                    ],
                                )
                            ]
                        )
                    )
                )
                if not result.applied:
                    stop = "rejected"
                    break
                expected = expected[:at] + pending + expected[at:]
                applied += pending
                if not await _echoed(ls, uri, expected):
                    stop = "edited"
                    break
                version = ls.workspace.text_documents[uri].version
                if token is not None:
                    ls.work_done_progress.report(
                        token,
                        types.WorkDoneProgressReport(
                            message=f"{len(applied)} characters in {time.monotonic() - started:.1f}s"
                        ),
                    )
            if end is not None:
                stop = "paragraph"
            elif job.done() and arrived.empty():
                stop = job.result().stop
    except asyncio.CancelledError:
        ticket.cancel()  # $/cancelRequest: pygls answers -32800
        ls.end_progress(token, "cancelled")
        raise
    except (ConfigError, PromptTooLong, ServerError) as e:
        raise RequestFailed(str(e)) from None
    finally:
        ticket.cancel()
    stats = (await job).stats
    if stats.generated_tokens:
        ls.stats.add_run(uri, stats, stop)
    ls.end_progress(token, f"stopped: {stop}")
    ls.send_status(uri)
    return {
        "uri": uri,
        "text": applied,
        "stopReason": stop,
        "stats": stats.to_dict(per_cycle=False),
    }


def _paragraph_end(text: str) -> int | None:
    """Where the first paragraph of generated text ends (a blank line after some content)."""
    content = len(text) - len(text.lstrip())
    blank = text.find("\n\n", content)
    return blank if blank >= 0 and text[content:blank].strip() else None


def _unchanged(ls: BielikServer, uri: str, expected: str) -> bool:
    doc = ls.workspace.text_documents.get(uri)
    return doc is not None and doc.source == expected


async def _echoed(ls: BielikServer, uri: str, expected: str) -> bool:
    """Wait for the didChange that echoes our edit; False if the text became anything else."""
    deadline = time.monotonic() + EDIT_ECHO_S
    while not _unchanged(ls, uri, expected):
        event = ls.changes.get(uri)
        remaining = deadline - time.monotonic()
        if event is None or remaining <= 0:
            return False
        event.clear()
        if _unchanged(ls, uri, expected):
            return True
        try:
            await asyncio.wait_for(event.wait(), remaining)
        except TimeoutError:
            return False
    return True
