"""Latency the remote path adds over the server's own generation time, on localhost.

Each request is timed twice: by the client, from `RemoteEngine.continue_text` to its last
Chunk, and by the server itself, from the moment its handler hands the request to generation
until the last token is out. The difference is what going remote costs: connecting, HTTP,
JSON and server-sent events both ways, and the engine's own bookkeeping. Both clocks time the
same request, so the machine's load changes both alike.

- mlx_lm.server reports no timings: it runs here with `ResponseGenerator.generate` wrapped
  to log each request's generation time (checked against mlx-lm 0.32.2).
- llama-server reports its own `prompt_ms` and `predicted_ms`, which are used as they are.

    python scripts/remote_overhead.py --server mlx --rounds 20 --tokens 16
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TIMED_SERVER = "--timed-mlx-server"  # internal: run mlx_lm.server with the timing wrapper


def run_timed_mlx_server(log_path: str, server_args: list[str]) -> None:
    """mlx_lm.server, logging each request's generation milliseconds to `log_path`."""
    from mlx_lm import server

    generate = server.ResponseGenerator.generate
    log = open(log_path, "a", buffering=1)  # noqa: SIM115 - lives as long as the server

    def timed(self, request, args, progress_callback=None):
        started = time.perf_counter()
        ctx, tokens = generate(self, request, args, progress_callback)

        def through():
            yield from tokens
            log.write(f"{(time.perf_counter() - started) * 1000:.3f}\n")

        return ctx, through()

    server.ResponseGenerator.generate = timed
    sys.argv = ["mlx_lm.server", *server_args]
    server.main()


def main() -> int:
    from decoder.config import Settings
    from decoder.remote import RemoteEngine
    from tests.servers import MODEL, InferenceServer

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", choices=["mlx", "llama"], default="mlx")
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--tokens", type=int, default=16)
    args = p.parse_args()

    server = InferenceServer(args.server)
    timings = Path(tempfile.mkstemp(prefix="bielik-server-ms-", suffix=".log")[1])
    if args.server == "mlx":  # serve-model's command, with this script as the launcher
        server.launcher = [sys.executable, __file__, TIMED_SERVER, str(timings)]
    print(f"starting {args.server} server on {MODEL} ...", file=sys.stderr)
    server.start()
    try:
        engine = RemoteEngine.connect(Settings(target=server.url, read_timeout_s=300))
        walls, owns = [], []
        for i in range(args.rounds + 1):
            prompt = f"{i}. Warszawa jest stolicą Polski, a największe miasta w Polsce to"
            started = time.perf_counter()
            chunks = list(engine.continue_text(prompt, max_tokens=args.tokens))
            wall = time.perf_counter() - started
            reported = chunks[-1].stats.server
            if args.server == "mlx":
                own = float(timings.read_text().split()[-1]) / 1000
            else:
                own = (reported["prompt_ms"] + reported["predicted_ms"]) / 1000
            if i > 0:  # the first request warms both sides up
                walls.append(wall)
                owns.append(own)
        report(args, walls, owns)
    finally:
        server.stop()
    return 0


def report(args, walls: list[float], owns: list[float]) -> None:
    overheads = sorted((w - o) * 1000 for w, o in zip(walls, owns, strict=True))
    median = statistics.median
    q1, _, q3 = statistics.quantiles(overheads, n=4)
    print(f"server {args.server}: {len(walls)} requests of {args.tokens} tokens, localhost")
    print(f"client wall per request, median:            {median(walls) * 1000:9.1f} ms")
    print(f"server's own generation time, median:       {median(owns) * 1000:9.1f} ms")
    print(f"overhead (client - server) per request, median: {median(overheads):6.1f} ms")
    print(f"overhead quartiles / max: {q1:.1f} / {q3:.1f} / {overheads[-1]:.1f} ms")
    ratios = [w / o for w, o in zip(walls, owns, strict=True)]
    print(f"client / server time, median ratio: {median(ratios):.4f}")


if __name__ == "__main__":
    if sys.argv[1:2] == [TIMED_SERVER]:
        run_timed_mlx_server(sys.argv[2], sys.argv[3:])
    else:
        from decoder.backends.blas import ensure_fast_blas

        ensure_fast_blas()
        sys.exit(main())
