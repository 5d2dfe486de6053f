"""The server's process as a language client starts and leaves it.

`bielik-lsp serve` is started with the arguments vscode-languageclient appends (`--stdio`,
`--clientProcessId=N`), talks LSP on real pipes, and exits by itself once the client's process
(a real process, killed here) is gone, named either on the command line or as `initialize`'s
`processId`, while its stdin stays open. Asked to exit while a download stalls (a real local
HTTP hub that lists a repo's files and never sends one), it exits at once, with LSP's code. Loaded
and left alone it sleeps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psutil
import pytest

from app.cli import build_parser, main
from lsp_server.client_watch import POLL_S

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, "-m", "app.cli"]


class Pipe:
    """A server subprocess spoken to in LSP's framing, with stdin kept open."""

    def __init__(self, argv: list[str], env: dict | None = None):
        env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.log = tempfile.TemporaryFile()  # never a full pipe, however much it logs
        self.process = subprocess.Popen(
            [*SERVER, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.log, env=env, cwd=ROOT,
        )  # fmt: skip
        self.n = 0

    def send(self, method: str, params: dict | None, request: bool = True) -> int:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.n += 1
            message["id"] = self.n
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()
        return self.n

    def receive(self) -> dict:
        length = 0
        while line := self.process.stdout.readline().strip():
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        assert length, self.stderr()
        return json.loads(self.process.stdout.read(length))

    def answer(self, request_id: int) -> dict:
        while (message := self.receive()).get("id") != request_id or "method" in message:
            pass
        return message

    def initialize(self, process_id: int | None, options: dict | None = None) -> dict:
        params = {"processId": process_id, "capabilities": {}, "initializationOptions": options}
        return self.answer(self.send("initialize", params))

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()
        self.log.close()


def editor() -> subprocess.Popen:
    """A stand-in for the editor's process: a real one, killed by the test."""
    return subprocess.Popen(["sleep", "600"])


def kill(process: subprocess.Popen) -> None:
    process.kill()
    process.wait()  # reaped, as the editor's own parent would


def exit_code_after(pipe: Pipe, timeout_s: float) -> int | None:
    try:
        return pipe.process.wait(timeout_s)
    except subprocess.TimeoutExpired:
        return None


class StalledHub(BaseHTTPRequestHandler):
    """A Hugging Face hub whose API answers and whose files never come: a stalled download."""

    FILES = ("config.json", "model.safetensors")
    stalled: list[str] = []
    every_file_stalls = threading.Event()  # each file's download is waiting on its answer
    released = threading.Event()

    def do_GET(self) -> None:
        if not self.path.startswith("/api/models/"):
            self.stall()
            return
        if "/tree/" in self.path:
            body = [{"type": "file", "path": f, "size": 9, "oid": "1" * 40} for f in self.FILES]
        else:
            body = {"id": "bielik-test/stalls", "sha": "0" * 40}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self) -> None:
        self.stall()

    def stall(self) -> None:
        self.stalled.append(self.path)
        if len(self.stalled) >= len(self.FILES):
            self.every_file_stalls.set()
        self.released.wait(600)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def stalled_hub(tmp_path) -> Iterator[dict]:
    """The environment that points a server at a StalledHub (and an empty hub cache)."""
    StalledHub.stalled.clear()
    StalledHub.every_file_stalls.clear()
    StalledHub.released.clear()
    hub = ThreadingHTTPServer(("127.0.0.1", 0), StalledHub)
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    try:
        yield {
            "HF_ENDPOINT": f"http://127.0.0.1:{hub.server_address[1]}",
            "HF_HOME": str(tmp_path / "hf"),
            "HF_HUB_ETAG_TIMEOUT": "600",
            "HF_HUB_DOWNLOAD_TIMEOUT": "600",
        }
    finally:
        StalledHub.released.set()
        hub.shutdown()
        hub.server_close()


def test_client_arguments_are_understood():
    parse = build_parser().parse_args
    for argv in (
        ["serve", "--stdio", "--clientProcessId=42"],
        ["serve", "--clientProcessId", "42", "--stdio"],
        ["--stdio", "--clientProcessId=42"],  # a client's args without `serve`
        ["--clientProcessId=42", "serve"],
    ):
        args = parse(argv)
        assert args.client_process_id == 42, argv
    assert not hasattr(parse(["serve"]), "client_process_id")


@pytest.mark.parametrize("flag", ["--node-ipc", "--socket=5007", "--pipe=/tmp/x.sock"])
def test_other_transports_are_refused_in_one_line(flag, capsys):
    assert main(["serve", flag, "--clientProcessId=42"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "stdio only" in err and "usage" not in err


@pytest.mark.parametrize("named", ["argument", "initialize"])
def test_server_exits_when_the_client_process_is_gone(named):
    client = editor()
    argv = ["serve", "--stdio", f"--clientProcessId={client.pid}"] if named == "argument" else []
    pipe = Pipe(argv)
    try:
        reply = pipe.initialize(client.pid if named == "initialize" else os.getpid())
        assert "capabilities" in reply["result"], reply
        assert exit_code_after(pipe, 2 * POLL_S) is None  # the client lives: the server stays
        kill(client)
        code = exit_code_after(pipe, 4 * POLL_S)
        assert code == 1, pipe.stderr()
        assert "is gone; exiting" in pipe.stderr()
    finally:
        kill(client)
        pipe.close()


@pytest.mark.parametrize("shutdown", [True, False], ids=["shutdown-then-exit", "exit-alone"])
def test_exit_ends_the_server_at_once_while_a_download_stalls(shutdown, stalled_hub):
    """The hub library's download workers are joined at interpreter exit; the server skips that."""
    options = {"target": "bielik-test/stalls", "backend": "mlx", "loadTimeoutS": 600}
    pipe = Pipe(["serve", "--stdio"], env=stalled_hub)
    try:
        pipe.initialize(os.getpid(), options)
        pipe.send("initialized", {}, request=False)
        assert StalledHub.every_file_stalls.wait(120), pipe.stderr()
        if shutdown:
            assert pipe.answer(pipe.send("shutdown", None))["result"] is None
        pipe.send("exit", None, request=False)
        assert exit_code_after(pipe, 10) == (0 if shutdown else 1), pipe.stderr()
    finally:
        pipe.close()


def test_a_pid_that_does_not_exist_here_is_not_watched():
    """A client in another pid namespace (a container) sends a pid we cannot see."""
    free = max(psutil.pids()) + 10_000
    pipe = Pipe(["serve", "--stdio"])
    try:
        assert "capabilities" in pipe.initialize(free)["result"]
        assert exit_code_after(pipe, 2 * POLL_S) is None
    finally:
        pipe.close()


@pytest.mark.slow
def test_a_loaded_server_left_alone_sleeps():
    """A loaded, idle server (client watch included) uses almost no CPU: no busy timers."""
    client = editor()
    options = {"target": "embedded:smollm2-135m", "backend": "mlx", "drafter": "lookup"}
    pipe = Pipe(["serve", "--stdio", f"--clientProcessId={client.pid}"])
    try:
        pipe.initialize(client.pid, options)
        pipe.send("initialized", {}, request=False)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            message = pipe.receive()
            if message.get("method") == "bielik/status" and message["params"].get("state") in (
                "ready",
                "error",
            ):
                break
        assert message["params"]["state"] == "ready", message
        time.sleep(1.0)  # the load's last work settles
        process = psutil.Process(pipe.process.pid)
        before = process.cpu_times()
        time.sleep(10.0)
        after = process.cpu_times()
        used = (after.user - before.user) + (after.system - before.system)
        assert used < 0.1, f"{used:.3f} CPU s in 10 s idle"
    finally:
        kill(client)
        pipe.close()
