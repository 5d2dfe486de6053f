"""Write a randomly initialised DFlash drafter for a target, in the published format.

    python scripts/make_dflash.py DIR [--target embedded:gemma-3-270m] [--layers 1]
        [--block-size 16] [--layer-ids 1,8,16] [--mask-token-id N] [--seed 0]

DIR then holds config.json (with dflash_config: target_layer_ids, mask_token_id, block_size)
and model.safetensors, as z-lab's dflash loads a drafter; `bielik-lsp --backend mlx continue
FILE --drafter dflash --drafter-model DIR` drafts with it. Its drafts are noise: this checks
the plumbing and that output equals plain decoding, never speed (that needs trained weights).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--target", default="embedded:gemma-3-270m")
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--layer-ids", default="", help="target layers, comma-separated")
    parser.add_argument("--mask-token-id", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from decoder.backends.models import load_model
    from decoder.config import Settings
    from decoder.drafting.dflash import write_random

    target = load_model(args.target, Settings(dtype="float32"), "mlx", progress=True)
    ids = tuple(int(i) for i in args.layer_ids.split(",")) if args.layer_ids else None
    path = write_random(
        args.dir,
        target.backend.model,
        layers=args.layers,
        block_size=args.block_size,
        target_layer_ids=ids,
        mask_token_id=args.mask_token_id,
        seed=args.seed,
    )
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
