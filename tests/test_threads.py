"""The per-pass thread plan: cores other programs hold, the background lane, real llama.cpp.

The plan's logic runs on given samples of the run queue; the llama.cpp part checks, on a tiny
random GGUF, that changing a context's threads between passes leaves every logit bit-identical
(so exact speculation survives a thread count chosen per pass) and that a background prefill
stops at a short chunk's boundary.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from decoder.backends import threads
from decoder.backends.base import PREFILL_CHUNK, Stopped
from decoder.backends.threads import FIRST_CHUNK, MIN_CHUNK, AlignedPace, Pace, ThreadPlan

pytest.importorskip("llama_cpp")

from decoder.backends.llamacpp import LlamaCppBackend  # noqa: E402
from tests.tiny_gguf import mistral_vocab, random_llama  # noqa: E402


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def plan_of(samples: list[int | None], maximum: int = 2, cpus: int = 2, **kw):
    feed, clock = iter(samples), Clock()
    return ThreadPlan(maximum, sample=lambda: next(feed), cpus=cpus, clock=clock, **kw), clock


def test_idle_machine_gets_every_configured_thread():
    plan, _ = plan_of([0, 0])
    assert [plan.threads(), plan.threads()] == [2, 2]


def test_a_busy_core_takes_one_thread_away_and_it_comes_back():
    plan, clock = plan_of([1, 1, 0, 2])
    assert plan.threads() == 1
    clock.t += 1
    assert plan.threads() == 1
    clock.t += 1
    assert plan.threads() == 2  # the hog ended: at once
    clock.t += 1
    assert plan.threads() == 1  # both cores busy: never below one


def test_a_momentary_process_within_the_window_does_not_halve_a_pass():
    plan, clock = plan_of([0, 1, 1])
    assert plan.threads() == 2
    clock.t += threads.WINDOW_S / 2
    assert plan.threads() == 2  # the idle sample is still in the window
    clock.t += threads.WINDOW_S
    assert plan.threads() == 1  # a load that stays wins


def test_an_idle_run_queue_is_read_at_most_every_sample_interval():
    seen = iter([0, 0, 0, 1, 1, 0, 0])
    reads = []
    clock = Clock()
    plan = ThreadPlan(2, sample=lambda: reads.append(clock.t) or next(seen), cpus=2, clock=clock)
    for _ in range(10):  # passes of 5 ms on an idle machine: one read in four
        assert plan.threads() == 2
        clock.t += 0.005
    assert reads == pytest.approx([0.0, 0.02, 0.04])
    clock.t = 1.0  # after a pause, a moment's load as a request comes: one thread
    assert plan.threads() == 1
    clock.t += 0.005  # read again at the next pass, not after SAMPLE_S
    assert plan.threads() == 1
    clock.t += 0.005
    assert plan.threads() == 2 and len(reads) == 6
    clock.t += 0.005
    assert plan.threads() == 2 and len(reads) == 6


def test_fixed_and_unknown_and_many_cores():
    assert plan_of([2], adaptive=False)[0].threads() == 2
    assert plan_of([None])[0].threads() == 2  # no /proc: the configured maximum
    assert plan_of([3], maximum=8, cpus=16)[0].threads() == 8
    assert plan_of([12], maximum=8, cpus=16)[0].threads() == 4


def test_background_lane_leaves_a_core_and_cuts_prefill_short():
    plan, _ = plan_of([0, 0, 0, 0])
    pace = Pace()
    with threads.background():
        pace.record(64, 0.064)  # 1 ms an id
        assert plan.threads() == 1
        assert pace.chunk(512) == 50  # PASS_S
        with threads.background(False):
            assert plan.threads() == 2 and pace.chunk(512) == 512  # nothing waits: the widest
    with threads.lane(yields=True):  # continueDocument: every thread, but a request may come
        assert plan.threads() == 2 and pace.chunk(512) == 50
    assert plan.threads() == 2 and pace.chunk(40) == 40 and pace.chunk(512) == 512


def test_pace_sizes_short_passes_in_time():
    pace = Pace()
    with threads.lane(yields=True):
        assert pace.chunk(512) == FIRST_CHUNK and pace.seconds(100) == 0.0  # nothing timed yet
        pace.record(MIN_CHUNK - 1, 10.0)  # too short a pass to say anything
        assert pace.short_per_id is None
        pace.record(16, 0.16)  # a loaded machine: 10 ms an id
        assert pace.seconds(100) == pytest.approx(1.0)  # no wide pass yet: the short ones say
        assert pace.chunk(512) == MIN_CHUNK  # 5 ids would be 50 ms, but passes keep a floor
        pace.record(100, 0.1)  # the load went away: half the weight to the newest
        assert pace.short_per_id == pytest.approx(0.0055)
    assert pace.wide_per_id is None
    pace.record(512, 0.512)  # a request's wide pass: what a request's prompt would take
    assert pace.seconds(100) == pytest.approx(0.1) and pace.short_per_id == pytest.approx(0.0055)


def test_aligned_pace_cuts_alike_in_every_lane():
    pace = AlignedPace(256)
    for lane in (threads.background(), threads.lane(yields=True), threads.background(False)):
        with lane:
            assert [pace.chunk(512, at) for at in (0, 100, 256, 600)] == [256, 156, 256, 168]
            assert pace.chunk(40, 300) == 40
            pace.record(256, 0.256)
    assert pace.seconds(10) == pytest.approx(0.01) and pace.short_per_id is None


def test_runnable_others_reads_this_machine():
    n = threads.runnable_others()
    assert n is None or n >= 0


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = random_llama(tmp_path_factory.mktemp("gguf") / "t.gguf", mistral_vocab, seed=4)
    return LlamaCppBackend(path, threads=2, adapt_threads=False)


def test_logits_do_not_depend_on_the_thread_count(tiny):
    """One-token and batched passes at 1 and 2 threads, after 600 positions: bit-identical."""
    ids = list(np.random.default_rng(0).integers(5, 1000, 610))
    runs = []
    for n in (2, 1, 2):
        tiny.reset()
        tiny.plan.maximum = n
        tiny.sync(ids[:600])
        one = tiny.forward(ids[600:603])
        tiny.plan.maximum = 3 - n  # another count for the next passes
        batch = tiny.forward(ids[603:610])
        assert tiny._threads_now == 3 - n
        runs.append((one, batch))
    for one, batch in runs[1:]:
        assert np.array_equal(one, runs[0][0]) and np.array_equal(batch, runs[0][1])
    tiny.plan.maximum = 2


def test_background_prefill_stops_at_a_short_chunk(tiny):
    ids = list(np.random.default_rng(1).integers(5, 1000, 400))
    tiny.reset()
    tiny.pace = Pace()  # not timed yet: passes of FIRST_CHUNK ids, then timed ones
    asked = []

    def stop() -> bool:
        asked.append(len(tiny.ids))
        return len(asked) > 1

    with threads.background(), pytest.raises(Stopped):
        tiny.sync(ids, should_stop=stop)
    assert tiny.ids == ids[:FIRST_CHUNK]  # a consistent prefix: the one pass before the stop
    assert tiny.pace.short_per_id is not None and tiny._threads_now == 1  # one core left free


def test_a_request_prefills_in_the_widest_passes(tiny):
    """Nothing can be waiting behind a request's own prompt (or `continue`): llama.cpp's batch."""
    ids = list(np.random.default_rng(2).integers(5, 1000, 1100))
    tiny.reset()
    tiny.pace = Pace()
    asked: list[int] = []
    tiny.sync(ids, should_stop=lambda: asked.append(len(tiny.ids)) or False)
    assert asked == [0, PREFILL_CHUNK, 2 * PREFILL_CHUNK] and tiny.ids == ids
    assert tiny.pace.wide_per_id is not None and tiny.pace.short_per_id is None


OWN_GROUP = (
    "import os; from decoder.backends.threads import own_group; "
    "print(own_group()); print(os.getsid(0) == os.getpid())"
)


@pytest.mark.parametrize("leader", [False, True])
def test_a_run_without_a_terminal_gets_its_own_scheduling_group(leader):
    """As `continue` and `serve` start: in a new session where autogroup is on, else unchanged."""
    run = subprocess.run(
        [sys.executable, "-c", OWN_GROUP],
        capture_output=True,
        text=True,
        check=True,
        stdin=subprocess.DEVNULL,
        start_new_session=leader,  # no controlling terminal either way
    )
    said, leads = run.stdout.split("\n")[:2]
    autogroup = Path(threads.AUTOGROUP).exists() and Path(threads.AUTOGROUP).read_text() == "1\n"
    if leader:
        assert said == "own (session leader)" if autogroup else said.startswith("shared")
    else:
        assert said == ("own (new session)" if autogroup else said)
        assert leads == str(autogroup)


def test_runnable_others_takes_the_larger_count_around_its_own(monkeypatch):
    counts = iter([5, 7])  # a thread of ours woke while ours were counted: the second count
    monkeypatch.setattr(threads, "_machine_runnable", lambda: next(counts))
    n = threads.runnable_others()
    assert 7 - len(os.listdir("/proc/self/task")) <= n <= 6  # this thread is running: one of ours
