"""A tuned drafter adapter (`bielik-lsp tune-drafter --out DIR`): what it holds, whether it fits.

The folder holds the LoRA in mlx-lm's format (adapters.safetensors + adapter_config.json, read by
the MLX backend) and as a llama.cpp LoRA GGUF (drafter-lora.gguf, read by the llama.cpp backend),
and names the drafter model it was tuned on. An adapter only changes the drafter: the target
verifies every token, so output stays exactly plain greedy decoding's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from decoder.backends.files import ModelLoadError

MLX_FILES = ("adapters.safetensors", "adapter_config.json")
GGUF_FILE = "drafter-lora.gguf"


@dataclass(frozen=True)
class Adapter:
    folder: Path
    config: dict  # adapter_config.json

    @property
    def base(self) -> dict:
        """What it was tuned on: drafter_model spec and the GGUF's sha256 (where one was)."""
        return self.config.get("bielik_lsp", {}).get("base", {})

    @property
    def gguf(self) -> Path:
        return self.folder / GGUF_FILE

    def describe(self) -> str:
        params = self.config.get("lora_parameters", {})
        steps = self.config.get("bielik_lsp", {}).get("steps")
        return (
            f"{self.folder} (LoRA rank {params.get('rank')} on {self.config.get('num_layers')} "
            f"layers, tuned on {self.base.get('drafter_model', '?')}"
            + (f", {steps} steps" if steps is not None else "")
            + ")"
        )


def read_adapter(folder: str | Path) -> Adapter:
    """The adapter in `folder`; a one-line ModelLoadError when it is not one."""
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise ModelLoadError(f"drafter adapter {folder}: no such folder (tune-drafter --out DIR)")
    missing = [name for name in MLX_FILES if not (path / name).is_file()]
    if missing:
        raise ModelLoadError(
            f"drafter adapter {folder}: {', '.join(missing)} missing; not a tune-drafter folder"
        )
    try:
        config = json.loads((path / "adapter_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ModelLoadError(
            f"drafter adapter {folder}: unreadable adapter_config.json: {error}"
        ) from None
    return Adapter(path, config)


def check_base(adapter: Adapter, sha256: str | None, name: str) -> None:
    """Refuse an adapter tuned on another drafter file (its LoRA would not fit, or mislead).

    `sha256` of the drafter's GGUF, or its first characters (a converted MLX directory's name
    begins with them); None when the drafter is no GGUF (nothing to compare).
    """
    want = adapter.base.get("gguf_sha256")
    if want and sha256 and not want.startswith(sha256):
        raise ModelLoadError(
            f"drafter adapter {adapter.folder} was tuned on {adapter.base.get('drafter_model')} "
            f"(sha256 {want[:12]}…), not on {name}: tune again for this drafter"
        )
