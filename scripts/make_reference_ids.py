"""Greedy token ids from transformers' own GGUF loading: the reference our MLX conversion matches.

Needs torch (CPU) and accelerate, which are not project dependencies: pip install torch accelerate
Run: python scripts/make_reference_ids.py  -> writes tests/fixtures/reference_ids.json
"""

import json
import sys
from pathlib import Path

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from decoder.backends.embedded import embedded_gguf  # noqa: E402
from decoder.backends.files import file_sha256  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "reference_ids.json"
MODELS = ("gemma-3-270m", "smollm2-135m")
PROMPTS = (
    "Stolica Polski to",
    "Lista zakupów:\n1. mleko\n2.",
    "Zażółć gęślą jaźń, powiedział",
    "The capital of France is",
)
NEW_TOKENS = 20


@torch.no_grad()
def greedy(model, ids: list[int], n: int) -> list[int]:
    """Plain argmax loop over full forward passes: no generate() options can change the result."""
    ids = list(ids)
    for _ in range(n):
        logits = model(torch.tensor([ids])).logits
        ids.append(int(logits[0, -1].argmax()))
    return ids[-n:]


def main() -> None:
    torch.manual_seed(0)
    cases = []
    for name in MODELS:
        gguf_path = embedded_gguf(name)
        tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(
            gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32
        ).eval()
        for prompt in PROMPTS:
            prompt_ids = tokenizer(prompt).input_ids
            generated = greedy(model, prompt_ids, NEW_TOKENS)
            text = tokenizer.decode(generated)
            print(f"{name}: {prompt!r} -> {text!r}", file=sys.stderr)
            cases.append(
                {
                    "model": f"embedded:{name}",
                    "gguf_sha256": file_sha256(gguf_path),
                    "prompt": prompt,
                    "prompt_ids": prompt_ids,
                    "generated_ids": generated,
                    "generated_text": text,
                }
            )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "dtype": "float32",
    }
    OUT.write_text(json.dumps({**meta, "cases": cases}, ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
