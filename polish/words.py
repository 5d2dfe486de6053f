r"""The words of a document that are prose, and what is left alone.

A writer's document holds more than prose: code (fenced blocks, `inline spans`), URLs, e-mail
addresses, file paths, command options, environment variables, markup (HTML/XML tags and
entities, BBCode, LaTeX commands and math), Markdown link targets. Those spans are masked
before words are cut, so nothing in them is ever questioned. A word glued to a digit, an
underscore, a dot followed by a letter ("plik.conf") or a slash is an identifier, not a word.

`spans` also finds where checking is switched off and on by magic comments:
`<!-- bielik: spelling=off -->`, `% bielik: spelling=on`, `# bielik: spelling=off`, `//`, `;`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_MAGIC = re.compile(
    r"(?:<!--|%|#|//|;|\.\.)\s*bielik:\s*spelling\s*=\s*(on|off)\b[^\n]*", re.IGNORECASE
)
# Masked spans, most specific first; each alternative is one kind of non-prose.
_MASKS = [
    r"^[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*?^[ \t]*\1[ \t]*$",  # fenced code block
    r"^[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*\Z",  # a fence not closed (yet): to the end
    r"`[^`\n]+`",  # inline code
    r"\$\$[\s\S]+?\$\$|\\\[[\s\S]+?\\\]|\\\([\s\S]+?\\\)",  # display and inline math
    r"(?<![\w$\\])\$(?=\S)[^$\n]+?(?<=\S)\$(?!\w)",  # $x^2$
    r"\\begin\{[^}\n]*\}|\\end\{[^}\n]*\}",
    r"\\(?:label|ref|eqref|cite\w*|url|input|include\w*|usepackage|documentclass|"
    r"bibliography\w*|href)(?:\[[^\]\n]*\])?\{[^}\n]*\}",
    r"\\[A-Za-z@]+\*?",  # any other LaTeX command's name
    r"<!--[\s\S]*?-->",  # an HTML comment (a magic comment's text included)
    r"</?[A-Za-z][\w:.-]*(?:\s[^<>\n]*)?/?>",  # HTML/XML tag
    r"&#?\w+;",  # entity
    r"\[/?[a-zA-Z*][\w*]*(?:=[^\]\n]*)?\]",  # BBCode [b], [url=...], [/url], [*]
    r"\]\([^)\n]*\)",  # Markdown link target
    r"\b(?:[a-z][a-z0-9+.-]*://|www\.|mailto:)[^\s<>()\[\]{}\"'`]+",  # URL
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",  # e-mail
    r"(?<![\w/])(?:~|\.{1,2})?/[^\s()\[\]{}<>\"'`,;]+",  # /usr/bin, ~/x, ./run
    r"\b[A-Za-z]:\\[^\s\"'`]+",  # C:\Windows
    r"(?<![\w/-])--?[A-Za-z0-9][\w-]*(?:=[^\s]*)?",  # --option, -x, --key=value
    r"\$\{?\w+\}?|%\w+%",  # $HOME, ${VAR}, %PATH%
    r"\S+/\S+",  # anything with a slash inside: a path, a ratio, a MIME type
    r"[@#]\w+",  # @mentions and #tags
]
_MASK = re.compile("|".join(f"(?:{m})" for m in _MASKS), re.MULTILINE)
_WORD = re.compile(r"[^\W\d_]+(?:[-’'][^\W\d_]+)*")
# A word is an identifier when glued to these (before / after it).
_GLUED_BEFORE = set("0123456789_@$\\/.:=<>*+#")
_GLUED_AFTER = set("0123456789_@/\\(=<>*+")
# What comes between two words when the second starts a sentence: terminal punctuation, a
# blank line, or a new line that opens a list item or a heading (a wrapped line does not).
_SENTENCE_END = re.compile(r"[.!?…]['\"”»)\]]*\s*$|\n\s*\n\s*$|\n\s*(?:[-*•>#]+|\d+[.)])\s+$")


@dataclass(frozen=True)
class Word:
    start: int  # code point offsets in the text
    end: int
    text: str
    sentence_start: bool  # first word of a sentence, a line item or a heading


def switched_off(text: str) -> list[tuple[int, int]]:
    """Stretches where a magic comment switched checking off (until one switches it on)."""
    off: list[tuple[int, int]] = []
    start = None
    for m in _MAGIC.finditer(text):
        if m.group(1).lower() == "off" and start is None:
            start = m.start()
        elif m.group(1).lower() == "on" and start is not None:
            off.append((start, m.end()))
            start = None
    if start is not None:
        off.append((start, len(text)))
    return off


def is_switched_off(text: str) -> bool:
    """The whole text is off: its first magic comment says so and none turns it on again."""
    off = switched_off(text)
    return bool(off) and off[0][1] == len(text) and not text[: off[0][0]].strip()


def masked(text: str) -> list[tuple[int, int]]:
    """Spans that are not prose (code, URLs, markup...), and those switched off, in order."""
    spans = [(m.start(), m.end()) for m in _MASK.finditer(text)]
    spans += switched_off(text)
    return sorted(spans)


def prose_matches(pattern: re.Pattern, text: str) -> Iterator[tuple[re.Match, int]]:
    """Matches of `pattern` outside masked spans, each with where the text before it starts.

    That is the end of the match or masked span passed last: what lies between (spaces,
    punctuation, a sentence's end) tells how the two are joined.
    """
    spans, k, previous_end = masked(text), 0, 0
    for m in pattern.finditer(text):
        start, end = m.span()
        while k < len(spans) and spans[k][1] <= start:
            k += 1
        if k < len(spans) and spans[k][0] < end:
            previous_end = max(end, spans[k][1])
            continue
        yield m, previous_end
        previous_end = end


def words(text: str) -> Iterator[Word]:
    """The prose words of `text`, outside masked spans, with whether each starts a sentence."""
    for m, previous_end in prose_matches(_WORD, text):
        start, end = m.span()
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        dotted = after == "." and end + 1 < len(text) and text[end + 1].isalnum()
        if before in _GLUED_BEFORE or after in _GLUED_AFTER or dotted:
            continue
        between = text[previous_end:start]
        opening = previous_end == 0 and not between.strip()
        first = opening or bool(_SENTENCE_END.search(between))
        yield Word(start, end, m.group(), first)


_FENCE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[^\n]*\n[\s\S]*?^[ \t]*\1[ \t]*$|^[ \t]*(?:`{3,}|~{3,})[^\n]*\n[\s\S]*\Z",
    re.MULTILINE,
)
_BLANK_LINE = re.compile(r"\n[ \t]*(?:\r?\n[ \t]*)+")


MAX_PARAGRAPH = 2000  # characters: a longer paragraph is cut at a line or sentence end


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each paragraph: text between blank lines, a fenced code block whole.

    A paragraph is the unit the checker keeps results for: an edit re-checks only its own.
    One without blank lines for pages is cut near MAX_PARAGRAPH, so no unit is long.
    """
    out: list[tuple[int, int]] = []
    at = 0
    for fence in [*_FENCE.finditer(text), None]:
        stop = fence.start() if fence else len(text)
        for blank in _BLANK_LINE.finditer(text, at, stop):
            if blank.start() > at:
                out += _pieces(text, at, blank.start())
            at = blank.end()
        if stop > at:
            out += _pieces(text, at, stop)
        if fence:
            out.append(fence.span())
            at = fence.end()
    return out


def _pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) cut after a line break or a sentence's end every MAX_PARAGRAPH or so."""
    out = []
    while end - start > MAX_PARAGRAPH:
        window = text[start + MAX_PARAGRAPH // 2 : start + MAX_PARAGRAPH]
        cut = max(window.rfind("\n"), window.rfind(". "))
        cut = start + MAX_PARAGRAPH // 2 + cut + 1 if cut >= 0 else start + MAX_PARAGRAPH
        while cut < end and not text[cut - 1].isspace() and text[cut - 1] != "\n":
            cut += 1  # never inside a word
        out.append((start, cut))
        start = cut
    return [*out, (start, end)]
