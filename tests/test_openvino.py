"""The OpenVINO backend on the embedded SmolLM2-135M Q4_1 GGUF (llama architecture).

Loading (GGUF exported once by OpenVINO GenAI's reader, an IR directory as a spec), rewinds by
masking, per-document caches, speculative output against plain output past 600 positions, the
exactness self-check, and one-line errors for a GGUF OpenVINO cannot read and a bad device.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("openvino_genai")

from decoder.backends import openvino as ovb  # noqa: E402
from decoder.backends.models import ModelLoadError, load_model  # noqa: E402
from decoder.config import ConfigError, Settings  # noqa: E402
from decoder.engine import FixedPolicy  # noqa: E402
from decoder.pipeline import Pipeline  # noqa: E402
from decoder.policy import AutoPolicy  # noqa: E402
from decoder.vocab import ids_to_bytes  # noqa: E402

SMOL = "embedded:smollm2-135m"
SETTINGS = Settings(backend="openvino", target=SMOL, drafter="lookup")
LONG = (
    "Art. 1. Rzeczpospolita Polska jest dobrem wspólnym wszystkich obywateli.\n"
    "Art. 2. Rzeczpospolita Polska jest demokratycznym państwem prawnym.\n"
) * 14 + "Lista:\n1. jeden\n2. dwa\n3."
SHORT = "Art. 1. Rzeczpospolita Polska jest dobrem wspólnym wszystkich obywateli.\nArt. 2."


@functools.cache
def smol():
    return load_model(SMOL, SETTINGS, "openvino", progress=False)


@functools.cache
def pipeline(exact: bool) -> Pipeline:
    return Pipeline(replace(SETTINGS, exact=exact), smol())


def greedy(backend, ids: list[int], n: int) -> list[int]:
    logits, out = backend.sync(ids), []
    for _ in range(n):
        out.append(int(logits.argmax()))
        logits = backend.forward(out[-1:])[-1]
    return out


def test_loads_the_embedded_llama_gguf_and_spells_text_exactly():
    model = smol()
    backend = model.backend
    assert model.source == "embedded" and (model.path / ovb.MODEL_FILE).is_file()
    info = backend.describe()
    assert info["device"].startswith("CPU") and "CPU" in info["devices"]
    text = "Zażółć gęślą jaźń, źdźbło i łódź."
    ids = backend.tokenizer.encode(text)
    assert ids_to_bytes(backend.table, ids).decode("utf-8").strip() == text
    backend.reset()
    rows = backend.forward(ids)
    assert rows.shape == (len(ids), backend.vocab_size) and rows.dtype == np.float32
    assert backend.ids == ids


def test_an_ir_directory_is_a_spec_and_gives_the_same_logits():
    first = smol().backend
    again = load_model(str(smol().path), SETTINGS, "openvino", progress=False)
    assert again.source == "dir"
    ids = first.tokenizer.encode(SHORT)
    first.reset()
    assert np.array_equal(first.sync(ids), again.backend.sync(ids))


def test_rewinds_and_squeezes_keep_the_continuation():
    """Masked rewinds, and the squeeze that drops them, leave greedy output as a fresh cache's."""
    backend = smol().backend
    ids = backend.tokenizer.encode(SHORT)
    backend.reset()
    want = greedy(backend, ids, 24)
    backend.reset()
    logits, out = backend.sync(ids), []
    for _ in range(24):  # each step feeds 5 wrong ids and takes them back: holes, then squeezes
        out.append(int(logits.argmax()))
        backend.forward([out[-1], 11, 12, 13, 14, 15])
        backend.rewind(6)
        logits = backend.forward(out[-1:])[-1]
    assert out == want
    assert len(backend.live) < len(backend.ids) + 5 * 24  # squeezed at least once
    assert backend.ids == ids + out
    with pytest.raises(ValueError):
        backend.rewind(len(backend.ids) + 1)


def test_plain_decoding_reads_the_same_text_from_any_fresh_cache():
    """OpenVINO's logits depend on how a prompt is cut into passes: at fixed positions here.

    So plain decoding gives the same ids however long the last passes took, in another backend,
    and through the pipeline with `auto` (plain here, `exact` on).
    """
    backend = smol().backend
    ids = backend.tokenizer.encode(LONG)
    backend.reset()
    want = greedy(backend, ids, 32)
    backend.pace.record(64, 10.0)  # a slow pass: a pace in time would cut the next prompt finer
    backend.reset()
    assert greedy(backend, ids, 32) == want
    assert greedy(ovb.OpenVINOBackend(smol().path, progress=False), ids, 32) == want
    exact = pipeline(True)
    for policy in (FixedPolicy(None, 0), exact.policy("auto", text=LONG)):
        backend.reset()
        run = list(exact.continue_text(LONG, max_tokens=32, policy=policy))
        assert [i for c in run for i in c.ids] == want


def test_documents_keep_their_caches():
    backend = smol().backend
    a, b = (backend.tokenizer.encode(t) for t in (SHORT, LONG))
    backend.reset()
    backend.select("a")
    first = backend.sync(a)
    backend.select("b")
    backend.sync(b)
    backend.select("a")
    assert backend.ids == a
    again = backend.sync(a)
    assert backend.prefilled == 1 and int(again.argmax()) == int(first.argmax())
    backend.forget("a")
    assert backend.ids == []


def test_exactness_is_measured_and_auto_follows_it():
    """OpenVINO's CPU passes are not bit-identical to one-token ones: `auto` decodes plain.

    With `exact` on it says why; with it off, `auto` speculates.
    """
    exact = pipeline(True)
    found = exact.exactness
    assert found.positions == 600 and found.widths
    assert not found.exact and found.max_diff > 0, found.describe()
    policy = exact.policy("auto", text=LONG)
    assert isinstance(policy, FixedPolicy) and "openvino" in policy.choice.reason
    auto = pipeline(False).policy("auto", text=LONG)
    assert isinstance(auto, AutoPolicy) and "exact off" in auto.note


@pytest.mark.xfail(
    reason="OpenVINO's CPU passes are measured not batch-invariant (exact off here): equality is "
    "observed, not guaranteed; k=8 parted from plain once under load (issue 28 stays open)",
    strict=False,
)
@pytest.mark.parametrize("k", [1, 3, 8])
def test_speculative_output_equals_plain_past_600_positions(k):
    """Lookup drafts of k tokens and `auto`, on text past 600 positions: plain's ids.

    Measured on this machine's kernels (the passes are not bit-identical, see above): a
    near-tie within OpenVINO's batched/one-token difference could part them elsewhere.
    """
    pipe = pipeline(False)
    for text in (SHORT, LONG):
        assert len(pipe.engine.encode(text)) > 600 or text == SHORT
        plain = list(pipe.continue_text(text, max_tokens=48, policy=FixedPolicy(None, 0)))
        want = [i for c in plain for i in c.ids]
        for name in ("lookup", "auto"):
            policy = pipe.policy(name, k, text=text)
            spec = list(pipe.continue_text(text, max_tokens=48, policy=policy))
            assert [i for c in spec for i in c.ids] == want, (name, k, text[:20])


def test_genai_peers_generate_from_the_same_ids():
    backend = smol().backend
    ids = backend.tokenizer.encode(SHORT)
    for name, generate in ovb.peers(backend):
        out = list(generate(ids, 12))
        assert 0 < len(out) <= 12 and all(0 <= t < backend.vocab_size for t in out), name


def test_a_gguf_openvino_cannot_read_is_refused_in_one_line():
    """Gemma-3-270M Q4_K_M: gemma3 architecture, and Q5_0 tensors (rows of 640 are no K-quant)."""
    with pytest.raises(ModelLoadError) as error:
        load_model("embedded:gemma-3-270m", SETTINGS, "openvino", progress=False)
    message = str(error.value)
    assert "\n" not in message
    assert "'gemma3'" in message and "Q5_0" in message and "Q4_K" not in message.split("(")[0]
    assert "--backend llamacpp" in message


def test_unknown_and_absent_devices_are_refused_in_one_line(tmp_path):
    with pytest.raises(ConfigError):
        Settings(backend="openvino", device="TPU")
    if "GPU" not in ovb.core().available_devices:
        with pytest.raises(ModelLoadError, match="OpenVINO sees no GPU .*--device CPU"):
            load_model(SMOL, replace(SETTINGS, device="GPU"), "openvino", progress=False)
    with pytest.raises(ModelLoadError, match="not an OpenVINO IR directory"):
        load_model(str(tmp_path), SETTINGS, "openvino", progress=False)


def test_doctor_names_the_device_and_whether_passes_are_exact(capsys):
    """The global flags after the command, as in `doctor --load --backend openvino --target X`."""
    from app.cli import build_parser, main, overrides

    args = build_parser().parse_args(["--threads", "2", "doctor", "--backend", "openvino"])
    assert overrides(args)["backend"] == "openvino" and overrides(args)["threads"] == 2
    code = main(["doctor", "--load", "--backend", "openvino", "--target", SMOL])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "devices seen: CPU" in out
    lines = out.splitlines()
    target = next(line for line in lines if line.startswith("target") and "device" in line)
    assert "device CPU (" in target
    exact = next(line for line in lines if line.startswith("exact"))
    assert "exact: no" in exact and "max |diff|" in exact
