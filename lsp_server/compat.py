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
for a next message, none is buffered and the pipe holds nothing, every message the client has
sent is handled, so an answer checked against the document after that is checked against the
client's latest edit.

The exit code LSP asks for (0 after `shutdown`, 1 without) is read from the protocol's private
`_shutdown` flag.

On the client side (`bench --typing`), `JsonRPCClient.start_io` keeps the server subprocess in a
private attribute: its pid gives the server's memory, and its stderr must be read (pygls pipes it
and never reads it: a chatty server would block on a full pipe). The tests send a malformed request
through the client protocol's private sender.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import threading
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
PRIVATE_ATTRIBUTES = (
    ("client", "_server"),
    ("client.protocol", "_request_futures"),
    ("client.protocol", "_shutdown"),
)


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
    """The server's stdin, read by pygls's reader thread through a buffer of its own.

    pygls reads a header line or a body per call and handles each message before it asks for the
    next header line. Owning the buffer makes `idle` exact: a message already read from the pipe
    but not yet handled is in the buffer, so it cannot pass for an empty pipe (with a
    `BufferedReader`, it could, while the thread was paused between two calls).
    """

    CHUNK = 1 << 16

    def __init__(self, stream: BinaryIO):
        self.stream = stream  # kept open: its descriptor is read directly
        self.fd = stream.fileno()
        self.buffer = bytearray()
        self.lock = threading.Lock()  # a read from the pipe and its entry in the buffer: one step
        self.waiting = False  # the reader waits for bytes the buffer lacks
        self.between = True  # the last call ended a message (a body, or nothing read yet)
        self.selectable = _selectable(self.fd)

    def readline(self) -> bytes:
        while (end := self.buffer.find(b"\n")) < 0:
            if not self._fill():
                return self._take(len(self.buffer), between=False)
        return self._take(end + 1, between=False)

    def read(self, n: int) -> bytes:
        while len(self.buffer) < n and self._fill():
            pass
        return self._take(n, between=True)

    def _take(self, n: int, between: bool) -> bytes:
        with self.lock:
            out = bytes(self.buffer[:n])
            del self.buffer[:n]
            self.between = between
        return out

    def _fill(self) -> bool:
        """Wait for bytes and move what the pipe holds into the buffer; False at end of input."""
        self.waiting = True
        try:
            if self.selectable:
                select.select([self.fd], [], [])
            with self.lock:  # Windows pipes do not select: the read blocks here, see `idle`
                chunk = os.read(self.fd, self.CHUNK)
                self.buffer += chunk
                self.waiting = False
        finally:
            self.waiting = False
        return bool(chunk)

    def idle(self) -> float | None:
        """When every message sent was seen handled (monotonic seconds), or None if not now.

        That is: the reader waits for a next message, none of one is buffered, and the pipe is
        empty. Where the pipe does not select (Windows), a waiting read is trusted.
        """
        if not self.selectable:
            return time.monotonic() if self.waiting and self.between and not self.buffer else None
        with self.lock:
            seen = time.monotonic()
            if self.waiting and self.between and not self.buffer and not _readable(self.fd):
                return seen
        return None

    def reading(self) -> bool:
        """Whether a message is on its way in: bytes the reader has yet to take or to hand over.

        A message cut off mid-way (the reader waits for bytes the pipe lacks) is not.
        """
        return not self.waiting or (self.selectable and _readable(self.fd))

    async def let_in(self, patience_s: float) -> None:
        """Give the reader thread the CPU while a message is on its way (up to `patience_s`).

        A busy event loop leaves it only the gaps: a request sent while a long document was
        checked, paragraph by paragraph, was read seconds late, after the check had ended.
        """
        deadline = time.monotonic() + patience_s
        while self.reading() and time.monotonic() < deadline:
            await asyncio.sleep(0.001)

    async def caught_up(self, patience_s: float = 0.05) -> float | None:
        """When every message the client had sent was seen handled (monotonic seconds).

        None if not within `patience_s`: a message is on its way, or the reader got no CPU.
        """
        deadline = time.monotonic() + patience_s
        while (seen := self.idle()) is None and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        return seen


def _selectable(fd: int) -> bool:
    try:
        _readable(fd)
    except (OSError, ValueError):  # a Windows pipe
        return False
    return True


def _readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])


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


def shut_down(ls: LanguageServer) -> bool:
    """Whether the client sent `shutdown`.

    pygls's `exit` handler computes the exit code from this, then loses it: `start_io` swallows
    the SystemExit that carries it.
    """
    return ls.protocol._shutdown


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
