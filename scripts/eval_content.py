"""Precision/recall of polish.content.classify on polish/data/devset.jsonl.

The weights in polish/content.py are fitted (``--fit``) on the train split only
(ids whose hash falls in buckets 0-2 of 5); the headline numbers are on the
held-out test split.  Also reported: the whole set, and leave-one-source-out
refits (each source family predicted by weights fitted without it), which shows
how far the weights generalise beyond the sources they saw.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from polish import content  # noqa: E402

DEVSET = Path(__file__).resolve().parents[1] / "polish" / "data" / "devset.jsonl"
LABELS = ("structured", "prose")


def load(path: Path = DEVSET) -> list[dict]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def is_train(item: dict) -> bool:
    """Deterministic 60/40 split by id."""
    return zlib.crc32(item["id"].encode()) % 5 < 3


def family(item: dict) -> str:
    """Source family for leave-one-source-out: repo plus the kind of file."""
    src = item["source"]
    repo = src.split(":")[0]
    if "PolishLawLLM" in repo:
        return repo + (" exams" if "/exams/" in src else " judgments")
    if "iplweb/bpp" in repo:
        return repo + (" HISTORY" if "HISTORY" in src else " code")
    return repo


def matrix(items: list[dict]) -> np.ndarray:
    rows = []
    for it in items:
        sig = content.signals(it["text"])
        rows.append([sig[k] for k in content.FEATURES])
    return np.array(rows)


def fit(
    x: np.ndarray, y: np.ndarray, l2: float = 0.05, steps: int = 50
) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method (no sklearn)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    reg = l2 * np.eye(xb.shape[1])
    reg[-1, -1] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) + reg @ w
        hess = (xb.T * (p * (1 - p))) @ xb + reg
        w -= np.linalg.solve(hess, grad)
    return w[:-1], float(w[-1])


def metrics(gold: list[str], pred: list[str]) -> dict:
    conf = {
        g: {p: sum(1 for a, b in zip(gold, pred, strict=True) if a == g and b == p) for p in LABELS}
        for g in LABELS
    }
    out = {
        "n": len(gold),
        "confusion": conf,
        "accuracy": sum(a == b for a, b in zip(gold, pred, strict=True)) / max(1, len(gold)),
    }
    for c in LABELS:
        tp = conf[c][c]
        out[c] = {
            "precision": tp / max(1, sum(conf[g][c] for g in LABELS)),
            "recall": tp / max(1, sum(conf[c].values())),
        }
    return out


def predict(items: list[dict]) -> list[str]:
    return [content.classify(it["text"]).label for it in items]


def evaluate(items: list[dict]) -> dict:
    """Metrics with the committed weights: held-out split, whole set, mixed items."""
    labelled = [it for it in items if it["label"] in LABELS]
    test = [it for it in labelled if not is_train(it)]
    mixed = [it for it in items if it["label"] == "mixed"]
    mixed_pred = predict(mixed)
    return {
        "test": metrics([it["label"] for it in test], predict(test)),
        "all": metrics([it["label"] for it in labelled], predict(labelled)),
        "mixed": {c: mixed_pred.count(c) for c in LABELS},
        "errors": [
            it["id"] for it, p in zip(labelled, predict(labelled), strict=True) if p != it["label"]
        ],
    }


def leave_one_source_out(items: list[dict]) -> dict:
    labelled = [it for it in items if it["label"] in LABELS]
    x = matrix(labelled)
    y = np.array([it["label"] == "structured" for it in labelled], dtype=float)
    fams = [family(it) for it in labelled]
    pred = [""] * len(labelled)
    for f in sorted(set(fams)):
        held = np.array([g == f for g in fams])
        w, b = fit(x[~held], y[~held])
        for i in np.where(held)[0]:
            pred[i] = "structured" if x[i] @ w + b > 0 else "prose"
    return metrics([it["label"] for it in labelled], pred)


def table(name: str, m: dict) -> str:
    lines = [
        f"{name}: n={m['n']}  accuracy={m['accuracy']:.3f}",
        f"  {'class':<11} {'precision':>9} {'recall':>7}",
    ]
    lines += [f"  {c:<11} {m[c]['precision']:>9.3f} {m[c]['recall']:>7.3f}" for c in LABELS]
    lines.append(
        "  confusion (rows gold, cols predicted): "
        + "; ".join(
            f"{g}: " + ", ".join(f"{p}={m['confusion'][g][p]}" for p in LABELS) for g in LABELS
        )
    )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument(
        "--fit", action="store_true", help="fit weights on the train split and print them"
    )
    ap.add_argument("--loso", action="store_true", help="also run leave-one-source-out refits")
    args = ap.parse_args()
    items = load()
    if args.fit:
        train = [it for it in items if it["label"] in LABELS and is_train(it)]
        w, b = fit(
            matrix(train), np.array([it["label"] == "structured" for it in train], dtype=float)
        )
        print(
            "WEIGHTS = {"
            + ", ".join(f'"{k}": {v:.3f}' for k, v in zip(content.FEATURES, w, strict=True))
            + "}"
        )
        print(f"BIAS = {b:.3f}")
        return
    res = evaluate(items)
    if args.loso:
        res["leave_one_source_out"] = leave_one_source_out(items)
    if args.json:
        print(json.dumps(res, indent=2))
        return
    print(table("held-out test split (weights fitted on the train split)", res["test"]))
    print(table("whole dev set (includes the train split)", res["all"]))
    if "leave_one_source_out" in res:
        print(table("leave-one-source-out refits", res["leave_one_source_out"]))
    print(f"mixed items (not scored): {res['mixed']}")
    print(f"misclassified: {', '.join(res['errors']) or 'none'}")


if __name__ == "__main__":
    main()
