"""The language server's state and the services its handlers share.

Documents, positions, speculation per file, status and messages, progress, configuration and
model loading.

Handlers (server.py) stay thin; inline.py and commands.py hold the work and import this module,
never the module that registers them.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from decoder.about import __version__
from decoder.config import ConfigError, Settings
from polish import lexicon, morphology

from .client_watch import ClientWatch
from .compat import Protocol, WatchedInput
from .completion import SuggestionCache
from .documents import (
    Document,
    Documents,
    NotText,
    PositionError,
    check_text,
    magic_mode,
    offset_at,
)
from .errors import RequestFailed
from .grammar import GrammarCache, ScoringQueue
from .loading import LoadClock
from .ring import Ring
from .settings import Config, ServerOptions, needs_reload
from .speculation import drafter_for
from .spelling import SpellingState
from .status import STATUS, Stats, status_payload
from .worker import Supersession, Ticket, Worker, settle_heap

log = logging.getLogger("bielik-lsp")
PROGRESS_CREATE_S = 5.0  # a client that never answers window/workDoneProgress/create gets none


class BielikServer(LanguageServer):
    def __init__(self, settings: Settings):
        super().__init__(
            "bielik-lsp",
            __version__,
            protocol_cls=Protocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.config = Config(settings, ServerOptions())
        self.worker = Worker()
        self.documents = Documents()
        self.stats = Stats()
        self.supersession = Supersession()
        self.cache = SuggestionCache()
        self.toggles: dict[str, str] = {}  # per-file speculation set by bielik.toggleSpeculation
        self.changes: dict[str, asyncio.Event] = {}  # set on every edit (continueDocument waits)
        self.pending_error: str | None = None  # a config error from initialize, shown later
        self.reported: set[str] = set()  # causes of silent inline failures already shown once
        self.loads: asyncio.Task | None = None  # the running load loop
        self.prepared: dict = {}  # uri -> inline.Prepared, the suggestion computed ahead
        self.ring = Ring()  # context from elsewhere: other open documents, places edited
        self.warming: tuple[str, Ticket] | None = None  # the prompt prefilled in the background
        self.input: WatchedInput | None = None  # stdin, when serving over it
        self.delivered: dict[str, tuple[str, str]] = {}  # item id -> (uri, kind of the item)
        self.accepted_lengths: dict[str, int] = {}  # item id -> UTF-16 units taken so far
        self.client_watch = ClientWatch()  # exits when the editor's process is gone
        self.spelling = SpellingState()  # spelling diagnostics (lsp_server/diagnostics.py)
        self.grammar = GrammarCache()  # grammar per paragraph (lsp_server/grammar.py)
        self.scoring = ScoringQueue(self.worker)  # the checkers' model work, behind completions

    # -- documents ---------------------------------------------------------------------------
    def document(self, uri: str) -> Document:
        """An open document's state; unknown documents are an error, never read from disk."""
        doc = self.documents.get(uri)
        if doc is None:
            raise JsonRpcInvalidParams(
                f"unknown document {uri}: the client has not opened it (didOpen)"
            )
        try:
            check_text(doc.source)
        except NotText as e:
            raise RequestFailed(f"{uri}: {e}") from None
        return doc

    def offset(self, doc: Document, position: types.Position) -> int:
        try:
            return offset_at(doc.source, position.line, position.character, self.encoding)
        except PositionError as e:
            raise JsonRpcInvalidParams(f"{doc.uri}: {e}") from None

    @property
    def encoding(self) -> str:
        """The negotiated position encoding (UTF-16 unless the client offered UTF-8 first)."""
        try:
            enc = self.workspace.position_encoding
        except RuntimeError:  # not initialized yet
            return "utf-16"
        return getattr(enc, "value", enc) or "utf-16"

    def speculation(self, uri: str, text: str) -> tuple[str, str, str, str]:
        """(file mode, where it comes from, drafter mode, why) for a document."""
        if uri in self.toggles:
            mode, source = self.toggles[uri], "toggle"
        elif (magic := magic_mode(text)) is not None:
            mode, source = magic, "magic comment"
        else:
            mode, source = "auto", "default"
        drafter, reason = drafter_for(self.config.engine, mode)
        return mode, source, drafter, reason

    def publish_speculation(self, uri: str, text: str) -> tuple[str, str, str, str]:
        """Work out a file's speculation, record it in its stats and tell the client."""
        spec = self.speculation(uri, text)
        f = self.stats.file(uri)
        f.speculation, f.source, f.drafter, f.reason = spec
        self.send_status(uri)
        return spec

    def require_engine(self) -> None:
        """Raise a clear error unless the models are loaded."""
        if self.worker.state == "error":
            raise RequestFailed(f"the model failed to load: {self.worker.error}")
        if self.worker.state == "unavailable":
            raise RequestFailed(self.worker.error)
        if self.worker.state != "ready":
            raise RequestFailed("the model is still loading; try again in a moment")

    # -- status and messages -----------------------------------------------------------------
    def send_status(self, uri: str | None = None, message: str | None = None) -> None:
        state = self.worker.state
        if message is None:
            message = self.worker.error if state in ("error", "unavailable") else f"model {state}"
        f = self.stats.files.get(uri) if uri else None
        self.protocol.notify(STATUS, status_payload(state, message, uri, f))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"Bielik: {message}"))

    def report_once(self, uri: str | None, message: str) -> None:
        """A cause of silent inline failures: in the status every time, as a message once."""
        self.send_status(uri, message)
        if message not in self.reported:
            self.reported.add(message)
            self.show(message, types.MessageType.Warning)

    async def start_progress(self, title: str, *, cancellable: bool) -> str | None:
        """Begin a server-initiated work-done progress if the client supports and accepts it.

        Best effort: a client that refuses (an error answer, which the spec allows) or never
        answers gets no progress; the work goes on either way.
        """
        window = self.client_capabilities.window
        if not (window and window.work_done_progress):
            return None
        token = f"bielik-{uuid.uuid4()}"
        # Shielded: an answer after the timeout then completes a request nobody waits for, where
        # a cancelled one made pygls show the editor "Error in server: CANCELLED" (a slow VS Code).
        asking = asyncio.ensure_future(self.work_done_progress.create_async(token))
        asking.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            await asyncio.wait_for(asyncio.shield(asking), PROGRESS_CREATE_S)
        except Exception as e:  # refused, timed out, or the connection went away
            log.info("no work-done progress for %r: %s", title, e or type(e).__name__)
            return None
        self.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title=title, cancellable=cancellable)
        )
        return token

    def server_health(self, up: bool, message: str) -> None:
        """An inference server went down or came back: one status, and one warning when down."""
        if self.worker.state not in ("ready", "unavailable"):
            return
        self.worker.state, self.worker.error = ("ready", "") if up else ("unavailable", message)
        self.send_status()
        if not up:
            self.show(f"{message}; retrying in the background", types.MessageType.Warning)

    def watch_server(self) -> None:
        """Follow the engine's health (an inference server's background probe) on this loop."""
        if self.worker.pipe is None:
            return
        loop = asyncio.get_running_loop()
        self.worker.pipe.watch(
            lambda up, message: (
                loop.is_closed()  # the server is shutting down
                or loop.call_soon_threadsafe(self.server_health, up, message)
            )
        )

    async def _tell_loading(self, clock: LoadClock, progress: asyncio.Future) -> None:
        """A load's stage and seconds in the progress, and a new stage in the status too.

        Progress each second, and at once when the stage changes, so a short stage shows too.
        """
        told, at = None, 0.0
        while True:
            token = progress.result() if progress.done() else None
            changed = clock.stage != told
            if token is not None and (changed or clock.elapsed() - at >= 1.0):
                message = clock.message()
                self.work_done_progress.report(token, types.WorkDoneProgressReport(message=message))
                at = clock.elapsed()
            if changed:
                told = clock.stage
                self.send_status(message=f"model loading: {clock.message()}")
            await asyncio.sleep(0.1)

    def end_progress(self, token: str | None, message: str) -> None:
        if token is not None:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

    # -- configuration and models ------------------------------------------------------------
    def apply_config(self, values: object) -> bool:
        """Apply a client's settings; on a bad value show why and keep the old config."""
        try:
            new = self.config.updated(values)
        except ConfigError as e:
            self.show(f"configuration not applied: {e}")
            return False
        old, self.config = self.config, new
        self.cache.clear()
        if needs_reload(old.engine, new.engine) or self.worker.state == "error":
            self.load_models()
        elif self.worker.state == "ready":
            asyncio.ensure_future(self.worker.call(self.worker.apply, new.engine))
        return True  # during a load, the load loop applies the newest settings when it ends

    def load_models(self) -> asyncio.Task:
        """Load the models for the current settings unless a load is running.

        A running load goes on to the newest settings when it ends, so no change is dropped.
        """
        if self.loads is None or self.loads.done():
            self.loads = asyncio.ensure_future(self._load_loop())
        return self.loads

    async def _load_loop(self) -> None:
        self.reported.clear()
        self.send_status()
        progress = asyncio.ensure_future(
            self.start_progress("Bielik: loading models", cancellable=False)
        )
        loaded: Settings | None = None
        while loaded is None or needs_reload(loaded, self.config.engine):
            loaded = self.config.engine
            self.worker.state = "loading"
            self.send_status()
            clock = LoadClock(loaded)
            ticker = asyncio.ensure_future(self._tell_loading(clock, progress))
            await self.worker.load(loaded, self.config.server.load_timeout_s, clock.set_stage)
            ticker.cancel()
            clock.finish(self.worker.state == "ready")
        if self.worker.state == "ready" and self.config.engine != loaded:
            await self.worker.call(self.worker.apply, self.config.engine)
        if self.worker.state == "ready":
            await self.worker.call(settle_heap, lambda: read_tables(self.config.server.spelling))
        self.watch_server()
        self.send_status()
        if self.worker.state == "error":
            self.show(f"cannot load the model: {self.worker.error}")
        self.end_progress(await progress, "ready" if self.worker.state == "ready" else "failed")


def read_tables(spelling: bool) -> None:
    """Open Morfeusz (80 ms) and, with spelling on, read the lexicon (0.3 s), off the event loop.

    Otherwise the first document's check does both on the event loop, between keystrokes.
    """
    morphology.analyse("się")
    if spelling:
        lexicon.load()
