"""Latency the remote path adds over the server's own generation time, on localhost.

mlx_lm.server reports no timings, so its own generation time is taken as the same generation
run in this process by mlx-lm itself (stream_generate: same weights, prompt, token count,
greedy), alternated with the remote request so machine noise hits both alike. llama-server
reports its own prompt and generation milliseconds, which are subtracted directly.

    python scripts/remote_overhead.py --server mlx --rounds 12 --tokens 16
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from decoder.backends.blas import ensure_fast_blas  # noqa: E402

ensure_fast_blas()

from decoder.backends.remote import RemoteEngine  # noqa: E402
from decoder.config import Settings  # noqa: E402
from tests.servers import MODEL, InferenceServer  # noqa: E402

PROMPT = "{i}. Warszawa jest stolicą Polski, a największe miasta w Polsce to"


def remote_run(engine: RemoteEngine, prompt: str, tokens: int) -> tuple[float, int, dict]:
    """(client wall seconds, tokens, what the server reported) for one streamed request."""
    started = time.perf_counter()
    chunks = list(engine.continue_text(prompt, max_tokens=tokens))
    wall = time.perf_counter() - started
    stats = chunks[-1].stats
    return wall, stats.generated_tokens, stats.server


def in_process_run(model, tokenizer, prompt: str, tokens: int) -> tuple[float, int]:
    """(seconds, tokens) of mlx-lm generating the same continuation in this process."""
    from mlx_lm import stream_generate
    from mlx_lm.sample_utils import make_sampler

    started = time.perf_counter()
    n = sum(1 for _ in stream_generate(model, tokenizer, prompt, tokens, sampler=make_sampler(0)))
    return time.perf_counter() - started, n


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", choices=["mlx", "llama"], default="mlx")
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--tokens", type=int, default=16)
    args = p.parse_args()

    server = InferenceServer(args.server)
    print(f"starting {args.server} server on {MODEL} ...", file=sys.stderr)
    server.start()
    try:
        engine = RemoteEngine.connect(Settings(target=server.url, read_timeout_s=300))
        baseline = None
        if args.server == "mlx":
            from mlx_lm import load

            from decoder.backends.models import resolve

            baseline = load(str(resolve(MODEL, progress=False)[0]))
            in_process_run(*baseline, PROMPT.format(i=0), args.tokens)  # warm-up
        remote_run(engine, PROMPT.format(i=0), args.tokens)  # warm-up
        overheads, walls, owns = [], [], []
        for i in range(1, args.rounds + 1):
            prompt = PROMPT.format(i=i)  # a new first token: no prompt-cache reuse either side
            wall, n, reported = remote_run(engine, prompt, args.tokens)
            if baseline is not None:
                own, n_own = in_process_run(*baseline, prompt, args.tokens)
                if n_own != n:
                    print(f"round {i}: {n} vs {n_own} tokens, skipped", file=sys.stderr)
                    continue
            else:
                own = (reported["prompt_ms"] + reported["predicted_ms"]) / 1000
            walls.append(wall)
            owns.append(own)
            overheads.append(wall - own)
        baseline_name = (
            "mlx-lm stream_generate in this process"
            if args.server == "mlx"
            else "llama-server's own prompt_ms + predicted_ms"
        )
        median = statistics.median
        print(f"server: {args.server}; {len(walls)} requests of {args.tokens} tokens")
        print(f"remote wall, median:        {median(walls) * 1000:8.1f} ms")
        print(f"baseline ({baseline_name}), median: {median(owns) * 1000:8.1f} ms")
        print(f"overhead per request, median of pairs: {median(overheads) * 1000:8.1f} ms")
        q = statistics.quantiles(overheads, n=4) if len(overheads) > 1 else overheads * 3
        print(f"overhead quartiles: {q[0] * 1000:.1f} / {q[2] * 1000:.1f} ms")
        ratios = [w / o for w, o in zip(walls, owns, strict=True)]
        print(f"ratio remote/baseline, median: {median(ratios):.3f}")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
