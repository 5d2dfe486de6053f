"""`bielik-lsp continue` passes every decoding flag on: the translation mode reaches the drafter."""

from __future__ import annotations

import json

import pytest

from app.cli import build_parser, main
from decoder.drafting.drafter import TRANSLATIONS
from decoder.drafting.registry import modes


def test_continue_choices_come_from_the_one_list_in_config(capsys):
    parse = build_parser().parse_args
    for mode in TRANSLATIONS:
        assert parse(["continue", "f.txt", "--translation", mode]).translation == mode
    for drafter in modes():
        assert parse(["continue", "f.txt", "--drafter", drafter]).drafter == drafter
    with pytest.raises(SystemExit):
        parse(["continue", "f.txt", "--translation", "exact"])


@pytest.mark.slow
def test_continue_uses_the_translation_flag(tmp_path, capsys, gemma, smollm):
    prompt = tmp_path / "lista.txt"
    prompt.write_text("Lista zakupów:\n1. mleko\n2. chleb\n3.", encoding="utf-8")
    args = ["continue", str(prompt), "--drafter", "model", "--k", "2", "--max-tokens", "8"]
    assert main([*args, "--translation", "naive", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["translation"] == "naive"
    assert out["stats"]["drafted"] > 0


@pytest.mark.slow
def test_continue_json_reports_characters_per_second(tmp_path, capsys, gemma, smollm):
    """Characters are the Unicode characters of the committed text, counted as tokens commit."""
    prompt = tmp_path / "tekst.txt"
    prompt.write_text("Zażółć gęślą jaźń. Źdźbło trawy i żółć.", encoding="utf-8")
    args = ["continue", str(prompt), "--drafter", "none", "--max-tokens", "12", "--json"]
    assert main([*args, "--quiet"]) == 0
    stats = json.loads(capsys.readouterr().out)["stats"]
    assert stats["generated_chars"] > 0 and stats["chars_per_second"] > 0
    per_cycle = sum(c["chars"] for c in stats["per_cycle"])
    assert per_cycle == stats["decode_chars"] <= stats["generated_chars"]
    expected = stats["decode_chars"] / stats["decode_seconds"]
    assert stats["chars_per_second"] == pytest.approx(expected)


def test_doctor_resolves_every_bielik_preset(capsys):
    """Each preset names its models, tokenizer and drafter kind; a PL preset takes MLX on auto."""
    from decoder.backends.registry import FAMILY

    for preset in FAMILY:
        assert main(["doctor", "--preset", preset]) in (0, 1)  # 1: a WARNING (e.g. the BLAS)
        out = capsys.readouterr().out
        assert f"preset     {preset} on " in out
        assert "tokenizer" in out and "drafter kind" in out, out
    main(["doctor", "--preset", "bielik-pl"])
    assert "preset     bielik-pl on mlx" in capsys.readouterr().out
    main(["--backend", "mlx", "doctor", "--preset", "bielik"])
    assert "dflash (speakleash/Bielik-11B-v3.0-DFlash)" in capsys.readouterr().out
