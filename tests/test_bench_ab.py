"""`bielik-lsp bench ab`: which install REF names, turns, intervals, when rounds stop, a whole run.

The interval's properties run on made-up timings whose noise is spread evenly (the normal
quantiles, shuffled), so "more rounds narrow it" holds for every example, not on average. End
to end, REF is this same checkout's install with `--no-adapt-threads` of its own, so both sides
run the same code in processes of their own: plain decoding writes the same tokens on both, and
every document gets its first suggestion from both servers.
"""

from __future__ import annotations

import json
import subprocess
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.bench import ab, ab_report, spread
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


def test_ref_options_alone_make_this_install_its_own_ref():
    sides = ab.sides_of(None, "", "--no-adapt-threads --threads 1", progress=False)
    assert sides["ref"].source == sides["this"].source == ab.SOURCE
    assert sides["ref"].options == ("--no-adapt-threads", "--threads", "1")
    assert sides["ref"].name.endswith(" --no-adapt-threads --threads 1")
    argv = sides["ref"].serve_argv(["--backend", "llamacpp"])
    assert argv[4:] == ["--backend", "llamacpp", "--no-adapt-threads", "--threads", "1", "serve"]
    assert list(ab.sides_of(None, "", "", progress=False)) == ["this"]


def test_the_side_that_goes_first_alternates():
    orders = [tuple(ab.turns(["this", "ref"], r, i)) for r in range(2) for i in range(2)]
    assert orders == [("this", "ref"), ("ref", "this"), ("ref", "this"), ("this", "ref")]


# ---------------------------------------------------------------- the bootstrap interval


def timings(ratio, noise, bases: list[float], rounds: int, order: int, ref_noise: bool = True):
    """(this, ref): excerpts by rounds, this = ref's speed times `ratio`, with even noise."""
    quantiles = np.array([NormalDist().inv_cdf((k + 0.5) / rounds) for k in range(rounds)])
    rng = np.random.default_rng(order)
    this = np.array([b * ratio * np.exp(noise * rng.permutation(quantiles)) for b in bases])
    ref = np.array([b * np.exp(noise * ref_noise * rng.permutation(quantiles)) for b in bases])
    return this, ref


runs = dict(
    ratio=st.floats(0.3, 3.0),
    noise=st.floats(0.01, 0.3),
    bases=st.lists(st.floats(1.0, 1000.0), min_size=1, max_size=5),
    order=st.integers(0, 2**16),
)


@settings(max_examples=40, deadline=None)
@given(**runs, rounds=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_the_interval_holds_the_ratio_and_is_the_same_for_a_seed(
    ratio, noise, bases, order, rounds, seed
):
    this, ref = timings(ratio, noise, bases, rounds, order)
    found = spread.interval(this, ref, seed)
    assert found.low - 1e-9 <= found.ratio <= found.high + 1e-9
    assert found.ratio == pytest.approx(spread.ratio(this, ref))
    assert spread.interval(this, ref, seed) == found
    assert (found.excerpts, found.rounds) == (len(bases), rounds)


@settings(max_examples=25, deadline=None)
@given(**runs)
def test_more_rounds_narrow_the_interval(ratio, noise, bases, order):
    # REF without noise: this side's alone is the ratio's (paired noise may cancel by chance)
    few = spread.interval(*timings(ratio, noise, bases, 4, order, ref_noise=False))
    many = spread.interval(*timings(ratio, noise, bases, 32, order, ref_noise=False))
    assert many.half < few.half
    assert many.low <= ratio * (1 + 1e-6) and many.high >= ratio * (1 - 1e-6)


def test_the_interval_covers_the_true_ratio_nine_times_in_ten():
    """Random timings (log-normal noise, 1-5 excerpts, 2-9 rounds), seeded: a fixed count."""
    rng = np.random.default_rng(1)
    cases, covered = 120, 0
    for case in range(cases):
        shape, ratio = (rng.integers(1, 6), rng.integers(2, 10)), rng.uniform(0.5, 2)
        base = rng.uniform(1, 100, shape[0])[:, None]
        this = base * ratio * np.exp(rng.normal(0, 0.1, shape))
        found = spread.interval(this, base * np.exp(rng.normal(0, 0.1, shape)), seed=case)
        covered += found.low <= ratio <= found.high
    assert 0.85 <= covered / cases <= 0.95, covered


def test_excerpts_that_differ_keep_the_interval_wide_and_missing_runs_are_left_out():
    this = np.array([[1.5] * 8, [2.0] * 8, [2.5] * 8])  # no noise, three true ratios
    ref = np.ones((3, 8))
    found = spread.interval(this, ref)
    assert found.ratio == 2.0 and found.low == 1.5 and found.high == 2.5
    assert found.half == 0.25 and spread.interval(this[1:2], ref[1:2]).half == 0.0
    this[0, :] = np.nan  # an excerpt with no number at all: not an excerpt of the ratio
    this[1, :4] = np.nan  # a few missing runs: the others count
    assert spread.interval(this, ref).excerpts == 2
    assert spread.interval(np.full((2, 3), np.nan), ref[:2, :3]) is None


# ---------------------------------------------------------------- rounds until settled


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def rounds_run(stage: ab.Stage, halves_by_round: list[list], round_s: float, clock) -> int:
    """Rounds the stage lets run, the asked intervals being halves_by_round[rounds done]."""
    while stage.more(lambda: halves_by_round[min(stage.rounds, len(halves_by_round) - 1)], 0.03):
        began = clock.t
        clock.t += round_s
        stage.done(began)
    return stage.rounds


def test_rounds_go_on_until_every_asked_interval_is_within_the_target():
    clock = Clock()
    stage = ab.Stage(deadline=1000, minimum=2, clock=clock)
    halves = [[None, None], [0.2, 0.1], [0.05, 0.02], [0.031, 0.01], [0.03, 0.029]]
    assert rounds_run(stage, halves, 10, clock) == 4 and stage.stopped == "settled"


def test_the_minimum_rounds_run_whatever_and_then_the_time_limit_stops_them():
    clock = Clock()
    stage = ab.Stage(deadline=25, minimum=2, clock=clock)
    assert rounds_run(stage, [[0.0]], 100, clock) == 2 and stage.stopped == "settled"
    clock = Clock()
    stage = ab.Stage(deadline=35, minimum=1, clock=clock)
    # a round takes 10 s: the fourth would end at 40 s, past the deadline
    assert rounds_run(stage, [[0.5]], 10, clock) == 3 and stage.stopped == "time limit"
    stage = ab.Stage(deadline=0, minimum=1, clock=Clock())
    assert rounds_run(stage, [[]], 1, stage.clock) == 1 and stage.stopped == "nothing asked"


def test_the_time_budget_is_shared_out_between_stages():
    budget = ab.Budget(minutes=1, stages=3)
    first = budget.stage(1)
    assert 19 < first.deadline - budget.end + 60 <= 20.5
    second = budget.stage(1)  # the first used none of its share: half of what is left
    assert second.deadline == pytest.approx(budget.end - 30, abs=0.5)


# ---------------------------------------------------------------- the report


def run_of(tok_s: float) -> dict:
    speeds = {"prefill_tok_s": 900.0, "prefill_chars_s": 3000.0, "tok_s": tok_s}
    return {**speeds, "chars_s": 3 * tok_s, "ids": [1, 2, 3], "accepted": 3, "drafted": 4}


def raw_with(ref_lookup: bool) -> dict:
    """Two excerpts, three rounds; REF without lookup where asked (an old revision)."""

    def side(gain: float, lookup: bool) -> dict:
        out = {}
        for n, eid in enumerate(("s1", "p1")):
            plain = [50.0 + n + r for r in range(3)]
            gains = {"plain": 1.0, "auto": gain, "lookup": gain * 0.9 if lookup else None}
            out[eid] = {p: [run_of(s * g) for s in plain] if g else [] for p, g in gains.items()}
        return out

    runs = {"this": side(2.0, True), "ref": side(1.0, ref_lookup)}
    lsp = {s: {e: [{"ms": 100.0, "asks": 1}] * 3 for e in ("s1", "p1")} for s in runs}
    missing = {"this": {}, "ref": {} if ref_lookup else {"lookup": "ConfigError: no lookup"}}
    return {"runs": runs, "lsp": lsp, "missing": missing, "stages": {}}


def test_a_ref_without_lookup_is_reported_missing_and_each_side_shows_its_gain():
    from app.bench.corpus import Excerpt

    excerpts = [Excerpt("s1", "structured", "x", "", ""), Excerpt("p1", "prose", "y", "", "")]
    cfg = ab.AbConfig(backends=("llamacpp",))
    summary = ab_report.summarize(raw_with(ref_lookup=False), excerpts, cfg)
    row = summary["labels"]["structured"]
    assert row["between"]["lookup"] is None
    assert row["between"]["auto"]["ratio"] == pytest.approx(2.0)
    assert row["gains"]["this"]["auto/plain"]["ratio"] == pytest.approx(2.0)
    assert row["gains"]["ref"]["auto/plain"]["ratio"] == pytest.approx(1.0)  # REF decodes plain
    assert row["gains"]["ref"]["lookup/plain"] is None
    assert row["gains"]["this"]["same tokens"] == {"auto": 1, "lookup": 1}
    sides = ab.sides_of(None, "", "--no-adapt-threads", progress=False)
    text = ab_report.report({"llamacpp": summary}, "# head", sides, cfg)
    assert "cannot run `lookup` (missing: ConfigError: no lookup)" in text
    assert "| structured | lookup | – | – | missing |" in text
    halves = ab_report.halves(excerpts, ab.MEASURES, cfg.seed, lsp=False)
    assert len(halves(raw_with(ref_lookup=False)["runs"])) == 2 * 3  # lookup not waited for


@pytest.mark.slow
def test_bench_ab_against_this_same_install_with_other_options(tmp_path):
    args = ["bench", "ab", "--ref-options=--no-adapt-threads", "--backend", "llamacpp"]
    args += ["--per-class", "1", "--repeats", "1", "--tokens", "8", "--max-minutes", "0"]
    args += ["--quiet", "--out", str(tmp_path)]
    assert main(args) == 0
    data = json.loads((tmp_path / "ab.json").read_text(encoding="utf-8"))
    engines = data["raw"]["llamacpp"]["engines"]
    assert engines["this"]["target"]["adapt_threads"] is True
    assert engines["ref"]["target"]["adapt_threads"] is False
    found = data["summary"]["llamacpp"]
    engine = found["stages"]["engine"]
    assert (engine["rounds"], engine["stopped"]) == (1, "time limit")  # one round: no interval
    rows = found["labels"]
    assert set(rows) == {"structured", "prose"}
    for row in rows.values():
        assert row["same plain tokens"] == row["excerpts"] == 1
        assert row["answered"] == {"this": 1, "ref": 1}
        for name in ab.MEASURES:
            cell = row["between"][name]
            assert cell["low"] <= cell["ratio"] <= cell["high"] and cell["asked"], name
        for side in ("this", "ref"):
            assert row["gains"][side]["same tokens"] == {"auto": 1, "lookup": 1}
            assert row["gains"][side]["lookup/plain"]["ratio"] > 0
    report = (tmp_path / "ab.md").read_text(encoding="utf-8")
    assert "| structured | prefill |" in report and "| prose | first suggestion |" in report
    assert "--no-adapt-threads" in report and "| prose | this (" in report
    assert (tmp_path / "ab.png").stat().st_size > 1000
