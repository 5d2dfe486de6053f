"""llama-server as a peer: its plain decoding and its n-gram speculation on the same GGUF.

Each configuration is one `llama-server` process of the binary the user names. It is paused
(SIGSTOP) while others run, since an idle llama-server keeps its threads spinning and would
slow every other condition of the run. Prompts go as token ids (the same ids our engine
decodes from), greedy, without its prompt cache; speed is the server's own `timings`.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

from app.errors import UserError

SPEC_TYPES = ("ngram-mod", "ngram-simple", "ngram-map-k")  # --spec-type values compared
START_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """One llama-server process serving `gguf`, plain or with `--spec-type spec`."""

    def __init__(self, binary: str, gguf: Path, threads: int, spec: str | None, log: Path):
        self.name = f"llama-server {spec or 'plain'}"
        self.port = free_port()
        args = [binary, "-m", str(gguf), "-t", str(threads), "-tb", str(threads)]
        args += ["-c", "4096", "-np", "1", "--port", str(self.port), "--no-webui"]
        args += ["--spec-type", spec] if spec else []
        self.log = log
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log.open("w"))
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=900)
        self._wait_ready()
        self.pause()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise UserError(f"{self.name} exited at start; its log: {self.log}")
            try:
                if self.client.get("/health").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        self.close()
        raise UserError(f"{self.name} did not start in {START_TIMEOUT_S} s; its log: {self.log}")

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def complete(self, ids: list[int], tokens: int) -> dict:
        """Greedy `tokens` after `ids`: its token ids, decode tokens/s and drafts accepted."""
        self.proc.send_signal(signal.SIGCONT)
        try:
            body = {
                "prompt": ids,
                "n_predict": tokens,
                "temperature": 0.0,
                "top_k": 1,
                "cache_prompt": False,
                "return_tokens": True,
            }
            answer = self.client.post("/completion", json=body).raise_for_status().json()
        finally:
            self.pause()
        timings = answer.get("timings", {})
        return {
            "tok_s": float(timings.get("predicted_per_second", 0.0)),
            "ids": [int(t) for t in answer.get("tokens", [])],
            "drafted": int(timings.get("draft_n", 0)),
            "accepted": int(timings.get("draft_n_accepted", 0)),
        }

    def close(self) -> None:
        self.proc.send_signal(signal.SIGCONT)
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.client.close()


def require(binary: str) -> None:
    """Fail before any model loads when `binary` cannot be run."""
    if shutil.which(binary) is None:
        raise UserError(f"--llama-server: {binary!r} is not an executable file")


def start_all(binary: str, gguf: Path, threads: int, out: Path) -> list[LlamaServer]:
    """Plain and every compared n-gram speculation, each logging to OUT/llama-server-*.log."""
    require(binary)
    servers = []
    try:
        for spec in (None, *SPEC_TYPES):
            log = out / f"llama-server-{spec or 'plain'}.log"
            servers.append(LlamaServer(binary, gguf, threads, spec, log))
    except Exception:
        for server in servers:
            server.close()
        raise
    return servers
