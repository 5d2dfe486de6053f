"""Where Polish text may be cut without the next characters continuing the last word.

The draft translator keeps the last target token of a draft only when the draft
ends at a point that the true continuation cannot extend. Two levels are served:

* word level (is_complete_word, can_extend, safe_to_cut): could the characters
  that follow still belong to the same word (clitics "-ś", "-by", inflection,
  an abbreviation's dot, more digits, a hyphenated compound)?
* token level (merge_risk): could a tokenizer piece span a given boundary?

Everything errs towards "may extend": a false "may extend" costs one dropped draft
token, a false "cannot extend" costs a rejected draft. Unknown words, foreign
text, symbols and emoji therefore always "may extend". The word-level checks
NFC-normalise their input; merge_risk answers the same for NFC and NFD.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from polish import morphology as morph

# Clitics and particles written together with the preceding word; "my"/"cie" turn a
# final agglutinate "ś" into "śmy"/"ście" ("gdzieś" -> "gdzieśmy").
_CLITICS = ("ś", "m", "em", "eś", "śmy", "ście", "my", "cie", "by", "że", "ż", "li")
# One more vowel turns many full forms into other words ("tak" -> "taki").
_VOWELS = ("a", "e", "i", "o", "u", "y", "ą", "ę")
# Words this short are prefixes of countless longer words; not worth a look-up.
_SHORT = 3
# Final classes that always take something more: aglt/"by" after an l-participle,
# a hyphenated second part after adja ("biało-"), digits/suffixes after roman numerals.
_EXTENDING_POS = frozenset({"praet", "adja", "romandig"})
# Opening punctuation that may precede a word inside its whitespace-delimited chunk.
_OPENING = "([{„«‚‹\"'“‘"
# Punctuation after which a word is over ("." "," ":" are decided separately:
# after a digit or in an abbreviation they may go on).
_WORD_END = frozenset(';!?)]}»›”"…')
_HYPHENS = "-\u2010\u2011"
_TRAILING_LETTERS = re.compile(r"[^\W\d_]+$")


def trailing_fragment(text: str) -> str:
    """The last whitespace-delimited chunk of `text` (NFC), minus opening punctuation.

    Empty when `text` is empty or ends with whitespace. Only the last chunk is
    normalised, so the cost does not grow with the length of `text`.
    """
    if not text or text[-1].isspace():
        return ""
    return morph.nfc(text.rsplit(maxsplit=1)[-1]).lstrip(_OPENING)


def _tail(fragment: str) -> str:
    """The run of letters the fragment ends with ("czerwony" in "biało-czerwony")."""
    match = _TRAILING_LETTERS.search(fragment)
    return match.group() if match else ""


def is_complete_word(fragment: str) -> bool:
    """The last word of `fragment` is a full Polish word form the text could end with.

    A dot counts only as part of an abbreviation ("np." True, "np" False, "kot."
    False: the word there is "kot"). Numbers ("2024"), hyphen-compound starts
    ("biało-"), unknown and foreign words are not complete. "zrobi" is complete:
    whether it can still grow is can_extend's question.
    """
    return _is_complete(trailing_fragment(fragment))


@lru_cache(maxsize=1 << 16)
def _is_complete(frag: str) -> bool:
    if not frag:
        return False
    if frag[-1] == ".":
        return morph.ends_with_abbreviation_dot(frag)
    if not frag[-1].isalpha():
        return False
    if morph.takes_abbreviation_dot(frag) and not morph.is_known(frag):
        return False
    tail = _tail(frag)
    head = frag[: len(frag) - len(tail)]
    if head and head[-1] not in _HYPHENS and not morph.is_known(frag):
        return False
    return morph.is_known(tail)


def can_extend(fragment: str) -> bool:
    """Characters written without a space may still continue the last word of `fragment`.

    True for clitics/suffixes ("zrobił" -> "zrobiłby"), longer inflected forms
    ("dom" -> "domu"), a pending abbreviation dot ("np", "ul", "m.in"), numbers
    ("2024" -> "2024r.", "3," -> "3,14"), single letters with a dot ("m." -> "m.in."),
    hyphens, apostrophes, symbols, emoji, unknown words and words of at most three
    letters. False once whitespace or word-ending punctuation closes the word.
    """
    if not fragment or fragment[-1].isspace():
        return False
    return _can_extend(trailing_fragment(fragment))


@lru_cache(maxsize=1 << 16)
def _can_extend(frag: str) -> bool:
    if not frag:
        return True
    last = frag[-1]
    if last.isdigit():
        return True
    if last == ".":
        return _dot_can_extend(frag)
    if last in ",:":
        return len(frag) > 1 and frag[-2].isdigit()
    if last in _WORD_END:
        return False
    if not last.isalpha():
        return True
    if morph.takes_abbreviation_dot(frag):
        return True
    return _word_can_extend(_tail(frag))


def _dot_can_extend(frag: str) -> bool:
    """After a dot: decimals and multi-dot abbreviations may go on ("3." "m." "p.n.").

    A lone letter with a dot ("m.", "J.") may start "m.in." even where Morfeusz also
    knows it as a finished abbreviation ("m." = miasto).
    """
    body = frag[:-1]
    if not body:
        return False
    if body[-1].isdigit() or (len(body) == 1 and body.isalpha()):
        return True
    if morph.ends_with_abbreviation_dot(frag):
        return False
    return body[-1].isalpha() and not body[-2].isalpha()


@lru_cache(maxsize=1 << 16)
def _word_can_extend(word: str) -> bool:
    """Morphology check for a run of letters (NFC); cached because it costs many look-ups."""
    if len(word) <= _SHORT or not morph.is_known(word):
        return True
    if morph.final_pos(word) & _EXTENDING_POS:
        return True
    base = word.lower() if word.isupper() else word
    if any(morph.is_known(base + clitic) for clitic in _CLITICS):
        return True
    if morph.has_longer_form(word):
        return True
    return any(morph.is_known(base + vowel) for vowel in _VOWELS)


def safe_to_cut(text: str) -> bool:
    """No character written without a space can continue the last word of `text`.

    True for empty text, trailing whitespace, word-ending punctuation that is not
    a decimal/abbreviation dot ("Dom." "np." "itd." "tak,"), and complete words
    that cannot extend ("Łódź"). Word level only: with a SentencePiece tokenizer a
    trailing space is still absorbed by the next word's piece ("▁pies"); use
    merge_risk for token boundaries.
    """
    if not text or text[-1].isspace():
        return True
    frag = trailing_fragment(text)
    if _can_extend(frag):
        return False
    return not frag[-1].isalpha() or _is_complete(frag)


def _char_class(char: str) -> str:
    """'L' letters and marks, 'N' digits, 'S' whitespace, 'P' punctuation/symbols/other."""
    if char.isspace():
        return "S"
    category = unicodedata.category(char)[0]
    return {"L": "L", "M": "L", "N": "N"}.get(category, "P")


# Characters that always attach to what precedes them: zero-width (non-)joiner,
# variation selectors, emoji skin-tone modifiers.
_ATTACHING = re.compile("[\u200c\u200d\ufe00-\ufe0f\U0001f3fb-\U0001f3ff]")


def merge_risk(left: str, right: str) -> bool:
    r"""A tokenizer piece may span the boundary between `left` and `right`.

    Model: SentencePiece as Mistral/Llama use it: whitespace becomes "▁" at the
    start of the next piece, and no piece mixes Unicode scripts (letters vs
    punctuation) or digits with other characters. Under it, False guarantees that
    no piece contains both left[-1] and right[0], so tokenizing left + right splits
    at the boundary. True when:
      left ends with whitespace ("▁" joins the next piece; "\\n\\n", "  " merge),
      both sides are letters, both digits, or letter and digit (word level),
      both are punctuation/symbols ("..", "?!", ")."),
      right starts with a combining mark, ZWJ/ZWNJ, variation selector or skin-tone
      modifier, or left ends with ZWJ.
    False for letter or digit against punctuation, for right starting with
    whitespace after non-whitespace, and for an empty side. Marks count as letters,
    so NFC and NFD input give the same answer.
    """
    if not left or not right:
        return False
    a, b = left[-1], right[0]
    if _ATTACHING.match(b) or unicodedata.category(b).startswith("M") or a == "\u200d":
        return True
    ca, cb = _char_class(a), _char_class(b)
    if ca == "S":
        return True
    if cb == "S":
        return False
    return ca == cb or {ca, cb} == {"L", "N"}
