"""LoRA training of the drafter with mlx-lm's pieces, one s-CDF step at a time, resumable.

The drafter runs as mlx-lm's model (a GGUF is converted once, as the MLX backend does); LoRA
layers come from mlx-lm's tuner (`linear_to_lora_layers`), and the adapter is written in
mlx-lm's own format (adapters.safetensors + adapter_config.json), which `load_adapters` reads.
The optimizer's state, the step and the seconds spent go beside it, so a run picks up where the
last one stopped; mini-batches are drawn from (seed, step), so a resumed run draws what an
uninterrupted one would have.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim
import numpy as np
from mlx.utils import tree_flatten, tree_unflatten

from app.tuning import scdf
from app.tuning.rows import Row, batch

ADAPTER_FILE = "adapters.safetensors"
CONFIG_FILE = "adapter_config.json"
OPTIMIZER_FILE = "optimizer.safetensors"
STATE_FILE = "train_state.json"
LORA_KEYS = (
    "self_attn.q_proj",
    "self_attn.k_proj",
    "self_attn.v_proj",
    "self_attn.o_proj",
    "mlp.gate_proj",
    "mlp.up_proj",
    "mlp.down_proj",
)


@dataclass(frozen=True)
class TuneConfig:
    """The tuning's defaults table."""

    rank: int = 16
    scale: float = 2.0  # the LoRA update's multiplier (mlx-lm's lora_parameters.scale)
    layers: int = 16  # the top layers that get LoRA (backward stops below them)
    keys: tuple[str, ...] = LORA_KEYS
    learning_rate: float = 1e-3
    rows_per_task: int = 2  # mini-batch rows drawn per task per step
    row_tokens: int = 256  # longest row, in drafter tokens
    seed: int = 0

    def lora_parameters(self) -> dict:
        return {"rank": self.rank, "scale": self.scale, "dropout": 0.0, "keys": list(self.keys)}


@dataclass
class TrainState:
    step: int = 0
    seconds: float = 0.0  # training time over every run so far
    history: list[dict] = field(default_factory=list)  # per step: D_T, weights, U


def attach_lora(model, config: TuneConfig) -> None:
    """Freeze the model and give its top `layers` layers LoRA (mlx-lm's own layers).

    The LoRA's random initialisation comes from the seed, so a run can be repeated.
    """
    from mlx_lm.tuner.utils import linear_to_lora_layers

    mx.random.seed(config.seed)
    model.freeze()
    linear_to_lora_layers(model, config.layers, config.lora_parameters())


def token_losses(model, inputs: mx.array, targets: mx.array, mask: mx.array) -> mx.array:
    """Summed cross-entropy over the scored positions, per row."""
    logits = model(inputs)
    ce = nn.losses.cross_entropy(logits.astype(mx.float32), targets) * mask
    return ce.sum(axis=1)


def divergence(model, rows: list[Row]) -> float:
    """D_T on these rows: the drafter's mean cross-entropy against the target's tokens."""
    inputs, targets, mask = map(mx.array, batch(rows))
    total = token_losses(model, inputs, targets, mask).sum()
    return float(total.item()) / float(mask.sum().item())


def draw(rows: dict[str, list[Row]], config: TuneConfig, step: int) -> dict[str, list[Row]]:
    """Each task's mini-batch for `step`: a function of (seed, step) only."""
    rng = np.random.default_rng([config.seed, step])
    out = {}
    for task in sorted(rows):
        pool = rows[task]
        picks = rng.choice(len(pool), size=min(config.rows_per_task, len(pool)), replace=False)
        out[task] = [pool[i] for i in picks]
    return out


def scdf_step(model, optimizer, rows: dict[str, list[Row]], config: TuneConfig, step: int) -> dict:
    """One s-CDF step: D_T per task on its mini-batch, then the gradient of sum_T w_T * L_T.

    Tasks with weight 0 (the best) take no part in the backward pass.
    """
    batches = draw(rows, config, step)
    div = {task: divergence(model, b) for task, b in batches.items()}
    w = scdf.weights(div)
    chosen = [(task, b) for task, b in batches.items() if w[task] > 0]
    inputs, targets, mask = map(mx.array, batch([r for _, b in chosen for r in b]))
    per_row = mx.array(
        [w[task] / sum(r.scored for r in b) for task, b in chosen for r in b], mx.float32
    )

    def loss(m):
        return (token_losses(m, inputs, targets, mask) * per_row).sum()

    value, grads = nn.value_and_grad(model, loss)(model)
    optimizer.update(model, grads)
    mx.eval(model.parameters(), optimizer.state, value)
    return {"step": step, "D": div, "w": w, "U": scdf.unfairness(div)}


def make_optimizer(config: TuneConfig) -> optim.Optimizer:
    return optim.AdamW(learning_rate=config.learning_rate, weight_decay=0.0)


def save(model, optimizer, state: TrainState, config: TuneConfig, folder: Path, base: dict) -> None:
    """The adapter in mlx-lm's format, and what a resumed run needs, each file written whole."""
    adapters = dict(tree_flatten(model.trainable_parameters()))
    _atomic(folder / ADAPTER_FILE, lambda p: mx.save_safetensors(str(p), adapters))
    opt = dict(tree_flatten(optimizer.state))
    _atomic(folder / OPTIMIZER_FILE, lambda p: mx.save_safetensors(str(p), opt))
    adapter_config = {
        "fine_tune_type": "lora",
        "num_layers": config.layers,
        "lora_parameters": config.lora_parameters(),
        "bielik_lsp": {"base": base, "tune": asdict(config), "steps": state.step},
    }
    _atomic(folder / CONFIG_FILE, lambda p: p.write_text(json.dumps(adapter_config, indent=1)))
    _atomic(folder / STATE_FILE, lambda p: p.write_text(json.dumps(asdict(state))))


def restore(model, optimizer, folder: Path) -> TrainState:
    """The adapter, optimizer state and step of an earlier run in `folder` (fresh if none)."""
    if not (folder / STATE_FILE).is_file() or not (folder / ADAPTER_FILE).is_file():
        return TrainState()
    model.load_weights(str(folder / ADAPTER_FILE), strict=False)
    if (folder / OPTIMIZER_FILE).is_file():
        optimizer.state = tree_unflatten(list(mx.load(str(folder / OPTIMIZER_FILE)).items()))
    return TrainState(**json.loads((folder / STATE_FILE).read_text()))


def saved_config(folder: Path) -> TuneConfig | None:
    """The tuning configuration an earlier run in `folder` used (it must be kept to resume)."""
    path = folder / CONFIG_FILE
    if not path.is_file():
        return None
    tune = json.loads(path.read_text()).get("bielik_lsp", {}).get("tune")
    return TuneConfig(**{**tune, "keys": tuple(tune["keys"])}) if tune else None


def _atomic(path: Path, write) -> None:
    """Write through a temp file of the same suffix (mx.save_safetensors insists on it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    write(temp)
    temp.replace(path)


def train(
    model,
    rows: dict[str, list[Row]],
    config: TuneConfig,
    folder: Path,
    base: dict,
    deadline: float,
    *,
    quiet: bool = False,
    checkpoint_s: float = 60.0,
    max_steps: int | None = None,
) -> TrainState:
    """s-CDF steps until `deadline` (time.monotonic()), saving every `checkpoint_s` and at the end.

    A step is not started unless the last one's duration still fits before the deadline; with
    `max_steps`, none past that step either (counted over every run, as `step` is).
    """
    from tqdm import tqdm

    optimizer = make_optimizer(config)
    state = restore(model, optimizer, folder)
    budget = max(0.0, deadline - time.monotonic())
    bar = tqdm(
        total=round(budget),
        desc="tuning the drafter (s)",
        unit="s",
        disable=quiet,
        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n}/{total} s {postfix}",
    )
    began = last_save = time.monotonic()
    took = 0.0
    with bar:
        while time.monotonic() + took < deadline and state.step < (max_steps or 1 << 62):
            start = time.monotonic()
            record = scdf_step(model, optimizer, rows, config, state.step)
            took = time.monotonic() - start
            state.step += 1
            state.seconds += took
            state.history.append(record)
            bar.update(min(bar.total, round(time.monotonic() - began)) - bar.n)
            d = " ".join(f"{t[:5]} {v:.2f}" for t, v in record["D"].items())
            bar.set_postfix_str(f"step {state.step}; D {d}; U {record['U']:.2f}")
            if time.monotonic() - last_save >= checkpoint_s:
                save(model, optimizer, state, config, folder, base)
                last_save = time.monotonic()
    save(model, optimizer, state, config, folder, base)
    return state
