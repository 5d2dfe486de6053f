"""Inline completion text logic: the prompt window, cutting a suggestion, the suggestion cache.

Pure string functions (no model): the worker feeds generated text in, these decide what the
user sees. A suggestion ends at a sensible unit (sentence, clause, line, at least a whole word)
and never repeats the text that already follows the cursor.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, replace

from polish.sentences import first_sentence_end

_CLAUSE_END = re.compile(r"[,;:]\s|\s[–—-]\s")


@dataclass(frozen=True)
class Prompt:
    text: str  # what the model continues: context from elsewhere, then the text before the cursor
    dropped: str = ""  # trailing spaces removed from it: the suggestion must begin with them

    @property
    def first_bytes(self) -> bytes:
        """What the engine's first token must begin with (token healing)."""
        return self.dropped.encode("utf-8")


def prompt_window(before: str, max_chars: int, steps: int = 4) -> str:
    """The context nearest the cursor, at most `max_chars`, starting at a line or word start.

    The start moves in steps of 1/`steps` of the window, so while the user types the prompt
    keeps the same beginning and the model's prefix cache is reused from one keystroke to the
    next.
    """
    if len(before) <= max_chars:
        return before
    step = max(1, max_chars // steps)
    start = ((len(before) - max_chars) // step + 1) * step
    newline = before.find("\n", start, start + step)
    if newline >= 0:
        return before[newline + 1 :]
    space = before.find(" ", start, start + step)
    return before[space + 1 :] if space >= 0 else before[start:]


def following(after: str, max_chars: int) -> str:
    """The text after the cursor that the model sees, `max_chars` at most.

    Whole lines where it has to be cut (else whole words); empty when there is none.
    """
    if max_chars <= 0 or not after.strip():
        return ""
    if len(after) > max_chars:
        head = after[:max_chars]
        line_end = head.rfind("\n")
        if head[: max(line_end, 0)].strip():
            after = head[:line_end]
        else:
            after = head[: head.rfind(" ")] if " " in head else head
    return after.strip()


def build_prompt(
    before: str,
    max_chars: int,
    *,
    after: str = "",
    suffix_chars: int = 0,
    extra: tuple = (),
    steps: int = 4,
) -> Prompt:
    """The prompt for a cursor after `before`, without trailing spaces.

    Context goes first, least likely to change first, so the model's prefix cache keeps
    hitting: the `extra` chunks (from elsewhere), then the text after the cursor (what the
    suggestion must lead into; Bielik has no fill-in-the-middle tokens), then the window before
    the cursor. Tokenizers glue a space to the next word, so a prompt ending in a space reads as
    an odd token; the engine's first token begins with it instead.
    """
    window = prompt_window(before, max_chars, steps)
    stripped = window.rstrip(" \t")
    context = [c for c in (*extra, following(after, suffix_chars)) if c]
    head = "".join(f"{c}\n\n" for c in context)
    return Prompt(head + stripped, window[len(stripped) :] if stripped else "")


def align(generated: str, prompt: Prompt) -> str | None:
    """Generated text as it continues the user's text (undo the dropped trailing spaces).

    None when the model went on with the previous word although the user already typed a space.
    """
    if not prompt.dropped or generated.startswith(prompt.dropped):
        return generated[len(prompt.dropped) :]
    if not generated or not generated[0].isspace():
        return None if generated else ""
    return generated[1:] if generated[0] == " " else generated


def unit_end(text: str) -> int | None:
    """Where the first complete sentence or line of `text` ends, if it has one yet."""
    content = len(text) - len(text.lstrip())
    newline = text.find("\n", content)
    limit = newline if newline >= 0 and text[content:newline].strip() else len(text)
    end = first_sentence_end(text, content, limit)
    if end is not None:
        return end
    return limit if limit < len(text) else None


def cut(text: str, *, finished: bool) -> str:
    """The part of `text` worth showing.

    Up to the end of its first sentence or line; if it has none, up to the last clause end or
    whole word (all of it when the model `finished`).
    """
    end = unit_end(text)
    if end is not None:
        return text[:end].rstrip()
    if finished:
        return text.rstrip()
    clauses = [m.start() + 1 for m in _CLAUSE_END.finditer(text) if text[: m.start()].strip()]
    # A clause end is good enough once it holds a few words; else the last whole word.
    if clauses and len(text[: clauses[-1]].split()) >= 3:
        return text[: clauses[-1]].rstrip()
    words = re.match(r"^(.*\S)\s", text, re.DOTALL)
    return words.group(1) if words else ""


def lines_ahead(after: str, n: int = 3) -> list[str]:
    """The first `n` non-blank lines after the cursor (the rest of its line first), stripped."""
    return [line.strip() for line in after.split("\n") if line.strip()][:n]


def avoid_repeat(suggestion: str, after: str) -> str:
    """`suggestion` without whatever would repeat the text following the cursor.

    The suggestion stops before the first word from which it spells the start of one of the
    next lines (the rest of the cursor's line, else the next one, and two more), or from which
    it is the start of the nearest of them; all of it may go.
    """
    ahead = lines_ahead(after)
    if not ahead:
        return suggestion
    probes = [rest[: max(8, len(rest.split(" ", 1)[0]))] for rest in ahead]
    nearest = ahead[0]
    starts = [0, *(m.end() for m in re.finditer(r"\s+", suggestion))]
    for i in starts:
        tail = suggestion[i:].strip()
        if tail and (
            any(tail.startswith(p) for p in probes)
            or (len(tail) >= min(4, len(nearest)) and nearest.startswith(tail))
        ):
            return suggestion[:i].rstrip()
    return suggestion


def _join_head(after: str) -> str:
    """The start of `after` a suggestion must spell to join it.

    Its leading whitespace, and words of its first line up to 8 characters or more (all of that
    line if shorter).
    """
    body = after.lstrip()
    line = body.split("\n", 1)[0].rstrip()
    end = next((m.end() for m in re.finditer(r"\S+", line) if m.end() >= 8), len(line))
    return after[: len(after) - len(body) + end]


def join_point(text: str, after: str, *, partial: bool = True) -> int | None:
    """Where `text` runs exactly into the text after the cursor, if it does.

    The index from which it spells the start of `after` (whitespace included): all of its
    first words, or (`partial`), at its very end, a start of them of 4 characters or more.
    Never inside a word: the join is at a word boundary where `after` begins with a letter or
    digit.
    """
    head = _join_head(after)
    if not head.strip():
        return None
    for at in range(len(text)):
        if at and head[0].isalnum() and text[at - 1].isalnum():
            continue
        rest = text[at:]
        if rest.startswith(head) or (partial and len(rest.strip()) >= 4 and head.startswith(rest)):
            return at
    return None


def lookup(before: str, sources: tuple[str, ...] = (), min_chars: int = 12) -> str:
    """What followed the longest earlier occurrence of the text before the cursor.

    Matched from a word start, at least `min_chars` and at most 16 words long; the most recent
    occurrence in the document wins, then one in `sources` (context from elsewhere). A
    suggestion that costs no model run; "" when nothing matches.
    """
    found, end = "", len(before) - min_chars
    for _ in range(16):
        while end > 0 and not before[end - 1].isspace():
            end -= 1
        if end < 0 or not before[end:].strip():
            break
        key = before[end:]
        at = before.rfind(key, 0, len(before) - 1)
        if at >= 0:
            found = before[at + len(key) : at + len(key) + 240]
        elif hit := next((s for s in sources if key in s), None):
            at = hit.rfind(key) + len(key)
            found = hit[at : at + 240]
        else:
            break
        end -= 1
    return found


@dataclass(frozen=True)
class Item:
    """One suggestion of an answer, and where it came from (for cycling and the statistics)."""

    text: str
    kind: str  # model (the target's own continuation) | lookup | sampled
    joins: bool = False  # it ends exactly where the text after the cursor begins


class SuggestionCache:
    """Recent suggestions keyed by the text around the cursor.

    The items shown after text B stay valid while the user types one's first letters: a
    request at B + S[:n] gets S[n:] back (and the rest of every other item that begins so)
    without a model run. Bounded (LRU).
    """

    def __init__(self, size: int = 64, key_chars: int = 256):
        self.size, self.key_chars = size, key_chars
        self._entries: OrderedDict[tuple[str, str, str], tuple[Item, ...]] = OrderedDict()

    def put(self, uri: str, before: str, after: str, items: list[Item]) -> None:
        if not items:
            return
        key = (uri, before[-self.key_chars :], after[: self.key_chars])
        self._entries[key] = tuple(items)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def get(self, uri: str, before: str, after: str) -> list[Item]:
        """The rest of the cached items the user is typing through, if any."""
        head = after[: self.key_chars]
        for (u, tail, a), items in reversed(self._entries.items()):
            if u != uri or a != head:
                continue
            whole = len(tail) < self.key_chars  # the key holds all the text before the cursor
            rests = [r for item in items if (r := self._rest(item, tail, before, whole))]
            if rests:
                return rests
        return []

    @staticmethod
    def _rest(item: Item, tail: str, before: str, whole: bool) -> Item | None:
        for n in range(len(item.text)):
            key = tail + item.text[:n]
            if before.endswith(key) and (not whole or len(before) == len(key)):
                rest = item.text[n:]
                return replace(item, text=rest) if rest.strip() else None
        return None

    def clear(self) -> None:
        self._entries.clear()
