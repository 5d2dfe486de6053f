"""Run statistics as data: one record per cycle, totals derived from them.

Formatting belongs to the edges (CLI, LSP, benchmark report); this module only counts.
Speed is counted in tokens and in characters: a character is one Unicode character (code point)
of the committed text, so models of different tokenizers compare by what the writer gets.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field


@dataclass
class Cycle:
    """One draft-verify cycle (a plain decoding step is a cycle with nothing drafted)."""

    drafter: str
    k: int  # draft length asked for
    drafted: int  # target tokens proposed
    accepted: int  # of those, accepted by the target
    emitted: int  # tokens committed by this cycle (accepted + the target's own token)
    draft_s: float
    translate_s: float
    verify_s: float
    other_s: float
    reason: str = ""  # the policy's reason for this cycle's drafter and k
    passes: int = 0  # drafter model forward passes (k counts target tokens, not these)
    synced: bool | None = None  # drafter's text == committed text (None: not a text drafter)
    chars: int = 0  # Unicode characters of the committed text that this cycle's tokens begin


def count_chars(data: bytes) -> int:
    """Unicode characters whose first byte is in `data` (UTF-8): every byte but continuations.

    Summed over consecutive pieces of a text it counts the text's characters exactly, wherever
    the pieces cut a character (byte-level tokens do).
    """
    return len(data) - sum(1 for b in data if 0x80 <= b < 0xC0)


@dataclass
class RunStats:
    prompt_tokens: int = 0
    prefilled_tokens: int = 0  # prompt tokens actually fed (the rest came from the prefix cache)
    prefill_seconds: float = 0.0
    generated_tokens: int = 0  # including the first token, which prefill produces
    generated_chars: int = 0  # Unicode characters of the generated text, the first token's too
    cycles: list[Cycle] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # distinct policy reasons, first seen first
    stop_reason: str = ""
    server: dict = field(default_factory=dict)  # what a remote inference server reported

    @property
    def drafted(self) -> int:
        return sum(c.drafted for c in self.cycles)

    @property
    def accepted(self) -> int:
        return sum(c.accepted for c in self.cycles)

    @property
    def acceptance_rate(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0

    @property
    def drafter_passes(self) -> int:
        return sum(c.passes for c in self.cycles)

    @property
    def integrity(self) -> tuple[int, int]:
        """(cycles whose drafter context equalled the committed text, cycles checked)."""
        checked = [c.synced for c in self.cycles if c.synced is not None]
        return sum(checked), len(checked)

    @property
    def decode_seconds(self) -> float:
        return sum(c.draft_s + c.translate_s + c.verify_s + c.other_s for c in self.cycles)

    @property
    def decode_tokens(self) -> int:
        return sum(c.emitted for c in self.cycles)

    @property
    def tokens_per_second(self) -> float:
        """Decode speed: tokens committed by cycles over their wall time (prefill excluded)."""
        return self.decode_tokens / self.decode_seconds if self.decode_seconds else 0.0

    @property
    def decode_chars(self) -> int:
        return sum(c.chars for c in self.cycles)

    @property
    def chars_per_second(self) -> float:
        """Decode speed in Unicode characters of committed text per second (prefill excluded)."""
        return self.decode_chars / self.decode_seconds if self.decode_seconds else 0.0

    @property
    def chars_per_token(self) -> float:
        """Characters per generated token: what one token of this tokenizer is worth here."""
        return self.generated_chars / self.generated_tokens if self.generated_tokens else 0.0

    @property
    def accepted_per_cycle(self) -> float:
        return self.accepted / len(self.cycles) if self.cycles else 0.0

    def time_split(self) -> dict[str, float]:
        return {
            part: sum(getattr(c, part + "_s") for c in self.cycles)
            for part in ("draft", "translate", "verify", "other")
        }

    def to_dict(self, per_cycle: bool = True) -> dict:
        out = {
            "prompt_tokens": self.prompt_tokens,
            "prefilled_tokens": self.prefilled_tokens,
            "prefill_seconds": self.prefill_seconds,
            "generated_tokens": self.generated_tokens,
            "generated_chars": self.generated_chars,
            "decode_tokens": self.decode_tokens,
            "decode_chars": self.decode_chars,
            "decode_seconds": self.decode_seconds,
            "tokens_per_second": self.tokens_per_second,
            "chars_per_second": self.chars_per_second,
            "chars_per_token": self.chars_per_token,
            "cycles": len(self.cycles),
            "drafted": self.drafted,
            "accepted": self.accepted,
            "acceptance_rate": self.acceptance_rate,
            "accepted_per_cycle": self.accepted_per_cycle,
            "drafter_passes": self.drafter_passes,
            "drafter_integrity": dict(zip(("exact", "checked"), self.integrity, strict=True)),
            "time_split": self.time_split(),
            "reasons": self.reasons,
            "stop_reason": self.stop_reason,
        }
        if self.server:
            out["server"] = self.server
        if per_cycle:
            out["per_cycle"] = [asdict(c) for c in self.cycles]
        return out


class Clock:
    """Laps of wall time: `lap()` returns seconds since the previous lap."""

    def __init__(self) -> None:
        self._t = time.perf_counter()

    def lap(self) -> float:
        now = time.perf_counter()
        dt, self._t = now - self._t, now
        return dt
