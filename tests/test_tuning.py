"""tune-drafter: s-CDF's weighting, a training step, resuming, and the adapter on both engines.

Tiny random GGUFs over real vocabularies (tests/tiny_gguf.py) stand in for the embedded pair:
the drafter is converted for MLX as the real one is, tuned for a few steps on tiny data, and its
adapter is loaded by MLX (mlx-lm's format) and by llama.cpp (the LoRA GGUF) and must change the
drafter the same way on both, while speculative output stays plain greedy decoding's.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import replace

import mlx.core as mx
import mlx.nn as nn
import numpy as np
import pytest
from mlx.utils import tree_flatten

from app.bench.corpus import load_corpus
from app.bench.drafter import excerpts
from app.errors import UserError
from app.tuning import data, scdf
from app.tuning.data import Example
from app.tuning.rows import batch, make_rows
from app.tuning.train import (
    TrainState,
    TuneConfig,
    attach_lora,
    divergence,
    draw,
    keep_frozen,
    learning_rate,
    make_optimizer,
    planned_end,
    scdf_step,
    scored_losses,
    train,
)
from decoder.backends.embedded import embedded_gguf
from decoder.backends.files import ModelLoadError, file_sha256
from decoder.backends.gguf import convert_gguf
from decoder.backends.models import load_model
from decoder.compat.mlx_lm import output_head
from decoder.config import Settings

pytest.importorskip("llama_cpp")

from tests.tiny_gguf import copied_vocab, mistral_vocab, random_llama  # noqa: E402

CONFIG = TuneConfig(rank=4, scale=1.0, layers=2, learning_rate=3e-2, rows_per_task=2)
TEXTS = {
    "structured": [
        "1. Ustawa określa zasady.\n2. Ustawa stosuje się do",
        "Art. 5. Minister właściwy do spraw\nArt. 6. Rada Ministrów",
        "- jabłka\n- gruszki\n- śliwki\n-",
    ],
    "prose": [
        "Pan Ignacy siedział w sklepie i patrzył przez okno na ulicę, po której",
        "Sąd Apelacyjny zważył, co następuje: apelacja nie zasługuje na",
        "Wieczorem deszcz ustał i nad miastem",
    ],
}


def examples() -> list[Example]:
    """Tiny data: every text as a prompt, a fixed Polish continuation as the target's choice."""
    return [
        Example(task, f"{task}-{i}", text, " i dalej tak samo, punkt po punkcie.", [])
        for task, texts in TEXTS.items()
        for i, text in enumerate(texts)
    ]


@pytest.fixture(scope="module")
def ggufs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tune")
    return {
        "target": random_llama(d / "target.gguf", mistral_vocab, seed=4),
        "drafter": random_llama(
            d / "drafter.gguf", copied_vocab(embedded_gguf("smollm2-135m")), seed=6
        ),
    }


def mlx_drafter(path):
    from mlx_lm.utils import load as load_dir

    return load_dir(str(convert_gguf(path, progress=False)))


def base(path) -> dict:
    return {"drafter_model": str(path), "gguf_sha256": file_sha256(path)}


def test_weights_give_the_best_task_nothing_and_the_slowest_most():
    w = scdf.weights({"structured": 1.0, "prose": 3.0, "your documents": 2.0})
    assert w["structured"] == 0.0
    assert w["prose"] > w["your documents"] > 0
    assert sum(w.values()) == pytest.approx(1.0)
    assert w["prose"] == pytest.approx(2 / 3)
    assert scdf.weights({"a": 2.0, "b": 2.0}) == {"a": 0.5, "b": 0.5}  # none behind: no step lost
    assert scdf.weights({"only": 4.2}) == {"only": 1.0}
    guarded = scdf.guarded(w, 0.3)  # the task ahead keeps a little, the order stays
    assert guarded["structured"] == pytest.approx(0.1) and sum(guarded.values()) == pytest.approx(1)
    assert guarded["prose"] > guarded["your documents"] > guarded["structured"]
    assert scdf.guarded(w, 0.0) == w


def test_unfairness_is_the_spread_of_divergences():
    assert scdf.unfairness({"a": 1.5, "b": 2.25, "c": 2.0}) == pytest.approx(0.75)
    assert scdf.unfairness({"a": 1.0}) == 0.0


def test_rows_score_the_continuation_in_the_drafter_tokens(ggufs):
    model, tokenizer = mlx_drafter(ggufs["drafter"])
    rows = make_rows(tokenizer, examples(), 64)
    assert set(rows) == set(TEXTS)
    for row in rows["prose"]:
        scored = tokenizer.decode(row.ids[-row.scored :])
        assert scored == examples()[0].continuation
        assert len(row.ids) <= 64
    inputs, targets, mask = batch(rows["prose"])
    assert inputs.shape == targets.shape == mask.shape
    assert mask.sum() == sum(r.scored for r in rows["prose"])
    assert output_head(model) is not None  # the llama layout: logits at the scored rows only
    full = nn.losses.cross_entropy(model(mx.array(inputs)), mx.array(targets)) * mask
    expected = float(full.sum().item()) / float(mask.sum())
    assert divergence(model, rows["prose"]) == pytest.approx(expected, rel=1e-5)


def test_an_scdf_step_lowers_the_weighted_task_loss(ggufs):
    model, tokenizer = mlx_drafter(ggufs["drafter"])
    attach_lora(model, CONFIG)
    rows = make_rows(tokenizer, examples(), 64)
    trainable = dict(tree_flatten(model.trainable_parameters()))
    assert trainable and all("lora" in name for name in trainable)
    before = {task: divergence(model, r) for task, r in rows.items()}
    first = {task: divergence(model, b) for task, b in draw(rows, CONFIG, 0).items()}
    optimizer = make_optimizer(CONFIG)
    records = [scdf_step(model, optimizer, rows, CONFIG, step) for step in range(6)]
    after = {task: divergence(model, r) for task, r in rows.items()}
    worst = max(before, key=before.get)
    best = min(first, key=first.get)  # on the step's mini-batch
    assert records[0]["w"][best] == 0.0  # s-CDF gives the best task nothing,
    assert records[0]["used"][best] == pytest.approx(CONFIG.guard / 2)  # the guard a little
    assert records[0]["D"] == pytest.approx(first, rel=1e-4)  # D_T of the step's own pass
    assert after[worst] < before[worst]
    assert sum(after.values()) < sum(before.values())


def test_kept_frozen_layers_give_the_losses_of_the_whole_model(ggufs):
    model, tokenizer = mlx_drafter(ggufs["drafter"])
    config = replace(CONFIG, layers=1)  # LoRA on the top layer: the bottom one is frozen
    attach_lora(model, config)
    rows = make_rows(tokenizer, examples(), 64)
    kept = keep_frozen(model, rows, config, quiet=True)
    for task, task_rows in rows.items():
        assert all(r.below is not None for r in kept[task])
        whole = scored_losses(model, task_rows)[0]
        split = scored_losses(model, kept[task], start=1)[0]
        np.testing.assert_allclose(np.array(split), np.array(whole), rtol=1e-4, atol=1e-5)
    assert keep_frozen(model, rows, replace(config, keep_mb=0), quiet=True) is rows
    assert keep_frozen(model, rows, CONFIG, quiet=True) is rows  # no frozen layer to keep


@pytest.mark.parametrize("layers", [2, 1])  # 1: the bottom layer's output kept per row
def test_a_resumed_run_equals_an_uninterrupted_one(ggufs, tmp_path, layers):
    config = replace(CONFIG, layers=layers)

    def tuned(folder, stops):
        model, tokenizer = mlx_drafter(ggufs["drafter"])
        attach_lora(model, config)
        rows = make_rows(tokenizer, examples(), 64)
        for stop in stops:  # each a separate run: a fresh optimizer, state read from `folder`
            state = train(
                model,
                rows,
                config,
                folder,
                base(ggufs["drafter"]),
                time.monotonic() + 600,
                quiet=True,
                max_steps=stop,
                end=4,  # the learning rate's plan: stopping at 2 does not change it
            )
        return state, dict(tree_flatten(model.trainable_parameters()))

    whole, w1 = tuned(tmp_path / "whole", [4])
    resumed, w2 = tuned(tmp_path / "resumed", [2, 4])
    assert whole.step == resumed.step == 4
    for name in w1:
        np.testing.assert_array_equal(np.array(w1[name]), np.array(w2[name]))
    saved = json.loads((tmp_path / "resumed" / "adapter_config.json").read_text())
    assert saved["bielik_lsp"]["steps"] == 4 and saved["lora_parameters"]["rank"] == config.rank


@pytest.fixture(scope="module")
def adapter(ggufs, tmp_path_factory):
    """A tuned adapter folder: a few steps, then the llama.cpp GGUF beside mlx-lm's files."""
    from app.tuning.export import write_lora_gguf

    folder = tmp_path_factory.mktemp("adapter")
    model, tokenizer = mlx_drafter(ggufs["drafter"])
    attach_lora(model, CONFIG)
    rows = make_rows(tokenizer, examples(), 64)
    train(
        model,
        rows,
        CONFIG,
        folder,
        base(ggufs["drafter"]),
        time.monotonic() + 600,
        quiet=True,
        max_steps=3,
    )
    write_lora_gguf(folder, ggufs["drafter"])
    return folder


def logits_of(backend, ids):
    backend.reset()
    return np.stack([backend.sync(ids[: n + 1]) for n in range(len(ids))])


def test_the_adapter_changes_the_drafter_alike_on_mlx_and_llama_cpp(ggufs, adapter):
    """Both engines load it; LoRA'd logits agree across engines (q/k rows permuted right)."""
    settings = Settings()
    spec = str(ggufs["drafter"])
    runs = {}
    for engine in ("mlx", "llamacpp"):
        for tuned in (None, str(adapter)):
            model = load_model(spec, settings, engine, progress=False, adapter=tuned)
            ids = model.tokenizer.encode("Zażółć gęślą jaźń, a potem ustawa o ochronie")[:12]
            runs[engine, bool(tuned)] = logits_of(model.backend, ids)
            assert (model.backend.describe()["adapter"] is not None) == bool(tuned)
    mlx = runs["mlx", True] - runs["mlx", False]
    llama = runs["llamacpp", True] - runs["llamacpp", False]
    assert np.abs(mlx).max() > 0.5  # the adapter does something
    # llama.cpp's own numerics differ from MLX's by a few hundredths here (its KV cache is
    # float16); the adapter's effect must be the same on both, which a wrong row order in the
    # GGUF (q/k not permuted) or a wrong scale would break.
    assert np.abs(mlx - llama).max() < 0.1 * np.abs(mlx).max()
    assert np.corrcoef(mlx.ravel(), llama.ravel())[0, 1] > 0.999


def test_output_with_the_adapter_equals_plain_decoding(ggufs, adapter):
    from decoder.generation import collect
    from decoder.pipeline import Pipeline

    for engine in ("llamacpp", "mlx"):
        settings = Settings(
            target=str(ggufs["target"]),
            drafter_model=str(ggufs["drafter"]),
            drafter="model",
            backend=engine,
            exact=engine == "llamacpp",
            k=4,
        )
        plain = Pipeline.load(replace(settings, drafter="none"), progress=False)
        tuned = Pipeline.load(replace(settings, drafter_adapter=str(adapter)), progress=False)
        assert tuned.describe()["drafter"]["adapter"]
        for text in ("Art. 1. Rzeczpospolita Polska jest", "Pan Ignacy siedział i patrzył"):
            want = collect(plain.continue_text(text, max_tokens=24))
            got = collect(tuned.continue_text(text, max_tokens=24))
            assert got.ids == want.ids
            assert got.stats.drafted > 0


def test_an_adapter_for_another_drafter_or_no_adapter_is_refused(ggufs, adapter, tmp_path):
    settings = Settings()
    with pytest.raises(ModelLoadError, match="tuned on"):
        load_model(str(ggufs["target"]), settings, "llamacpp", progress=False, adapter=str(adapter))
    with pytest.raises(ModelLoadError, match="no such folder"):
        load_model(str(ggufs["drafter"]), settings, "llamacpp", adapter=str(tmp_path / "nope"))
    with pytest.raises(ModelLoadError, match="missing"):
        load_model(str(ggufs["drafter"]), settings, "mlx", adapter=str(tmp_path))


def test_training_prompts_never_come_from_the_held_out_corpus():
    held = data.held_out_ids()
    texts = data.corpus_texts()
    assert texts and not {source for _, source, _ in texts} & held
    assert {task for task, _, _ in texts} == {"structured", "prose"}
    prompts = data.prompts(texts)
    assert [p.task for p in prompts[:6]].count("prose") >= 2  # tasks interleaved from the start
    bench = {e.text for e in load_corpus()}
    assert not any(p.text in bench for p in prompts)


def test_bench_drafter_measures_on_excerpts_from_a_file(tmp_path):
    path = tmp_path / "excerpts.jsonl"
    items = [{"id": f"p{i}", "label": "prose", "text": f"Zdanie {i}."} for i in range(3)]
    items += [
        {"id": "s0", "label": "structured", "text": "- punkt"},
        {"id": "m0", "label": "mixed", "text": "Akapit.\n- punkt"},
    ]
    path.write_text("\n".join(json.dumps(i, ensure_ascii=False) for i in items) + "\n\n")
    assert excerpts(2, None, str(path)) == [
        ("structured", "s0", "- punkt"),
        ("prose", "p0", "Zdanie 0."),
        ("prose", "p1", "Zdanie 1."),
    ]
    path.write_text('{"id": "a", "label": "mixed", "text": "Akapit."}\n')
    with pytest.raises(UserError, match="no excerpt labelled"):
        excerpts(2, None, str(path))
    path.write_text('{"id": "a", "label": "prose"}\n')
    with pytest.raises(UserError, match="line 1"):
        excerpts(2, None, str(path))
    with pytest.raises(UserError, match="cannot read"):
        excerpts(2, None, str(tmp_path / "missing.jsonl"))


def test_a_writer_folder_is_split_by_file(tmp_path):
    for i in range(12):
        (tmp_path / f"raport-{i}.md").write_text(f"# Raport {i}\n\nTreść raportu numer {i}.\n")
    (tmp_path / "obraz.png").write_bytes(b"\x89PNG")
    files = data.writer_files([str(tmp_path)])
    assert len(files) == 12
    train_files, held = data.split_files(files)
    assert held and train_files and not set(held) & set(train_files)
    assert data.split_files(files) == (train_files, held)  # stable
    texts = data.file_texts(train_files)
    assert {task for task, _, _ in texts} == {data.YOURS}


def test_continuations_are_cached_and_a_torn_line_is_ignored(ggufs, tmp_path):
    """Continuations are appended to DIR/data.jsonl as they come, and read back on resume.

    A line cut by a kill is skipped; a deadline already past generates none.
    """
    from decoder.generation import collect
    from decoder.pipeline import Pipeline

    settings = Settings(target=str(ggufs["target"]), drafter="lookup", k=4)
    engine = Pipeline.load(settings, progress=False)
    todo = [data.Prompt("prose", f"p{i}", text) for i, text in enumerate(TEXTS["prose"][:2])]
    made = list(data.generate(engine, todo, tmp_path, time.monotonic() + 600, 8, True))
    assert [e.source for e in made] == ["p0", "p1"]
    plain = collect(engine.continue_text(todo[0].text, max_tokens=8, policy=engine.policy("none")))
    assert made[0].target_ids == plain.ids and made[0].continuation == plain.text
    with (tmp_path / data.DATA_FILE).open("a") as f:
        f.write('{"task": "prose", "sour')
    assert [e.source for e in data.load_examples(tmp_path)] == ["p0", "p1"]
    assert not list(data.generate(engine, todo, tmp_path, time.monotonic() - 1, 8, True))


def test_the_learning_rate_falls_along_a_cosine_to_its_final_share():
    rates = [learning_rate(CONFIG, step, 10) for step in range(12)]
    assert rates[0] == CONFIG.learning_rate
    assert rates[5] == pytest.approx(CONFIG.learning_rate * (1 + CONFIG.final_rate) / 2)
    assert rates[10] == rates[11] == pytest.approx(CONFIG.learning_rate * CONFIG.final_rate)
    assert all(a > b for a, b in zip(rates[:10], rates[1:11], strict=True))
    assert learning_rate(CONFIG, 3, math.inf) == CONFIG.learning_rate  # no plan yet: full


def test_the_planned_end_is_max_steps_or_what_the_time_left_allows():
    state = TrainState(step=10, seconds=20.0)  # 2 s a step so far
    assert planned_end(state, time.monotonic() + 600, end=40) == 40
    assert planned_end(state, time.monotonic() + 60, None) == pytest.approx(40, abs=0.1)
    assert planned_end(TrainState(), time.monotonic() + 60, None) == math.inf
