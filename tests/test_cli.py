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
