"""From settings to a running engine: load the models once, build drafters and policies.

The CLI, the language server and the benchmarks all go through here, so a drafter or a policy
means the same thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

from .config import ConfigError, Settings
from .drafter import Drafter, ModelDrafter
from .engine import Chunk, Engine, FixedPolicy, Policy
from .lookup import LookupDrafter
from .models import Model, load_model
from .sampling import Sampling
from .vocab import token_bytes


@dataclass
class Pipeline:
    settings: Settings
    target: Model
    engine: Engine
    drafter_model: Model | None = None
    drafters: dict[str, Drafter] = field(default_factory=dict)

    @classmethod
    def load(cls, settings: Settings, *, progress: bool = True, load_drafter: bool | None = None) -> "Pipeline":
        """Load the target (and the drafter model when the settings need it)."""
        target = load_model(settings.target, dtype=settings.dtype, progress=progress)
        pipe = cls(settings, target, Engine(target.model, target.tokenizer))
        pipe.drafters["lookup"] = LookupDrafter()
        if load_drafter if load_drafter is not None else settings.drafter == "model":
            pipe.attach_drafter_model(load_model(settings.drafter_model, dtype=settings.dtype, progress=progress))
        return pipe

    def attach_drafter_model(self, drafter: Model) -> None:
        """Use `drafter` as the model drafter; it must share the target's tokenizer for now."""
        if token_bytes(drafter.tokenizer) != token_bytes(self.target.tokenizer):
            raise ConfigError(
                f"drafter {drafter.spec!r} does not share the target's tokenizer; "
                "drafting across tokenizers is not available yet: use --drafter lookup or none"
            )
        self.drafter_model = drafter
        self.drafters["model"] = ModelDrafter(drafter.model, len(token_bytes(self.target.tokenizer)))

    def policy(self, mode: str | None = None, k: int | None = None) -> Policy:
        mode = mode or self.settings.drafter
        k = self.settings.k if k is None else k
        if mode == "none":
            return FixedPolicy(None, 0)
        if mode not in self.drafters:
            raise ConfigError(f"drafter {mode!r} is not loaded")
        return FixedPolicy(self.drafters[mode], k)

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
            policy=policy or self.policy(),
            sampling=self.sampling(),
            prompt_text=text,
            should_stop=should_stop,
        )
