"""mlx-lm internals used by the MLX backend. Checked against mlx-lm 0.32.2.

- `_get_classes(config)`: the model and arguments classes for a config, which the GGUF import
  needs to build a model before it has weights (mlx-lm's public `load` wants a directory).
- `_download(repo)`: mlx-lm's own hub snapshot (the allow-list of files it loads).
- `TokenizerWrapper._tokenizer`: the Hugging Face tokenizer behind the wrapper, for byte-exact
  token tables and offsets that the wrapper does not expose.
"""

from __future__ import annotations

from pathlib import Path

CHECKED = "0.32.2"


def model_classes(config: dict) -> tuple[type, type]:
    """(Model class, ModelArgs class) for an mlx-lm config dict."""
    from mlx_lm.utils import _get_classes

    return _get_classes(config)


def download(repo: str) -> Path:
    """A local snapshot of a hub repo, with the files mlx-lm's loader uses."""
    from mlx_lm.utils import _download

    return Path(_download(repo))


def hf_tokenizer(tokenizer):
    """The Hugging Face tokenizer behind an mlx-lm TokenizerWrapper (or the tokenizer itself)."""
    return getattr(tokenizer, "_tokenizer", tokenizer)
