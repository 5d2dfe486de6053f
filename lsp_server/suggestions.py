"""What an inline answer is made of: the prompt, one engine run, the items cut from text, ranked.

Items: the model's own continuation, a lookup in the text, a sampled one. Shared by the
request path (inline.py) and the work done ahead of requests (background.py).

A document's prompt (context from elsewhere, the text after the cursor, up to 8000 characters
before it) is prefilled once and then reused from keystroke to keystroke. Until it is, a run
that would wait for it (500 ids take 3 s on one thread of a busy laptop) reads the short prompt
instead: the few lines before the cursor, in a cache of their own, while the whole prompt is
prefilled behind it (background.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from decoder.sampling import Sampling

from .completion import (
    Item,
    Prompt,
    align,
    avoid_repeat,
    build_prompt,
    cut,
    join_point,
    lookup,
    prompt_window,
    unit_end,
)
from .language_server import BielikServer
from .worker import Generated, Ticket

MAX_ITEMS = 3
NEAR_CHARS = 160  # the short prompt: 160-320 characters before the cursor, nothing else
SLOW_S = 0.15  # read the whole prompt unless that means this much more prefill than the short one
SAMPLED = Sampling(temperature=0.8, top_p=0.95)  # an alternative drawn on an explicit request


@dataclass
class Deadlines:
    """When a run may stop short (time.monotonic() values).

    None for a run prepared ahead until a request waits on it: background.await_prepared sets
    them then, while it runs.
    """

    show_at: float | None = None  # from then on, a whole word is enough
    part_at: float | None = None  # from then on, any text is (part of a word, as llama.vim shows)

    @classmethod
    def after(cls, arrived: float, wait_s: float) -> Deadlines:
        """A request's: a whole word `wait_s` after it arrived, anything twice as late."""
        return cls().start(arrived, wait_s)

    def start(self, arrived: float, wait_s: float) -> Deadlines:
        """Set in place as `after` would (a running prepared job reads them at its next token)."""
        self.show_at, self.part_at = arrived + wait_s, arrived + 2 * wait_s
        return self


def due(at: float | None, now: float) -> bool:
    """Whether a deadline is set and has passed."""
    return at is not None and now >= at


@dataclass(frozen=True)
class Job:
    """One engine run for a suggestion: what to continue, and how."""

    prompt: Prompt
    after: str  # the text after the cursor: the run stops where its output meets it
    drafter: str
    mode: str
    max_tokens: int
    times: Deadlines = field(default_factory=Deadlines)
    sampling: Sampling | None = None  # None: the settings'
    avoid: tuple[str, ...] = ()  # suggestions shown: the run's first token begins none of them
    near: Prompt | None = None  # the short prompt, while `prompt` is not prefilled yet


def context(ls: BielikServer, uri: str, before: str) -> tuple[str, ...]:
    """The ring's chunks for a prompt in `uri` (none when the ring is off)."""
    options = ls.config.server
    if not options.ring:
        return ()
    ls.ring.configure(options.ring_chunks, options.ring_chunk_chars)
    return ls.ring.chosen(uri, prompt_window(before, options.max_prompt_chars))


def prompt_for(ls: BielikServer, uri: str, before: str, after: str) -> Prompt:
    """The prompt for a cursor between `before` and `after` in `uri`."""
    options = ls.config.server
    return build_prompt(
        before,
        options.max_prompt_chars,
        after=after,
        suffix_chars=options.suffix_chars,
        extra=context(ls, uri, before),
    )


def near_prompt(before: str, prompt: Prompt) -> Prompt | None:
    """The short prompt for a cursor after `before` (None where it is the whole one)."""
    near = build_prompt(before, 2 * NEAR_CHARS, steps=2)  # its start moves every NEAR_CHARS
    if not near.text.strip() or near.dropped != prompt.dropped or near.text == prompt.text:
        return None
    return near


def near_key(uri: str) -> str:
    """The prefix cache of a document's short prompt."""
    return f"{uri}#near"


def job_for(ls: BielikServer, uri: str, before: str, after: str, **how) -> Job:
    """A job for a cursor between `before` and `after` (`how` overrides).

    The file's speculation, the inline token budget, the prompt and its short one.
    """
    doc = ls.documents.get(uri)
    mode, _, drafter, _ = ls.speculation(uri, doc.source if doc else "")
    prompt = prompt_for(ls, uri, before, after)
    fields = {
        "max_tokens": ls.config.server.inline_max_tokens,
        "near": near_prompt(before, prompt),
        **how,
    }
    return Job(prompt, after, drafter, mode, **fields)


def generate(ls: BielikServer, uri: str, job: Job, ticket: Ticket) -> Generated:
    """On the engine thread: one suggestion's worth of text, from the document's prefix cache."""
    key, prompt = choose(ls, uri, job, ticket)
    return ls.worker.generate(
        prompt.text,
        key=key,
        max_tokens=job.max_tokens,
        drafter=job.drafter,
        override=job.mode,
        ticket=ticket,
        enough=lambda text: enough(text, prompt, job.after, job.times.show_at, job.times.part_at),
        first_bytes=prompt.first_bytes,
        avoid=tuple((prompt.dropped + shown).encode("utf-8") for shown in job.avoid),
        sampling=job.sampling,
    )


def choose(ls: BielikServer, uri: str, job: Job, ticket: Ticket) -> tuple[str, Prompt]:
    """On the engine thread: (cache, prompt) for `job`; the whole prompt unless it makes one wait.

    The short one where the whole one needs more than SLOW_S of prefill beyond it, from the
    time prefill passes take now (a busy machine shortens the wait it accepts). Only the
    target's caches are looked at: the drafter's follow the choice.
    """
    if job.near is None or ticket.should_stop():
        return uri, job.prompt
    pipe = ls.worker.pipe
    whole = pipe.catch_up_s(job.prompt.text, uri)
    if whole <= SLOW_S:
        return uri, job.prompt
    if pipe.catch_up_s(job.near.text, near_key(uri)) + SLOW_S < whole:
        return near_key(uri), job.near
    return uri, job.prompt


def enough(
    text: str,
    prompt: Prompt,
    after: str = "",
    show_at: float | None = None,
    part_at: float | None = None,
) -> bool:
    """Whether a run has written enough.

    A whole sentence or line (or a glued word), text that meets what follows the cursor, a
    whole word once `show_at` has passed, anything once `part_at` has: the user sees a short
    suggestion soon rather than a long one late; the prepared follow-up brings the rest. A run
    writing a long word on a busy machine (24 tokens of an identifier take 0.5 s on one thread)
    shows its first part rather than nothing.
    """
    aligned = align(text, prompt)
    if aligned is None or unit_end(aligned) is not None:
        return True
    if after and join_point(aligned, after, partial=False) is not None:
        return True
    now = time.monotonic()
    if due(part_at, now) and aligned.strip():
        return True
    return due(show_at, now) and bool(cut(aligned, finished=False))


def item(text: str | None, after: str, kind: str, *, finished: bool) -> Item | None:
    """What to show of `text` (which continues the cursor); None when nothing is left.

    Up to where it runs into the first words of the text after the cursor, if it repeats none
    of it before and ends no sentence or line on the way; else cut at a unit, up to where its
    end joins that text, or before it would repeat any of it.
    """
    if text is None:
        return None
    at = join_point(text, after, partial=False)
    if (
        at is not None
        and unit_end(text[:at]) is None
        and avoid_repeat(text[:at], after) == text[:at].rstrip()
    ):
        return Item(text[:at], kind, joins=True) if text[:at].strip() else None
    shown = cut(text, finished=finished)
    at = join_point(shown, after)
    if at is not None:
        return Item(shown[:at], kind, joins=True) if shown[:at].strip() else None
    shown = avoid_repeat(shown, after)
    return Item(shown, kind) if shown.strip() else None


def from_result(result: Generated, job: Job, kind: str) -> list[Item]:
    """The items of a run: all of its text where it ended or ran past `part_at`."""
    finished = result.stop == "eos" or due(job.times.part_at, time.monotonic())
    found = item(align(result.text, job.prompt), job.after, kind, finished=finished)
    return [found] if found else []


def lookup_item(before: str, after: str, sources: tuple[str, ...]) -> list[Item]:
    """What followed the longest earlier match of the text at the cursor: free, no model run."""
    found = item(lookup(before, sources), after, "lookup", finished=False)
    return [found] if found else []


def ranked(items: list[Item]) -> list[Item]:
    """An item that joins the text after the cursor exactly first, then the order given.

    None twice, nor one that only repeats the start of an item before it; MAX_ITEMS at most.
    """
    out: list[Item] = []
    for candidate in sorted(items, key=lambda i: not i.joins):
        if adds_to(out, candidate):
            out.append(candidate)
    return out[:MAX_ITEMS]


def adds_to(items: list[Item], candidate: Item) -> bool:
    """Whether `candidate` would show something new beside `items` (not only an item's start)."""
    text = candidate.text.rstrip()
    return bool(text) and not any(o.text.rstrip().startswith(text) for o in items)
