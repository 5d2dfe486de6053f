"""`bielik-lsp bench drafter --adapter DIR`: the drafter before and after tune-drafter, per task.

On the held-out excerpts (polish/data/bench.jsonl, which tune-drafter never trains on) of each
content type, and with `--data` on the held-out files of a writer's folder ("your documents"),
each excerpt runs three ways on the configured engine, one after the other: plain greedy
decoding, the model drafter as published ("before") and the same drafter with the adapter
("after"), both at draft length k, sharing one target. Per task and condition:

- D_T, seed 004's divergence: the drafter's mean cross-entropy (nats per drafter token) on the
  target's plain greedy continuation, spelled in the drafter's tokens after the prompt;
- acceptance (accepted / drafted target tokens), the share of generated tokens that came from
  drafts, and the decode speed-up against plain in the same run (ratio of pooled tokens/s);
- seed 004's unfairness U: the spread (max - min) of D_T across tasks;
- whether every output equals plain greedy's.

With `--excerpts FILE` the excerpts come from that file instead (JSON lines: id, label, text):
scripts/debian_excerpts.py writes one from sources that tuning never sees, where the bench
corpus shares its repositories with the tuning prompts.

Writes OUT/drafter.md, OUT/drafter.json and OUT/drafter.png.
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
from tqdm import tqdm

from app.bench.corpus import load_corpus, select
from app.bench.machine import describe as machine_line
from app.bench.machine import load_average
from app.errors import UserError
from app.tuning import data, scdf
from decoder.backends.models import load_model
from decoder.config import Settings
from decoder.drafting.translator import Vocab, spell
from decoder.engine import PLAIN
from decoder.generation import collect
from decoder.pipeline import Pipeline

TASKS = ("structured", "prose")
KEYS = ("id", "label", "text")  # of each line of --excerpts
CONDITIONS = ("plain", "before", "after")


def add_parser(suites) -> None:
    p = suites.add_parser(
        "drafter",
        allow_abbrev=False,
        help="the model drafter before and after tune-drafter: D_T, acceptance, U, per task",
    )
    p.add_argument("--adapter", required=True, help="the folder tune-drafter wrote")
    p.add_argument("--per-class", type=int, default=10, help="held-out excerpts per content type")
    p.add_argument("--tokens", type=int, default=64, help="greedy tokens per excerpt")
    p.add_argument("--k", dest="bench_k", type=int, default=4, help="draft length (default 4)")
    p.add_argument(
        "--data",
        nargs="+",
        action="extend",
        metavar="FILE_OR_DIR",
        help="the writer's folder given to tune-drafter: its held-out files become a task",
    )
    p.add_argument(
        "--excerpts",
        metavar="FILE",
        help="measure on these excerpts instead of the bench corpus: JSON lines with id, label "
        "(structured or prose) and text, e.g. from scripts/debian_excerpts.py",
    )
    p.add_argument("--note", default="", help="a remark under the machine line")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", default=".", help="folder for drafter.md/.json/.png (default: here)")


def excerpts(
    per_class: int, writer: list[str] | None, path: str | None = None
) -> list[tuple[str, str, str]]:
    """(task, id, text): held-out excerpts per type, then the writer's held-out files.

    The excerpts are the bench corpus's, or the first of each type in the file at `path`.
    """
    if path:
        items = read_excerpts(path)
        by_task = [[e for e in items if e["label"] == task][:per_class] for task in TASKS]
        chosen = [(e["label"], e["id"], e["text"]) for group in by_task for e in group]
        if not chosen:
            raise UserError(f"--excerpts {path}: no excerpt labelled {' or '.join(TASKS)}")
    else:
        corpus = select(load_corpus(), per_class)
        chosen = [(e.label, e.id, e.text) for e in corpus if e.label in TASKS]
    if writer:
        _, held = data.split_files(data.writer_files(writer))
        chosen += data.file_texts(held)[:per_class]
    return chosen


def read_excerpts(path: str) -> list[dict]:
    """The JSON lines of `path`; a line that is no object with id, label and text is an error."""
    try:
        lines = Path(path).expanduser().read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"--excerpts {path}: cannot read it ({error})") from error
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            item = None
        if not (isinstance(item, dict) and all(isinstance(item.get(k), str) for k in KEYS)):
            raise UserError(
                f"--excerpts {path}, line {number}: no JSON object with id, label, text"
            )
        out.append(item)
    return out


def divergence(runner, vocab: Vocab, text: str, continuation: str) -> tuple[float, int]:
    """(summed cross-entropy, tokens) of the drafter on `continuation` after `text`."""
    ids = spell(vocab, continuation.encode("utf-8"))
    if not ids:
        return 0.0, 0
    runner.reset()
    first = runner.sync(vocab.encode_prompt(text))
    rows = [first[None]] + ([runner.forward(ids[:-1])] if len(ids) > 1 else [])
    logits = np.concatenate(rows, axis=0)[:, : vocab.size].astype(np.float64)
    top = logits.max(axis=1)
    logz = np.log(np.exp(logits - top[:, None]).sum(axis=1)) + top
    return float((logz - logits[np.arange(len(ids)), ids]).sum()), len(ids)


KEPT = ("generated_tokens", "drafted", "accepted", "decode_tokens", "decode_seconds")


def run_one(pipes: dict[str, Pipeline], vocab: Vocab, text: str, k: int, tokens: int) -> dict:
    """The three conditions on one excerpt, and D_T before and after on plain's text.

    Both prompts (the target's and the drafter's) are prefilled before each timed run, so the
    speed-up compares decoding only.
    """
    out: dict = {}
    plain_ids: list[int] = []
    for name in CONDITIONS:
        pipe = pipes["before" if name == "plain" else name]
        pipe.reset()
        collect(pipe.continue_text(text, max_tokens=1, policy=PLAIN))
        if name != "plain":
            pipe.drafter_runner.sync(vocab.encode_prompt(text))
        policy = PLAIN if name == "plain" else pipe.policy("model", k)
        result = collect(pipe.continue_text(text, max_tokens=tokens, policy=policy))
        stats = result.stats.to_dict(per_cycle=False)
        plain_ids = result.ids if name == "plain" else plain_ids
        out[name] = {key: stats[key] for key in KEPT}
        out[name] |= {"identical": result.ids == plain_ids, "text": result.text}
    for name in ("before", "after"):
        total, n = divergence(pipes[name].drafter_runner, vocab, text, out["plain"]["text"])
        out[name] |= {"ce_sum": total, "ce_tokens": n}
    return out


def summarise(records: list[dict]) -> dict:
    """Per task and condition: D_T, acceptance, share from drafts, speed-up; U per condition."""
    tasks = list(dict.fromkeys(r["task"] for r in records))
    table: dict = {}
    for task in tasks:
        runs = [r for r in records if r["task"] == task]

        def total(cond: str, key: str, runs=runs) -> float:
            return sum(r[cond][key] for r in runs)

        plain_speed = total("plain", "decode_tokens") / max(total("plain", "decode_seconds"), 1e-9)
        row = {"excerpts": len(runs)}
        for cond in ("before", "after"):
            speed = total(cond, "decode_tokens") / max(total(cond, "decode_seconds"), 1e-9)
            drafted = total(cond, "drafted")
            row[cond] = {
                "D": total(cond, "ce_sum") / max(total(cond, "ce_tokens"), 1),
                "acceptance": total(cond, "accepted") / drafted if drafted else math.nan,
                "from_drafts": total(cond, "accepted") / max(total(cond, "generated_tokens"), 1),
                "speedup": speed / plain_speed,
                "identical": sum(r[cond]["identical"] for r in runs),
            }
        table[task] = row
    u = {c: scdf.unfairness({t: table[t][c]["D"] for t in tasks}) for c in ("before", "after")}
    return {"tasks": table, "U": u}


def report(summary: dict, header: str) -> str:
    lines = [
        header,
        "",
        f"U (spread of D_T across tasks): before {summary['U']['before']:.3f}, "
        f"after {summary['U']['after']:.3f}",
        "",
        "| task | excerpts | D_T before → after | acceptance before → after "
        "| from drafts before → after | speed-up vs plain before → after | identical to plain |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for task, row in summary["tasks"].items():
        b, a = row["before"], row["after"]
        n = row["excerpts"]
        lines.append(
            f"| {task} | {n} | {b['D']:.3f} → {a['D']:.3f} | {b['acceptance']:.1%} → "
            f"{a['acceptance']:.1%} | {b['from_drafts']:.1%} → {a['from_drafts']:.1%} "
            f"| {b['speedup']:.2f}x → {a['speedup']:.2f}x "
            f"| {b['identical']}/{n} → {a['identical']}/{n} |"
        )
    return "\n".join(lines)


def plot(summary: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(summary["tasks"])
    x = np.arange(len(tasks))
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for ax, key, title in zip(
        axes,
        ("D", "from_drafts", "speedup"),
        ("D_T (nats/drafter token)", "share of tokens from drafts", "speed-up vs plain"),
        strict=True,
    ):
        for i, cond in enumerate(("before", "after")):
            values = [summary["tasks"][t][cond][key] for t in tasks]
            ax.bar(x + (i - 0.5) * 0.38, values, 0.38, label=cond)
        ax.set_xticks(x, tasks)
        ax.set_title(title)
    axes[0].legend()
    u = summary["U"]
    fig.suptitle(f"drafter before / after tune-drafter; U {u['before']:.3f} → {u['after']:.3f}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(settings: Settings, args: argparse.Namespace) -> str:
    chosen = excerpts(args.per_class, args.data, args.excerpts)
    target = load_model(settings.target, settings, settings.target_backend, progress=not args.quiet)
    engine = settings.drafter_model_backend
    pipes = {}
    for name, adapter in (("before", None), ("after", args.adapter)):
        drafter = load_model(
            settings.drafter_model, settings, engine, progress=not args.quiet, adapter=adapter
        )
        pipes[name] = Pipeline(replace(settings, drafter="model"), target, drafter)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    vocab = Vocab(pipes["before"].drafter_runner.tokenizer)
    header = (
        f"{machine_line()}; load average {load_average()} at the start"
        f"{' — ' + args.note if args.note else ''}\n\n"
        f"target {settings.target} on {settings.target_backend}, drafter "
        f"{settings.drafter_model} on {engine}, adapter {args.adapter}; k={args.bench_k}, "
        f"{args.tokens} greedy tokens per excerpt"
    )
    records = []
    for task, source, text in tqdm(chosen, desc="drafter", unit="excerpt", disable=args.quiet):
        result = run_one(pipes, vocab, text, args.bench_k, args.tokens)
        records.append({"task": task, "id": source, **result})
        (out / "drafter.json").write_text(
            json.dumps({"header": header, "records": records}, ensure_ascii=False, indent=1)
        )
    summary = summarise(records)
    header += f"; load average {load_average()} at the end"
    text = report(summary, header)
    (out / "drafter.md").write_text(text + "\n", encoding="utf-8")
    (out / "drafter.json").write_text(
        json.dumps(
            {"header": header, "summary": summary, "records": records}, ensure_ascii=False, indent=1
        )
    )
    plot(summary, out / "drafter.png")
    return text
