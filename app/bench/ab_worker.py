"""One install's engine for `bench ab`: loaded once, it runs what it is asked, line by line.

`bench ab` runs this file's source with the Python of each install it compares (`python -c`, from
an empty folder), so it imports only that install's own code, and only names that every version
of bielik-lsp has had: the command line's settings (`app.cli`), `decoder.pipeline.load`,
`continue_text`, `policy`, `PLAIN` and the run's statistics. Arguments: the global options of
`bielik-lsp` (e.g. `--backend mlx --no-exact`). Each line in is a JSON job (text, tokens,
policy: plain, auto, or a fixed drafter such as lookup); each line out that starts with MARK is
a JSON answer: the run's figures, `missing` where this version cannot make that policy (its
drafters lack it: said, and the bench goes on without it), or `error` where a run failed. Every
run starts from an empty cache, as a `continue` does.
"""

import json
import sys
import time

MARK = "AB "


def answer(value: dict) -> None:
    sys.stdout.write(MARK + json.dumps(value, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def policy_of(pipe, job: dict):
    """plain, auto (chosen over the text, as a request's), or a fixed drafter at the set k."""
    from decoder.engine import PLAIN

    if job["policy"] == "plain":
        return PLAIN
    if job["policy"] == "auto":
        return pipe.policy(text=job["text"])
    return pipe.policy(job["policy"])


def run(pipe, job: dict, policy) -> dict:
    from decoder.generation import collect

    text = job["text"]
    pipe.reset()
    began = time.perf_counter()
    result = collect(pipe.continue_text(text, max_tokens=job["tokens"], policy=policy))
    wall = time.perf_counter() - began
    stats = result.stats
    table = pipe.engine.table
    decoded = b"".join(table[i] for i in result.ids[1:] if i < len(table))
    return {
        "prompt_tokens": stats.prompt_tokens,
        "prefilled_tokens": stats.prefilled_tokens,
        "prefill_s": stats.prefill_seconds,
        "decode_tokens": stats.decode_tokens,
        "decode_s": stats.decode_seconds,
        "decode_chars": len(decoded.decode("utf-8", "replace")),
        "drafted": stats.drafted,
        "accepted": stats.accepted,
        "wall_s": wall,
        "ids": result.ids,
    }


def main() -> None:
    from decoder.backends.blas import ensure_fast_blas

    ensure_fast_blas()  # re-executes this process once, as `bielik-lsp` does
    from app.cli import build_parser, overrides
    from decoder.config import load_settings
    from decoder.pipeline import load

    args = build_parser().parse_args([*sys.argv[1:], "serve"])
    settings = load_settings(args.config, overrides(args))
    pipe = load(settings, progress=False)
    answer({"ready": pipe.describe()})
    for line in sys.stdin:
        job = json.loads(line)
        try:
            policy = policy_of(pipe, job)
        except Exception as error:  # this version has no such drafter: said, not fatal
            answer({"missing": f"{type(error).__name__}: {error}"})
            continue
        try:
            answer(run(pipe, job, policy))
        except Exception as error:
            answer({"error": f"{type(error).__name__}: {error}"})


if __name__ == "__main__":
    main()
