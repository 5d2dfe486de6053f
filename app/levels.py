"""`bielik-lsp doctor --cpu-levels`: every CPU level of llama.cpp this machine runs, checked exact.

bielik-llama-cpp's x86_64 wheel carries llama.cpp's CPU backend once per instruction-set level
(x64 up to sapphirerapids) and loads the best one this CPU runs (packaging/llama/backends.py).
Each level has kernels of its own, so each one is checked: for every level this CPU can run,
a new process loads that level (LLAMA_CPP_CPU_VARIANT), loads the configured models and measures
exactness as `doctor --load` does. The release workflow runs this on each runner; exit status 1
when a level that runs here is not exact.
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
    from decoder.compat import llama_cpp as compat

    loaded = compat.cpu_levels()
    if loaded is None:
        raise UserError(
            f"this libllama ({compat.LIBRARY}) has its CPU backend built in: one level, "
            "the one it was compiled for; `bielik-lsp doctor --load` checks it"
        )
    rows = [check_level(level, loaded, argv) for level in levels_in_order(loaded.scores)]
    picked = loaded.cpu if loaded.chosen_by == "score" else best(loaded.scores)
    report = {"picked": picked, "folder": loaded.folder, "levels": rows}
    if args.json:
        json.dump(report, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print("\n".join(describe(report)))
    failed = [r for r in rows if r["runs"] and r["exact"] != "yes"]
    return 1 if failed else 0


def levels_in_order(scores: dict[str, int]) -> list[str]:
    """Runnable levels from the lowest, then those this CPU cannot run, by name."""
    runnable = sorted((n for n, s in scores.items() if s > 0), key=scores.get)
    return runnable + sorted(n for n, s in scores.items() if s == 0)


def best(scores: dict[str, int]) -> str | None:
    runnable = {n: s for n, s in scores.items() if s > 0}
    return max(runnable, key=runnable.get) if runnable else None


def check_level(level: str, loaded, argv: list[str]) -> dict:
    """`doctor --load --json` in a process that loads `level`: its exactness verdict."""
    from decoder.compat.llama_cpp import CPU_LEVEL_ENV

    row = {"level": level, "runs": loaded.scores[level] > 0, "exact": None, "detail": ""}
    if not row["runs"]:
        row["detail"] = "this CPU lacks an instruction it uses"
        return row
    print(f"doctor: loading the models on CPU level {level}", file=sys.stderr, flush=True)
    flags = [a for a in argv if a not in ("doctor", "--cpu-levels", "--json", "--load")]
    command = [sys.executable, "-m", "app.cli", *flags, "doctor", "--load", "--json"]
    env = {**os.environ, CPU_LEVEL_ENV: level}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    try:
        report = json.loads(done.stdout)
    except ValueError:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {**row, "exact": "failed", "detail": f"exit code {done.returncode}: {tail}"}
    said = next((line for line in report["lines"] if "CPU level" in line), "")
    if f"CPU level {level} " not in said:
        return {**row, "exact": "failed", "detail": f"loaded another level: {said.strip()}"}
    return {**row, "exact": report["exact"]["status"], "detail": report["exact"]["detail"]}


def describe(report: dict) -> list[str]:
    rows = report["levels"]
    runs = [r for r in rows if r["runs"]]
    lines = [
        f"cpu levels {len(rows)} in {report['folder']}; {len(runs)} run on this CPU, "
        f"which loads {report['picked']}"
    ]
    for row in rows:
        verdict = f"exact {row['exact']}" if row["runs"] else "not on this CPU"
        mark = " (loaded by default)" if row["level"] == report["picked"] else ""
        lines.append(f"  {row['level']:<15} {verdict}{mark}: {row['detail']}")
    return lines
