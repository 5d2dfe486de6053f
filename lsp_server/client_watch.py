"""Exit when the editor that started the server is gone.

A killed editor (or extension host) may leave the server's stdin open, held by a process it
started, so end-of-input alone does not end the server. The client names its process twice: the
`--clientProcessId` argument that language clients append, and `processId` in `initialize`.
One daemon thread looks at each every few seconds (as vscode-languageserver's servers do, every
3 s), asleep in between: an idle server stays idle. A process that is a zombie, or whose pid now
belongs to another process (psutil compares start times), counts as gone. A pid that does not
exist when we are told it (the client in another pid namespace, e.g. a container) is not watched.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import NoReturn

import psutil

log = logging.getLogger("bielik-lsp")
POLL_S = 3.0
EXIT_CODE = 1  # what LSP asks of a server that exits without a `shutdown` request


def alive(process: psutil.Process) -> bool:
    """Whether the process still runs (not exited, not a zombie, not a reused pid)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def leave(pid: int) -> NoReturn:
    """End the server at once: its reader thread may be blocked on a stdin nobody closes."""
    log.warning("the client's process %d is gone; exiting", pid)
    end_process(EXIT_CODE)


def end_process(code: int) -> NoReturn:
    """Exit with `code` now, however the threads still running are stuck.

    Interpreter shutdown joins the threads a library started (huggingface_hub's download workers:
    a stalled one held the process for the hub's 600 s timeout) and tears modules down under the
    engine's daemon thread (a load's MLX pass then crashed the process). `os._exit` skips both;
    our threads only write files atomically, so nothing is left half written. Output is flushed.
    """
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):  # pygls may have closed stdout
            stream.flush()
    os._exit(code)


class ClientWatch:
    """The client processes to outlive by at most `poll_s`; `on_gone(pid)` when one ends."""

    def __init__(self, poll_s: float = POLL_S, on_gone: Callable[[int], None] = leave):
        self.poll_s = poll_s
        self.on_gone = on_gone
        self.processes: dict[int, psutil.Process] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def watch(self, pid: int | None) -> bool:
        """Start watching `pid` (None, 0 or our own pid: nothing). False if it does not exist."""
        if not pid or pid == os.getpid():
            return False
        try:
            process = psutil.Process(pid)
        except (psutil.Error, ValueError, OverflowError):
            log.info("client process %s not found here; not watched", pid)
            return False
        if not alive(process):
            log.info("client process %s is not running; not watched", pid)
            return False
        with self._lock:
            self.processes.setdefault(pid, process)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="bielik-client-watch", daemon=True
                )
                self._thread.start()
        return True

    def _run(self) -> None:
        wake = threading.Event()  # never set: a timed wait that costs nothing while asleep
        while not wake.wait(self.poll_s):
            with self._lock:
                gone = [pid for pid, p in self.processes.items() if not alive(p)]
            if gone:
                self.on_gone(gone[0])
                return
