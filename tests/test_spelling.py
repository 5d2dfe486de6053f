"""Polish spelling: candidates, what is questioned, what is left alone.

Also the lemma-level dictionary, paragraphs checked again only when edited, and the model's
log-probabilities.

Real Morfeusz 2 (SGJP) and the shipped frequency tables; the model ranking runs on the
embedded Gemma-3-270M (slow) and the scoring arithmetic on a tiny backend.
"""

from __future__ import annotations

import numpy as np
import pytest

from decoder.scoring import log_softmax_at, score
from polish import lexicon, spelling
from polish.dictionary import Accepted, inflect
from polish.typos import candidates, error_cost
from polish.words import is_switched_off, paragraphs, words
from tests.tiny_backend import TinyBackend


def questioned(text: str) -> dict[str, tuple[str, ...]]:
    return {f.word: f.suggestions for f in spelling.questioned(spelling.check(text))}


@pytest.mark.parametrize(
    ("typo", "correct"),
    [
        ("zaczoł", "zaczął"),  # ął written as it sounds
        ("wogule", "w ogóle"),  # a space left out and ó/u
        ("zrodlo", "źródło"),  # every diacritic dropped
        ("kturzy", "którzy"),  # ó/u
        ("rzaba", "żaba"),  # rz/ż
        ("hcę", "chcę"),  # ch/h
        ("dokomd", "dokąd"),  # ą/om
        ("wszysko", "wszystko"),  # a letter dropped
        ("oskarszycielu", "oskarżycielu"),  # sz/ż, a form too rare for the frequency table
    ],
)
def test_candidates_undo_polish_typing_errors(typo, correct):
    assert correct in [c.text for c in candidates(typo)[:3]]


def test_error_costs_know_which_slips_are_common():
    assert error_cost("sie", "się") < error_cost("sie", "sir") < error_cost("sie", "sił")
    assert error_cost("zrodlo", "źródło") < error_cost("zrodlo", "zrosło")


def test_non_words_and_rare_forms_are_questioned_with_corrections():
    found = questioned("Wczoraj zaczoł padać. Nie wiem, czy sie uda, ale wogule warto.")
    assert found["zaczoł"][0] == "zaczął"
    assert found["sie"][0] == "się"  # SGJP knows "sie" only as an archaic form
    assert found["wogule"][0] == "w ogóle"


def test_a_capital_at_a_sentence_start_is_no_name():
    """A first word no list knows is unknown, as it would be small; inside a sentence, a name."""
    assert questioned("Zaczoł padać.")["Zaczoł"][0] == "Zaczął"
    text = "Thermidorianie wspierali tę grupę. Poparli ich Thermidorianie z Paryża."
    found = spelling.questioned(spelling.check(text))  # PlEWi's first word; then a name
    assert [(f.start, f.word, f.suggestions, f.reason) for f in found] == [
        (0, "Thermidorianie", (), "unknown")
    ]
    assert questioned("Wscodnich ziem nie znał.") == {"Wscodnich": ("Wschodnich",)}


def test_a_common_misspelling_at_a_sentence_start_is_the_models_question():
    """The frequency list counts "poprostu" as it counts names; a slip gives one as common."""
    found = spelling.check("Poprostu poszedł. Kaddafi przemawiał. Hesji nie znał.")
    assert [(f.word, f.reason, f.known) for f in found] == [("Poprostu", "context", True)]
    assert [c.text for c in found[0].candidates] == ["po prostu"]
    assert spelling.check("Wczoraj poprostu poszedł.")[0].reason == "unknown"
    assert questioned("Wogóle nie wiem.")["Wogóle"][0] == "W ogóle"  # no name has "ó"
    assert questioned("Wziąść udział chciał.")["Wziąść"][0] == "Wziąć"


def test_a_name_no_one_writes_near_one_polish_text_writes_is_the_models_question():
    """PlEWi's "Libknecht": no list has it, "Liebknecht" is a slip away; a name seen is not."""
    found = spelling.check("Zmarł Wilhelm Libknecht, niemiecki socjaldemokrata.")
    assert [(f.word, f.reason, f.known) for f in found] == [("Libknecht", "context", True)]
    assert found[0].candidates[0].text == "liebknecht"
    assert spelling.questioned(found) == []  # shown only if the model prefers the name by far
    assert spelling.check("Kwiaty dostarcza Hozer, a Klopstock pisze.") == []


def test_an_english_word_amid_polish_ones_near_a_common_form_is_the_models_question():
    found = spelling.check("Roztwór ma zawsze take samo stężenie.")  # PlEWi: "takie"
    assert [(f.word, f.reason, f.known) for f in found] == [("take", "context", True)]
    assert "takie" in [c.text for c in found[0].candidates]
    assert spelling.check("Uruchom polecenie debug i zobacz plik README.") == []
    assert spelling.check("Komunikat brzmiał: take it or leave it.") == []
    assert questioned("Kaddafi przemawiał. Debianem zarządzają wolontariusze.") == {}


def test_capitalised_words_are_checked_like_the_others():
    """A capital inside a sentence hides no slip of a known form; a name near none is left."""
    found = questioned("Ziemie Indii Wscodnich. Przewidywlny wynik. Syn Kazimierza Jagillończyka.")
    assert found["Wscodnich"][0] == "Wschodnich"
    assert "Przewidywalny" in found["Przewidywlny"][:3]
    assert found["Jagillończyka"][0] == "Jagiellończyka"
    # a vowel takes no loan ending ("hesji|i"); the name Polish text writes comes first
    assert questioned("Towarzystwo Ludowe Górnej Hesjii.")["Hesjii"][0] == "Hesji"
    names = "Spotkanie z Kaddafim i Artymowskim w Uusikaupunki, z Debianem i Vimie, Sacher-Masoch."
    assert questioned(names) == {}


def test_a_known_form_polish_text_never_writes_is_a_question_for_the_model():
    """A form Morfeusz derives but no one writes ("przysosowane") is asked about (PlEWi).

    It is a slip of a common form far more often than a word; the model decides. A rare name
    inside a sentence is not asked about.
    """
    found = spelling.check("Samce są przysosowane do walk o samicę.")
    assert [(f.word, f.reason, f.known) for f in found] == [("przysosowane", "context", True)]
    assert found[0].candidates[0].text == "przystosowane"
    assert spelling.check("Pisał o tym Klejn w roku 1900.") == []


def test_case_as_polish_writes_it():
    """Names written small get their capital; capitals typed inside a word are questioned."""
    text = "Rywalizował z francją. Andrzej NAdolski i Sebastian MIla grali na ZSkłonny sposób."
    found = {f.word: f for f in spelling.questioned(spelling.check(text))}
    assert found["francją"].suggestions[0] == "Francją" and found["francją"].reason == "case"
    assert found["NAdolski"].suggestions == ("Nadolski",) and found["MIla"].reason == "case"
    assert found["ZSkłonny"].suggestions[0] == "Skłonny"
    assert questioned("Pokój san-stefański, PKiN, iPhone i GitHub, Polacy w Polsce.") == {}
    assert questioned("Nie wiem, czy bedzie padać.")["bedzie"][0] == "będzie"  # a slip, not Beda
    # a name's form that is a common noun's slip: the noun's form in the same number and case
    assert questioned("Jechali z koniami i psami.")["koniami"][:2] == ("końmi", "Koniami")


def test_an_unknown_word_is_questioned_even_with_no_fix_near():
    """The nearest forms two edits away; none at all for a Polish-looking word no slip explains."""
    found = questioned("W reluztacie było to jednoznczanie złe, bo poperiali go i abberacji.")
    assert found["reluztacie"][0] == "rezultacie" and found["poperiali"][0] == "popierali"
    assert found["jednoznczanie"][0] == "jednoznacznie" and found["abberacji"][0] == "aberracji"
    assert questioned("Wyjął z szafy źdźbłośćki.") == {"źdźbłośćki": ()}
    assert questioned("Zrób commit, potem triggera z hostowania i passwd.") == {}
    # An English stem with a Polish ending, unless a slip gives a far commoner Polish form
    assert questioned("Zrób commit bez tagów i merge.") == {}
    assert questioned("Odra zalała lewobrzeżną część masta Opole.")["masta"][0] == "miasta"
    # No Polish letter and no likely slip, but every letter trigram a Polish form has:
    found = questioned("Wniosek o dofinansowniu projektu złożono w marcu.")
    assert found["dofinansowniu"][0] == "dofinansowaniu"
    # A slip that leaves one letter trigram Polish does not write, in a long word (PlEWi):
    found = questioned("Wtedy rozrgearno pierwszy mecz, który prowadziłem ekeprymentalny.")
    assert found["rozrgearno"][0] == "rozegrano"
    assert found["ekeprymentalny"][0] == "eksperymentalny"
    assert questioned("Serwer uvicorn ma argv i vcard.") == {}  # over one odd in five: code


def test_hunspell_pl_word_list_keeps_rare_forms_and_marks_words_no_list_knows():
    """sjp.pl knows "termidoriańskim" (Morfeusz and wordfreq do not): left alone.

    A small-letter word no list knows and whose letters look Polish is questioned, even with no
    form near ("thermidorianie", from a real writer's sentence); commands are still left alone.
    """
    assert questioned("Po przewrocie termidoriańskim władzę objęli umiarkowani.") == {}
    found = questioned("Władzę objęli thermidorianie, a jakobini stracili wpływy.")
    assert set(found) == {"thermidorianie"}
    assert questioned("Uruchom dpkg i passwd jako root.") == {}
    assert all(map(lexicon.sjp_knows, ["termidorianie", "Termidorianie", "TERMIDORIANIE"]))
    assert lexicon.sjp_knows("Hopfer") and lexicon.sjp_knows("HOPFER")  # a name: capitalised
    assert not lexicon.sjp_knows("hopfer") and not lexicon.sjp_knows("tErmidorianie")
    assert questioned("Pisał o tym NAdolski.") == {"NAdolski": ("Nadolski",)}


@pytest.mark.parametrize(
    "text",
    [
        "Użyj `zaczoł --wogule` w kodzie.",
        "Zobacz https://example.com/zaczoł/wogule i www.wogule.pl teraz.",
        "Napisz na zaczoł.wogule@example.com jutro.",
        "Plik /usr/share/zaczoł/wogule.conf i ~/wogule oraz C:\\wogule\\zaczoł są tu.",
        "Opcja --zaczoł=wogule i -x oraz $WOGULE są tu.",
        'Tekst <span class="wogule">ok</span> i &nbsp; oraz [url=wogule]ok[/url].',
        "Wzór $zaczoł^2$ oraz \\textbf{ok} i \\label{wogule} są tu.",
        "```\nzaczoł wogule\n\nsie\n```\nKoniec.",
        "Zmienna zaczoł_wogule i wogule2 oraz wogule.conf są tu.",
    ],
)
def test_code_urls_paths_options_and_markup_are_left_alone(text):
    assert questioned(text) == {}


def test_names_abbreviations_acronyms_and_english_are_left_alone():
    text = (
        "Spotkanie z Artymowskim odbyło się w 2024 r. w tzw. sali NATO, np. o 10. "
        "Komunikat brzmiał: the quick brown fox jumps over the lazy dog. "
        "Uruchom polecenie debug i zobacz plik README."
    )
    assert questioned(text) == {}


def test_a_term_the_document_repeats_is_not_a_slip():
    """Three times "kwerla" (only random edits explain it): a term; "sie" and "napewno" stay."""
    assert "kwerla" in questioned("Zrób kwerla bazy.")
    text = "Zrób kwerla. Bez kwerla nic. Z kwerla wszystko. {0} {0} {0}"
    assert set(questioned(text.format("Nie wiem, czy sie uda."))) == {"sie"}
    assert set(questioned(text.format("Przyjdę napewno."))) == {"napewno"}
    assert set(questioned(text.format("Nie wiem wogule."))) == {"wogule"}


def test_magic_comments_switch_checking_off_and_on():
    off = "<!-- bielik: spelling=off -->\nzaczoł\n<!-- bielik: spelling=on -->\nwogule"
    assert set(questioned(off)) == {"wogule"}
    assert is_switched_off("% bielik: spelling=off\nzaczoł")
    assert not is_switched_off("zaczoł\n% bielik: spelling=off")


def test_sentence_starts_come_from_punctuation_not_from_wrapped_lines():
    starts = {w.text: w.sentence_start for w in words("Ala ma\nKota. Potem\n- Psa")}
    assert starts == {"Ala": True, "ma": False, "Kota": False, "Potem": True, "Psa": True}


def test_an_edit_checks_its_paragraph_again_and_no_other():
    doc = spelling.Paragraphs()
    text = "Pierwszy akapit: zaczoł.\n\nDrugi akapit.\n\nTrzeci: wogule."
    found, fresh = doc.check(text)
    assert [f.word for f in spelling.questioned(found)] == ["zaczoł", "wogule"]
    assert len(fresh) == 3
    edited = text.replace("Drugi akapit.", "Drugi akapit, sie zmienił.")
    found, fresh = doc.check(edited)
    assert [edited[a:b] for a, b in fresh] == ["Drugi akapit, sie zmienił."]
    assert [(f.word, edited[f.start : f.end]) for f in found if f.reason != "context"] == [
        ("zaczoł", "zaczoł"),
        ("sie", "sie"),
        ("wogule", "wogule"),
    ]


def test_long_paragraphs_are_cut_between_words():
    text = "Zdanie jest tutaj. " * 400
    spans = paragraphs(text)
    assert len(spans) > 1 and all(b - a <= 2100 for a, b in spans)
    assert "".join(text[a:b] for a, b in spans) == text


def test_adding_a_word_accepts_all_its_forms():
    assert {"dżejsonów", "dżejsonem", "dżejsony"} <= inflect("dżejson")
    assert {"kowalskiego", "kowalscy"} <= inflect("Kowalski")  # Morfeusz's own paradigm
    accepted = Accepted(["dżejson"])
    assert "Dżejsonów" in accepted and "dżejsonami" in accepted and "zaczoł" not in accepted
    text = "Wysłałem dżejsony. Bez dżejsonów nie ma danych."
    assert set(questioned(text)) == {"dżejsony", "dżejsonów"}
    found = spelling.questioned(spelling.check(text, accepted.__contains__))
    assert found == []


def test_scores_are_the_log_probabilities_of_each_continuation():
    backend = TinyBackend(seed=5)
    prefix, options = "Ala ma", [" kota.", " psa i kota.", " kot"]
    got = score(backend, prefix, options)
    for option, value in zip(options, got, strict=True):
        ids = backend.tokenizer.encode(prefix + option)
        shared = len(backend.tokenizer.encode(prefix))  # SentencePiece: the space starts a token
        backend.reset()
        backend.sync(ids[:1])
        rows = np.stack([backend.sync(ids[: i + 1]) for i in range(len(ids) - 1)])
        expected = log_softmax_at(rows[shared - 1 :], ids[shared:])
        assert value == pytest.approx(expected, abs=1e-3)


@pytest.mark.slow
def test_the_model_ranks_in_the_sentence_and_clears_known_words_that_fit():
    from decoder.config import Settings
    from decoder.pipeline import load_scorer

    engine = load_scorer(Settings(), progress=False)
    text = "Wczoraj wieczorem zaczoł padać deszcz. Poszliśmy do domu."
    found = spelling.rank(text, spelling.check(text), engine.score)
    assert [(f.word, f.suggestions[0]) for f in found] == [("zaczoł", "zaczął")]
    text = "Samce są przysosowane do walk o samicę."
    found = spelling.rank(text, spelling.check(text), engine.score)
    assert [(f.word, f.suggestions[0]) for f in found] == [("przysosowane", "przystosowane")]
    known = spelling.check("Dom stał między drzewami.")
    assert spelling.rank("Dom stał między drzewami.", known, engine.score) == []
    # A name no one writes, near a famous one (PlEWi); a rare name that is right stays
    text = "7 sierpnia zmarł Wilhelm Libknecht, niemiecki socjaldemokrata."
    found = spelling.rank(text, spelling.check(text), engine.score)
    assert [(f.word, f.suggestions[0]) for f in found] == [("Libknecht", "Liebknecht")]
    text = "W Pałacu pracował Jan Nowakowski i Tomasz Kwinkcjusz, a Hozer dostarcza kwiatów."
    assert spelling.rank(text, spelling.check(text), engine.score) == []
    # An English word amid Polish ones: a slip (PlEWi), or a term the model clears
    text = "Roztwór nasycony ma zawsze take samo stężenie."
    found = spelling.rank(text, spelling.check(text), engine.score)
    assert [(f.word, f.suggestions[0]) for f in found] == [("take", "takie")]
    text = "Wybierz yes przy polu, a potem suwak slider przełącznik zmieni tryb."
    assert spelling.rank(text, spelling.check(text), engine.score) == []
    # A common misspelling starting a sentence; a name there a slip from a form as common
    text = "Poprostu poszedł do domu. Nelli przyszła wczoraj."
    found = spelling.rank(text, spelling.check(text), engine.score)
    assert [(f.word, f.suggestions[0]) for f in found] == [("Poprostu", "Po prostu")]


def test_check_prints_one_json_object_per_questioned_word_and_exits_1(tmp_path):
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    bad, good = tmp_path / "bad.md", tmp_path / "good.md"
    bad.write_text("Tytuł\n\nWczoraj zaczoł padać, a `wogule` to kod.\n", encoding="utf-8")
    good.write_text("Wczoraj zaczął padać.\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root), "XDG_CONFIG_HOME": str(tmp_path)}

    def check(*args):
        command = [sys.executable, "-m", "app.cli", "check", "--no-model", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)

    found = check("--json", str(bad), str(good))
    assert found.returncode == 1, found.stderr
    (line,) = [json.loads(x) for x in found.stdout.splitlines()]
    assert line == {
        "path": str(bad),
        "line": 2,
        "start": 8,
        "end": 14,
        "word": "zaczoł",
        "suggestions": ["zaczął"],
        "kind": "spelling",
        "reason": "unknown",
    }
    assert check(str(good)).returncode == 0
    assert check(str(tmp_path / "missing.md")).returncode == 2


def test_the_real_error_bench_places_errors_and_scores_a_checker(tmp_path):
    """PlEWi's format: errors by word index in both texts (a comma taken out shifts the rest)."""
    import json

    from app.bench import spelling_real as real
    from app.bench.spelling import count_words
    from decoder.config import ConfigError

    row = {
        "text": "Wczoraj zaczoł padać , a sie nie.",
        "new_text": "Wczoraj zaczął padać, a się nie.",
        "errors": [
            {"error": "zaczoł", "correction": "zaczął", "position": 1, "type": "nonword"},
            {"error": ",", "correction": "", "position": 3, "type": "", "category": "x"},
            {"error": "sie", "correction": "się", "position": 5, "type": "nonword"},
        ],
    }
    path = tmp_path / "errors.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    (s,) = real.load(str(path), "train")
    spans = [(s.text[e.start : e.end], s.clean[e.clean_start : e.clean_end]) for e in s.errors]
    assert spans == [("zaczoł", "zaczął"), ("sie", "się")]  # the comma is no word to spell
    check = lambda text: spelling.questioned(spelling.check(text))  # noqa: E731
    r = real.score([s], *real.run_checker([s], check)[:2], count_words)
    assert (r["nonword"], r["recall"], r["top1"], r["clean_flags"]) == (2, 1.0, 1.0, 0)
    assert r["corrections_flagged"] == 0.0 and r["recall_by"]["type"]["nonword"] == 1.0
    path.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1"):
        real.load(str(path), "all")
