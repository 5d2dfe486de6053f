"""A small LSP server over stdio that answers every inline completion with the same three items.

It tests the editor clients, not bielik-lsp: cycling among several items, accepting all, a word
or a line of one, and what the client tells the server about it (the item's command,
textDocument/didPartiallyAcceptCompletion, textDocument/didShowCompletion). Standard library
only; `python -m tests.editor_stub` from the repository root.

`stub/received` answers with every notification and request received so far. A request whose
line ends with "slow" before the cursor is answered after STUB_DELAY_S seconds, or cancelled
before; one that ends with "deaf" is answered after that delay whatever the client says.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time

ITEMS = (" pierwsza propozycja, dalej", " druga propozycja.", " trzecia\ni czwarta linia")
ACCEPTED = "bielik.accepted"
DELAY_S = float(os.environ.get("STUB_DELAY_S", "1.0"))


class Reader:
    """Content-Length framed messages from a file descriptor, without blocking on a partial one."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer, self.closed = fd, b"", False

    def fill(self) -> None:
        chunk = os.read(self.fd, 65536)
        self.closed = not chunk
        self.buffer += chunk

    def messages(self) -> list[dict]:
        out = []
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            headers = self.buffer[:end].decode("ascii").split("\r\n")
            length = next(
                int(h.split(":")[1]) for h in headers if h.lower().startswith("content-length")
            )
            if len(self.buffer) < end + 4 + length:
                break
            out.append(json.loads(self.buffer[end + 4 : end + 4 + length]))
            self.buffer = self.buffer[end + 4 + length :]
        return out


def write_message(message: dict) -> None:
    body = json.dumps(message, ensure_ascii=False).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def items(uri: str, position: dict, request_id: object) -> dict:
    """Three items at the cursor, each with the accept command naming it."""
    return {
        "items": [
            {
                "insertText": text,
                "range": {"start": position, "end": position},
                "command": {
                    "title": "accepted",
                    "command": ACCEPTED,
                    "arguments": [uri, f"{request_id}-{i}"],
                },
            }
            for i, text in enumerate(ITEMS)
        ]
    }


class Stub:
    def __init__(self) -> None:
        self.received: list[dict] = []
        self.texts: dict[str, str] = {}
        # request id -> (due, answer, whether $/cancelRequest drops it)
        self.delayed: dict[object, tuple[float, dict, bool]] = {}

    def answer(self, message: dict) -> dict | None:
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            return {
                "capabilities": {
                    "textDocumentSync": 1,
                    "inlineCompletionProvider": True,
                    "executeCommandProvider": {"commands": [ACCEPTED]},
                },
                "serverInfo": {"name": "editor-stub"},
            }
        if method == "stub/received":
            return {"received": self.received}
        if method == "textDocument/inlineCompletion":
            uri = params["textDocument"]["uri"]
            return items(uri, params["position"], message["id"])
        return None

    def before_cursor(self, params: dict) -> str:
        """The request's line up to its position (ASCII: UTF-16 units are characters)."""
        lines = self.texts.get(params["textDocument"]["uri"], "").split("\n")
        position = params["position"]
        line = lines[position["line"]] if position["line"] < len(lines) else ""
        return line[: position["character"]]

    def handle(self, message: dict) -> bool:
        """Record and answer one message; False once the client says exit."""
        method = message.get("method")
        if method != "stub/received":
            self.received.append({"method": method, "params": message.get("params")})
        params = message.get("params") or {}
        if method == "exit":
            return False
        if method == "textDocument/didOpen":
            self.texts[params["textDocument"]["uri"]] = params["textDocument"]["text"]
        elif method == "textDocument/didChange":
            self.texts[params["textDocument"]["uri"]] = params["contentChanges"][-1]["text"]
        elif method == "$/cancelRequest" and self.delayed.get(params.get("id"), ())[2:] == (True,):
            del self.delayed[params["id"]]
            error = {"code": -32800, "message": "cancelled"}
            write_message({"jsonrpc": "2.0", "id": params["id"], "error": error})
        if "id" in message and method is not None:
            result = self.answer(message)
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            before = self.before_cursor(params) if method == "textDocument/inlineCompletion" else ""
            if before.endswith(("slow", "deaf")):
                due = time.monotonic() + DELAY_S
                self.delayed[message["id"]] = (due, reply, before.endswith("slow"))
            else:
                write_message(reply)
        return True

    def flush_due(self) -> None:
        now = time.monotonic()
        for request_id, (due, reply, _) in list(self.delayed.items()):
            if due <= now:
                del self.delayed[request_id]
                write_message(reply)


def main() -> int:
    stub, reader = Stub(), Reader(sys.stdin.fileno())
    while not reader.closed:
        ready, _, _ = select.select([reader.fd], [], [], 0.02)
        stub.flush_due()
        if ready:
            reader.fill()
        for message in reader.messages():
            if not stub.handle(message):
                return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
