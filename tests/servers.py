"""Real inference servers on 127.0.0.1 for tests and benchmarks, started with `serve-model`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
MODEL = "embedded:gemma-3-270m"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class InferenceServer:
    """`bielik-lsp serve-model` as a child process: mlx_lm.server or llama-server on MODEL."""

    def __init__(self, kind: str, model: str = MODEL, port: int | None = None):
        self.kind, self.model, self.port = kind, model, port or free_port()
        self.process: subprocess.Popen | None = None
        self.launcher: list[str] | None = None  # runs mlx_lm.server's arguments instead of it
        # Its output; stop() removes it unless asked to keep it (a failed test's evidence).
        self.log = Path(tempfile.mkstemp(prefix=f"bielik-{kind}-server-", suffix=".log")[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout_s: float = 600) -> None:
        """Start the server and wait until it has generated a token (the model is loaded)."""
        command, env = self._command()
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, env=env, stdout=log, stderr=log)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.kind} server exited: {self.log_tail()}")
            if self._answers():
                return
            time.sleep(0.5)
        self.stop(keep_log=True)
        raise TimeoutError(
            f"{self.kind} server not ready in {timeout_s}s: {self.log}\n{self.log_tail()}"
        )

    def log_tail(self, chars: int = 2000) -> str:
        """The end of the server's output, for a failure message ("" once the log is gone)."""
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def _command(self) -> tuple[list[str], dict[str, str]]:
        extra = ["--log-level", "WARNING"] if self.kind == "mlx" else []
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        if self.launcher is None:
            command = [sys.executable, "-m", "app.cli", "--target", self.model]
            command += ["serve-model", "--server", self.kind, "--port", str(self.port)]
            return [*command, "--", *extra], env
        from app.serving import server_command
        from decoder.config import Settings

        served = server_command(Settings(target=self.model), "mlx", "127.0.0.1", self.port, extra)
        args = served.argv[served.argv.index("server") + 1 :]
        return [*self.launcher, *args], {**served.env, "PYTHONPATH": str(ROOT)}

    def _answers(self) -> bool:
        root = self.url.removesuffix("/v1")
        try:
            if httpx.get(f"{root}/health", timeout=2).status_code != 200:
                return False
            body = {"prompt": "Ala", "max_tokens": 1, "temperature": 0}
            return httpx.post(f"{self.url}/completions", json=body, timeout=300).is_success
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        """SIGKILL: the server dies mid-whatever, as on a crash or an OOM kill."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)

    def stop(self, keep_log: bool = False) -> None:
        """Terminate the server; its log goes too unless `keep_log` (a test failed: look there)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        if not keep_log:
            self.log.unlink(missing_ok=True)

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far (Linux /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
