"""The llama.cpp backend: exact rewinds, prefix reuse, llama.cpp's own tokenization.

And speculative == plain greedy for every drafter, on tiny random GGUFs and the embedded pair.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("llama_cpp")

from decoder.backends.base import Stopped  # noqa: E402
from decoder.backends.embedded import embedded_gguf  # noqa: E402
from decoder.backends.llamacpp import LlamaCppBackend  # noqa: E402
from decoder.backends.models import Model, ModelLoadError, load_model  # noqa: E402
from decoder.compat import llama_cpp as compat  # noqa: E402
from decoder.config import ConfigError, Settings  # noqa: E402
from decoder.drafting.cross import CrossDrafter  # noqa: E402
from decoder.drafting.drafter import Draft, ModelDrafter  # noqa: E402
from decoder.drafting.lookup import LookupDrafter  # noqa: E402
from decoder.engine import Engine, FixedPolicy  # noqa: E402
from decoder.pipeline import Pipeline  # noqa: E402
from decoder.policy import AutoPolicy  # noqa: E402
from decoder.pricing import measure_costs  # noqa: E402
from decoder.sampling import Keys, Sampling, draw, probabilities  # noqa: E402
from decoder.verifier import accept  # noqa: E402
from tests.test_engine import check_same, check_same_tokenizer, run  # noqa: E402
from tests.texts import texts  # noqa: E402
from tests.tiny_gguf import copied_vocab, mistral_vocab, random_llama  # noqa: E402

SLOW_OK = settings(
    deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
POLISH = [
    "Zażółć gęślą jaźń, źdźbło i łódź.",
    "  Pchnąć w tę łódź jeża lub ośm skrzyń fig.\n\n\tŻÓŁW 😀 ",
    "Art. 1. Rzeczpospolita Polska jest dobrem wspólnym wszystkich obywateli.",
    "def dodaj(a, b):\n    return a + b  # suma",
]


@pytest.fixture(scope="session")
def ggufs(tmp_path_factory):
    """Bielik-shaped target, a near copy of it (same tokenizer), and a SmolLM2-vocabulary model."""
    d = tmp_path_factory.mktemp("gguf")
    smollm = embedded_gguf("smollm2-135m")
    return {
        "target": random_llama(d / "mistral.gguf", mistral_vocab, seed=4),
        "near": random_llama(d / "near.gguf", mistral_vocab, seed=5, noise_of=4),
        "other": random_llama(d / "smol.gguf", copied_vocab(smollm), seed=6),
    }


@pytest.fixture(scope="session")
def backends(ggufs):
    return {name: LlamaCppBackend(path, threads=2) for name, path in ggufs.items()}


@pytest.fixture(scope="session")
def target_engine(ggufs):
    return Engine(LlamaCppBackend(ggufs["target"], threads=2))


def test_tokenizer_encodes_as_sentencepiece_and_llama_cpp(ggufs, backends):
    """Mistral v1 through the GGUF: llama.cpp splits exactly as SentencePiece, BOS included."""
    import llama_cpp
    from sentencepiece import SentencePieceProcessor

    from tests.mistral_tokenizer import MODEL_FILE

    sp = SentencePieceProcessor(model_file=str(MODEL_FILE))
    own = llama_cpp.Llama(str(ggufs["target"]), vocab_only=True, verbose=False)
    tok = backends["target"].tokenizer
    for text in POLISH:
        ids = tok.encode(text)
        assert ids == [sp.bos_id(), *sp.encode(text)]
        assert ids == own.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        assert b"".join(tok.token_table[i] for i in ids) == b" " + text.encode("utf-8")
    assert backends["target"].eos_ids == {sp.eos_id()}
    assert backends["target"].vocab_size == 32000


def test_byte_level_vocabulary_spells_exact_bytes(backends):
    tok = backends["other"].tokenizer
    for text in POLISH:
        ids = tok.encode(text, add_special_tokens=False)
        assert b"".join(tok.token_table[i] for i in ids) == text.encode("utf-8")


def test_rewind_and_refeed_give_fresh_logits(backends):
    """Rewinding is exact: refeeding what was removed gives the same logits, bit for bit.

    (llama.cpp's numerics depend on how positions are batched, so like is compared with like.)
    """
    b = backends["target"]
    ids = b.tokenizer.encode(POLISH[2] * 3)
    b.reset()
    b.forward(ids[:-7])
    fresh = b.forward(ids[-7:]).copy()  # logits are read before the next call, or copied
    b.rewind(7)
    assert b.ids == ids[:-7]
    np.testing.assert_array_equal(b.forward(ids[-7:]), fresh)
    b.rewind(3)
    three = b.forward(ids[-3:]).copy()
    b.rewind(3)
    np.testing.assert_array_equal(b.forward(ids[-3:]), three)
    assert (three.argmax(-1) == fresh[-3:].argmax(-1)).all()
    b.reset()
    last = b.sync(ids).copy()
    assert b.prefilled == len(ids)
    b.sync(ids[:-3] + [5, 6, 7])  # a shared prefix is kept, only the new tail is fed
    assert b.prefilled == 3
    np.testing.assert_array_equal(b.sync(ids).copy(), b.sync(ids))
    assert b.prefilled == 1
    assert int(b.sync(ids).argmax()) == int(last.argmax())


def test_forward_can_return_only_some_rows(backends):
    b = backends["target"]
    ids = b.tokenizer.encode(POLISH[0])
    b.reset()
    full = b.forward(ids).copy()
    b.reset()
    rows = b.forward(ids, rows=[len(ids) - 2, len(ids) - 1])
    np.testing.assert_allclose(rows, full[-2:], rtol=1e-4, atol=1e-4)


def test_select_keeps_one_prefix_cache_per_document(backends):
    b = backends["target"]
    b.reset()
    a_ids = b.tokenizer.encode(POLISH[0] * 4)
    c_ids = b.tokenizer.encode(POLISH[1] * 4)
    b.select("file:///a.txt")
    a_logits = b.sync(a_ids).copy()
    b.select("file:///c.txt")
    assert b.ids == []
    c_logits = b.sync(c_ids).copy()
    b.select("file:///a.txt")
    assert b.ids == a_ids
    np.testing.assert_allclose(b.sync(a_ids), a_logits, rtol=1e-4, atol=1e-4)
    assert b.prefilled == 1  # only the last id, for its logits
    b.select("file:///c.txt")
    np.testing.assert_allclose(b.sync(c_ids), c_logits, rtol=1e-4, atol=1e-4)
    assert b.prefilled == 1


def test_forget_drops_a_documents_prefix_cache(backends):
    b = backends["target"]
    b.reset()
    ids = b.tokenizer.encode(POLISH[0] * 4)
    for key in ("a", "b", "c"):
        b.select(key)
        b.sync(ids)
    b.forget("a")  # saved
    b.forget("c")  # current
    assert b.ids == []
    b.select("a")
    assert b.ids == []
    b.select("b")
    assert b.ids == ids
    b.reset()


def test_prefix_caches_are_capped(ggufs):
    b = LlamaCppBackend(ggufs["target"], threads=2, prefix_cache_mb=0)
    b.select("a")
    b.sync(b.tokenizer.encode(POLISH[0]))
    b.select("b")
    b.select("a")
    assert b.ids == []  # nothing fits in 0 MB: the document starts over, correctly


def test_sync_stops_between_chunks_and_stays_consistent(backends):
    b = backends["target"]
    b.reset()
    ids = b.tokenizer.encode("Ala ma kota. " * 300)
    assert len(ids) > 1100
    calls = []
    with pytest.raises(Stopped):
        b.sync(ids, should_stop=lambda: calls.append(1) or len(calls) > 1)
    assert b.ids == ids[: len(b.ids)] and 0 < len(b.ids) < len(ids)
    resumed = b.sync(ids).copy()  # the prefix that was fed is reused, and exact
    assert b.prefilled < len(ids)
    b.reset()
    np.testing.assert_allclose(resumed, b.sync(ids), rtol=1e-4, atol=1e-4)


@settings(SLOW_OK, max_examples=12)
@given(text=texts, k=st.integers(1, 8), which=st.sampled_from(["lookup", "near", "self"]))
def test_speculative_equals_plain_same_tokenizer(target_engine, backends, text, k, which):
    models = {"near": backends["near"], "self": backends["target"]}
    check_same_tokenizer(target_engine, text, which, models, k, max_tokens=24)


@settings(SLOW_OK, max_examples=10)
@given(text=texts, k=st.integers(1, 6))
def test_speculative_equals_plain_cross_tokenizer(target_engine, backends, text, k):
    other = backends["other"]
    drafter = CrossDrafter(other, target_engine.tokenizer)
    check_same(target_engine, text, drafter, k, max_tokens=24)


@settings(SLOW_OK, max_examples=8)
@given(text=texts, k=st.integers(1, 8))
def test_auto_policy_equals_plain(target_engine, backends, text, k):
    costs = measure_costs(target_engine.runner, target_engine.encode("Ala ma kota. " * 4))
    drafters = {"lookup": LookupDrafter(), "model": ModelDrafter(backends["near"], 32000)}
    plain, _, _ = run(target_engine, text, FixedPolicy(None, 0), 24)
    auto, _, _ = run(target_engine, text, AutoPolicy(drafters, costs, None, k_max=k), 24)
    assert auto == plain


def test_rejection_sampling_on_llama_cpp_logits_is_lossless(backends):
    """The target's distribution survives verification of drafts sampled from another one."""
    t, d = backends["target"], backends["near"]
    ids = t.tokenizer.encode("Stolica Polski to")
    sampling = Sampling(temperature=0.7)
    logits = np.stack([t.sync(ids), t.sync(ids)])  # one drafted token: rows for it and after
    p = probabilities(logits, sampling)[0]
    q = probabilities(d.sync(ids)[None], Sampling(temperature=2.0))  # any q must do
    top = np.argsort(p)[-10:]
    assert np.abs(q[0, top] - p[top]).max() > 0.1  # emitting drafts unchecked would fail
    keys, trials = Keys(0), 3000
    counts = np.zeros(len(p))
    for _ in range(trials):
        draft = Draft(draw(q, keys.next()).tolist(), q)
        n, nxt = accept(logits, draft, sampling, keys)
        counts[draft.ids[0] if n else nxt] += 1
    assert np.abs(counts[top] / trials - p[top]).max() < 0.03


def test_sampling_with_a_drafter_is_reproducible(target_engine, backends):
    sampling = Sampling(temperature=0.8, top_p=0.9, seed=3)
    drafter = ModelDrafter(backends["near"], 32000)
    a = run(target_engine, POLISH[0], FixedPolicy(drafter, 4), 20, sampling)[0]
    b = run(target_engine, POLISH[0], FixedPolicy(drafter, 4), 20, sampling)[0]
    assert a == b


LONG = (
    "Art. 1. Rzeczpospolita Polska jest dobrem wspólnym wszystkich obywateli.\n"
    "Art. 2. Rzeczpospolita Polska jest demokratycznym państwem prawnym.\n"
) * 14 + "Lista:\n1. jeden\n2. dwa\n3."


@pytest.mark.parametrize("k", [1, 4, 9, 16])
def test_embedded_pair_on_llama_cpp_speculates_exactly(k):
    """Gemma-3-270M Q4_K_M as shipped, past 600 positions: every drafter's output is plain's.

    Lookup, SmolLM2 across tokenizers, the cascade and auto, verified by the exact kernels.
    """
    pipe = llama_pair()
    assert pipe.engine.runner.name == "llamacpp" and pipe.exact, pipe.exactness.describe()
    assert isinstance(pipe.drafters["model"], CrossDrafter)
    for text in (POLISH[2] + "\nArt. 2.", LONG):
        assert len(pipe.engine.encode(text)) > 600 or text != LONG
        want = plain_ids(text)
        for name in ("lookup", "model", "cascade", "auto"):
            policy = pipe.policy(name, k, text=text)
            spec = list(pipe.continue_text(text, max_tokens=32, policy=policy))
            assert [i for c in spec for i in c.ids] == want, (name, k)
            assert "may differ" not in " ".join(spec[-1].stats.reasons)


@functools.cache
def plain_ids(text: str) -> list[int]:
    """Plain greedy's 32 ids after `text` on the embedded pair: the same for every k."""
    plain = llama_pair().continue_text(text, max_tokens=32, policy=FixedPolicy(None, 0))
    return [i for c in plain for i in c.ids]


@functools.cache
def llama_pair() -> Pipeline:
    return Pipeline.load(Settings(backend="llamacpp", drafter="model", k=16), progress=False)


def test_without_exact_auto_speculates_and_says_output_may_differ():
    settings = Settings(backend="llamacpp", drafter="lookup", exact=False)
    pipe = Pipeline(settings, llama_pair().target)
    assert pipe.draft_limit is None
    assert "exact off" in pipe.policy("lookup", 4).choice.reason
    auto = pipe.policy("auto", text=LONG)
    assert isinstance(auto, AutoPolicy) and "exact off" in auto.note


def batched_and_one_token(backend, positions: int, widths: range) -> dict[int, float]:
    """Largest |diff| between one pass over n ids and n one-token passes, per width n."""
    ids = backend.tokenizer.encode(" ".join(POLISH) * 40)[: positions + max(widths)]
    backend.reset()
    backend.sync(ids[:positions])
    one = np.stack([backend.forward([i])[0] for i in ids[positions:]])
    backend.rewind(len(one))
    diffs = {}
    for n in widths:
        diffs[n] = float(np.abs(backend.forward(ids[positions : positions + n]) - one[:n]).max())
        backend.rewind(n)
    return diffs


def test_llama_cpp_fast_batches_are_not_bit_identical():
    """The fast configuration (repacking, flash attention, tiled matmul): batches differ.

    After 600 cached positions every pass of 2-16 tokens gives other logits than one-token
    passes. If a llama.cpp release makes them equal, this fails, and `exact=False` may speculate
    exactly too.
    """
    backend = LlamaCppBackend(
        embedded_gguf("gemma-3-270m"), threads=2, adapt_threads=False, exact=False
    )
    diffs = batched_and_one_token(backend, 600, range(2, 17))
    assert all(d > 0 for d in diffs.values()), diffs


@pytest.mark.skipif(
    compat.llamafile_compiled(),
    reason="this libllama has tinyBLAS (GGML_LLAMAFILE): bielik-llama-cpp is built without it",
)
def test_llama_cpp_exact_batches_are_bit_identical():
    """The exact configuration: passes of 1-16 tokens (up to the tiled cap) equal one-token ones.

    llama.cpp's tiled switch is read once per process: if a fast model decoded first, the exact
    one is exact up to 7 tokens per pass, and says so.
    """
    backend = LlamaCppBackend(embedded_gguf("gemma-3-270m"), threads=2)
    widest = backend.max_exact_width or 16
    assert widest >= 7
    diffs = batched_and_one_token(backend, 600, range(1, widest + 1))
    assert all(d == 0.0 for d in diffs.values()), diffs


def test_the_bindings_load_the_best_cpu_level_this_machine_runs():
    """bielik-llama-cpp loads its CPU backend from its own folder: the best level this CPU runs.

    LLAMA_CPP_CPU_VARIANT names another; a level the wheel lacks is a clear error at import.
    """
    levels = compat.cpu_levels()
    if levels is None:
        pytest.skip(f"{compat.LIBRARY}: the CPU backend is built in (one level)")
    assert levels.chosen_by == "score" and levels.scores[levels.cpu] > 0
    assert levels.scores[levels.cpu] == max(levels.scores.values())
    assert not compat.llamafile_compiled() and compat.build() == "CPU"
    env = {**os.environ, compat.CPU_LEVEL_ENV: "no-such-level"}
    done = subprocess.run(
        [sys.executable, "-c", "import llama_cpp"], env=env, capture_output=True, text=True
    )
    assert done.returncode != 0 and "no such CPU level" in done.stderr, done.stderr[-2000:]


@pytest.mark.slow
def test_doctor_checks_each_cpu_level_exact():
    """`doctor --cpu-levels`: each level this CPU runs loads the models in a process of its own.

    The release's wheel has every level; a clone's (install.sh) has this machine's one.
    """
    if compat.cpu_levels() is None:
        pytest.skip(f"{compat.LIBRARY}: the CPU backend is built in (one level)")
    command = [sys.executable, "-m", "app.cli", "--backend", "llamacpp", "doctor"]
    done = subprocess.run(
        [*command, "--cpu-levels", "--json"], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    runs = [row for row in report["levels"] if row["runs"]]
    assert runs and all(row["exact"] == "yes" for row in runs), report
    assert report["picked"] == compat.cpu_levels().cpu


def test_mlx_directory_on_llama_cpp_is_a_clear_error(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelLoadError, match="model directory .* llama.cpp backend loads GGUF"):
        load_model(str(tmp_path), Settings(), "llamacpp")


def test_hub_gguf_offline_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(ModelLoadError, match="cannot fetch Bielik-11B-v3.0-Instruct.Q4_K_M.gguf"):
        load_model(
            "speakleash/Bielik-11B-v3.0-Instruct-GGUF:Bielik-11B-v3.0-Instruct.Q4_K_M.gguf",
            Settings(),
            "llamacpp",
        )
    with pytest.raises(ModelLoadError, match="name one GGUF file"):
        load_model("speakleash/Bielik-11B-v3.0-Instruct-GGUF", Settings(), "llamacpp")


def test_bielik_preset_follows_the_backend():
    gguf = Settings(backend="llamacpp").updated({"preset": "bielik"})
    assert gguf.target.endswith(":Bielik-11B-v3.0-Instruct.Q4_K_M.gguf")
    mlx = Settings(backend="mlx").updated({"preset": "bielik"})
    assert mlx.target == "speakleash/Bielik-11B-v3.0-Instruct-MLX-8bit"
    v23 = Settings().updated({"preset": "bielik-v2.3", "backend": "llamacpp"})
    assert "Bielik-11B-v2.3-Instruct-GGUF" in v23.target
    with pytest.raises(ConfigError, match="backend must be one of"):
        Settings(backend="cuda")


def test_model_from_gguf_path_loads_quantized(ggufs):
    m = load_model(str(ggufs["target"]), Settings(threads=1), "llamacpp")
    assert isinstance(m, Model) and m.backend.name == "llamacpp" and m.source == "gguf"
    info = m.backend.describe()
    assert info["threads"] == 1 and info["build"] in ("CPU", "CUDA", "Metal", "Vulkan", "HIP")
