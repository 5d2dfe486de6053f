"""`bielik-lsp bench ab REF`: which install REF names, turns, and a whole run end to end.

End to end, REF is this same checkout's install, so both sides run the same code in processes
of their own: plain decoding writes the same tokens on both, and every document gets its first
suggestion from both servers.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from app.bench import ab
from app.cli import main


def test_a_ref_that_names_no_install_nor_revision_is_a_one_line_error(tmp_path, capsys):
    for ref in ("no-such-revision-x42", str(tmp_path)):
        assert main(["bench", "ab", ref, "--quiet", "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("bielik-lsp: error: bench ab: ") and err.count("\n") == 1, err


def test_a_ref_is_an_install_or_a_revision_of_this_repository():
    head = subprocess.run(
        ["git", "-C", str(ab.SOURCE), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if not head:
        pytest.skip("not a git checkout")
    assert ab.commit_of("HEAD") == head
    mine = ab.python_of(ab.SOURCE)
    assert mine.is_file() and ab.source_of(mine, "this") == ab.SOURCE
    assert ab.python_of(mine.with_name("bielik-lsp")) == mine
    assert ab.revision(ab.SOURCE).startswith(head[:7])


def test_the_side_that_goes_first_alternates():
    orders = [tuple(ab.turns(["this", "ref"], r, i)) for r in range(2) for i in range(2)]
    assert orders == [("this", "ref"), ("ref", "this"), ("ref", "this"), ("this", "ref")]


@pytest.mark.slow
def test_bench_ab_against_this_same_install(tmp_path):
    args = ["bench", "ab", str(ab.SOURCE), "--backend", "llamacpp", "--per-class", "1"]
    args += ["--repeats", "1", "--tokens", "8", "--quiet", "--out", str(tmp_path)]
    assert main(args) == 0
    data = json.loads((tmp_path / "ab.json").read_text(encoding="utf-8"))
    rows = data["summary"]["llamacpp"]
    assert set(rows) == {"structured", "prose"}
    for row in rows.values():
        assert row["same plain tokens"] == row["excerpts"] == 1
        assert row["answered"] == {"this": 1, "ref": 1}
        for measure in ab.MEASURES:
            assert row[measure]["ratio"] > 0, measure
    report = (tmp_path / "ab.md").read_text(encoding="utf-8")
    assert "| structured | prefill |" in report and "| prose | first suggestion |" in report
    assert (tmp_path / "ab.png").stat().st_size > 1000
