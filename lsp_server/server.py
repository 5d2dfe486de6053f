"""The language server: LSP handlers wired to documents, the engine thread, commands and status.

Handlers stay thin; the work lives in inline.py (suggestions), commands.py, worker.py (engine
thread, tickets), completion.py and documents.py (pure text logic), settings.py and status.py.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from importlib.metadata import PackageNotFoundError, version

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument

from decoder.backends.remote import RemoteEngine
from decoder.config import ConfigError, Settings

from . import commands, inline
from .completion import SuggestionCache
from .documents import NotText, PositionError, check_text, magic_mode, offset_at
from .errors import RequestFailed
from .settings import SECTION, Config, ServerOptions, needs_reload
from .speculation import drafter_for
from .status import STATUS, Stats, status_payload
from .worker import Engine, Supersession

log = logging.getLogger("bielik-lsp")
DID_SHOW = "textDocument/didShowCompletion"  # Copilot's notifications, recorded in stats
DID_PARTIALLY_ACCEPT = "textDocument/didPartiallyAcceptCompletion"

try:
    __version__ = version("bielik-lsp")
except PackageNotFoundError:
    __version__ = "0.0.0"


class _Answered:
    """Stands in for a request that failed to parse and was already answered with an error."""

    jsonrpc = None


class Protocol(LanguageServerProtocol):
    """Two gaps in pygls filled: a request whose params do not parse gets an error answer (pygls
    drops it, the client would wait forever); `$/cancelRequest` for a command also cancels the
    command's task (pygls answers -32800 but lets the command run on).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.command_tasks: dict = {}  # request id -> task of a running command

    def _handle_cancel_notification(self, msg_id):
        task = self.command_tasks.pop(msg_id, None)
        if task is not None:
            task.cancel()
        super()._handle_cancel_notification(msg_id)

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as e:
            if not (isinstance(data, dict) and "id" in data and "method" in data):
                raise
            cause = e.__cause__ or e
            error = JsonRpcInvalidParams(
                f"invalid params for {data['method']}: {str(cause).splitlines()[0]}"
            )
            self._send_response(data["id"], error=error.to_response_error())
            return _Answered()

    def handle_message(self, message):
        if not isinstance(message, _Answered):
            super().handle_message(message)


class BielikServer(LanguageServer):
    def __init__(self, settings: Settings):
        super().__init__(
            "bielik-lsp",
            __version__,
            protocol_cls=Protocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.config = Config(settings, ServerOptions())
        self.engine = Engine()
        self.stats = Stats()
        self.supersession = Supersession()
        self.cache = SuggestionCache()
        self.toggles: dict[str, str] = {}  # per-file speculation set by bielik.toggleSpeculation
        self.changes: dict[str, asyncio.Event] = {}  # set on every edit (continueDocument waits)
        self.pending_error: str | None = (
            None  # a config error from initialize, shown once initialized
        )
        self.delivered: dict[
            str, str
        ] = {}  # suggestion text -> uri (Copilot's notifications lack the uri)

    # -- documents ---------------------------------------------------------------------------
    def document(self, uri: str) -> TextDocument:
        """An open document's state; unknown documents are an error, never read from disk."""
        doc = self.workspace.text_documents.get(uri)
        if doc is None:
            raise JsonRpcInvalidParams(
                f"unknown document {uri}: the client has not opened it (didOpen)"
            )
        try:
            check_text(doc.source)
        except NotText as e:
            raise RequestFailed(f"{uri}: {e}") from None
        return doc

    def offset(self, doc: TextDocument, position: types.Position) -> int:
        try:
            return offset_at(doc.source, position.line, position.character, self.encoding)
        except PositionError as e:
            raise JsonRpcInvalidParams(f"{doc.uri}: {e}") from None

    @property
    def encoding(self) -> str:
        enc = self.workspace.position_encoding
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
        if self.engine.state == "error":
            raise RequestFailed(f"the model failed to load: {self.engine.error}")
        if self.engine.state == "unavailable":
            raise RequestFailed(self.engine.error)
        if self.engine.state != "ready":
            raise RequestFailed("the model is still loading; try again in a moment")

    # -- status and messages -----------------------------------------------------------------
    def send_status(self, uri: str | None = None) -> None:
        message = (
            self.engine.error
            if self.engine.state in ("error", "unavailable")
            else f"model {self.engine.state}"
        )
        f = self.stats.files.get(uri) if uri else None
        self.protocol.notify(STATUS, status_payload(self.engine.state, message, uri, f))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Error) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=f"Bielik: {message}"))

    async def start_progress(self, title: str, *, cancellable: bool) -> str | None:
        """Create and begin a server-initiated work-done progress, if the client supports it."""
        window = self.client_capabilities.window
        if not (window and window.work_done_progress):
            return None
        token = f"bielik-{uuid.uuid4()}"
        await self.work_done_progress.create_async(token)
        self.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title=title, cancellable=cancellable)
        )
        return token

    def end_progress(self, token: str | None, message: str) -> None:
        if token is not None:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

    def server_health(self, up: bool, message: str) -> None:
        """An inference server went down or came back: one status, and one warning when down."""
        if self.engine.state not in ("ready", "unavailable"):
            return
        self.engine.state, self.engine.error = ("ready", "") if up else ("unavailable", message)
        self.send_status()
        if not up:
            self.show(f"{message}; retrying in the background", types.MessageType.Warning)

    # -- configuration and models ------------------------------------------------------------
    def apply_config(self, values: object) -> bool:
        """Apply a client's settings; on a bad value show why and keep the old config."""
        try:
            new = self.config.updated(values)
        except ConfigError as e:
            self.show(f"configuration not applied: {e}")
            return False
        reload = needs_reload(self.config.engine, new.engine)
        self.config = new
        self.cache.clear()
        if self.engine.pipe is not None and not reload:
            self.engine.pipe.settings = new.engine
        if reload and self.engine.state != "loading":
            asyncio.ensure_future(self.load_models())
        return True

    async def load_models(self) -> None:
        """Load the models on the engine thread, reporting progress, status and failure."""
        settings = self.config.engine
        self.engine.state = "loading"
        self.send_status()
        token = await self.start_progress("Bielik: loading models", cancellable=False)
        if token:
            self.work_done_progress.report(
                token,
                types.WorkDoneProgressReport(
                    message=f"{settings.target} (the first start converts it; this can take a minute)"
                ),
            )
        await self.engine.call(self.engine.load, settings)
        if isinstance(self.engine.pipe, RemoteEngine):
            loop = asyncio.get_running_loop()
            self.engine.pipe.watch(
                lambda up, message: (
                    loop.is_closed()  # the server is shutting down
                    or loop.call_soon_threadsafe(self.server_health, up, message)
                )
            )
        if self.engine.state == "ready" and self.config.engine != settings:
            self.engine.pipe.settings = self.config.engine  # changed meanwhile, without a reload
        self.end_progress(token, "ready" if self.engine.state == "ready" else "failed")
        self.send_status()
        if self.engine.state == "error":
            self.show(f"cannot load the model: {self.engine.error}")


def build(settings: Settings) -> BielikServer:
    """A server with every feature registered (separate from `serve` for tests)."""
    ls = BielikServer(settings)

    @ls.feature(types.INITIALIZE)
    def initialize(ls: BielikServer, params: types.InitializeParams) -> None:
        try:
            ls.config = ls.config.updated(params.initialization_options)
        except ConfigError as e:
            ls.pending_error = f"initializationOptions not applied: {e}"

    @ls.feature(types.INITIALIZED)
    async def initialized(ls: BielikServer, params: types.InitializedParams) -> None:
        if ls.pending_error:
            ls.show(ls.pending_error)
        await ls.load_models()

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: BielikServer, params: types.DidChangeConfigurationParams
    ) -> None:
        values = params.settings
        if not values:  # pull model: the client sends an empty notification, we ask
            values = (
                await ls.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                )
            )[0]
        if ls.apply_config(values):
            ls.send_status()

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: BielikServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.changes.setdefault(uri, asyncio.Event())
        ls.publish_speculation(uri, params.text_document.text)  # a magic comment shows at once

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: BielikServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.supersession.supersede(uri)
        ls.changes.setdefault(uri, asyncio.Event()).set()

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: BielikServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.supersession.supersede(params.text_document.uri)
        ls.changes.pop(params.text_document.uri, None)

    @ls.feature(types.TEXT_DOCUMENT_INLINE_COMPLETION, types.InlineCompletionOptions())
    async def inline_completion(
        ls: BielikServer, params: types.InlineCompletionParams
    ) -> types.InlineCompletionList:
        return await inline.complete(ls, params)

    @ls.feature(DID_SHOW)
    def did_show(ls: BielikServer, params) -> None:
        ls.stats.count(inline.uri_of_item(ls, params), "shown")

    @ls.feature(DID_PARTIALLY_ACCEPT)
    def did_partially_accept(ls: BielikServer, params) -> None:
        uri = inline.uri_of_item(ls, params)
        ls.stats.count(uri, "partially_accepted")
        ls.stats.count(uri, "accepted_chars", int(getattr(params, "acceptedLength", 0) or 0))

    @ls.command(commands.CONTINUE)
    async def continue_document(ls: BielikServer, *args) -> dict:
        request_id = ls.protocol.msg_id
        ls.protocol.command_tasks[request_id] = asyncio.current_task()
        try:
            return await commands.continue_document(ls, args)
        finally:
            ls.protocol.command_tasks.pop(request_id, None)

    @ls.command(commands.TOGGLE)
    def toggle_speculation(ls: BielikServer, *args) -> dict:
        return commands.toggle_speculation(ls, args)

    @ls.command(commands.STATS)
    def show_stats(ls: BielikServer, *args) -> dict:
        return commands.show_stats(ls, args)

    return ls


def serve(settings: Settings, tcp: str | None = None) -> int:
    """Run the server over stdio (or TCP HOST:PORT for debugging) until the client exits."""
    logging.basicConfig(
        level=logging.WARNING, format="bielik-lsp %(levelname)s %(name)s: %(message)s"
    )
    ls = build(settings)
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not port.isdigit():
            raise ConfigError(f"--tcp wants HOST:PORT, not {tcp!r}")
        ls.start_tcp(host or "127.0.0.1", int(port))
    else:
        ls.start_io()
    return 0
