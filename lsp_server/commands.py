"""`workspace/executeCommand`: the server's commands.

Continue the document, toggle speculation per file, show stats, reload the models, count an
accepted suggestion.

Arguments come positionally or as one object with named (camelCase or snake_case) fields and
are structured into typed classes; a wrong shape is a one-line invalid-params error.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import TypeVar

import attrs
import cattrs
from lsprotocol import converters, types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from decoder.backends.remote import RemoteEngine
from decoder.stats import RunStats

from .compat import progress_cancelled
from .completion import align, build_prompt
from .documents import MODES, position_at
from .errors import engine_work
from .inline import cancel_prepared
from .language_server import BielikServer
from .settings import camel, snake
from .status import memory_mb, peak_memory_mb
from .worker import Ticket

CONTINUE = "bielik.continueDocument"
TOGGLE = "bielik.toggleSpeculation"
STATS = "bielik.showStats"
RELOAD = "bielik.reload"
EDIT_ECHO_S = 2.0  # how long to wait for the didChange that echoes our own applyEdit
T = TypeVar("T")


def _positive(instance, attribute, value) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{camel(attribute.name)} must be a positive integer, not {value!r}")


def _mode(instance, attribute, value) -> None:
    if value is not None and value not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {value!r}")


@attrs.define
class ContinueArgs:
    uri: str
    position: types.Position | None = None
    max_tokens: int | None = attrs.field(default=None, validator=_positive)


@attrs.define
class ToggleArgs:
    uri: str
    mode: str | None = attrs.field(default=None, validator=_mode)


@attrs.define
class StatsArgs:
    uri: str | None = None


@attrs.define
class AcceptedArgs:
    uri: str
    id: str


def _strict(kind: type, name: str):
    def structure(value, _):
        if isinstance(value, bool) or not isinstance(value, kind):
            raise TypeError(f"expected {name}, not {value!r}")
        return value

    return structure


_converter = converters.get_converter()  # lsprotocol's, so Position and friends structure
_converter.register_structure_hook(str, _strict(str, "a string"))
_converter.register_structure_hook(int, _strict(int, "an integer"))


def _why(error: BaseException, _type: object) -> str:
    return "required" if isinstance(error, KeyError) else str(error)


def parse(cls: type[T], args: tuple) -> T:
    """Command arguments, positional or one object, as a `cls`; invalid params otherwise."""
    names = [camel(f.name) for f in attrs.fields(cls)]  # lsprotocol's converter speaks camelCase
    if len(args) == 1 and isinstance(args[0], dict):
        values = {camel(snake(k)): v for k, v in args[0].items()}
    elif len(args) > len(names):
        raise JsonRpcInvalidParams(
            f"expected at most {len(names)} arguments ({', '.join(names)}), got {len(args)}"
        )
    else:
        values = dict(zip(names, args, strict=False))
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise JsonRpcInvalidParams(f"unknown argument(s): {', '.join(unknown)}")
    try:
        return _converter.structure(values, cls)
    except Exception as e:
        if isinstance(e, cattrs.BaseValidationError):
            detail = "; ".join(cattrs.transform_error(e, format_exception=_why))
        else:
            detail = str(e).strip().splitlines()[0]
        raise JsonRpcInvalidParams(f"invalid arguments: {detail}") from None


def toggle_speculation(ls: BielikServer, args: tuple) -> dict:
    """Set a file's speculation to on/off/auto, or cycle auto -> off -> on -> auto."""
    values = parse(ToggleArgs, args)
    doc = ls.document(values.uri)
    mode = values.mode
    if mode is None:
        current = ls.speculation(values.uri, doc.source)[0]
        mode = {"auto": "off", "off": "on", "on": "auto"}[current]
    ls.toggles[values.uri] = mode
    cancel_prepared(ls, values.uri)
    mode, _, drafter, reason = ls.publish_speculation(values.uri, doc.source)
    return {"uri": values.uri, "speculation": mode, "drafter": drafter, "reason": reason}


def show_stats(ls: BielikServer, args: tuple) -> dict:
    """Per-file and session statistics, plus the model state and effective configuration."""
    values = parse(StatsArgs, args)
    report = ls.stats.report(values.uri)
    report.update(
        state=ls.worker.state,
        error=ls.worker.error,
        config=ls.config.describe(),
        memory_mb=memory_mb(),
        peak_memory_mb=peak_memory_mb(),
    )
    if isinstance(ls.worker.pipe, RemoteEngine):
        report["server"] = ls.worker.pipe.describe()  # never the API key
    return report


async def reload(ls: BielikServer, args: tuple) -> dict:
    """Load the models again (after an error, or to pick up changed files); waits for it."""
    if args:
        raise JsonRpcInvalidParams(f"{RELOAD} takes no arguments, got {len(args)}")
    if ls.loads is None or ls.loads.done():
        ls.worker.state = "loading"  # a retry even when the settings did not change
    await ls.load_models()
    return {"state": ls.worker.state, "error": ls.worker.error}


def accepted(ls: BielikServer, args: tuple) -> None:
    """The editor accepted a suggestion (the item's command): count it for its document."""
    values = parse(AcceptedArgs, args)
    if ls.delivered.get(values.id) == values.uri:
        ls.stats.count(values.uri, "suggestions_accepted")


async def continue_document(ls: BielikServer, args: tuple) -> dict:
    """Generate at a position (default: end of the document), streaming versioned edits.

    Stops at the token budget, the end of a paragraph, a progress or request cancel, or as soon
    as the document differs from what our own edits made of it (the user typed). Inline
    requests go first: the run steps aside between cycles and resumes after them.
    """
    values = parse(ContinueArgs, args)
    uri = values.uri
    doc = ls.document(uri)
    max_tokens = values.max_tokens or ls.config.server.continue_max_tokens
    offset = len(doc.source) if values.position is None else ls.offset(doc, values.position)
    ls.require_engine()
    ls.supersession.supersede(uri)
    cancel_prepared(ls, uri)

    prompt = build_prompt(doc.source[:offset], ls.config.server.max_prompt_chars)
    mode, _, drafter, _ = ls.speculation(uri, doc.source)
    ticket = Ticket(yields_to=lambda: ls.worker.urgent > 0)
    token = await ls.start_progress("Bielik: continuing the document", cancellable=True)
    if token is not None and (cancelled := progress_cancelled(ls, token)) is not None:
        cancelled.add_done_callback(lambda _: ticket.cancel())

    loop = asyncio.get_running_loop()
    arrived: asyncio.Queue[str] = asyncio.Queue()
    expected, version, streamed, applied, stop = doc.source, doc.version, "", "", ""
    generated, resumed, stats = 0, 0, RunStats()

    def run(text: str, budget: int) -> asyncio.Future:
        return asyncio.ensure_future(
            ls.worker.call(
                partial(
                    ls.worker.generate,
                    text,
                    max_tokens=budget,
                    drafter=drafter,
                    override=mode,
                    ticket=ticket,
                    key=uri,
                    enough=lambda text: _paragraph_end(text) is not None,
                    on_text=lambda text, _: loop.call_soon_threadsafe(arrived.put_nowait, text),
                )
            )
        )

    job = run(prompt.text, max_tokens)
    started = time.monotonic()
    with engine_work(ticket):
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
                    if not await _insert(ls, uri, version, expected, at, pending):
                        stop = "rejected"
                        break
                    expected = expected[:at] + pending + expected[at:]
                    applied += pending
                    if not await _echoed(ls, uri, expected):
                        stop = "edited"
                        break
                    version = ls.documents.get(uri).version
                    if token is not None:
                        ls.work_done_progress.report(
                            token,
                            types.WorkDoneProgressReport(
                                message=f"{len(applied)} characters in "
                                f"{time.monotonic() - started:.1f}s"
                            ),
                        )
                if end is not None:
                    stop = "paragraph"
                elif job.done() and arrived.empty():
                    result = job.result()
                    stats = result.stats
                    generated += result.stats.generated_tokens
                    if result.stats.generated_tokens:
                        ls.stats.add_run(uri, result.stats, result.stop)
                    if not (result.stop == "cancelled" and ticket.yielding) or ticket.cancelled:
                        stop = result.stop
                    elif generated < max_tokens:  # stepped aside for inline requests: resume
                        await ls.worker.calm()
                        resumed += 1
                        job = run(prompt.text + streamed, max_tokens - generated)
                    else:
                        stop = "max_tokens"
        except BaseException as e:  # the editor's progress bar ends whatever stopped the run
            cancelled = isinstance(e, asyncio.CancelledError)
            ls.end_progress(token, "cancelled" if cancelled else "failed")
            raise
        finally:
            ticket.cancel()
    await asyncio.gather(job, return_exceptions=True)
    ls.end_progress(token, f"stopped: {stop}")
    ls.send_status(uri)
    return {
        "uri": uri,
        "text": applied,
        "stopReason": stop,
        "tokens": generated,
        "resumed": resumed,  # times it stepped aside for inline requests
        "stats": stats.to_dict(per_cycle=False),  # of the last stretch
    }


async def _insert(
    ls: BielikServer, uri: str, version: int, text: str, at: int, new_text: str
) -> bool:
    """Ask the client to insert `new_text` at code point `at` of version `version`."""
    line, character = position_at(text, at, ls.encoding)
    pos = types.Position(line=line, character=character)
    try:
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
                                    range=types.Range(start=pos, end=pos), new_text=new_text
                                )
                            ],
                        )
                    ]
                )
            )
        )
    except JsonRpcException:  # a client without workspace/applyEdit
        return False
    return result.applied


def _paragraph_end(text: str) -> int | None:
    """Where the first paragraph of generated text ends (a blank line after some content)."""
    content = len(text) - len(text.lstrip())
    blank = text.find("\n\n", content)
    return blank if blank >= 0 and text[content:blank].strip() else None


def _unchanged(ls: BielikServer, uri: str, expected: str) -> bool:
    doc = ls.documents.get(uri)
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
