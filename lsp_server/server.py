"""The language server's handlers: thin, each handing its work to a plain module.

inline.py (suggestions), commands.py, language_server.py (state, configuration, loading),
worker.py (engine thread, tickets), completion.py and documents.py (pure text logic),
settings.py and status.py. `build` registers them from the two tables at the bottom.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from typing import NoReturn

from lsprotocol import types

from decoder.config import ConfigError, Settings

from . import background, commands, diagnostics, inline
from .client_watch import EXIT_CODE, end_process
from .compat import WatchedInput, shut_down, track_command, untrack_command
from .documents import PositionError, edit_end
from .language_server import BielikServer
from .settings import SECTION
from .suggestions import near_key

DEBUG_ENV = "BIELIK_LSP_DEBUG"  # comma-separated loggers to log at debug level, to stderr
DID_SHOW = "textDocument/didShowCompletion"  # Copilot's notifications, recorded in stats
DID_PARTIALLY_ACCEPT = "textDocument/didPartiallyAcceptCompletion"
log = logging.getLogger("bielik-lsp")


def initialize(ls: BielikServer, params: types.InitializeParams) -> None:
    ls.client_watch.watch(params.process_id)
    try:
        ls.config = ls.config.updated(params.initialization_options)
    except ConfigError as e:
        ls.pending_error = f"initializationOptions not applied: {e}"


def initialized(ls: BielikServer, params: types.InitializedParams) -> None:
    if ls.pending_error:
        ls.show(ls.pending_error)
    ls.load_models()  # never waits for the client (progress is best effort)


async def did_change_configuration(
    ls: BielikServer, params: types.DidChangeConfigurationParams
) -> None:
    values = params.settings
    if not values:  # pull model: the client sends an empty notification, we ask
        try:
            values = (
                await ls.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                )
            )[0]
        except Exception as e:  # a client without workspace/configuration
            log.info("no workspace/configuration: %s", e)
            return
    if ls.apply_config(values):
        ls.send_status()
        diagnostics.schedule_all(ls)  # spelling settings may have changed


def did_open(ls: BielikServer, params: types.DidOpenTextDocumentParams) -> None:
    doc = ls.documents.open(params.text_document)
    ls.changes.setdefault(doc.uri, asyncio.Event())
    ls.publish_speculation(doc.uri, doc.source)  # a magic comment shows at once
    ls.ring.opened(doc.uri, doc.source)
    ls.scoring.stir()  # the writer is about to type here: grammar waits for a pause
    background.warm(ls, doc.uri)
    diagnostics.schedule(ls, doc.uri, debounce=False)


def did_change(ls: BielikServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.supersession.supersede(uri)
    ls.scoring.stir()  # the checkers' model work steps aside while the writer types
    try:
        doc = ls.documents.change(params, ls.encoding)
    except PositionError as e:
        ls.report_once(None, f"{uri}: an edit did not fit the document ({e}); reopen it")
        doc = None
    if doc is not None and params.content_changes:
        cursor = edit_end(doc.source, params.content_changes[-1], ls.encoding)
        ls.ring.edited(uri, doc.source, cursor)
    ls.changes.setdefault(uri, asyncio.Event()).set()
    diagnostics.schedule(ls, uri)


def did_close(ls: BielikServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.supersession.supersede(uri)
    background.cancel_prepared(ls, uri)
    background.cancel_warm(ls, uri)
    for key in (uri, near_key(uri)):  # its prompt caches; a reopened document is warmed again
        ls.worker.forget(key)
    ls.documents.close(uri)
    ls.ring.closed(uri)
    ls.changes.pop(uri, None)
    diagnostics.closed(ls, uri)


async def inline_completion(
    ls: BielikServer, params: types.InlineCompletionParams
) -> types.InlineCompletionList:
    ls.spelling.waiting += 1  # spelling's dictionary pass steps aside until it is answered
    ls.scoring.stir()
    try:
        return await inline.complete(ls, params, arrived=time.monotonic())
    finally:
        ls.spelling.waiting -= 1


async def document_diagnostic(
    ls: BielikServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    return await diagnostics.pull(ls, params)


def code_action(ls: BielikServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    return diagnostics.actions(ls, params)


def add_word(ls: BielikServer, *args) -> dict:
    return diagnostics.add_word(ls, args)


def ignore_word(ls: BielikServer, *args) -> dict:
    return diagnostics.ignore_word(ls, args)


def did_show(ls: BielikServer, params) -> None:
    inline.shown(ls, params)


def did_partially_accept(ls: BielikServer, params) -> None:
    inline.partially_accepted(ls, params)


async def continue_document(ls: BielikServer, *args) -> dict:
    request_id = track_command(ls)  # so $/cancelRequest cancels the run
    try:
        return await commands.continue_document(ls, args)
    finally:
        untrack_command(ls, request_id)


def toggle_speculation(ls: BielikServer, *args) -> dict:
    return commands.toggle_speculation(ls, args)


def show_stats(ls: BielikServer, *args) -> dict:
    return commands.show_stats(ls, args)


async def reload(ls: BielikServer, *args) -> dict:
    return await commands.reload(ls, args)


def accepted(ls: BielikServer, *args) -> None:
    commands.accepted(ls, args)


FEATURES = (
    (types.INITIALIZE, initialize, None),
    (types.INITIALIZED, initialized, None),
    (types.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration, None),
    (types.TEXT_DOCUMENT_DID_OPEN, did_open, None),
    (types.TEXT_DOCUMENT_DID_CHANGE, did_change, None),
    (types.TEXT_DOCUMENT_DID_CLOSE, did_close, None),
    (types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_completion, types.InlineCompletionOptions()),
    (
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        document_diagnostic,
        types.DiagnosticOptions(inter_file_dependencies=False, workspace_diagnostics=False),
    ),
    (
        types.TEXT_DOCUMENT_CODE_ACTION,
        code_action,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    ),
    (DID_SHOW, did_show, None),
    (DID_PARTIALLY_ACCEPT, did_partially_accept, None),
)
COMMANDS = (
    (commands.CONTINUE, continue_document),
    (commands.TOGGLE, toggle_speculation),
    (commands.STATS, show_stats),
    (commands.RELOAD, reload),
    (inline.ACCEPTED, accepted),
    (diagnostics.ADD_WORD, add_word),
    (diagnostics.IGNORE_WORD, ignore_word),
)


def build(settings: Settings) -> BielikServer:
    """A server with every feature and command registered (separate from `serve` for tests)."""
    ls = BielikServer(settings)
    for method, handler, options in FEATURES:
        ls.feature(method, options)(handler)
    for name, handler in COMMANDS:
        ls.command(name)(handler)
    return ls


def serve(
    settings: Settings, tcp: str | None = None, client_process_id: int | None = None
) -> NoReturn:
    """Run the server over stdio (or TCP HOST:PORT for debugging) until the client exits.

    Or until the client's process is gone: `client_process_id` (`--clientProcessId`) and the
    `processId` of `initialize` are watched. The process then ends at once, with 0 after a
    `shutdown` request and 1 without (as LSP asks), whatever a load is still doing.
    """
    logging.basicConfig(
        level=logging.WARNING, format="bielik-lsp %(levelname)s %(name)s: %(message)s"
    )
    for name in filter(None, os.environ.get(DEBUG_ENV, "").split(",")):
        logging.getLogger(name.strip()).setLevel(logging.DEBUG)
    ls = build(settings)
    ls.client_watch.watch(client_process_id)
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            raise ConfigError(f"--tcp wants HOST:PORT, not {tcp!r}")
        ls.start_tcp(host or "127.0.0.1", int(port))
    else:
        ls.input = WatchedInput(sys.stdin.buffer)
        ls.start_io(stdin=ls.input)
    end_process(0 if shut_down(ls) else EXIT_CODE)
