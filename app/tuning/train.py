"""LoRA training of the drafter with mlx-lm's pieces, one s-CDF step at a time, resumable.

The drafter runs as mlx-lm's model (a GGUF is converted once, as the MLX backend does); LoRA
layers come from mlx-lm's tuner (`linear_to_lora_layers`), and the adapter is written in
mlx-lm's own format (adapters.safetensors + adapter_config.json), which `load_adapters` reads.
The optimizer's state, the step and the seconds spent go beside it, so a run picks up where the
last one stopped; mini-batches are drawn from (seed, step), so a resumed run draws what an
uninterrupted one would have. The frozen bottom layers' output is kept per row (`keep_frozen`),
so a step runs only the layers that carry LoRA.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import mlx.core as mx
import mlx.nn as nn
import mlx.optimizers as optim
import numpy as np
from mlx.utils import tree_flatten, tree_unflatten

from app.tuning import scdf
from app.tuning.rows import Row, batch
from decoder.compat.mlx_lm import (
    decoder_layers,
    hidden_above,
    hidden_below,
    last_hidden,
    output_head,
    split_width,
)

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
    learning_rate: float = 1e-3  # at the first step; it falls along a cosine to `final_rate`
    final_rate: float = 0.1  # the share of `learning_rate` left at the last step
    rows_per_task: int = 2  # mini-batch rows drawn per task per step
    row_tokens: int = 256  # longest row, in drafter tokens
    guard: float = 0.25  # the share of each step spread evenly over the tasks (scdf.guarded)
    keep_mb: int = 1024  # at most this much memory for the frozen layers' output (keep_frozen)
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


def scored_losses(model, rows: list[Row], start: int = 0) -> tuple[mx.array, np.ndarray]:
    """The cross-entropy of each scored token of `rows` (N,), and the row of each (N,).

    Rows that carry their frozen layers' output (`keep_frozen`) run from layer `start` only.

    The output head runs at the scored positions only where the model allows it (half the
    positions of a row are the prompt, and the head is a fifth of a small drafter's work).
    """
    inputs, targets, mask = batch(rows)
    at = np.flatnonzero(mask)  # row-major: the rows' scored positions, row after row
    head = output_head(model)
    if head is None:
        logits = model(mx.array(inputs))
        logits = logits.reshape(-1, logits.shape[-1])[mx.array(at)]
    else:
        hidden = decode(model, rows, inputs, start)
        logits = head(hidden.reshape(-1, hidden.shape[-1])[mx.array(at)])
    picked = mx.array(targets.reshape(-1)[at])
    return nn.losses.cross_entropy(logits.astype(mx.float32), picked), at // mask.shape[1]


def decode(model, rows: list[Row], inputs: np.ndarray, start: int) -> mx.array:
    """`last_hidden` of the batch, from each row's kept frozen output where it has one."""
    if rows[0].below is None:
        return last_hidden(model, mx.array(inputs))
    width = inputs.shape[1]
    below = [mx.pad(r.below, [(0, width - r.below.shape[0]), (0, 0)]) for r in rows]
    return hidden_above(model, mx.stack(below), start)


def frozen_layers(model, config: TuneConfig) -> int:
    """How many bottom layers have no LoRA (their output never changes during the tuning)."""
    return max(0, len(decoder_layers(model)) - config.layers)


def keep_frozen(model, rows: dict[str, list[Row]], config: TuneConfig, quiet: bool):
    """`rows` with each one's frozen bottom layers' output kept, so a step runs the top only.

    Each row is used in several steps and the bottom layers never change; on 2 cores they took
    a third of each step (docs/benchmarks.md). Computed row by row, so a row's output does not
    depend on the rows beside it (a resumed run gets what an uninterrupted one had). Rows as
    given where the model cannot be split, where `scored_losses` runs the whole model anyway (no
    output head of its own), or where the outputs would pass `keep_mb`.
    """
    from tqdm import tqdm

    start = frozen_layers(model, config)
    count = sum(len(task_rows) for task_rows in rows.values())
    tokens = sum(len(r.ids) - 1 for task_rows in rows.values() for r in task_rows)
    width = split_width(model) if start and output_head(model) is not None else 0
    if not width or tokens * width * 4 > config.keep_mb << 20:
        return rows
    out = {}
    with tqdm(total=count, desc="frozen layers, once per row", disable=quiet) as bar:
        for task, task_rows in rows.items():
            out[task] = []
            for row in task_rows:
                below = hidden_below(model, mx.array([row.ids[:-1]]), start)[0]
                mx.eval(below)
                out[task].append(replace(row, below=below))
                bar.update()
    return out


def divergence(model, rows: list[Row]) -> float:
    """D_T on these rows: the drafter's mean cross-entropy against the target's tokens."""
    return float(scored_losses(model, rows)[0].mean().item())


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
    """One s-CDF step in one forward pass: D_T per task on its mini-batch, then a gradient step.

    On sum_T w_T * L_T, w from those D_T (s-CDF's, then `guarded`; both recorded).
    """
    batches = draw(rows, config, step)
    tasks = list(batches)
    rows_of = [i for i, task in enumerate(tasks) for _ in batches[task]]
    record: dict = {"step": step}

    def loss(m):
        flat = [r for task in tasks for r in batches[task]]
        ce, row = scored_losses(m, flat, start=frozen_layers(m, config))
        share = np.eye(len(tasks), dtype=np.float32)[np.asarray(rows_of)[row]].T  # (tasks, N)
        per_task = mx.array(share / share.sum(axis=1, keepdims=True)) @ ce  # L_T
        record["D"] = dict(zip(tasks, mx.stop_gradient(per_task).tolist(), strict=True))
        record["w"] = scdf.weights(record["D"])
        used = record["used"] = scdf.guarded(record["w"], config.guard)
        return (mx.array([used[task] for task in tasks]) * per_task).sum()

    value, grads = nn.value_and_grad(model, loss)(model)
    optimizer.update(model, grads)
    mx.eval(model.parameters(), optimizer.state, value)
    return record | {"U": scdf.unfairness(record["D"])}


def learning_rate(config: TuneConfig, step: int, end: float) -> float:
    """The rate at `step` of a training planned to end at step `end`: a cosine decay.

    At a fixed rate the drafter's held-out divergence stayed higher (docs/benchmarks.md).
    """
    low = config.learning_rate * config.final_rate
    done = min(step / end, 1.0) if end > 0 else 0.0
    return low + (config.learning_rate - low) * 0.5 * (1 + math.cos(math.pi * done))


def planned_end(state: TrainState, deadline: float, end: int | None) -> float:
    """The step the training will reach: `end` where given, or what the time left allows.

    The time left is counted in the mean step time so far; before the first step there is none,
    and the rate stays full. A resumed run continues the curve from its step.
    """
    if end is not None:
        return end
    if not state.step:
        return math.inf
    return state.step + max(0.0, deadline - time.monotonic()) * state.step / state.seconds


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
    end: int | None = None,
) -> TrainState:
    """s-CDF steps until `deadline` (time.monotonic()), saving every `checkpoint_s` and at the end.

    A step is not started unless the last one's duration still fits before the deadline; with
    `max_steps`, none past that step either (counted over every run, as `step` is). The learning
    rate's decay ends at step `end` (default: `max_steps`, else what the time left allows), so
    runs stopped early and resumed with the same `end` make the steps one run would.
    """
    from tqdm import tqdm

    optimizer = make_optimizer(config)
    state = restore(model, optimizer, folder)
    rows = keep_frozen(model, rows, config, quiet)
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
            plan = planned_end(state, deadline, end or max_steps)
            optimizer.learning_rate = learning_rate(config, state.step, plan)
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
