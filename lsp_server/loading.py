"""What a model load is doing and how long it should take, for the editor's progress and status.

The first start on a machine assembles the embedded GGUF, may convert it (MLX), and measures
exactness and speculation costs: tens of seconds where later starts take a few. A writer who
sees only "loading" cannot tell that from a hang, so the load names its stage, counts the
seconds, and says how long the same load took last time on this machine (kept in the cache).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from decoder.backends.files import cache_root
from decoder.config import Settings, is_remote

HISTORY = "load-seconds.json"


def load_key(settings: Settings) -> str:
    """Loads of the same models on the same engine take about as long."""
    drafter = settings.drafter_model if settings.drafter != "none" else "-"
    return f"{settings.target_backend}|{settings.target}|{settings.drafter}|{drafter}"


def history_file() -> Path:
    return cache_root() / HISTORY


def read_history() -> dict[str, float]:
    try:
        return {k: float(v) for k, v in json.loads(history_file().read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def remember(settings: Settings, seconds: float) -> None:
    """Keep how long this load took; best effort (a read-only cache only loses the estimate)."""
    history = read_history() | {load_key(settings): round(seconds, 1)}
    path = history_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(history, indent=1))
        os.replace(partial, path)
    except OSError:
        pass


class LoadClock:
    """The stage of the load under way (set from the engine thread) and its progress line."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.expected = read_history().get(load_key(settings))
        self.start = time.monotonic()
        self.stage = "connecting" if is_remote(settings.target) else "starting"

    def set_stage(self, stage: str) -> None:
        self.stage = stage  # one assignment: safe to call from the engine thread

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def message(self) -> str:
        """`stage (12 s; about 8 s left)`, or on the first load here, what takes the time."""
        seconds = self.elapsed()
        if self.expected is None:
            return (
                f"{self.stage} ({seconds:.0f} s; first start here: the models are prepared and "
                "this machine measured once, later starts are faster)"
            )
        left = self.expected - seconds
        if left < 1:
            return f"{self.stage} ({seconds:.0f} s; {self.expected:.0f} s last time)"
        return f"{self.stage} ({seconds:.0f} s; about {left:.0f} s left)"

    def finish(self, ok: bool) -> None:
        if ok:
            remember(self.settings, self.elapsed())
