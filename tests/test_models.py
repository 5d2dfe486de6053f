"""Model loading and GGUF conversion: converted models reproduce transformers' greedy ids exactly.

The embedded models are converted once into the real cache dir ($BIELIK_LSP_CACHE or
~/.cache/bielik-lsp) and reused by later runs; tests that write caches of their own use tmp dirs.
"""

import json
import shutil
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest
from mlx_lm.models.cache import make_prompt_cache

import decoder.backends.files
import decoder.backends.gguf
from decoder.backends.models import ModelLoadError, load_model
from decoder.config import Settings

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "reference_ids.json").read_text())
SMOLLM = "embedded:smollm2-135m"
GEMMA = "embedded:gemma-3-270m"

slow = pytest.mark.slow


@pytest.fixture(scope="session")
def embedded(gemma, smollm):
    """Both embedded models, from conftest's session fixtures (converted on the first run only)."""
    return {GEMMA: gemma, SMOLLM: smollm}


@pytest.fixture(scope="module")
def smollm_tokenizer_dir(embedded, tmp_path_factory) -> Path:
    """A real tokenizer (SmolLM2's, 49152 tokens): the one the converter wrote."""
    path = tmp_path_factory.mktemp("tokenizer")
    for file in embedded[SMOLLM].path.iterdir():
        if file.name.startswith(("tokenizer", "chat_template")):
            shutil.copy(file, path)
    return path


def tiny_llama_dir(path: Path, tokenizer_dir: Path, vocab_size: int) -> Path:
    """A randomly initialised 1-layer llama in mlx-lm's layout, with the given tokenizer."""
    from mlx_lm.models import llama
    from mlx_lm.utils import save_config, save_model

    config = {
        "model_type": "llama",
        "hidden_size": 16,
        "num_hidden_layers": 1,
        "intermediate_size": 32,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
        "rms_norm_eps": 1e-5,
        "vocab_size": vocab_size,
        "tie_word_embeddings": True,
    }
    model = llama.Model(llama.ModelArgs.from_dict(config))
    save_model(path, model)
    save_config(config, path / "config.json")
    for file in tokenizer_dir.iterdir():
        shutil.copy(file, path)
    return path


def greedy(model, prompt_ids: list[int], n: int) -> list[int]:
    """N argmax tokens after the prompt, one cached forward pass each."""
    cache = make_prompt_cache(model)
    logits = model(mx.array(prompt_ids)[None], cache=cache)
    out = []
    while True:
        out.append(int(mx.argmax(logits[0, -1])))
        if len(out) == n:
            return out
        logits = model(mx.array([out[-1:]]), cache=cache)


@slow
@pytest.mark.parametrize(
    "case", REFERENCE["cases"], ids=lambda c: f"{c['model']}:{c['prompt'][:16]}"
)
def test_converted_models_match_transformers_reference(embedded, case):
    loaded = embedded[case["model"]]
    assert loaded.source == "embedded"
    assert loaded.tokenizer.encode(case["prompt"]) == case["prompt_ids"]
    assert (
        greedy(loaded.backend.model, case["prompt_ids"], len(case["generated_ids"]))
        == case["generated_ids"]
    )


@slow
def test_embedded_gguf_files_are_the_referenced_ones(embedded):
    from decoder.backends.embedded import embedded_gguf

    for case in REFERENCE["cases"]:
        path = embedded_gguf(case["model"].removeprefix("embedded:"))
        assert decoder.backends.files.file_sha256(path) == case["gguf_sha256"]


@slow
def test_second_load_does_not_convert_again(embedded, monkeypatch):
    path = embedded[SMOLLM].path
    written = (path / "model.safetensors").stat().st_mtime_ns

    def no_conversion(*args, **kwargs):
        raise AssertionError("converted again")

    monkeypatch.setattr(decoder.backends.gguf, "_convert", no_conversion)
    again = load_model(SMOLLM, Settings(), "mlx", progress=False)
    assert again.path == path
    assert (path / "model.safetensors").stat().st_mtime_ns == written


@slow
def test_converted_dir_loads_as_plain_directory(embedded):
    converted = embedded[SMOLLM]
    loaded = load_model(str(converted.path), Settings(), "mlx", progress=False)
    assert loaded.source == "dir" and loaded.path == converted.path
    case = next(c for c in REFERENCE["cases"] if c["model"] == SMOLLM)
    assert greedy(loaded.backend.model, case["prompt_ids"], 3) == case["generated_ids"][:3]


@slow
def test_tiny_random_model_dir_loads_and_casts(tmp_path, smollm_tokenizer_dir):
    path = tiny_llama_dir(tmp_path, smollm_tokenizer_dir, vocab_size=49152)
    loaded = load_model(str(path), Settings(dtype="float16"), "mlx")
    assert loaded.source == "dir"
    assert loaded.backend.model.model.embed_tokens.weight.dtype == mx.float16
    logits = loaded.backend.model(mx.array([loaded.tokenizer.encode("Zażółć gęślą jaźń")]))
    assert logits.shape[-1] == 49152


@slow
def test_tokenizer_bigger_than_embedding_is_refused(tmp_path, smollm_tokenizer_dir):
    path = tiny_llama_dir(tmp_path, smollm_tokenizer_dir, vocab_size=1000)
    with pytest.raises(
        ModelLoadError, match=r"tokenizer .* has 49152 tokens but model .* embeds 1000"
    ):
        load_model(str(path), Settings(), "mlx")


@slow
def test_truncated_gguf_is_refused(tmp_path, monkeypatch):
    from decoder.backends.embedded import smollm_gguf

    monkeypatch.setenv("BIELIK_LSP_CACHE", str(tmp_path / "cache"))
    truncated = tmp_path / "truncated.gguf"
    with smollm_gguf().open("rb") as file:
        truncated.write_bytes(file.read(1 << 20))
    with pytest.raises(ModelLoadError, match="truncated"):
        load_model(str(truncated), Settings(), "mlx", progress=False)
    assert not any((tmp_path / "cache" / "mlx").iterdir())


def test_missing_gguf_file():
    with pytest.raises(ModelLoadError, match="GGUF file not found"):
        load_model("/nonexistent/model.gguf", Settings(), "mlx")


def test_unknown_specs():
    with pytest.raises(ModelLoadError, match="unknown model"):
        load_model("not a model spec", Settings(), "mlx")
    with pytest.raises(ModelLoadError, match="unknown embedded model"):
        load_model("embedded:gpt-5", Settings(), "mlx")
    with pytest.raises(ModelLoadError, match="unsupported dtype"):
        load_model(SMOLLM, Settings(dtype="int8"), "mlx")


def test_directory_without_model(tmp_path):
    with pytest.raises(ModelLoadError, match="no config.json"):
        load_model(str(tmp_path), Settings(), "mlx")


def test_unreachable_hub_gives_one_line_error():
    with pytest.raises(ModelLoadError, match="Hugging Face hub") as raised:
        load_model("no-such-owner-bielik/no-such-model", Settings(), "mlx")
    assert "\n" not in str(raised.value)


def test_unsupported_architecture(tmp_path, monkeypatch):
    import gguf

    monkeypatch.setenv("BIELIK_LSP_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "gpt2.gguf"
    writer = gguf.GGUFWriter(path, "gpt2")
    writer.add_tensor("token_embd.weight", np.zeros((8, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ModelLoadError, match="architecture 'gpt2' is not supported"):
        load_model(str(path), Settings(), "mlx", progress=False)


def test_killed_conversion_leaves_no_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("BIELIK_LSP_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "any.gguf"
    path.write_bytes(b"GGUF not really")

    def dies_halfway(gguf_path, out, dtype, progress):
        (out / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(decoder.backends.gguf, "_convert", dies_halfway)
    with pytest.raises(KeyboardInterrupt):
        decoder.backends.gguf.convert_gguf(path)
    assert list((tmp_path / "cache" / "mlx").iterdir()) == []


def test_file_hash_is_cached_by_size_and_mtime(tmp_path, monkeypatch):
    import hashlib

    monkeypatch.setenv("BIELIK_LSP_CACHE", str(tmp_path / "cache"))
    hashings = []
    real_sha256 = hashlib.sha256
    monkeypatch.setattr(
        decoder.backends.files.hashlib, "sha256", lambda: hashings.append(1) or real_sha256()
    )
    path = tmp_path / "weights.gguf"
    path.write_bytes(b"abc")
    assert decoder.backends.files.file_sha256(path) == real_sha256(b"abc").hexdigest()
    assert decoder.backends.files.file_sha256(path) == real_sha256(b"abc").hexdigest()
    assert len(hashings) == 1
    path.write_bytes(b"abcd")
    assert decoder.backends.files.file_sha256(path) == real_sha256(b"abcd").hexdigest()
    assert len(hashings) == 2
