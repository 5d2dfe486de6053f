"""Inline completion text logic: the prompt window, cutting a suggestion, the suggestion cache.

Pure string functions (no model): the worker feeds generated text in, these decide what the
user sees. A suggestion ends at a sensible unit (sentence, clause, line, at least a whole word)
and never repeats the text that already follows the cursor.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass

# Words after which a period does not end a sentence (common Polish abbreviations).
_ABBREVIATIONS = frozenset(
    "np m.in tj itd itp ok r w ul al prof dr mgr inż hab tzw tzn wg godz str nr zob por cd ds "
    "św gen płk mjr kpt ppor por sp z.o.o pkt ust art".split()
)
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”»)]*(?=\s)")
_CLAUSE_END = re.compile(r"[,;:]\s|\s[–—-]\s")


@dataclass(frozen=True)
class Prompt:
    text: str  # what the model continues
    dropped_space: bool  # trailing spaces were removed (the suggestion must start a new word)


def prompt_window(before: str, max_chars: int) -> str:
    """The context nearest the cursor, at most `max_chars`, starting at a line or word start.

    The start moves in steps of a quarter window, so while the user types the prompt keeps the
    same beginning and the model's prefix cache is reused from one keystroke to the next.
    """
    if len(before) <= max_chars:
        return before
    step = max(1, max_chars // 4)
    start = ((len(before) - max_chars) // step + 1) * step
    newline = before.find("\n", start, start + step)
    if newline >= 0:
        return before[newline + 1 :]
    space = before.find(" ", start, start + step)
    return before[space + 1 :] if space >= 0 else before[start:]


def build_prompt(before: str, max_chars: int) -> Prompt:
    """The prompt for a cursor after `before`; trailing spaces go (tokenizers glue a space to
    the next word, so a prompt ending in a space reads as an odd token).
    """
    window = prompt_window(before, max_chars)
    stripped = window.rstrip(" \t")
    return Prompt(stripped, dropped_space=len(stripped) < len(window) and bool(stripped))


def align(generated: str, prompt: Prompt) -> str | None:
    """Generated text as it continues the user's text (undo the dropped trailing space).

    None when the model went on with the previous word although the user already typed a space.
    """
    if not prompt.dropped_space:
        return generated
    if not generated or not generated[0].isspace():
        return None if generated else ""
    return generated[1:] if generated[0] == " " else generated


def _is_sentence_end(text: str, end: int) -> bool:
    """Whether the punctuation just before `end` ends a sentence (not an abbreviation or ordinal)."""
    head = text[:end].rstrip("\"'”»)")
    if not head.endswith("."):
        return True
    word = re.split(r"\s", head[:-1])[-1].lower()
    return not (word in _ABBREVIATIONS or word.isdigit() or len(word) == 1)


def unit_end(text: str) -> int | None:
    """Where the first complete sentence or line of `text` ends, if it has one yet."""
    content = len(text) - len(text.lstrip())
    newline = text.find("\n", content)
    limit = newline if newline >= 0 and text[content:newline].strip() else len(text)
    for m in _SENTENCE_END.finditer(text, content, limit + 1 if limit < len(text) else limit):
        if m.end() <= limit and _is_sentence_end(text, m.end()):
            return m.end()
    return limit if limit < len(text) else None


def cut(text: str, *, finished: bool) -> str:
    """The part of `text` worth showing: up to the end of its first sentence or line; if it has
    none, up to the last clause end or whole word (all of it when the model `finished`).
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


def avoid_repeat(suggestion: str, after: str) -> str:
    """`suggestion` without whatever would repeat the text following the cursor.

    The suggestion stops before the first word from which it spells what already follows on
    the cursor's line (the whole line's rest, or its start); all of it may go.
    """
    rest = after.split("\n", 1)[0].strip()
    if not rest:
        return suggestion
    probe = rest[: max(8, len(rest.split(" ", 1)[0]))]
    starts = [0, *(m.end() for m in re.finditer(r"\s+", suggestion))]
    for i in starts:
        tail = suggestion[i:].strip()
        if tail and (
            tail.startswith(probe) or (len(tail) >= min(4, len(rest)) and rest.startswith(tail))
        ):
            return suggestion[:i].rstrip()
    return suggestion


class SuggestionCache:
    """Recent suggestions keyed by the text around the cursor.

    A suggestion S shown after text B stays valid while the user types S's first letters:
    a request at B + S[:n] gets S[n:] back without a model run. Bounded (LRU).
    """

    def __init__(self, size: int = 64, key_chars: int = 256):
        self.size, self.key_chars = size, key_chars
        self._entries: OrderedDict[tuple[str, str, str], str] = OrderedDict()

    def put(self, uri: str, before: str, after: str, suggestion: str) -> None:
        if not suggestion:
            return
        key = (uri, before[-self.key_chars :], after[: self.key_chars])
        self._entries[key] = suggestion
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def get(self, uri: str, before: str, after: str) -> str | None:
        """The rest of a cached suggestion the user is typing through, if any."""
        head = after[: self.key_chars]
        for (u, tail, a), suggestion in reversed(self._entries.items()):
            if u != uri or a != head:
                continue
            whole = len(tail) < self.key_chars  # the key holds all the text before the cursor
            for n in range(len(suggestion)):
                key = tail + suggestion[:n]
                if before.endswith(key) and (not whole or len(before) == len(key)):
                    rest = suggestion[n:]
                    return rest if rest.strip() else None
        return None

    def clear(self) -> None:
        self._entries.clear()
