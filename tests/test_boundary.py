"""Word-boundary checks on real Polish text, against the real Morfeusz 2 SGJP dictionary."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polish import morphology as morph
from polish.boundary import can_extend, is_complete_word, merge_risk, safe_to_cut, trailing_fragment


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


# --- morphology wrapper ---------------------------------------------------------------


def test_analyse_splits_clitics_off_l_participle() -> None:
    interps = morph.analyse("zrobiłbyś")
    assert [(i.orth, i.pos) for i in interps] == [
        ("zrobił", "praet"),
        ("by", "part"),
        ("ś", "aglt"),
    ]
    assert interps[0].lemma == "zrobić"


def test_analyse_is_cached_and_normalises_nfd() -> None:
    assert morph.analyse(nfd("Łódź")) is morph.analyse("Łódź")
    assert "subst:sg:nom:f" in morph.tags("Łódź")


def test_known_words_and_unknown_ones() -> None:
    assert morph.is_known("źdźbło") and morph.is_known("zrobiłem") and morph.is_known("XX")
    assert not morph.is_known("np") and not morph.is_known("hello") and not morph.is_known("m.in")
    assert not morph.is_known("zrobiłbyśmy")  # singular participle with plural agglutinate


def test_final_pos_and_abbreviation_dots() -> None:
    assert morph.final_pos("zrobiłem") == {"aglt"}
    assert "praet" in morph.final_pos("zrobił")
    assert morph.takes_abbreviation_dot("np") and morph.takes_abbreviation_dot("m.in")
    assert morph.takes_abbreviation_dot("2024r") and not morph.takes_abbreviation_dot("kot")
    assert morph.ends_with_abbreviation_dot("tzw.") and not morph.ends_with_abbreviation_dot(
        "kotem."
    )


def test_has_longer_form_uses_the_lemma_paradigm() -> None:
    assert morph.has_longer_form("dom")  # domu, domem
    assert morph.has_longer_form("Żółć")  # żółci: case-insensitive
    assert not morph.has_longer_form("domu")


# --- clitics ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "word",
    ["zrobił", "zrobiłby", "zrobili", "miała", "gdzie", "Gdzieś", "czyż", "jednak", "ZROBIŁ"],
)
def test_hosts_of_clitics_can_extend(word: str) -> None:
    assert is_complete_word(word)
    assert can_extend(word)  # zrobiłbyś, zrobiliśmy, miałabym, gdzieś, gdzieśmy, czyżby, jednakże
    assert not safe_to_cut(f"Wczoraj {word}")


@pytest.mark.parametrize(
    "word", ["zrobiłbyś", "zrobiłbym", "zrobiłeś", "zrobiłaś", "zrobiliśmy", "miałabym", "ZROBIŁEM"]
)
def test_words_with_clitics_attached_are_complete(word: str) -> None:
    assert is_complete_word(word)
    assert not can_extend(word)
    assert safe_to_cut(f"Czy {word}")


def test_clitic_forms_are_complete_words() -> None:
    assert is_complete_word("miałam") and is_complete_word("czyż") and is_complete_word("zrobi")


# --- diacritics and normalisation -------------------------------------------------------


@pytest.mark.parametrize("word", ["źdźbło", "gęślą", "żółć", "Łódź", "ŁÓDŹ", "źdźbłem"])
def test_diacritic_words_are_complete_in_nfc_and_nfd(word: str) -> None:
    assert is_complete_word(word) and is_complete_word(nfd(word))
    assert can_extend(word) == can_extend(nfd(word))
    assert safe_to_cut(word) == safe_to_cut(nfd(word))


def test_diacritic_words_extend_by_inflection_or_not() -> None:
    assert can_extend("źdźbło") and can_extend("żółć")  # źdźbłom, żółci
    assert safe_to_cut("Jadę do Łódź") and safe_to_cut(nfd("Mieszkam w Łódź"))
    assert safe_to_cut("jedno źdźbłem")


def test_unnormalised_prefix_of_a_diacritic_is_not_safe() -> None:
    assert not safe_to_cut("źdźbł")  # not a word
    assert merge_risk("ze", "\u0328")  # combining ogonek turns "e" into "ę"


# --- abbreviations ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "abbr", ["m.in.", "np.", "tzw.", "itd.", "ul.", "prof.", "p.n.e.", "2024r."]
)
def test_dotted_abbreviations_are_complete_and_safe(abbr: str) -> None:
    assert is_complete_word(abbr)
    assert not can_extend(abbr)
    assert safe_to_cut(f"Było to {abbr}")


@pytest.mark.parametrize("stem", ["m.in", "np", "tzw", "itd", "prof", "2024r"])
def test_abbreviations_missing_their_dot_are_incomplete(stem: str) -> None:
    assert not is_complete_word(stem)
    assert can_extend(stem)
    assert not safe_to_cut(f"Było to {stem}")


def test_abbreviations_that_are_also_words() -> None:
    assert is_complete_word("ul") and can_extend("ul")  # "ul" (beehive) or "ul." (street)
    assert is_complete_word("dr") and can_extend("dr")


def test_single_letter_with_dot_may_start_a_longer_abbreviation() -> None:
    assert can_extend("m.") and not safe_to_cut("w tym m.")  # m.in.
    assert can_extend("p.n.") and not safe_to_cut("p.n.")  # p.n.e.


# --- numerals ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["2024", "w roku 2024", "3,", "3,14", "3.", "12:30", "XX", "XX-"])
def test_numbers_can_take_more(text: str) -> None:
    assert can_extend(text)
    assert not safe_to_cut(text)


def test_numbers_are_not_complete_words() -> None:
    assert not is_complete_word("2024") and not is_complete_word("3,14")


@pytest.mark.parametrize("word", ["5-ty", "XX-wieczny", "2024r."])
def test_numbers_with_suffixes_are_complete(word: str) -> None:
    assert is_complete_word(word)


# --- hyphenated compounds ---------------------------------------------------------------


def test_hyphen_compounds() -> None:
    assert not is_complete_word("biało-") and can_extend("biało-")
    assert is_complete_word("biało") and can_extend("biało")  # adja: biało-czerwony
    assert is_complete_word("biało-czerwony") and is_complete_word("Polsko-niemiecki")
    assert not safe_to_cut("flaga biało")


# --- complete words that can or cannot extend -------------------------------------------


@pytest.mark.parametrize("word", ["dom", "kot", "który", "zrobi", "niebieski"])
def test_complete_words_with_longer_forms(word: str) -> None:
    assert is_complete_word(word) and can_extend(word)  # domu, kota, którym, zrobię, niebieskim
    assert not safe_to_cut(word)


@pytest.mark.parametrize("word", ["domu", "kotem", "bardzo", "dlatego", "wtedy", "polskiego"])
def test_complete_words_that_cannot_extend(word: str) -> None:
    assert is_complete_word(word) and not can_extend(word)
    assert safe_to_cut(f"To {word}")
    assert safe_to_cut(f"To {word.capitalize()}")


def test_short_words_always_may_extend() -> None:
    assert all(can_extend(w) for w in ["i", "w", "do", "nie", "się"])


# --- punctuation, unknown words, emoji --------------------------------------------------


@pytest.mark.parametrize(
    "text", ["Dom.", "tak,", "Naprawdę?!", "koniec…", "(Łódź)", "„Łódź”", "To wszystko...", ""]
)
def test_word_ending_punctuation_is_safe(text: str) -> None:
    assert safe_to_cut(text)


@pytest.mark.parametrize("text", ["hello", "xyzq", "😀", "Kennedy'ego", "kot-", "km/", "(", "„"])
def test_unknown_words_symbols_and_joiners_may_extend(text: str) -> None:
    assert can_extend(text)
    assert not safe_to_cut(text)


def test_trailing_fragment() -> None:
    assert trailing_fragment("Pojechał do „Łodzi") == "Łodzi"
    assert trailing_fragment(nfd("w Łódź")) == "Łódź"
    assert trailing_fragment("kot ") == ""


# --- token-level merge risk -------------------------------------------------------------


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("zrobił", "by"),
        ("kot ", "pies"),
        ("\n", "\n"),
        (".", ".."),
        ("?", "!"),
        ("2024", "5"),
        ("2024", "r."),
        ("XX", "1"),
        ("👍", "\U0001f3fd"),
        ("e", "\u0328"),
        ("\u200d", "x"),
    ],
)
def test_merge_risk(left: str, right: str) -> None:
    assert merge_risk(left, right)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("kot", " pies"),
        ("kot", "."),
        ("tak", "!"),
        ("5", "%"),
        ("(", "Łódź"),
        ("kot", ""),
        ("", "kot"),
        ("np.", " "),
    ],
)
def test_no_merge_risk(left: str, right: str) -> None:
    assert not merge_risk(left, right)


# --- properties -------------------------------------------------------------------------

_POLISH = "aąbcćdeęfghijklłmnńoóprsśtuwyzźżAĄBCĆDEĘFGHIJKLŁMNŃOÓPRSŚTUWYZŹŻ"
_texts = st.text(alphabet=_POLISH + "0123456789 .,-!?„”()'\n", max_size=24)
_words = st.text(alphabet=_POLISH, min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(_texts, st.sampled_from([" ", "\n", "\t", "\u00a0"]))
def test_text_ending_in_whitespace_is_always_safe(text: str, space: str) -> None:
    assert safe_to_cut(text + space)
    assert not can_extend(text + space)


@settings(max_examples=150, deadline=None)
@given(_texts)
def test_results_are_stable_under_nfc_and_nfd(text: str) -> None:
    decomposed, composed = nfd(text), unicodedata.normalize("NFC", text)
    assert safe_to_cut(decomposed) == safe_to_cut(composed)
    assert can_extend(decomposed) == can_extend(composed)
    assert is_complete_word(decomposed) == is_complete_word(composed)
    assert merge_risk(decomposed, decomposed) == merge_risk(composed, composed)


@settings(max_examples=150, deadline=None)
@given(_texts)
def test_safe_cut_means_nothing_can_attach(text: str) -> None:
    if safe_to_cut(text) and text and not text[-1].isspace():
        assert not can_extend(text)
        assert not text[-1].isalpha() or is_complete_word(text)


@settings(max_examples=100, deadline=None)
@given(_words, _words)
def test_letters_on_both_sides_are_a_merge_risk(left: str, right: str) -> None:
    assert merge_risk(left, right) and merge_risk(nfd(left), nfd(right))
