"""Whether a backend's batched passes give, bit for bit, the logits of one-token passes.

Speculative decoding equals plain greedy decoding only if verifying n tokens in one pass gives
the logits that n one-token passes would. Whether it does depends on the kernels a build and a
configuration select (llama.cpp's CPU kernels switch with the batch size, Metal's quantized
matmuls may too), so it is measured on the model in use, at load, not declared per backend.

The check feeds the same k+1 ids once token by token and once in a pass of each width n, after
at least 600 cached positions (llama.cpp switches attention kernels past 512), and compares the
logits exactly. It needs only the Backend protocol (sync, forward, prefill_chunk, rewind).

Where the kernels give one-token passes other sums than wide ones (OpenBLAS picks its kernel,
and its thread split, by the shape of each product: on an AVX-512 CPU, a small-matrix kernel
for one-token steps only), a backend that can pad its passes (MLX: `pad_passes`) feeds every
pass, one-token steps included, PADDED_WIDTH ids wide: every step then multiplies the same
shapes, and a token's logits no longer depend on how many were fed with it, on any BLAS. It
costs plain steps the time of a wide pass, so `check_and_split` measures both and pads only
where the kernels as they are stay exact for less than WIDE_ENOUGH tokens (or where asked to:
the `exact_passes` setting).

Exactness must not depend on how a prompt was cut into prefill passes either (wide for a request
or `continue`, short in the background, as long as the machine let them take): the check also
feeds the last CUT_SPAN cached positions again, once in one pass and once in narrow pieces, and
compares the next logits. Where they differ (MLX on a CPU), `check_and_split` makes the
backend cut every prompt at fixed positions (`threads.AlignedPace`), in every lane.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from decoder.backends import threads
from decoder.backends.base import Backend

MIN_POSITIONS = 600  # cached positions before the checked passes
DEFAULT_DRAFT = 8  # k: verification passes are k+1 wide
CUTS = (1, 2, 3, 5, 8, 13, 16)  # pieces the last cached positions are fed again in
CUT_SPAN = sum(CUTS)
ALIGNED_PASS = 256  # where cuts matter, prompts are cut every this many ids from position 0
PADDED_WIDTH = 16  # padded passes: every pass fed this many ids wide (drafts of 15 in one pass)
WIDE_ENOUGH = 8  # `auto`: kernels exact this wide as they are need no padding
PASSES = ("auto", "native", "padded")  # the `exact_passes` setting


@dataclass(frozen=True)
class Exactness:
    """What the self-check found: identical logits up to `exact_width` tokens per pass."""

    exact: bool  # every checked width gave identical logits
    max_diff: float  # largest |batched - one-token| logit difference found
    widths: tuple[int, ...]  # pass widths compared against one-token passes
    exact_width: int  # every width up to this one was identical (1: none was)
    positions: int  # cached positions before the checked passes
    seconds: float  # time of the comparison passes (the prefill excluded)
    prefill_seconds: float  # time spent filling the cache to `positions`
    step_seconds: float = 0.0  # one one-token pass, as checked (median)
    split: int | None = None  # passes are fed in pieces of at most this many tokens
    cut_invariant: bool = True  # a prompt cut into other prefill passes gives the same logits
    aligned: int | None = None  # so prompts are cut every this many ids from 0
    padded: int | None = None  # every pass is padded to this many tokens
    native: Exactness | None = None  # the check of the passes as the kernels give them

    @property
    def step_cost(self) -> float | None:
        """A one-token step's time over the unpadded one's (padded passes only)."""
        if self.native is None or not self.native.step_seconds:
            return None
        return self.step_seconds / self.native.step_seconds

    def describe(self) -> str:
        widths = f"{self.widths[0]}-{self.widths[-1]}" if self.widths else "none"
        if self.exact:
            verdict = "exact: yes (batched logits bit-identical to one-token logits)"
        elif self.exact_width > 1:
            verdict = f"exact: only up to {self.exact_width} tokens per pass"
        else:
            verdict = "exact: no"
        split = f"; passes split into {self.split} tokens at most" if self.split else ""
        if self.padded and self.native is not None:
            split += (
                f"; every pass padded to {self.padded} tokens (as the kernels are: exact up to "
                f"{self.native.exact_width}; a one-token step costs {self.step_cost:.2f}x)"
            )
        if self.cut_invariant:
            cuts = "; prefill: any cuts give the same logits"
        else:
            cuts = "; prefill: the logits depend on how a prompt is cut"
            cuts += f", so it is cut every {self.aligned} ids" if self.aligned else ""
        return (
            f"{verdict}; max |diff| {self.max_diff:.3g} over widths {widths} "
            f"after {self.positions} positions ({self.seconds:.2f} s){split}{cuts}"
        )


def probe_ids(backend: Backend, n: int, seed: int = 0) -> list[int]:
    """`n` pseudo-random ids of ordinary tokens: any text will do, the kernels see only shapes."""
    table = backend.table
    special = backend.eos_ids | getattr(backend.tokenizer, "special_ids", frozenset())
    ordinary = np.array([i for i, piece in enumerate(table) if piece and i not in special])
    return np.random.default_rng(seed).choice(ordinary, size=n).tolist()


def check(
    backend: Backend,
    k: int = DEFAULT_DRAFT,
    ids: list[int] | None = None,
    positions: int = MIN_POSITIONS,
) -> Exactness:
    """Compare passes of 2..k+1 tokens with one-token passes after `positions` cached ids.

    `ids` (at least positions + k + 1 of them) lets a caller share the prefill with its own
    probe; the cache is left holding ids[:positions + 1].
    """
    width = k + 1
    ids = ids if ids is not None else probe_ids(backend, positions + width)
    if len(ids) < positions + width:
        raise ValueError(f"the check needs {positions + width} ids, got {len(ids)}")
    start = time.perf_counter()
    backend.sync(ids[: positions + 1])
    backend.rewind(1)
    prefill = time.perf_counter() - start
    start = time.perf_counter()
    fed = ids[positions : positions + width]
    one, steps = [], []
    for token in fed:
        began = time.perf_counter()
        one.append(backend.forward([token])[0])
        steps.append(time.perf_counter() - began)
    one = np.stack(one)
    backend.rewind(width)
    widths = tuple(range(2, width + 1))
    diffs = []
    for n in widths:
        batch = backend.forward(fed[:n])
        backend.rewind(n)
        diffs.append(float(np.abs(batch - one[:n]).max()))
    last = ids[positions - CUT_SPAN : positions]
    cut_invariant = _same_whatever_the_cuts(backend, last, fed[0])
    seconds = time.perf_counter() - start
    exact_width = 1
    for n, diff in zip(widths, diffs, strict=True):
        if diff != 0.0:
            break
        exact_width = n
    return Exactness(
        exact=exact_width == width,
        max_diff=max(diffs, default=0.0),
        widths=widths,
        exact_width=exact_width,
        positions=positions,
        seconds=seconds,
        prefill_seconds=prefill,
        step_seconds=float(np.median(steps)),
        cut_invariant=cut_invariant,
    )


def _same_whatever_the_cuts(backend: Backend, last: list[int], token: int) -> bool:
    """Whether `token` gets the same logits after `last` fed in one pass and in narrow pieces.

    `last` are the cache's last ids; it is left as it was, `token` added (fed the narrow way).
    """
    backend.rewind(len(last))
    backend.prefill_chunk(last)
    wide = backend.forward([token])[0]
    backend.rewind(len(last) + 1)
    at = 0
    for n in CUTS:
        backend.prefill_chunk(last[at : at + n])
        at += n
    return bool(np.array_equal(backend.forward([token])[0], wide))


def check_and_split(backend: Backend, k: int = DEFAULT_DRAFT, passes: str = "auto") -> Exactness:
    """`check`; pad passes where that is asked or pays; split what is still too wide; check again.

    Only a backend that can pad its passes (MLX: `pad_passes`) pads, and only one that can
    feed a pass in pieces (`split_passes`) splits. The last verdict is the one that counts:
    padding and splitting are measured, never assumed exact. Where a prompt's logits depend on
    its cuts, the backend's prompts are cut at fixed positions from now on (`align`).
    """
    found = check(backend, k)
    if passes not in PASSES:
        raise ValueError(f"exact_passes must be one of {', '.join(PASSES)}, not {passes!r}")
    pad = getattr(backend, "pad_passes", None)
    narrow = found.exact_width < min(WIDE_ENOUGH, k + 1)
    if pad is not None and (passes == "padded" or (passes == "auto" and narrow)):
        pad(PADDED_WIDTH)
        padded = replace(check(backend, k), padded=PADDED_WIDTH, native=found)
        if passes == "padded" or padded.exact_width > found.exact_width:
            found = padded
        else:
            pad(None)
    split = getattr(backend, "split_passes", None)
    if not found.exact and split is not None:
        split(found.exact_width)
        kept = {"padded": found.padded, "native": found.native}
        found = replace(check(backend, k), split=found.exact_width, **kept)
    return found if found.cut_invariant else replace(found, aligned=align(backend))


def align(backend: Backend) -> int:
    """Cut the backend's prompts at fixed positions (its own, or every ALIGNED_PASS ids)."""
    if not isinstance(backend.pace, threads.AlignedPace):
        backend.pace = threads.AlignedPace(ALIGNED_PASS)
    return backend.pace.size


@dataclass(frozen=True)
class Outlook:
    """Whether speculation will be exact here, said before any model loads (`doctor`)."""

    status: str  # "yes", "no" or "unknown" (measured only when the models load)
    detail: str
    fix: str | None = None  # one command that makes it exact

    def describe(self) -> str:
        fix = f"; to fix: {self.fix}" if self.fix else ""
        return f"{self.status}: {self.detail}{fix}"


UNKNOWN = Outlook("unknown", "measured when the models load (bielik-lsp doctor --load)")


def outlook_of(found: Exactness) -> Outlook:
    """What a measured check means for the writer: `auto` drafts only as wide as is exact.

    Passes exact for fewer than WIDE_ENOUGH tokens are a WARNING (`doctor` exits 1): drafts
    that short gain little, and the padded passes that would widen them were not exact here.
    """
    if found.exact or found.exact_width >= WIDE_ENOUGH:
        return Outlook("yes", found.describe())
    if found.exact_width > 1:
        return Outlook("yes", f"{found.describe()}; WARNING drafts are cut this short here")
    return Outlook("no", f"{found.describe()}; `auto` decodes plain (no speculation)")
