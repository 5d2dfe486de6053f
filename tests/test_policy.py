"""The auto policy: cost model arithmetic, content gating, fallback and probing, exact output."""

from __future__ import annotations

import pytest

from decoder.drafting.drafter import Context
from decoder.drafting.lookup import LookupDrafter
from decoder.engine import Engine
from decoder.policy import AutoPolicy
from decoder.pricing import Acceptance, Costs, best_k, measure_costs
from decoder.stats import Cycle, RunStats
from polish.content import classify
from tests.test_engine import run
from tests.tiny import fresh

# Shaped like t(n)/t(1) of Gemma-3-270M on MLX with OpenBLAS, 2 CPU cores.
COSTS = Costs({1: 1.0, 2: 1.31, 3: 1.61, 5: 1.93, 9: 2.21}, 0.075, 0.7)
LIST = "Lista:\n1. jabłka – 3 kg\n2. gruszki – 2 kg\n3. śliwki – 1 kg\n4."
PROSE = (
    "W początkach roku 1878, kiedy świat polityczny zajmował się pokojem san-stefańskim, "
    "wyborem nowego papieża albo szansami europejskiej wojny, warszawscy kupcy tudzież "
    "inteligencja pewnej okolicy Krakowskiego Przedmieścia niemniej gorąco interesowała się "
    "przyszłością galanteryjnego sklepu pod firmą J. Mincel i S. Wokulski."
)


def expected_tokens(alpha: float, k: int) -> float:
    """Leviathan et al.'s tokens per cycle with k drafted, each accepted with probability alpha."""
    if alpha >= 1:
        return k + 1.0
    return (1 - alpha ** (k + 1)) / (1 - alpha)


def test_expected_tokens_before_evidence():
    assert Acceptance(0.0).expected_tokens(4) == 1.0
    assert Acceptance(1.0).expected_tokens(4) == 5.0
    assert Acceptance(0.5).expected_tokens(2) == pytest.approx(1.75)


def test_verify_ratio_interpolates_and_extrapolates():
    assert COSTS.verify_ratio(4) == pytest.approx((1.61 + 1.93) / 2)
    assert COSTS.verify_ratio(13) > COSTS.verify_ratio(9)


def test_break_even():
    """Low acceptance: no k pays; high acceptance: long drafts pay; a costly drafter pays less."""

    def iid(a):
        return lambda k: expected_tokens(a, k)

    assert best_k(iid(0.1), COSTS, 0.0, 8)[0] == 0
    k, speedup = best_k(iid(0.9), COSTS, 0.0, 8)
    assert k >= 6 and speedup > 2
    assert best_k(iid(0.9), COSTS, 0.7, 8)[1] < speedup


def test_acceptance_with_equal_rates_is_leviathan():
    a = Acceptance(0.6)
    assert a.expected_tokens(4) == pytest.approx(expected_tokens(0.6, 4))


def test_acceptance_learns_runs():
    """Copies are accepted in runs: after long runs, late positions are trusted more."""
    a = Acceptance(0.5)
    for _ in range(10):
        a.update(8, 8)
        a.update(8, 0)
    assert a.rate(0) < 0.7 < a.rate(5)
    assert a.expected_tokens(8) > expected_tokens(a.alpha, 8)


def test_unreached_positions_inherit_the_last_reached_rate():
    """A copy accepted in full up to k is priced as going on past k, not from the prior."""
    a = Acceptance(0.5)
    for _ in range(10):
        a.update(4, 4)
    assert a.rate(8) == a.rate(4) > 0.85 and a.expected_tokens(8) > 6


def test_acceptance_learns_and_forgets():
    a = Acceptance(0.5)
    for _ in range(10):
        a.update(4, 4)
    assert a.alpha > 0.85
    for _ in range(10):
        a.update(4, 0)
    assert a.alpha < 0.35


def cycle(drafted, accepted):
    return Cycle("lookup", drafted, drafted, accepted, accepted + 1, 0, 0, 0, 0)


def test_prose_is_left_to_plain_decoding_unless_copying_or_forced():
    lookup = LookupDrafter()
    ctx = Context([1, 2, 3, 1, 2], PROSE, b"")  # a 2-token match: prose does not speculate on that
    auto = AutoPolicy({"lookup": lookup}, COSTS, classify(PROSE)).choose(ctx, RunStats())
    assert auto.drafter is None and "prose" in auto.reason and "off" in auto.reason
    forced = AutoPolicy({"lookup": lookup}, COSTS, classify(PROSE), override="on").choose(
        ctx, RunStats()
    )
    assert forced.drafter is lookup
    copying = Context([1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5], PROSE, b"")  # the model repeats itself
    assert (
        AutoPolicy({"lookup": lookup}, COSTS, classify(PROSE)).choose(copying, RunStats()).drafter
        is lookup
    )


def test_structured_text_speculates_and_file_off_wins():
    ids = [5, 6, 7, 8, 9, 5, 6, 7, 8]
    choice = AutoPolicy({"lookup": LookupDrafter()}, COSTS, classify(LIST)).choose(
        Context(ids, LIST, b""), RunStats()
    )
    assert choice.drafter is not None and choice.k >= 2 and "structured" in choice.reason
    off = AutoPolicy({"lookup": LookupDrafter()}, COSTS, classify(LIST), override="off")
    assert off.choose(Context(ids, LIST, b""), RunStats()).drafter is None


def test_fallback_after_poor_cycles_then_probe_again():
    policy = AutoPolicy({"lookup": LookupDrafter()}, COSTS, classify(LIST), fallback_tokens=20)
    ids = [5, 6, 7, 8, 9, 5, 6, 7, 8]
    stats = RunStats(generated_tokens=1)
    for _ in range(3):
        assert policy.choose(Context(ids, LIST, b""), stats).drafter is not None
        stats.cycles.append(cycle(4, 1))
        stats.generated_tokens += 2
    paused = policy.choose(Context(ids, LIST, b""), stats)
    assert paused.drafter is None and paused.reason.startswith("fallback")
    stats.generated_tokens += 5  # a lookup pause lasts fallback_tokens // 4
    assert policy.choose(Context(ids, LIST, b""), stats).drafter is not None


def test_measured_costs_are_sane(tiny_gemma):
    engine = Engine(fresh(tiny_gemma))
    costs = measure_costs(engine.runner, engine.encode("Ala ma kota. " * 5))
    assert costs.verify[1] == 1.0 and costs.step_seconds > 0
    assert all(r > 0 for r in costs.verify.values())


@pytest.mark.parametrize("text", [LIST * 3, PROSE])
def test_auto_output_equals_plain(tiny_gemma, text):
    engine = Engine(fresh(tiny_gemma))
    plain = run(engine, text, AutoPolicy({}, COSTS, None, override="off"), 30)
    auto = run(engine, text, AutoPolicy({"lookup": LookupDrafter()}, COSTS, classify(text)), 30)
    assert auto[0] == plain[0] and auto[2].reasons


@pytest.mark.slow
def test_pipeline_measures_costs_with_a_cross_tokenizer_drafter(gemma, smollm):
    """The drafter's step is timed on its own tokens (target ids would index past its vocab)."""
    from decoder.config import Settings
    from decoder.pipeline import Pipeline
    from decoder.pricing import PROBE_SIZES

    pipe = Pipeline(Settings(), gemma, smollm)
    costs = pipe.costs
    assert costs.drafter_ratio > 0 and set(costs.verify) == set(PROBE_SIZES)


def test_cascade_is_priced_against_lookup_and_model(tiny_gemma):
    """A short match that the model extends well wins over either alone.

    A long match is the lookup's own, so no cascade is offered there.
    """
    from decoder.drafting.cascade import CascadeDrafter
    from decoder.drafting.drafter import ModelDrafter

    engine = Engine(fresh(tiny_gemma))
    lookup = LookupDrafter()
    model = ModelDrafter(fresh(tiny_gemma), len(engine.table))
    drafters = {
        "lookup": lookup,
        "model": model,
        "cascade": CascadeDrafter(lookup, model, engine.table),
    }
    policy = AutoPolicy(drafters, COSTS, classify(LIST))
    measured = {("cascade", 1): (6, 6), ("model", 0): (6, 0), ("lookup", 1): (2, 0)}
    for key, (drafted, accepted) in measured.items():  # the cascade's drafts go through
        policy.acceptance[key] = Acceptance(0.5)
        for _ in range(20):
            policy.acceptance[key].update(drafted, accepted)
    short = policy.choose(Context([5, 6, 7, 8, 9, 5], LIST, b""), RunStats())
    assert short.drafter is drafters["cascade"] and "cascade" in short.reason
    long = policy.choose(Context([5, 6, 7, 8, 9, 5, 6, 7, 8], LIST, b""), RunStats())
    assert long.drafter is not drafters["cascade"]
