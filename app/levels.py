"""`bielik-lsp doctor --cpu-levels`: every CPU level of llama.cpp this machine runs, checked exact.

bielik-llama-cpp's x86_64 wheel carries llama.cpp's CPU backend once per instruction-set level
(x64 up to sapphirerapids) and loads the best one this CPU runs (packaging/llama/backends.py).
Each level has kernels of its own, so each is checked: for every level this CPU can run, a new
process loads that level (LLAMA_CPP_CPU_VARIANT), loads the target GGUF with exact numerics and
runs the exactness check the pipeline runs at load (`exactness.check_and_split`, k+1 tokens
wide, past 600 cached positions). The release workflow runs this on each runner; exit status 1
when a level this CPU runs is not exact.

    python -m app.levels LEVEL GGUF THREADS K   # one level's check, as JSON (the worker)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from app.errors import UserError
from decoder.config import Settings


def run(settings: Settings, args: argparse.Namespace, argv: list[str]) -> int:
    """Check each level in turn; print one line per level (or one JSON object)."""
    from decoder.backends.files import ModelLoadError
    from decoder.backends.models import resolve_gguf
    from decoder.compat import llama_cpp as compat

    loaded = compat.cpu_levels()
    if loaded is None:
        raise UserError(
            f"this libllama ({compat.LIBRARY}) has its CPU backend built in: one level, "
            "the one it was compiled for; `bielik-lsp doctor --load` checks it"
        )
    try:
        gguf, _ = resolve_gguf(settings.target)
    except ModelLoadError as error:
        raise UserError(f"--cpu-levels checks llama.cpp, on a GGUF target: {error}") from None
    worker = [str(gguf), str(settings.threads or 0), str(settings.k)]
    rows = [check_level(level, loaded.scores[level], worker) for level in in_order(loaded.scores)]
    picked = loaded.cpu if loaded.chosen_by == "score" else best(loaded.scores)
    report = {"picked": picked, "folder": loaded.folder, "target": str(gguf), "levels": rows}
    if args.json:
        json.dump(report, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print("\n".join(describe(report)))
    return 1 if any(r["runs"] and r["exact"] != "yes" for r in rows) else 0


def in_order(scores: dict[str, int]) -> list[str]:
    """Runnable levels from the lowest, then those this CPU cannot run, by name."""
    runnable = sorted((n for n, s in scores.items() if s > 0), key=scores.get)
    return runnable + sorted(n for n, s in scores.items() if s == 0)


def best(scores: dict[str, int]) -> str | None:
    runnable = {n: s for n, s in scores.items() if s > 0}
    return max(runnable, key=runnable.get) if runnable else None


def check_level(level: str, score: int, worker: list[str]) -> dict:
    """The worker's verdict on `level`, in a process that loads that level."""
    from decoder.compat.llama_cpp import CPU_LEVEL_ENV

    row = {"level": level, "runs": score > 0, "exact": None, "detail": ""}
    if not row["runs"]:
        return {**row, "detail": "this CPU lacks an instruction it uses"}
    print(f"doctor: checking CPU level {level}", file=sys.stderr, flush=True)
    command = [sys.executable, "-m", "app.levels", level, *worker]
    env = {**os.environ, CPU_LEVEL_ENV: level}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    try:
        return {**row, **json.loads(done.stdout)}
    except ValueError:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {**row, "exact": "failed", "detail": f"exit code {done.returncode}: {tail}"}


def describe(report: dict) -> list[str]:
    rows = report["levels"]
    runs = sum(r["runs"] for r in rows)
    lines = [
        f"cpu levels {len(rows)} beside libllama ({report['folder']}), {runs} run on this CPU; "
        f"a plain start loads {report['picked']}; checked on {report['target']}"
    ]
    for row in rows:
        verdict = f"exact {row['exact']}" if row["runs"] else "not on this CPU"
        mark = " (loaded by default)" if row["level"] == report["picked"] else ""
        lines.append(f"  {row['level']:<15} {verdict}{mark}: {row['detail']}")
    return lines


def check_here(level: str, gguf: str, threads: int, k: int) -> dict:
    """Load `gguf` on the level this process loaded, and check it (the worker's answer)."""
    from decoder.backends import exactness
    from decoder.backends.llamacpp import LlamaCppBackend
    from decoder.compat import llama_cpp as compat

    loaded = compat.cpu_levels()
    if loaded is None or loaded.cpu != level:
        return {"exact": "failed", "detail": f"the process loaded {loaded and loaded.cpu}"}
    backend = LlamaCppBackend(gguf, threads=threads or None, adapt_threads=False)
    found = exactness.check_and_split(backend, k)
    return {"exact": exactness.outlook_of(found).status, "detail": found.describe()}


if __name__ == "__main__":
    level, gguf, threads, k = sys.argv[1:5]
    print(json.dumps(check_here(level, gguf, int(threads), int(k))))
