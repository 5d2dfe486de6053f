"""Adding a drafter, a backend or a setting is one module plus one entry; all else derives from it.

Each test registers a tiny one the way a contributor would, and checks that the settings, the
command line, the editors' tables, the loader, `auto` and doctor know it without another edit.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

import numpy as np
import pytest

from app.cli import add_settings, build_parser
from decoder.backends import registry as backends
from decoder.config import SCHEMA, Settings
from decoder.drafting import registry as drafters
from decoder.drafting.drafter import NO_DRAFT, Context, Draft
from decoder.engine import PLAIN, Engine, FixedPolicy
from decoder.generation import collect
from decoder.pipeline import Pipeline
from decoder.policy import AutoPolicy
from decoder.pricing import Costs, Market, Offer, best_k
from decoder.schema import ConfigError, entries, setting
from decoder.stats import RunStats
from lsp_server.settings import Config, ServerOptions
from polish.content import classify
from tests import tiny_backend

COSTS = Costs({1: 1.0, 2: 1.1, 3: 1.2, 5: 1.4, 9: 1.8}, 0.01, 0.0)
RULE = "Tabela:\n" + "=" * 40


class RepeatDrafter:
    """Proposes the last token again: ruled lines, underlines, runs of dots."""

    name = "repeat"

    def propose(self, ctx: Context, k: int, sampling, keys) -> Draft:
        runs = len(ctx.ids) >= 2 and ctx.ids[-1] == ctx.ids[-2]
        return Draft([ctx.ids[-1]] * k) if runs and k > 0 else NO_DRAFT

    def offer(self, market: Market) -> Offer | None:
        expected = market.estimate((self.name, 0), 0.9).expected_tokens
        k, speedup = best_k(expected, market.costs, 0.0, market.k_max)
        return Offer(speedup, k, (self.name, 0))


@pytest.fixture
def repeat(monkeypatch):
    kind = drafters.DrafterKind(
        "repeat", "repeats the last token", False, lambda p: RepeatDrafter()
    )
    monkeypatch.setitem(drafters.DRAFTERS, "repeat", kind)
    return kind


@pytest.fixture
def tiny(monkeypatch):
    kind = backends.BackendKind(
        "tiny",
        "a random bigram model in numpy",
        "tests.tiny_backend",
        requires="numpy",
        install="pip install numpy",
        presets={"tiny": {"target": "seed:7", "drafter_model": "seed:8"}},
    )
    monkeypatch.setitem(backends.BACKENDS, "tiny", kind)
    return kind


def test_a_registered_drafter_is_a_setting_a_flag_and_an_option_of_auto(repeat):
    assert Settings(drafter="repeat").drafter == "repeat"
    assert not drafters.needs_model("repeat")
    args = build_parser().parse_args(["continue", "f.txt", "--drafter", "repeat"])
    assert args.drafter == "repeat"
    drafter_entry = next(e for e in SCHEMA if e.name == "drafter")
    assert "repeat" in drafter_entry.choices  # what the editors' enums are written from
    assert len(drafter_entry.choice_docs) == len(drafter_entry.choices)
    built = drafters.build(drafters.Parts(tiny_backend.TinyBackend(1)))
    assert isinstance(built["repeat"], RepeatDrafter)
    ids = [5, 6, 9, 9, 9]
    choice = AutoPolicy(built, COSTS, classify(RULE)).choose(Context(ids, RULE, b""), RunStats())
    assert choice.drafter is built["repeat"], choice.reason


def test_a_registered_backend_loads_decodes_exactly_and_reports(tiny, repeat, capsys):
    settings = Settings(backend="tiny").updated({"preset": "tiny", "drafter": "repeat", "k": 4})
    assert settings.target == "seed:7" and settings.target_backend == "tiny"
    pipe = Pipeline.load(settings, progress=False)
    assert pipe.describe()["target"]["backend"] == "tiny"
    plain = collect(pipe.continue_text(RULE, max_tokens=40, policy=PLAIN))
    fast = collect(pipe.continue_text(RULE, max_tokens=40, policy=pipe.policy("repeat", 4)))
    assert fast.ids == plain.ids
    from app.bench.peers import backend_peers, time_peer

    (peer,) = backend_peers("tiny", pipe.engine.runner)
    assert time_peer(peer, pipe.engine.encode(RULE), 40)["ids"] == plain.ids
    from app.commands import run_doctor

    run_doctor(settings, argparse.Namespace(load=False, json=False))
    assert "random bigram models for tests" in capsys.readouterr().out
    with pytest.raises(ConfigError, match="must be one of"):
        Settings(backend="tiny2")


def test_a_registered_backends_drafts_are_exact_in_every_draft_length(tiny):
    engine = Engine(tiny_backend.TinyBackend(3))
    model = tiny_backend.TinyBackend(4)
    draft = drafters.build(drafters.Parts(engine.runner, model))["model"]
    prompt = engine.encode("Lista: 1. jeden 2. dwa 3. trzy 4.")
    plain = collect(engine.generate(prompt, max_tokens=30)).ids
    for k in range(1, 9):
        policy = FixedPolicy(draft, k)
        assert collect(engine.generate(prompt, max_tokens=30, policy=policy)).ids == plain


@dataclasses.dataclass(frozen=True)
class WithRing(ServerOptions):
    ring_chunks: int = setting(16, "chunks of other files kept as context", minimum=0)


def test_a_new_setting_is_one_field():
    """Validation, camelCase, the flag and the editors' entry follow from the field alone."""
    (entry,) = [e for e in entries(WithRing, "server") if e.name == "ring_chunks"]
    assert (entry.camel, entry.kind, entry.default) == ("ringChunks", "int", 16)
    assert WithRing(ring_chunks=4).ring_chunks == 4
    with pytest.raises(ConfigError, match="ring_chunks must be at least 0"):
        WithRing(ring_chunks=-1)
    with pytest.raises(ConfigError, match="must be an integer"):
        WithRing(ring_chunks="4")
    flag = dataclasses.replace(entry, meta=dataclasses.replace(entry.meta, cli="serve"))
    parser = argparse.ArgumentParser()
    add_settings(parser, "serve", (flag,))
    assert parser.parse_args(["--ring-chunks", "3"]).ring_chunks == 3
    config = Config(Settings(), ServerOptions()).describe()
    assert json.dumps(config)  # the described configuration stays plain JSON


def test_the_tiny_backend_is_batch_invariant():
    backend = tiny_backend.TinyBackend(5)
    ids = list(range(100, 140))
    backend.sync(ids[:30])
    one = np.stack([backend.forward([i])[0] for i in ids[30:]])
    backend.rewind(10)
    assert np.array_equal(one, backend.forward(ids[30:]))
