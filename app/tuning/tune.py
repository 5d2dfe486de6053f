"""`bielik-lsp tune-drafter --out DIR [--data FILE_OR_DIR ...] [--minutes N]`: the whole run.

1. The target's greedy continuations of the training prompts (app/tuning/data.py), on the
   configured engine, cached in DIR: for at most DATA_SHARE of the time while some are missing.
2. The drafter (as mlx-lm's model) gets LoRA and s-CDF steps until the time is up, resuming
   from DIR (app/tuning/train.py).
3. The adapter is written in mlx-lm's format and as a llama.cpp LoRA GGUF, so every engine
   drafts with it (`--drafter-adapter DIR`).

Everything counts against --minutes: loading, generation, training, writing; a margin is kept.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from app.errors import UserError
from app.tuning import data
from decoder.config import Settings, is_remote

DATA_SHARE = 0.3  # of the time, at most, for generating continuations (when any are missing)
MARGIN_S = 40.0  # kept for writing the adapter and the GGUF (and loading the drafter)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "tune-drafter",
        allow_abbrev=False,
        help="tune the drafter to the target (and your documents): s-CDF LoRA, resumable",
    )
    p.add_argument("--out", required=True, help="folder for the adapter, its data and its state")
    p.add_argument(
        "--data",
        nargs="+",
        action="extend",
        metavar="FILE_OR_DIR",
        help="your own documents (files or folders): the task 'your documents'; one file in "
        f"{data.HELD_OUT_EVERY} of a folder is held out for `bench drafter --data`",
    )
    p.add_argument(
        "--minutes", type=float, default=20.0, help="wall time of this run, all included"
    )
    p.add_argument(
        "--tokens", type=int, default=64, help="target tokens per continuation (default 64)"
    )
    p.add_argument(
        "--seed", dest="tune_seed", type=int, default=0, help="training seed (default 0)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def run(settings: Settings, args: argparse.Namespace) -> int:
    start = time.monotonic()
    if is_remote(settings.target):
        raise UserError("tune-drafter needs the target as a model, not an inference server")
    if args.minutes <= 0:
        raise UserError("--minutes must be positive")
    out = Path(args.out).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    budget = args.minutes * 60
    deadline = start + budget - min(MARGIN_S, budget * 0.2)
    examples = make_data(settings, args, out, start + budget * DATA_SHARE)
    if not examples:
        raise UserError("no continuations yet: give tune-drafter more --minutes")
    state, config = fit(settings, out, examples, deadline, args)
    report = {
        "examples": len(examples),
        "by_task": dict(sorted(Counter(e.task for e in examples).items())),
        "steps": state.step,
        "training_seconds": round(state.seconds, 1),
        "last_D": state.history[-1]["D"] if state.history else None,
        "wall_seconds": round(time.monotonic() - start, 1),
    }
    print(json.dumps(report, ensure_ascii=False))
    print(f"tune-drafter: adapter in {out}; use it with --drafter-adapter {out}")
    return 0


def make_data(settings: Settings, args, out: Path, until: float) -> list[data.Example]:
    """Cached continuations, plus new ones while some are missing and time is left."""
    from decoder.pipeline import Pipeline

    files = data.writer_files(args.data or [])
    train_files, held = data.split_files(files)
    if held:
        print(f"tune-drafter: held out for the benchmark: {', '.join(map(str, held))}")
    texts = data.corpus_texts() + data.file_texts(train_files)
    wanted = data.prompts(texts)
    done = data.load_examples(out)
    have = {e.source for e in done}
    todo = [p for p in wanted if p.source not in have]
    if not todo or time.monotonic() >= until:
        return done
    plain = replace(settings, drafter="auto", drafter_adapter=None, temperature=0.0)
    engine = Pipeline.load(plain, progress=not args.quiet)
    try:
        new = list(data.generate(engine, todo, out, until, args.tokens, args.quiet))
    finally:
        engine.close()
        del engine
        gc.collect()
    return done + new


def fit(settings: Settings, out: Path, examples, deadline: float, args):
    """LoRA on the drafter, s-CDF steps until `deadline`, then both adapter formats."""
    from app.tuning.export import write_lora_gguf
    from app.tuning.rows import make_rows
    from app.tuning.train import TuneConfig, attach_lora, saved_config, train

    model, tokenizer, base, gguf = load_drafter(settings)
    config = saved_config(out) or TuneConfig(seed=args.tune_seed)
    attach_lora(model, config)
    rows = make_rows(tokenizer, examples, config.row_tokens)
    state = train(model, rows, config, out, base, deadline, quiet=args.quiet)
    if gguf is not None:
        write_lora_gguf(out, gguf)
    else:
        print("tune-drafter: the drafter is no GGUF: MLX adapter only (llama.cpp cannot use it)")
    return state, config


def load_drafter(settings: Settings):
    """(mlx-lm model, tokenizer, base description, GGUF path or None) of the drafter model."""
    from mlx_lm.utils import load as load_dir

    from decoder.backends.files import file_sha256
    from decoder.backends.models import resolve, resolve_gguf

    spec = settings.drafter_model
    path, source = resolve(spec, dtype="float32", progress=True)
    gguf = resolve_gguf(spec)[0] if source in ("embedded", "gguf") else None
    model, tokenizer = load_dir(str(path))
    base = {"drafter_model": spec, "gguf_sha256": file_sha256(gguf) if gguf else None}
    return model, tokenizer, base, gguf
