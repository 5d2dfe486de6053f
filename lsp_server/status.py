"""Statistics per file and for the session, and the `bielik/status` notification's payload.

Counts only, kept in this process and never sent anywhere but to the editor that asks
(`bielik.showStats`); the client decides how to show them.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field

from decoder.stats import RunStats

STATUS = "bielik/status"
KIND_COUNTS = ("delivered", "shown", "accepted", "partially_accepted", "accepted_chars")


@dataclass
class Counters:
    requests: int = 0
    suggestions: int = 0  # non-empty suggestions delivered
    cache_hits: int = 0  # of those, served from the suggestion cache (no model run)
    superseded: int = 0  # dropped because newer work or an edit came first
    stale_dropped: int = 0  # ready, but the document changed before it went out
    prepared: int = 0  # suggestions computed ahead, as if the shown one were accepted
    prepared_used: int = 0  # of those, delivered to a later request
    failed: int = 0  # requests answered with nothing because of an error (reported once)
    shown: int = 0  # textDocument/didShowCompletion
    suggestions_accepted: int = 0  # the editor ran the item's bielik.accepted command
    partially_accepted: int = 0  # textDocument/didPartiallyAcceptCompletion
    accepted_chars: int = 0  # characters taken by partial accepts
    generated_tokens: int = 0
    prefilled_tokens: int = 0
    prompt_tokens: int = 0
    drafted: int = 0
    accepted: int = 0
    decode_tokens: int = 0
    decode_chars: int = 0  # Unicode characters of the text those tokens committed
    decode_seconds: float = 0.0
    warmups: int = 0  # prompts prefilled in the background (a document opened, a short prompt used)
    near: int = 0  # runs from the short prompt while the whole one was not prefilled yet
    # Per kind of item (model, lookup, sampled): delivered, shown, accepted, partially_accepted,
    # accepted_chars.
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)

    def count_kind(self, kind: str, name: str, n: int = 1) -> None:
        counts = self.kinds.setdefault(kind, dict.fromkeys(KIND_COUNTS, 0))
        counts[name] += n

    def add_run(self, stats: RunStats) -> None:
        self.generated_tokens += stats.generated_tokens
        self.prefilled_tokens += stats.prefilled_tokens
        self.prompt_tokens += stats.prompt_tokens
        self.drafted += stats.drafted
        self.accepted += stats.accepted
        self.decode_tokens += stats.decode_tokens
        self.decode_chars += stats.decode_chars
        self.decode_seconds += stats.decode_seconds

    def to_dict(self) -> dict:
        out = asdict(self)
        out["acceptance_rate"] = self.accepted / self.drafted if self.drafted else 0.0
        out["tokens_per_second"] = (
            self.decode_tokens / self.decode_seconds if self.decode_seconds else 0.0
        )
        out["chars_per_second"] = (
            self.decode_chars / self.decode_seconds if self.decode_seconds else 0.0
        )
        return out


@dataclass
class FileStats(Counters):
    speculation: str = "auto"  # on | off | auto, as in force for the last request
    source: str = "default"  # default | toggle | magic comment
    drafter: str = ""  # drafter mode the last request used
    reason: str = ""  # why that drafter
    policy_reasons: list[str] = field(default_factory=list)  # the engine policy's last reasons
    last_acceptance_rate: float = 0.0
    last_tokens_per_second: float = 0.0
    last_chars_per_second: float = 0.0
    last_prefilled_tokens: int = 0
    last_first_token_ms: float = 0.0  # request to first text: prefill, and the network if remote
    last_stop: str = ""

    def add_run(self, stats: RunStats) -> None:
        super().add_run(stats)
        self.policy_reasons = list(stats.reasons)
        self.last_acceptance_rate = stats.acceptance_rate
        self.last_tokens_per_second = stats.tokens_per_second
        self.last_chars_per_second = stats.chars_per_second
        self.last_prefilled_tokens = stats.prefilled_tokens
        self.last_first_token_ms = stats.prefill_seconds * 1000


class Stats:
    def __init__(self) -> None:
        self.session = Counters()
        self.files: dict[str, FileStats] = {}

    def file(self, uri: str) -> FileStats:
        return self.files.setdefault(uri, FileStats())

    def count(self, uri: str, name: str, n: int = 1) -> None:
        for c in (self.session, self.file(uri)):
            setattr(c, name, getattr(c, name) + n)

    def count_kind(self, uri: str, kind: str, name: str, n: int = 1) -> None:
        """A count for one kind of item (model, lookup, sampled)."""
        for c in (self.session, self.file(uri)):
            c.count_kind(kind, name, n)

    def add_run(self, uri: str, stats: RunStats, stop: str) -> None:
        self.session.add_run(stats)
        f = self.file(uri)
        f.add_run(stats)
        f.last_stop = stop

    def report(self, uri: str | None = None) -> dict:
        files = {u: s.to_dict() for u, s in self.files.items() if uri is None or u == uri}
        return {"session": self.session.to_dict(), "files": files}


def status_payload(
    state: str, message: str, uri: str | None = None, f: FileStats | None = None
) -> dict:
    """`bielik/status`: model state, and for a file its speculation state and last run."""
    out: dict = {"state": state, "message": message}
    if uri is not None and f is not None:
        out.update(
            uri=uri,
            speculation=f.speculation,
            speculationSource=f.source,
            drafter=f.drafter,
            reason=f.reason,
            policyReasons=f.policy_reasons,
            acceptanceRate=f.last_acceptance_rate,
            tokensPerSecond=f.last_tokens_per_second,
            charsPerSecond=f.last_chars_per_second,
            prefilledTokens=f.last_prefilled_tokens,
            firstTokenMs=f.last_first_token_ms,
        )
    return out


def memory_mb() -> float:
    """The server process's resident memory now."""
    import psutil

    return round(psutil.Process().memory_info().rss / 2**20, 1)


def peak_memory_mb() -> float | None:
    """The server process's peak resident memory (None where the OS does not say)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 2**10), 1)  # bytes vs KiB
