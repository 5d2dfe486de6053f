"""How long bielik-lsp takes to start, for two installs in turn: the language server and `continue`.

    python scripts/start_time.py BIELIK_LSP [OTHER_BIELIK_LSP] [--repeats 5] [--file FILE]

For each install (its `bielik-lsp` program), alternating A B B A ... so that drift hits both:
- `serve`: from the process's start to its answer to `initialize` (what an editor waits for),
  and to the `bielik/status` notification that the models are loaded (`ready`);
- `continue FILE --max-tokens 1`: the whole process (imports, model load, prefill, one token).
Caches are warm (the models converted and assembled once before). Prints the median of each and,
with two installs, the median of the per-pair ratios B/A (above 1: A starts faster).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def message(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def read_message(stream) -> dict:
    length = 0
    while (line := stream.readline().strip()) != b"":
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))


def serve(program: str) -> tuple[float, float]:
    """Seconds to the `initialize` answer, and to the models' `ready` status."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [program, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    init = {"processId": None, "rootUri": None, "capabilities": {}}
    proc.stdin.write(message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))
    proc.stdin.flush()
    answered = ready = None
    try:
        while ready is None:
            got = read_message(proc.stdout)
            if got.get("id") == 1:
                answered = time.perf_counter() - start
                proc.stdin.write(message({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
                proc.stdin.flush()
            elif got.get("method") == "bielik/status" and got["params"].get("state") == "ready":
                ready = time.perf_counter() - start
    finally:
        proc.kill()
        proc.wait()
    return answered, ready


def continue_once(program: str, text: Path) -> float:
    start = time.perf_counter()
    command = [program, "continue", str(text), "--max-tokens", "1", "--quiet"]
    subprocess.run(command, capture_output=True, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("programs", nargs="+", help="one or two bielik-lsp programs")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--file", type=Path, default=ROOT / "samples" / "konstytucja.txt")
    args = parser.parse_args()
    runs: dict[str, list[tuple[float, float, float]]] = {p: [] for p in args.programs}
    for program in args.programs:  # warm-up: caches filled, nothing counted
        serve(program)
    for i in range(args.repeats):
        order = args.programs if i % 2 == 0 else args.programs[::-1]
        for program in order:
            runs[program].append((*serve(program), continue_once(program, args.file)))
            print(f"{i + 1}/{args.repeats} {program}: {runs[program][-1]}", file=sys.stderr)
    names = ("initialize answered", "models ready", "continue --max-tokens 1")
    for program, rows in runs.items():
        medians = (statistics.median(r[k] for r in rows) for k in range(3))
        figures = (f"{n} {m:.2f} s" for n, m in zip(names, medians, strict=True))
        print(f"{program}: {'; '.join(figures)}")
    if len(args.programs) == 2:
        a, b = (runs[p] for p in args.programs)
        pairs = list(zip(a, b, strict=True))
        ratios = (statistics.median(y[k] / x[k] for x, y in pairs) for k in range(3))
        print("B/A: " + "; ".join(f"{n} {r:.2f}x" for n, r in zip(names, ratios, strict=True)))


if __name__ == "__main__":
    main()
