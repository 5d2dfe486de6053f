"""PREDICTED speed of each Bielik preset on Apple silicon, relative to `bielik` decoding plain.

    python scripts/predict_bielik.py

Predictions, not measurements (no Mac and no Bielik weights here). Three parts, each printed
with where it comes from:

- plain decoding is memory-bound on Apple silicon: tokens/s scale with 1 / weight bytes;
- speculation: the paper's cost model S = committed / (1 + β·k² + drafting), with its M2 Pro
  fit β = 0.19 (app/bench/analysis.py), the drafter's cost r as its weight bytes over the
  target's, k chosen best for each drafter, and the acceptance measured on the embedded pair
  here (docs/benchmarks.md; lookup and the model drafter) or, for DFlash, published;
- characters per token: the Mistral v1 tokenizer (Bielik-11B-v3's base, from mistral-common)
  measured on this repository's Polish corpus; the Polish tokenizer's from the paper's
  fertility (3.22 -> 1.62 tokens per word, arXiv 2604.10799).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.bench.analysis import PAPER_BETA  # noqa: E402

# Weight bytes (GB) as each preset loads them on MLX: 8-bit where SpeakLeash publishes an MLX
# conversion, else the published bf16 safetensors (2 bytes per parameter). Parameter counts from
# the Hugging Face collections (11B, 7B, 4.76B, 1.5B; DFlash drafter 1.0B).
GB = {
    "bielik": 11.2,  # Bielik-11B-v3.0-Instruct-MLX-8bit
    "bielik-pl": 22.4,  # Bielik-PL-11B-v3.0-Instruct, bf16 (no MLX conversion published)
    "bielik-minitron": 14.0,  # Bielik-Minitron-7B-v3.0-Instruct, bf16
    "bielik-pl-minitron": 14.0,  # Bielik-PL-Minitron-7B-v3.0-Instruct, bf16
    "bielik-4.5b": 9.5,  # Bielik-4.5B-v3.0-Instruct, bf16
}
DRAFTER_GB = {"apt4-1.5b": 1.6, "dflash": 2.0}  # 1.5B MLX-8bit; DFlash 1.0B bf16
# Acceptance α = accepted / drafted measured here on the embedded pair (docs/benchmarks.md, MLX):
# the model drafter through another tokenizer 44.3%, lookup 48.0%. No same-tokenizer pair is
# measured here: its α is taken as the cross-tokenizer one (a lower bound).
MODEL_ALPHA = 0.443
# DFlash: mean tokens per cycle (accepted + 1) with a 16-token block on MT-Bench, z-lab's drafter
# under z-lab's benchmark: 3.28 (NVIDIA/Model-Optimizer pull request 1211). English chat, not
# Polish prose: DFlash's authors report more on structured output, little on free prose.
DFLASH_TAU, DFLASH_BLOCK = 3.28, 16
PL_CHARS_GAIN = 3.22 / 1.62  # same text, fewer tokens: tokens per word 3.22 -> 1.62


def per_token_rate(tau: float, block: int) -> float:
    """The i.i.d. acceptance p whose expected tokens per cycle, (1 - p^block) / (1 - p), is tau."""
    lo, hi = 0.0, 0.9999
    for _ in range(60):
        p = (lo + hi) / 2
        lo, hi = (p, hi) if (1 - p**block) / (1 - p) < tau else (lo, p)
    return lo


def model_speedup(alpha: float, r_per_pass: float) -> tuple[float, int]:
    """Best k for an autoregressive drafter, paper's model: (1 + αk) / ((k+1)r + 1 + βk²)."""
    best = max(
        ((1 + alpha * k) / ((k + 1) * r_per_pass + 1 + PAPER_BETA * k * k), k) for k in range(1, 9)
    )
    return best if best[0] > 1 else (1.0, 0)


def dflash_speedup(r_cycle: float) -> tuple[float, int]:
    """Best k for a block drafter: one pass per cycle; committed from the published τ."""
    p = per_token_rate(DFLASH_TAU, DFLASH_BLOCK)
    best = max(
        ((1 - p ** (k + 1)) / (1 - p) / (1 + PAPER_BETA * k * k + r_cycle), k)
        for k in range(1, DFLASH_BLOCK)
    )
    return best if best[0] > 1 else (1.0, 0)


def mistral_chars_per_token() -> float:
    """Unicode characters per token of the Mistral v1 tokenizer on the Polish corpus."""
    import mistral_common
    import sentencepiece

    model = Path(mistral_common.__file__).parent / "data" / "tokenizer.model.v1"
    sp = sentencepiece.SentencePieceProcessor(model_file=str(model))
    rows = [json.loads(line) for line in (ROOT / "polish/data/bench.jsonl").open(encoding="utf-8")]
    texts = [r["text"] for r in rows if "text" in r]
    return sum(map(len, texts)) / sum(len(sp.encode(t)) for t in texts)


def main() -> int:
    cpt = mistral_chars_per_token()
    print(f"Mistral v1 tokenizer on the Polish corpus: {cpt:.2f} characters per token")
    print(f"PL tokenizer (paper's fertility): {cpt * PL_CHARS_GAIN:.2f} characters per token\n")
    rows = [
        ("bielik", "dflash", False),
        ("bielik-pl", "apt4-1.5b", True),
        ("bielik-minitron", "dflash", False),
        ("bielik-pl-minitron", "apt4-1.5b", True),
        ("bielik-4.5b", "apt4-1.5b", None),
    ]
    print(
        "| preset | plain tok/s | drafter | PREDICTED speedup (k) | PREDICTED tok/s | "
        "PREDICTED chars/s |"
    )
    print("|---|---|---|---|---|---|")
    for preset, drafter, polish in rows:
        plain = GB["bielik"] / GB[preset]
        r = DRAFTER_GB[drafter] / GB[preset]
        s, k = dflash_speedup(r) if drafter == "dflash" else model_speedup(MODEL_ALPHA, r)
        gain = PL_CHARS_GAIN if polish else 1.0
        chars = (
            "unknown (APT4's fertility not published)"
            if polish is None
            else f"{plain * s * gain:.2f}x"
        )
        cells = [preset, f"{plain:.2f}x", drafter, f"{s:.2f} (k={k})", f"{plain * s:.2f}x", chars]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
