"""Compare draft translation modes on the embedded pair (Gemma-3-270M target, SmolLM2-135M drafter).

For each sample, plain greedy decoding and one speculative run per mode (none, naive, context,
anchored): acceptance rate, decode tokens/s, speedup over plain, and whether the output is
identical to plain greedy (it must be). Prints a Markdown table.

    python scripts/compare_translation.py [--max-tokens 32] [--k 4] [--prompt-chars 600]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from decoder.backends.blas import ensure_fast_blas  # noqa: E402

ensure_fast_blas()

from tqdm import tqdm  # noqa: E402

from decoder.backends.models import load_model  # noqa: E402
from decoder.drafting.cross import CrossDrafter  # noqa: E402
from decoder.drafting.translator import MODES  # noqa: E402
from decoder.engine import Engine, FixedPolicy  # noqa: E402


def samples(chars: int) -> list[tuple[str, str]]:
    """(name, prompt): the two sample files and a structured and a prose devset text."""
    out = [
        (p.stem, p.read_text(encoding="utf-8")[:chars])
        for p in (ROOT / "samples" / "konstytucja.txt", ROOT / "samples" / "lalka.txt")
    ]
    rows = [
        json.loads(line)
        for line in (ROOT / "polish" / "data" / "devset.jsonl").open(encoding="utf-8")
    ]
    for label in ("structured", "prose"):
        row = next(r for r in rows if r["label"] == label and r["id"] != "pros-001")
        out.append((row["id"], row["text"][:chars]))
    return out


def run(engine: Engine, text: str, policy, max_tokens: int):
    ids, stats = [], None
    for chunk in engine.generate(
        engine.encode(text), max_tokens=max_tokens, policy=policy, prompt_text=text
    ):
        ids += chunk.ids
        stats = chunk.stats
    return ids, stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--prompt-chars", type=int, default=600)
    args = ap.parse_args()
    target = load_model("embedded:gemma-3-270m", dtype="float32", progress=False)
    drafter = load_model("embedded:smollm2-135m", dtype="float32", progress=False)
    engine = Engine(target.model, target.tokenizer)
    rows = []
    jobs = [
        (name, text, mode)
        for name, text in samples(args.prompt_chars)
        for mode in ("plain", *MODES)
    ]
    plain = {}
    for name, text, mode in tqdm(jobs, desc="runs"):
        run(engine, text, FixedPolicy(None, 0), 1)  # warm the prefix cache: time decoding only
        policy = (
            FixedPolicy(None, 0)
            if mode == "plain"
            else FixedPolicy(
                CrossDrafter(drafter.model, drafter.tokenizer, target.tokenizer, mode), args.k
            )
        )
        ids, stats = run(engine, text, policy, args.max_tokens)
        if mode == "plain":
            plain[name] = (ids, stats.tokens_per_second)
        rows.append(
            (name, mode, stats, ids == plain[name][0], stats.tokens_per_second / plain[name][1])
        )
    print(
        f"\nk={args.k}, max_tokens={args.max_tokens}, prompt <= {args.prompt_chars} chars, greedy\n"
    )
    print(
        "| sample | mode | drafted | accepted | acceptance | decode tok/s | speedup | identical |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name, mode, s, same, speedup in rows:
        acc = f"{s.acceptance_rate:.0%}" if s.drafted else "-"
        print(
            f"| {name} | {mode} | {s.drafted} | {s.accepted} | {acc} | {s.tokens_per_second:.1f} "
            f"| {speedup:.2f}x | {'yes' if same else 'NO'} |"
        )


if __name__ == "__main__":
    main()
