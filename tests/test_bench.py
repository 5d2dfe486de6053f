"""`bielik-lsp bench --quick` end to end on the embedded models: report, raw JSON and plots written,
every condition's output identical to plain greedy decoding."""

from __future__ import annotations

import json

import pytest

from decoder.bench.analysis import LABELS, bootstrap_ci, break_even, cost_model_speedup
from decoder.bench.runs import load_corpus, select, sweep_subset
from lsp_server.cli import main


def test_corpus_has_thirty_real_excerpts_per_type_with_provenance():
    corpus = load_corpus()
    for label in LABELS:
        assert sum(e.label == label for e in corpus) >= 30
    assert all(e.text.strip() and e.source and e.license for e in corpus)
    assert len({e.id for e in corpus}) == len(corpus)


def test_selection_and_sweep_subset_spread_over_types():
    chosen = select(load_corpus(), 2)
    assert [e.label for e in chosen] == ["structured"] * 2 + ["prose"] * 2 + ["mixed"] * 2
    assert {e.label for e in chosen if e.id in sweep_subset(chosen, 3)} == set(LABELS)


def test_break_even_recovers_a_known_line():
    acc = [0.1, 0.3, 0.5, 0.7, 0.9]
    tps = [5 + 10 * a for a in acc]  # crosses a baseline of 8 tok/s at acceptance 0.3
    got = break_even(acc, tps, [8.0] * 5)
    assert got["break_even"] == pytest.approx(0.3)
    assert got["ci"][0] == pytest.approx(0.3) and got["ci"][1] == pytest.approx(0.3)
    lo, hi = bootstrap_ci([1.0, 2.0, 3.0])
    assert 1.0 <= lo <= 2.0 <= hi <= 3.0


def test_cost_model_pays_exactly_above_r_plus_beta():
    run = lambda a, d: [{"stats": {"cycles": 10, "accepted": a, "drafted": d}, "draft_steps": d}]  # noqa: E731
    assert (
        cost_model_speedup(run(26, 100), 0.071, 0.19)
        < 1
        < cost_model_speedup(run(27, 100), 0.071, 0.19)
    )


@pytest.mark.slow
def test_quick_bench_end_to_end(tmp_path, gemma, smollm):
    assert main(["bench", "--quick", "--quiet", "--out", str(tmp_path)]) == 0
    report = (tmp_path / "benchmarks.md").read_text(encoding="utf-8")
    data = json.loads((tmp_path / "bench" / "raw.json").read_text(encoding="utf-8"))
    for png in ("speedup_vs_acceptance", "speedup_by_type", "k_sweep"):
        assert (tmp_path / "bench" / f"{png}.png").stat().st_size > 1000
    families = {r["family"] for r in data["records"]}
    assert {"baseline", "lookup", "auto"} <= families
    assert all(r["identical"] for r in data["records"]), [
        r["condition"] for r in data["records"] if not r["identical"]
    ]
    assert "identical output: 100%" in report and "PREDICTION" in report
    assert {r["label"] for r in data["records"]} == set(LABELS)
