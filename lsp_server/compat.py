"""The pygls internals the server relies on, all in one place. Checked against pygls 2.1.x.

pygls leaves gaps a demanding client hits, filled here by overriding its protocol's private methods:
a request whose params do not parse gets an error answer (pygls drops it and the client waits
forever); `$/cancelRequest` for a running command also cancels the command's task (pygls answers
-32800 but lets it run on), and one for a request already answered, which pygls logs as a warning,
is routine for an editor that cancels as it types (debug level); open documents are kept by the
server's own store (pygls's store splits lines where LSP does not). `PRIVATE_NAMES` lists what must
exist; a test checks it.

pygls reads stdin in a thread, a line or a body per call, and handles each message before it
asks for the next line. `WatchedInput` is stdin as that thread reads it: once the thread waits
in a read and the pipe holds nothing, every message the client has sent is handled, so an
answer checked against the document after that is checked against the client's latest edit.

On the client side (`bench --typing`), `JsonRPCClient.start_io` keeps the server subprocess in a
private attribute: its pid gives the server's memory, and its stderr must be read (pygls pipes it
and never reads it: a chatty server would block on a full pipe). The tests send a malformed request
through the client protocol's private sender.
"""

from __future__ import annotations

import asyncio
import logging
import select
import time
from typing import BinaryIO

from lsprotocol import types
from pygls.client import JsonRPCClient
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

CHECKED = "2.1"
log = logging.getLogger("bielik-lsp")
PRIVATE_NAMES = {
    LanguageServerProtocol: (
        "_send_response",
        "_handle_cancel_notification",
        "structure_message",
        "handle_message",
        "lsp_text_document__did_open",
        "lsp_text_document__did_change",
        "lsp_text_document__did_close",
    ),
    JsonRPCProtocol: ("_send_data", "_handle_cancel_notification"),
}
# Private attributes set on instances: (owner, attribute), checked on a fresh JsonRPCClient.
# (The server's protocol keeps `_request_futures` as the client's does: both are JsonRPCProtocols.)
PRIVATE_ATTRIBUTES = (("client", "_server"), ("client.protocol", "_request_futures"))


class _Answered:
    """Stands in for a request that failed to parse and was already answered with an error."""

    jsonrpc = None


class Protocol(LanguageServerProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.command_tasks: dict = {}  # request id -> task of a running command

    def _handle_cancel_notification(self, msg_id):
        task = self.command_tasks.pop(msg_id, None)
        if task is not None:
            task.cancel()
        if msg_id not in self._request_futures:  # answered already: a late cancel is routine
            log.debug("cancel for %s, already answered", msg_id)
            return
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

    def _user(self, method: str, params):
        if (handler := self.fm.features.get(method)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        yield from self._user(types.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        yield from self._user(types.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        yield from self._user(types.TEXT_DOCUMENT_DID_CLOSE, params)


class WatchedInput:
    """The server's stdin, telling whether pygls's reader thread has read all that arrived."""

    def __init__(self, stream: BinaryIO):
        self.stream = stream
        self.calls = 0  # readline calls begun
        self.waiting = False  # a readline call is under way

    def readline(self) -> bytes:
        self.calls += 1
        self.waiting = True
        try:
            return self.stream.readline()
        finally:
            self.waiting = False

    def read(self, n: int) -> bytes:
        return self.stream.read(n)

    def idle(self) -> bool:
        """Whether the reader waits for a line and the pipe holds nothing to read."""
        if not self.waiting:
            return False
        try:
            ready, _, _ = select.select([self.stream], [], [], 0)
        except (OSError, ValueError):  # not a selectable pipe (Windows): trust the waiting read
            return True
        return not ready

    async def caught_up(self, patience_s: float = 0.05) -> None:
        """Return once every message the client has sent is handled (at most `patience_s`).

        The same readline call found waiting on an empty pipe 1 ms apart: not one that was
        about to return a line already buffered.
        """
        deadline = time.monotonic() + patience_s
        while time.monotonic() < deadline:
            calls = self.calls
            await asyncio.sleep(0.001)
            if self.idle() and self.calls == calls:
                return


def track_command(ls: LanguageServer) -> object:
    """Register the running command's task so `$/cancelRequest` cancels it; returns its id."""
    request_id = ls.protocol.msg_id
    ls.protocol.command_tasks[request_id] = asyncio.current_task()
    return request_id


def untrack_command(ls: LanguageServer, request_id: object) -> None:
    ls.protocol.command_tasks.pop(request_id, None)


def progress_cancelled(ls: LanguageServer, token: str) -> asyncio.Future | None:
    """The future pygls cancels when the client cancels work-done progress `token`."""
    return ls.work_done_progress.tokens.get(token)


def server_process(client: JsonRPCClient) -> asyncio.subprocess.Process:
    """The subprocess `client.start_io` started."""
    process = client._server
    if process is None:
        raise RuntimeError("the client has not started a server process")
    return process


def send_raw_request(client: JsonRPCClient, request_id: str, method: str, params: object):
    """Send a request exactly as given (even params the types reject); its answer's future.

    The tests need this to check that a malformed request gets an error answer.
    """
    future = asyncio.get_running_loop().create_future()
    client.protocol._request_futures[request_id] = future
    client.protocol._send_data(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    )
    return future
