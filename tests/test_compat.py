"""The other libraries' private names we rely on still exist and behave as when last checked.

Each failure names the library and the version the compatibility module was checked against,
so an upgrade that breaks bielik-lsp fails here first, not in a user's editor.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version

import pytest
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from transformers import PreTrainedTokenizerFast

from decoder.compat import mlx_lm as mlx_lm_compat
from decoder.compat import transformers as transformers_compat
from tests.mistral_tokenizer import MODEL_FILE


def changed(library: str, checked: str, what: str) -> str:
    return f"{library} {version(library)} changed {what} (compat module checked against {checked})"


def test_mlx_lm_model_classes_builds_a_model_without_weights():
    config = {
        "model_type": "llama", "hidden_size": 16, "num_hidden_layers": 1, "intermediate_size": 32,
        "num_attention_heads": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-5,
        "vocab_size": 10,
    }  # fmt: skip
    try:
        model_class, args_class = mlx_lm_compat.model_classes(config)
        model = model_class(args_class.from_dict(config))
    except Exception as error:  # any failure here is the API change this test exists to catch
        pytest.fail(changed("mlx-lm", mlx_lm_compat.CHECKED, f"_get_classes: {error!r}"))
    assert model.args.vocab_size == 10


def test_mlx_lm_download_takes_a_repo_id():
    from mlx_lm.utils import _download

    params = list(inspect.signature(_download).parameters)
    assert params[:1] == ["path_or_hf_repo"], changed("mlx-lm", mlx_lm_compat.CHECKED, "_download")


def test_mlx_lm_tokenizer_wrapper_exposes_the_hf_tokenizer():
    from mlx_lm.tokenizer_utils import TokenizerWrapper

    backend = Tokenizer(WordLevel({"a": 0, "<unk>": 1}, unk_token="<unk>"))
    hf = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<unk>")
    got = mlx_lm_compat.hf_tokenizer(TokenizerWrapper(hf))
    assert got is hf, changed("mlx-lm", mlx_lm_compat.CHECKED, "TokenizerWrapper._tokenizer")


def test_transformers_bytes_to_unicode_maps_every_byte():
    table = transformers_compat.bytes_to_unicode()
    assert sorted(table) == list(range(256)), changed(
        "transformers", transformers_compat.CHECKED, "bytes_to_unicode"
    )
    assert table[ord("a")] == "a" and table[ord(" ")] == "Ġ"


def test_transformers_gguf_tokenizer_mapping_has_the_fields_we_read():
    mapping = transformers_compat.gguf_tokenizer_mapping()
    assert {"tokenizer", "tokenizer_config"} <= set(mapping), changed(
        "transformers", transformers_compat.CHECKED, "GGUF_TOKENIZER_MAPPING"
    )
    assert "ggml.tokens" in mapping["tokenizer"]
    params = list(inspect.signature(transformers_compat.convert_gguf_tokenizer).parameters)
    assert params == ["architecture", "tokenizer_dict"]


def test_transformers_sentencepiece_extractor_reads_a_model():
    extractor = transformers_compat.sentencepiece_extractor(str(MODEL_FILE))
    assert len(extractor.proto.pieces) == 32000, changed(
        "transformers", transformers_compat.CHECKED, "SentencePieceExtractor"
    )


def test_transformers_generate_merges_ranks_by_score():
    vocab = {"a": 0, "b": 1, "ab": 2}
    assert transformers_compat.generate_merges(vocab, {"a": 0.0, "b": 0.0, "ab": -1.0}) == [
        ("a", "b")
    ], changed("transformers", transformers_compat.CHECKED, "generate_merges")
