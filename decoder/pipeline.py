"""From settings to a running engine: load the models once, build drafters and policies.

The CLI, the language server and the benchmarks all go through here, so a drafter or a policy
means the same thing everywhere. `load` gives the local Pipeline, or an inference server's
RemoteEngine for a URL target; both are a `Generator`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from decoder import scoring
from decoder.backends import exactness
from decoder.backends.base import Backend, common_prefix
from decoder.backends.exactness import Exactness
from decoder.backends.models import Model, load_model
from decoder.config import ConfigError, Settings, is_remote
from decoder.drafting import registry
from decoder.drafting.drafter import Drafter
from decoder.engine import Engine, FixedPolicy, Policy
from decoder.generation import Chunk, Generator, Stage, print_nothing
from decoder.policy import AutoPolicy
from decoder.pricing import Costs, measure_costs
from decoder.remote import RemoteEngine
from decoder.sampling import Sampling

INEXACT = "its batched verification is not bit-identical to one-token decoding"
FAST = "exact off: fastest kernels; drafts verified as llama-server does, may differ at a near-tie"
COST_PROBE = "Pomiar kosztu weryfikacji: 1. jeden, 2. dwa, 3. trzy."


@dataclass
class Pipeline:
    """Our own engine: the target, the drafter model if loaded, and every drafter they allow."""

    settings: Settings
    target: Model
    drafter_model: Model | None = None
    dflash: str | None = None  # a DFlash drafter directory, when drafter_model names one
    drafters: dict[str, Drafter] = field(default_factory=dict)
    _costs: Costs | None = None
    _exactness: Exactness | None = None

    def __post_init__(self) -> None:
        self.engine = Engine(self.target.backend)
        if not self.drafters:
            self.drafters = self._build_drafters()

    @classmethod
    def load(
        cls, settings: Settings, *, progress: bool = True, stage: Stage = print_nothing
    ) -> Pipeline:
        """Load the target, measure whether its batches are exact, load the drafter model if used.

        Where `auto` cannot speculate exactly (and exactness is asked for), it decodes plain, so
        it loads no drafter model and measures no costs. `stage` hears what each step is, for
        an editor's progress.
        """
        stage(f"loading {settings.target}")
        target = load_model(settings.target, settings, settings.target_backend, progress=progress)
        pipe = cls(settings, target)
        stage("checking that batched passes are exact")
        limit = pipe.draft_limit  # exactness measured now, not on the first request
        speculates = settings.drafter != "auto" or limit != 0
        if registry.needs_model(settings.drafter) and speculates:
            spec = settings.drafter_model
            if registry.check_format(settings.drafter, spec) == "dflash":
                pipe.dflash = spec
            else:
                stage(f"loading the drafter {spec}")
                engine = settings.drafter_model_backend
                pipe.drafter_model = load_model(
                    spec, settings, engine, progress=progress, adapter=settings.drafter_adapter
                )
            pipe.drafters = pipe._build_drafters()
        if settings.drafter == "auto" and speculates:
            stage("measuring what speculation costs on this machine")
            pipe.costs  # noqa: B018 — measured now, so the first request does not pay for it
        return pipe

    def _build_drafters(self) -> dict[str, Drafter]:
        model = self.drafter_model.backend if self.drafter_model else None
        parts = registry.Parts(self.engine.runner, model, self.settings.translation, self.dflash)
        return registry.build(parts)

    @property
    def exactness(self) -> Exactness:
        """Whether the target's passes over k+1 tokens give the logits of one-token passes.

        Measured once (after 600 cached positions), on first use. With `exact` on, a backend
        whose passes are exact only up to some width pads every pass to one width (MLX, where
        the kernels stay exact for fewer than 8 tokens, or as `exact_passes` asks), and feeds
        passes wider than what is exact in pieces.
        """
        if self._exactness is None:
            runner, k = self.engine.runner, self.settings.k
            if self.settings.exact:
                found = exactness.check_and_split(runner, k, self.settings.exact_passes)
            else:
                found = exactness.check(runner, k)
            self._exactness = found
        return self._exactness

    @property
    def draft_limit(self) -> int | None:
        """The longest draft that keeps output exactly plain greedy's (None: no limit).

        Only when exactness is asked for (the `exact` setting); 0: no draft is exact here.
        """
        if not self.settings.exact:
            return None
        return self.exactness.exact_width - 1

    @property
    def exact(self) -> bool:
        """Whether speculation here gives exactly plain greedy decoding's output."""
        return self.exactness.exact

    @property
    def costs(self) -> Costs:
        """Speculation costs on this machine, measured once (about a second) on first use."""
        if self._costs is None:
            runner = self.drafter_runner
            drafter_ids = runner.tokenizer.encode(COST_PROBE) if runner is not None else None
            self._costs = measure_costs(
                self.engine.runner, self.engine.encode(COST_PROBE), runner, drafter_ids
            )
        return self._costs

    @property
    def drafter_runner(self) -> Backend | None:
        """The Backend running the drafter model, if one is loaded."""
        return self.drafter_model.backend if self.drafter_model else None

    def _backends(self) -> list[Backend]:
        return [b for b in (self.engine.runner, self.drafter_runner) if b is not None]

    def select(self, key: str | None) -> None:
        """Make the prefix caches of `key` (a document) current, the target's and the drafter's.

        Switching files then reuses each model's prompt cache instead of prefilling again.
        """
        for backend in self._backends():
            backend.select(key)

    def catch_up_s(self, text: str, key: str | None) -> float:
        """About how long the target would prefill before continuing `text` from `key`'s cache.

        From the time its recent prefill passes took (0 before any was timed). Selects `key`
        for the target only (the drafter's cache follows at the next `select`).
        """
        runner = self.engine.runner
        runner.select(key)
        ids = self.engine.encode(text)
        return runner.pace.seconds(len(ids) - common_prefix(runner.ids, ids))

    def forget(self, key: str | None) -> None:
        """Drop the prefix caches of `key`, the target's and the drafter's (a closed document).

        Kept, a reopened document's prompt would resume from them, so each open and close of
        the same text would add what its time budget let it prefill, up to the cap.
        """
        for backend in self._backends():
            backend.forget(key)

    def reset(self) -> None:
        for backend in self._backends():
            backend.reset()

    def score(
        self, prefix: str, continuations: list[str], should_stop: Callable[[], bool] | None = None
    ) -> list[float]:
        """Log-probability of each continuation after `prefix`, on the target (own cache)."""
        return scoring.score(self.engine.runner, prefix, continuations, should_stop)

    def compare(
        self,
        text: str,
        edits: list[scoring.Edit],
        floor: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> list[list[float | None]]:
        """How much likelier each edit of `text` reads, on the target (own cache)."""
        return scoring.compare(self.engine.runner, text, edits, floor, should_stop)

    def describe(self) -> dict:
        """Backends, builds, threads and models; the drafters; exactness and measured costs."""
        out = {"target": self.engine.runner.describe()}
        if self.drafter_runner is not None:
            out["drafter"] = self.drafter_runner.describe()
        out["drafters"] = ", ".join(self.drafters)
        out["exact"] = self._exactness.describe() if self._exactness else "not measured"
        out["costs"] = self._costs.describe() if self._costs else "not measured"
        return out

    def apply(self, settings: Settings) -> None:
        """New settings that need no reload; a new translation mode rebuilds the drafters."""
        rebuild = settings.translation != self.settings.translation
        self.settings = settings
        if rebuild:
            self.drafters = self._build_drafters()

    def watch(self, on_health: Callable[[bool, str], None]) -> None:
        """Models in this process do not go down."""

    def close(self) -> None:
        self.drafters = {}
        self.drafter_model = None

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
        limit = self.draft_limit
        if mode == "auto" and limit == 0:
            return FixedPolicy(None, 0, f"plain decoding: {self._inexact()}")
        if mode == "auto":
            from polish.content import classify

            content = classify(text, cursor) if text else None
            k_max = k if limit is None else min(k, limit)
            note = "" if self.settings.exact else FAST
            return AutoPolicy(
                self.drafters, self.costs, content, override=override, k_max=k_max, note=note
            )
        if mode not in self.drafters:
            raise ConfigError(f"drafter {mode!r} is not loaded")
        exact = limit is not None and k <= limit
        inexact = f"fixed: {mode}, k={k}; output may differ from plain: {self._inexact()}"
        return FixedPolicy(self.drafters[mode], k, None if exact else inexact)

    def _inexact(self) -> str:
        """Why speculation here may leave plain greedy output, in one line."""
        if not self.settings.exact:
            return FAST
        found = self.exactness.describe()
        numerics = self.engine.runner.describe().get("numerics")
        found += f"; {numerics}" if numerics else ""
        return f"{self.engine.runner.name}: {INEXACT} ({found})"

    def continue_text(
        self,
        text: str,
        *,
        max_tokens: int | None = None,
        policy: Policy | None = None,
        should_stop: Callable[[], bool] | None = None,
        sampling: Sampling | None = None,
        first_bytes: bytes = b"",
        avoid: tuple[bytes, ...] = (),
    ) -> Iterator[Chunk]:
        """Continue `text` with the target; the one entry point every front end uses."""
        return self.engine.generate(
            self.engine.encode(text),
            max_tokens=max_tokens or self.settings.max_tokens,
            policy=policy or self.policy(text=text),
            sampling=sampling or self.settings.sampling,
            prompt_text=text,
            should_stop=should_stop,
            first_bytes=first_bytes,
            avoid=avoid,
        )


def load(settings: Settings, *, progress: bool = True, stage: Stage = print_nothing) -> Generator:
    """The engine `settings` ask for: an inference server for a URL target, else local models."""
    if is_remote(settings.target):
        stage(f"connecting to {settings.target}")
        return RemoteEngine.connect(settings)
    return Pipeline.load(settings, progress=progress, stage=stage)


def load_scorer(settings: Settings, *, progress: bool = True) -> Generator:
    """An engine to read sentences with (`score`): the target alone, nothing measured.

    With the numerics `exact` chooses, as the editors' server scores with its completion
    engine: `check`, the benches and the editors then give the same verdicts near a margin.
    """
    if is_remote(settings.target):
        return RemoteEngine.connect(settings)
    target = load_model(settings.target, settings, settings.target_backend, progress=progress)
    return Pipeline(settings, target)
