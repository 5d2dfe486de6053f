"""The bench: corpus, statistics, the paper's cost model, and `bielik-lsp bench --quick` end to end.

End to end on the embedded models: report, raw JSON and plots written, every condition's output
identical to plain greedy decoding.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from app.bench.analysis import (
    LABELS,
    bootstrap_ci,
    break_even,
    measured_costs,
    modelled_speedup,
    paper_speedup,
    peer_table,
)
from app.bench.corpus import load_corpus, select, sweep_subset
from app.cli import main


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


def test_paper_formula_against_hand_computed_values():
    # (1 + αk) / ((k+1)r + 1 + βk²) with the paper's r = 0.071, β = 0.19, worked by hand:
    # α=0.5, k=4: 3 / (0.355 + 1 + 3.04) = 3 / 4.395
    assert paper_speedup(0.5, 4, 0.071, 0.19) == pytest.approx(0.682594, abs=1e-6)
    # α=0.8, k=2: 2.6 / (0.213 + 1 + 0.76) = 2.6 / 1.973
    assert paper_speedup(0.8, 2, 0.071, 0.19) == pytest.approx(1.317790, abs=1e-6)
    # lookup (r = 0), α=0.6, k=3: 2.8 / (1 + 1.71)
    assert paper_speedup(0.6, 3, 0.0, 0.19) == pytest.approx(1.033210, abs=1e-6)
    # break-even at k=2: α = (3r + 4β) / 2 = 0.4865
    assert paper_speedup(0.4865, 2, 0.071, 0.19) == pytest.approx(1.0)


def run_record(cycles: dict[int, int], accepted: int, passes: int) -> dict:
    """A run as the bench records it: cycles by tokens verified, accepted drafts, drafter passes."""
    return {
        "verify_by_n": {str(n): [0.1 * c, c] for n, c in cycles.items()},
        "stats": {"decode_tokens": sum(cycles.values()) + accepted},
        "drafter_passes": passes,
    }


def test_summed_cost_model_is_the_paper_formula_when_every_cycle_drafts_k():
    # 10 cycles drafting k=4, 22 accepted: α = 22/40
    rec = run_record({5: 10}, accepted=22, passes=10 * 5)
    assert modelled_speedup([rec], 0.071, 0.19) == pytest.approx(
        paper_speedup(22 / 40, 4, 0.071, 0.19)
    )
    # 4 plain cycles and 6 drafting 4 tokens with 9 accepted: 19 tokens for
    # 4 + 6 (1 + 0.19 * 16) + 0.071 * 30 = 30.37 target steps
    mixed = run_record({1: 4, 5: 6}, accepted=9, passes=6 * 5)
    assert modelled_speedup([mixed], 0.071, 0.19) == pytest.approx(19 / 30.37)


def test_measured_costs_fit_the_paper_verification_term():
    t1, beta = 0.05, 0.03
    rec = {
        "family": "model/anchored",
        "verify_by_n": {
            str(n): [c * t1 * (1 + beta * (n - 1) ** 2), c] for n, c in ((1, 20), (3, 9), (5, 7))
        },
        "model_draft_s": 30 * 0.2 * t1,
        "drafter_passes": 30,
    }
    costs = measured_costs([rec])
    assert costs["step_s"] == pytest.approx(t1)
    assert costs["beta"] == pytest.approx(beta)
    assert costs["drafter_ratio"]["model/anchored"] == pytest.approx(0.2)


def test_peer_ratios_are_per_excerpt_against_our_plain_run():
    def rec(family, excerpt, tps, ids):
        return {
            "family": family,
            "condition": family,
            "excerpt": excerpt,
            "label": "structured" if excerpt == "a" else "prose",
            "k": 0,
            "ids": ids,
            "stats": {"tokens_per_second": tps},
        }

    grid = [rec("baseline", "a", 10.0, [1, 2]), rec("baseline", "b", 20.0, [3, 4])]
    peers = [rec(None, "a", 15.0, [1, 2]), rec(None, "b", 20.0, [3, 5])]
    for p in peers:
        p["peer"] = "llama-cpp-python generate"
    got = peer_table(grid, peers)["peer: llama-cpp-python generate"]
    assert got["ratio"] == pytest.approx((1.5 + 1.0) / 2)
    assert got["by_type"] == {"structured": 1.5, "prose": 1.0}
    assert got["identical"] == 0.5


@pytest.mark.parametrize(
    "flags",
    [
        ["--sweep-ks", "2,x"],
        ["--sweep-ks", "0"],
        ["--backend", "mlx,vulkan"],
        ["--translations", "anchored,exact"],
        ["engines", "--llama-server", "/nonexistent/llama-server"],
    ],
)
def test_bad_bench_flags_give_one_line_errors(flags, capsys):
    assert main(["bench", *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bielik-lsp: error: ") and err.count("\n") == 1


@pytest.mark.slow
def test_quick_bench_end_to_end(tmp_path, gemma, smollm):
    # On MLX, every condition must reproduce plain greedy output token for token.
    assert main(["bench", "--quick", "--quiet", "--backend", "mlx", "--out", str(tmp_path)]) == 0
    report = (tmp_path / "benchmarks.md").read_text(encoding="utf-8")
    data = json.loads((tmp_path / "bench" / "raw.json").read_text(encoding="utf-8"))
    backend = data["records"][0]["backend"]
    for png in (
        f"speedup_vs_acceptance-{backend}",
        f"speedup_by_type-{backend}",
        "speedup_vs_peers",
        "share_from_drafts",
    ):
        assert (tmp_path / "bench" / f"{png}.png").stat().st_size > 1000
    families = {r["family"] for r in data["records"]}
    assert {"baseline", "lookup", "auto"} <= families
    assert all(r["identical"] for r in data["records"]), [
        r["condition"] for r in data["records"] if not r["identical"]
    ]
    assert "identical output: 100%" in report and "PREDICTION" in report
    assert {r["label"] for r in data["records"]} == set(LABELS)


@pytest.mark.slow
def test_engines_bench_on_llama_cpp(tmp_path):
    """Every condition on a structured and a prose excerpt; exact auto's text is plain's."""
    args = ["bench", "engines", "--per-class", "1", "--tokens", "12", "--quiet"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "engines.json").read_text(encoding="utf-8"))
    assert set(data["summary"]) == {"structured", "prose"}
    for row in data["summary"].values():
        assert row["same_as_plain"]["ours auto"] == row["excerpts"] == 1
        assert row["tok_s"]["llama-cpp-python generate"] > 0
    assert "| ours auto, exact off |" in (tmp_path / "engines.md").read_text(encoding="utf-8")


def test_priors_count_where_the_copy_went_on():
    """`bench priors` asks, per generated token, whether lookup's draft was it."""
    from app.bench.priors import continued, report

    prompt, generated = [1, 2, 3, 1, 2], [3, 1, 2, 9]
    assert [hit for _, hit in continued(prompt, generated)] == [True, True, False]
    counts = {"structured": {3: [2, 3]}, "prose": {}}
    assert "| ≥3 | 0.76 | 0.67 (3) | – |" in report(counts, "embedded:gemma-3-270m", 128)


def test_hogs_keep_cores_busy_in_their_own_session_and_end_with_the_block():
    import os

    from app.bench.load import Hogs

    with Hogs(2) as hogs:
        group = _group(hogs.proc.pid)
        assert len(group) == 2 and os.getsid(hogs.proc.pid) != os.getsid(0)
        for p in group:
            p.cpu_percent()  # the window starts now, for both
        time.sleep(1.0)
        busy = sum(p.cpu_percent() for p in group)
        assert busy > 50  # two busy loops: well above one idle process, whatever else runs
    deadline = time.monotonic() + 5  # SIGKILL is delivered asynchronously
    left = [p for p in _group(hogs.proc.pid) if not _dead(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if not _dead(p)]
    assert not left


def _group(pgid: int) -> list:
    import psutil

    return [p for p in psutil.process_iter() if _pgid(p) == pgid]


def _dead(process) -> bool:
    """Gone, or a zombie waiting for init to reap it."""
    import psutil

    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _pgid(process) -> int | None:
    import os

    try:
        return os.getpgid(process.pid)
    except (ProcessLookupError, PermissionError):
        return None


@pytest.mark.slow
def test_load_bench_decodes_under_each_level_and_plots(tmp_path):
    """`bench load` on the quiet machine and with one core busy: tables, JSON and the plot."""
    args = ["bench", "load", "--busy", "0,1", "--per-class", "1", "--tokens", "8", "--quiet"]
    args += ["--typing-chars", "0", "--idle-seconds", "0", "--out", str(tmp_path)]
    assert main(args) == 0
    data = json.loads((tmp_path / "load.json").read_text(encoding="utf-8"))
    assert set(data["summary"]) == {"0", "1"}
    quiet = data["summary"]["0"]["ours auto"]
    assert quiet["to_quiet"] == 1.0 and quiet["tok_s"] > 0 and quiet["chars_s"] > 0
    assert (tmp_path / "load.png").stat().st_size > 1000
    assert "| 1 |" in (tmp_path / "load.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_load_bench_types_into_this_server_and_the_refs(tmp_path):
    """`bench load --ref --grammar-off`: ghost text from each server under the same load."""
    root = Path(__file__).resolve().parents[1]  # another install: this one, found by its folder
    args = ["bench", "load", "--busy", "0", "--per-class", "1", "--tokens", "4", "--quiet"]
    args += ["--typing-chars", "10", "--idle-seconds", "0", "--ref", str(root), "--grammar-off"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    row = json.loads((tmp_path / "load.json").read_text(encoding="utf-8"))["summary"]["0"]
    for side in ("typing", "typing ref", "typing grammar-off"):
        assert row[side]["pauses"] > 0 and row[side]["with_suggestion"] > 0
    for folder in ("typing-busy0", "typing-busy0-ref", "typing-busy0-grammar-off"):
        assert (tmp_path / folder / "typing.json").exists()
    off = json.loads((tmp_path / "typing-busy0-grammar-off" / "typing.json").read_text())
    assert off["settings"]["grammar"] is False  # the server's own word: grammar was off
    report = (tmp_path / "load.md").read_text(encoding="utf-8")
    assert "this p50 ms" in report and "grammar-off p50 ms" in report
