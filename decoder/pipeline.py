"""From settings to a running engine: load the models once, build drafters and policies.

The CLI, the language server and the benchmarks all go through here, so a drafter or a policy
means the same thing everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from decoder.backends.base import Backend
from decoder.backends.models import Model, load_model
from decoder.backends.remote import RemoteEngine, is_remote
from decoder.config import ConfigError, Settings
from decoder.drafting.cascade import CascadeDrafter
from decoder.drafting.cross import CrossDrafter
from decoder.drafting.drafter import Drafter, ModelDrafter
from decoder.drafting.lookup import LookupDrafter
from decoder.engine import Chunk, Engine, FixedPolicy, Policy
from decoder.policy import AutoPolicy, Costs, measure_costs
from decoder.sampling import Sampling
from decoder.vocab import token_bytes

INEXACT = "its batched verification is not bit-identical to one-token decoding"


@dataclass
class Pipeline:
    settings: Settings
    target: Model
    engine: Engine
    drafter_model: Model | None = None
    drafters: dict[str, Drafter] = field(default_factory=dict)
    _costs: Costs | None = None

    @classmethod
    def load(cls, settings: Settings, *, progress: bool = True) -> Pipeline:
        """Load the target, and the drafter model for the `model` and `auto` drafters.

        `auto` treats the drafter model as optional: if it cannot serve this target, the policy
        simply never gets to choose it.
        """
        target = _load(settings, settings.target, settings.target_backend, progress)
        pipe = cls(settings, target, Engine(backend_of(target, settings)))
        pipe.drafters["lookup"] = LookupDrafter()
        speculates = settings.drafter != "auto" or pipe.exact
        if settings.drafter in ("model", "cascade", "auto") and speculates:
            drafter = _load(
                settings, settings.drafter_model, settings.drafter_model_backend, progress
            )
            try:
                pipe.attach_drafter_model(drafter)
            except ConfigError:
                if settings.drafter != "auto":
                    raise
        if settings.drafter == "auto" and speculates:
            pipe.costs  # noqa: B018 — measured now, so the first request does not pay for it
        return pipe

    @property
    def exact(self) -> bool:
        """Whether verified drafts give exactly plain greedy decoding's output on this target."""
        return self.engine.runner.exact_batches

    def attach_drafter_model(self, drafter: Model) -> None:
        """Use `drafter` as the model drafter (across tokenizers when the vocabularies differ)."""
        self.drafter_model = drafter
        runner = backend_of(drafter, self.settings)
        if token_bytes(drafter.tokenizer) == token_bytes(self.target.tokenizer):
            self.drafters["model"] = ModelDrafter(runner, len(token_bytes(self.target.tokenizer)))
        else:
            self.drafters["model"] = CrossDrafter(
                runner, drafter.tokenizer, self.target.tokenizer, self.settings.translation
            )
        lookup = self.drafters.setdefault("lookup", LookupDrafter())
        self.drafters["cascade"] = CascadeDrafter(lookup, self.drafters["model"], self.engine.table)

    @property
    def costs(self) -> Costs:
        """Speculation costs on this machine, measured once (about a second) on first use."""
        if self._costs is None:
            text = "Pomiar kosztu weryfikacji: 1. jeden, 2. dwa, 3. trzy."
            runner = self.drafter_runner
            drafter_ids = self.drafter_model.tokenizer.encode(text) if runner is not None else None
            self._costs = measure_costs(
                self.engine.runner, self.engine.encode(text), runner, drafter_ids
            )
        return self._costs

    @property
    def drafter_runner(self) -> Backend | None:
        """The Backend running the drafter model, if one is loaded."""
        return getattr(self.drafters.get("model"), "runner", None)

    def select(self, key: str | None) -> None:
        """Make the prefix caches of `key` (a document) current, the target's and the drafter's.

        Switching files then reuses each model's prompt cache instead of prefilling again.
        """
        self.engine.runner.select(key)
        if self.drafter_runner is not None:
            self.drafter_runner.select(key)

    def reset(self) -> None:
        """Forget the cached prompts (benchmarks measure requests without them)."""
        self.engine.runner.reset()
        if self.drafter_runner is not None:
            self.drafter_runner.reset()

    def describe(self) -> dict:
        """Backends, builds, threads and models of the target and the drafter model."""
        out = {"target": self.engine.runner.describe()}
        if self.drafter_runner is not None:
            out["drafter"] = self.drafter_runner.describe()
        return out

    def policy(
        self,
        mode: str | None = None,
        k: int | None = None,
        *,
        text: str = "",
        cursor: int | None = None,
        override: str = "auto",
    ) -> Policy:
        """The policy for one request: fixed drafter and k, or `auto` over `text` at `cursor`.

        `override` is the per-file switch: off forces plain decoding whatever the mode; on makes
        auto speculate even on prose (a fixed mode already speculates).
        """
        mode = mode or self.settings.drafter
        k = self.settings.k if k is None else k
        if override == "off" or mode == "none":
            return FixedPolicy(
                None, 0, "speculation off for this file" if override == "off" else None
            )
        name = self.engine.runner.name
        if mode == "auto" and not self.exact:
            return FixedPolicy(None, 0, f"{name}: plain decoding, {INEXACT}")
        if mode == "auto":
            from polish.content import classify

            return AutoPolicy(
                self.drafters,
                self.costs,
                classify(text, cursor) if text else None,
                override=override,
                k_max=k,
            )
        if mode not in self.drafters:
            raise ConfigError(f"drafter {mode!r} is not loaded")
        inexact = f"fixed: {mode}, k={k}; {name}: {INEXACT}, output may differ from plain"
        return FixedPolicy(self.drafters[mode], k, None if self.exact else inexact)

    def sampling(self) -> Sampling:
        s = self.settings
        return Sampling(s.temperature, s.top_p, s.seed)

    def continue_text(
        self,
        text: str,
        *,
        max_tokens: int | None = None,
        policy: Policy | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[Chunk]:
        """Continue `text` with the target; the one entry point every front end uses."""
        return self.engine.generate(
            self.engine.encode(text),
            max_tokens=max_tokens or self.settings.max_tokens,
            policy=policy or self.policy(text=text),
            sampling=self.sampling(),
            prompt_text=text,
            should_stop=should_stop,
        )


def load(settings: Settings, *, progress: bool = True) -> Pipeline | RemoteEngine:
    """The engine `settings` ask for: an inference server for a URL target, else local models.

    Both answer `policy(...)` and `continue_text(...)` with the same Chunk and RunStats shapes.
    """
    if is_remote(settings.target):
        return RemoteEngine.connect(settings)
    return Pipeline.load(settings, progress=progress)


def _load(settings: Settings, spec: str, backend: str, progress: bool) -> Model:
    return load_model(
        spec,
        dtype=settings.dtype,
        progress=progress,
        backend=backend,
        threads=settings.threads,
        gpu_layers=settings.gpu_layers,
        prefix_cache_mb=settings.prefix_cache_mb,
    )


def backend_of(model: Model, settings: Settings | None = None) -> Backend:
    """The Backend running `model`: llama.cpp models are their backend; MLX models get a runner."""
    if model.backend != "mlx":
        return model.model
    from decoder.backends.mlx import MLXBackend

    mb = settings.prefix_cache_mb if settings else Settings().prefix_cache_mb
    return MLXBackend(model.model, model.tokenizer, prefix_cache_mb=mb, path=str(model.path))
