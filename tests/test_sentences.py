"""Sentence ends in real Polish: abbreviations Morfeusz knows, ordinals, initials end none."""

import pytest

from polish.sentences import first_sentence_end


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        ("Mam np. kota. A potem", "Mam np. kota."),
        ("Dr. Kowalski przyszedł. Potem", "Dr. Kowalski przyszedł."),
        ("Art. 5 ust. 2 stanowi inaczej. Z", "Art. 5 ust. 2 stanowi inaczej."),
        ("To był 3. raz w tym roku. X", "To był 3. raz w tym roku."),
        ("J. Kowalski pisze m.in. wiersze. Y", "J. Kowalski pisze m.in. wiersze."),
        (
            "Mieszka przy ul. Długiej, tzw. starówce. Tak",
            "Mieszka przy ul. Długiej, tzw. starówce.",
        ),
        ("Czy to prawda? Tak.", "Czy to prawda?"),
        ("Koniec... Dalej", "Koniec..."),
        ("Powiedział: „Idę.” Potem", "Powiedział: „Idę.”"),
    ],
)
def test_first_sentence_end(text, sentence):
    assert text[: first_sentence_end(text)] == sentence


def test_no_sentence_end_before_the_text_goes_on():
    assert first_sentence_end("Mam np. kota") is None
    assert first_sentence_end("Zdanie bez końca.") is None  # no space after the period yet
