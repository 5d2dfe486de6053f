"""Is the text around the cursor structured (lists, tables, legal enumerations, code) or prose?

Speculative decoding pays on the former, so the server asks this per request. Transparent
logistic scoring over layout and Morfeusz-based lexical signals; the weights were fitted on a
split of polish/data/devset.jsonl by scripts/eval_content.py --fit and are pasted here as
constants.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

from polish import morphology

BLOCK_CHARS = 1200  # how much of the cursor's block we look at
CONTEXT_CHARS = 1200  # how much text before the block we look at
BLOCK_WEIGHT = 0.7  # share of the block in the mixed signal (rest: preceding context)
MIN_BLOCK_CHARS = 200  # a shorter block is widened by the paragraphs before it


@dataclass(frozen=True)
class ContentType:
    label: str  # "structured" | "prose"
    confidence: float  # in [0.5, 1]
    signals: dict[str, float] = field(default_factory=dict)
    reason: str = ""


_MARKER = re.compile(
    r"^\s*(?:[-*•+▪◦]\s|\d{1,3}[a-z]?[.)]\s|[a-zA-Z][.)]\s|[IVXL]{1,5}\.\s|§\s*\d|Art\.\s*\d|"
    r"\[\*|\[li\]|#{1,6}\s|>\s|Rozdział\s|DZIAŁ\s|pkt\s*\d|ust\.\s*\d)"
)
_TABLE = re.compile(r"\|.*\|")
_KEYVAL = re.compile(r"^\s*[\w.\-/ ]{1,32}\s*(?::\s+\S|=\s*\S|:$)")
_CITATION = re.compile(
    r"\(\d{4}[a-z]?\)|\bs\.\s*\d|\bt\.\s*\d|\bred\.|ISBN|\bdoi\b|\bvol\.|\bnr\s*\d|\bpoz\.\s*\d"
)
_DATE = re.compile(r"\b\d{1,4}[-./]\d{1,2}[-./]\d{1,4}\b")
_CODE_CHARS = set("{}[]()<>=;_/\\`#$&|")
_SENT_END = re.compile(r"[.!?…:\"»”]\s*$")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_FINITE = ("fin", "praet", "bedzie", "impt", "imps", "winien")
_NAME_QUALS = {"imię", "nazwisko", "nazwa_geograficzna", "nazwa_organizacji"}

# Fitted by `scripts/eval_content.py --fit` on the train split (see that script).
FEATURES = (
    "markers",
    "table",
    "keyval",
    "short_lines",
    "prefix_repeat",
    "long_lines",
    "sentence_end",
    "digits",
    "dates",
    "citations",
    "code",
    "finite_verbs",
    "unknown",
    "names",
    "numerals",
)
WEIGHTS = {
    "markers": 7.651,
    "table": 1.118,
    "keyval": -0.022,
    "short_lines": 3.220,
    "prefix_repeat": 1.380,
    "long_lines": -1.737,
    "sentence_end": -3.105,
    "digits": -1.903,
    "dates": 0.116,
    "citations": -0.401,
    "code": 4.380,
    "finite_verbs": -1.759,
    "unknown": 1.329,
    "names": -0.606,
    "numerals": -0.020,
}
BIAS = 0.568
# Human names for the reason string.
_LABELS = {
    "markers": "list/article markers",
    "table": "table",
    "keyval": "key: value lines",
    "short_lines": "short lines",
    "prefix_repeat": "repeated line prefixes",
    "long_lines": "long paragraph lines",
    "sentence_end": "sentence-final lines",
    "digits": "digits",
    "dates": "dates",
    "citations": "citations",
    "code": "code punctuation",
    "finite_verbs": "finite verbs",
    "unknown": "unknown forms",
    "names": "proper names",
    "numerals": "numerals",
}


@lru_cache(maxsize=65536)
def _word_class(word: str) -> tuple[bool, bool, bool]:
    """(finite verb, unknown to SGJP, proper name) for one word form."""
    interps = morphology.analyse(word)
    tags = [i.pos for i in interps]
    finite = any(t in _FINITE for t in tags)
    unknown = all(t == "ign" for t in tags)
    name = word[:1].isupper() and any(_NAME_QUALS & set(i.names) for i in interps)
    return finite, unknown, name


def _lexical(text: str) -> dict[str, float]:
    words = _WORD.findall(text)
    numbers = re.findall(r"\d+", text)
    n = len(words) + len(numbers)
    if not words:
        return {
            "finite_verbs": 0.0,
            "unknown": 0.0,
            "names": 0.0,
            "numerals": 1.0 if numbers else 0.0,
        }
    classes = [_word_class(w) for w in words]
    return {
        "finite_verbs": min(1.0, 5 * sum(c[0] for c in classes) / n),
        "unknown": sum(c[1] for c in classes) / len(words),
        "names": sum(c[2] for c in classes) / len(words),
        "numerals": len(numbers) / n,
    }


def _layout(text: str) -> dict[str, float]:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return {k: 0.0 for k in FEATURES[:11]}
    n = len(lines)
    chars = max(1, len(text))
    prefixes = [line.strip()[:3] for line in lines]
    return {
        "markers": sum(bool(_MARKER.match(line)) for line in lines) / n,
        "table": sum(bool(_TABLE.search(line)) for line in lines) / n,
        "keyval": sum(bool(_KEYVAL.match(line)) for line in lines) / n,
        "short_lines": sum(len(line.strip()) < 60 for line in lines) / n,
        "prefix_repeat": sum(prefixes.count(p) > 1 for p in prefixes) / n if n > 2 else 0.0,
        "long_lines": sum(len(line) > 200 for line in lines) / n,
        "sentence_end": sum(bool(_SENT_END.search(line)) for line in lines) / n,
        "digits": min(1.0, 10 * sum(c.isdigit() for c in text) / chars),
        "dates": min(1.0, len(_DATE.findall(text)) / n),
        "citations": min(1.0, len(_CITATION.findall(text)) / n),
        "code": min(1.0, 10 * sum(c in _CODE_CHARS for c in text) / chars),
    }


def features(text: str) -> dict[str, float]:
    """All signals of one span, each roughly in [0, 1]."""
    return {**_layout(text), **_lexical(text)}


def _split(text: str, cursor: int) -> tuple[str, str]:
    """The cursor's block and the text before it.

    The block is the cursor's paragraph up to the end of the cursor line, widened by whole
    preceding paragraphs while it is too short to judge.
    """
    line_end = text.find("\n", cursor)
    line_end = len(text) if line_end < 0 else line_end
    start = _paragraph_start(text, cursor)
    while start > 0 and len(text[start:line_end].strip()) < MIN_BLOCK_CHARS:
        start = _paragraph_start(text, start - 2)
    block = text[start:line_end][-BLOCK_CHARS:]
    context = text[max(0, start - CONTEXT_CHARS) : start]
    return block, context


def _paragraph_start(text: str, pos: int) -> int:
    i = text.rfind("\n\n", 0, max(0, pos))
    return 0 if i < 0 else i + 2


def _score(sig: dict[str, float]) -> float:
    return BIAS + sum(WEIGHTS[k] * sig[k] for k in FEATURES)


def signals(text: str, cursor: int | None = None) -> dict[str, float] | None:
    """Signals at `cursor` (default: the end): the block's, blended with the preceding context's."""
    cursor = len(text) if cursor is None else max(0, min(cursor, len(text)))
    block, context = _split(text, cursor)
    if not block.strip():
        return None
    sig = features(block)
    if context.strip():
        ctx = features(context)
        sig = {k: BLOCK_WEIGHT * sig[k] + (1 - BLOCK_WEIGHT) * ctx[k] for k in FEATURES}
    return sig


def classify(text: str, cursor: int | None = None) -> ContentType:
    """Label the text at `cursor` (default: the end) as structured or prose."""
    sig = signals(text, cursor)
    if sig is None:
        return ContentType("prose", 0.5, {}, "prose (no text, 0.50)")
    z = _score(sig)
    p = 1.0 / (1.0 + math.exp(-z))
    label = "structured" if p >= 0.5 else "prose"
    confidence = max(p, 1 - p)
    sign = 1 if label == "structured" else -1
    top = max(FEATURES, key=lambda k: sign * WEIGHTS[k] * sig[k])
    rounded = {k: round(v, 3) for k, v in sig.items()}
    return ContentType(
        label, round(confidence, 3), rounded, f"{label} ({_LABELS[top]}, {confidence:.2f})"
    )
