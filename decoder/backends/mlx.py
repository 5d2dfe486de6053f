"""MLX: one model with a rewindable KV cache, keyed by the exact token ids it has consumed.

Both the target and a model drafter use it. Because the cache is keyed by ids, a new request
whose ids share a prefix with the previous one (the next keystroke, the next cycle) only feeds
what is new: this is the prefix cache across keystrokes and the drafter's resync in one place.

The caches rewind exactly, for every layer type the engine speculates on. Speculative decoding
feeds drafted tokens and then removes the rejected ones. mlx-lm's RotatingKVCache (Gemma-3's
sliding-window layers) refuses to trim once the context is longer than its window, because it
has already overwritten the keys it would need. We give such layers a plain KVCache instead:
mlx-lm builds their mask with `window_size`, so attention still sees exactly the last `window`
positions, and trimming stays exact at any length. The price is memory linear in the context,
which the callers bound by trimming the prompt.

Exact passes (the `exact` setting): a pass over n tokens must give, bit for bit, the logits of n
one-token passes, or speculation leaves plain greedy decoding. On a CPU with OpenBLAS, MLX's
attention over n queries does not (a one-query pass takes another kernel path), nor do matrix
products over more rows than OpenBLAS computes like one (12 here with 2 threads, 3 with one,
none on an AVX-512 CPU). So in exact mode attention runs one query at a time inside a pass
(each as its one-token pass would: decoder/compat/mlx_lm.py), and the products are kept alike
in one of two ways, chosen by the check at load (decoder/backends/exactness.py): passes split
into the widest width the kernels give exactly (`split_passes`), or every pass padded to 16
rows with each position at row (position mod 16), which is exact whatever the kernels, at the
cost of a 16-row product for every plain step (`pad_passes`). Prefill runs batched, as wide
as a request allows (decoder/backends/base.py); its logits depend on how a prompt is cut on a
CPU, so there exact mode cuts every prompt at fixed positions, in every lane (measured at load).

Hidden states: a DFlash drafter reads the target's hidden states at some layers (`capture`);
they are kept per cached position, rewound with the cache and saved with it per document.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import mlx.core as mx
import numpy as np
from mlx_lm.models.cache import KVCache, RotatingKVCache, can_trim_prompt_cache, make_prompt_cache

from decoder.backends import threads
from decoder.backends.adapters import Adapter, check_base
from decoder.backends.base import PrefixCaches, plan_sync, prefill
from decoder.backends.blas import find_openblas, loaded_blas
from decoder.backends.exactness import Outlook
from decoder.backends.files import DTYPES, ModelLoadError
from decoder.backends.models import HUB_GGUF, Model, resolve
from decoder.compat.mlx_lm import one_query_at_a_time, rows_at, rowwise_attention, tap_layers
from decoder.errors import one_line

if TYPE_CHECKING:
    from decoder.config import Settings

__all__ = [
    "MLXBackend",
    "can_rewind",
    "doctor",
    "load",
    "load_adapter",
    "make_cache",
    "peers",
    "rewind",
]

DEFAULT_CONTEXT = 32768


def make_cache(model) -> list:
    """A per-layer cache list for `model` in which every layer can be trimmed."""
    cache = make_prompt_cache(model)
    return [KVCache() if isinstance(c, RotatingKVCache) else c for c in cache]


def can_rewind(cache: list) -> bool:
    """False for models with recurrent state (SSM layers), which cannot speculate."""
    return can_trim_prompt_cache(cache)


def rewind(cache: list, n: int) -> None:
    """Drop the last `n` positions from every layer; exact, so callers may rely on it."""
    if n <= 0:
        return
    for c in cache:
        if c.offset < n:
            raise ValueError(f"cannot rewind {n} positions: layer holds {c.offset}")
        c.trim(n)


class Features:
    """Hidden states per cached position (one row each), in the chunks the passes produced."""

    def __init__(self) -> None:
        self.chunks: list[mx.array] = []
        self.size = 0

    def add(self, rows: mx.array) -> None:
        self.chunks.append(rows)
        self.size += rows.shape[0]

    def trim(self, n: int) -> None:
        """Drop the last `n` rows."""
        while n > 0 and self.chunks:
            last = self.chunks.pop()
            self.size -= last.shape[0]
            if last.shape[0] > n:
                self.add(last[: last.shape[0] - n])
            n -= min(n, last.shape[0])

    def read(self, start: int) -> mx.array:
        """Rows from `start` to the end."""
        out, at = [], 0
        for chunk in self.chunks:
            end = at + chunk.shape[0]
            if end > start:
                out.append(chunk[max(0, start - at) :])
            at = end
        return mx.concatenate(out) if out else mx.zeros((0, 0))


def _pieces(ids: list[int], width: int) -> list[list[int]]:
    return [ids[i : i + width] for i in range(0, len(ids), width)]


class MLXBackend:
    """An mlx-lm model behind the Backend protocol; logits come back as numpy float32."""

    name = "mlx"

    def __init__(
        self,
        model,
        tokenizer=None,
        *,
        prefix_cache_mb: float = 512,
        path: str = "",
        exact: bool = False,
    ):
        self.model = model
        self.tokenizer = tokenizer
        self.cache = make_cache(model)
        self.ids: list[int] = []  # exactly the ids whose keys and values are in the cache
        self.exact_passes = exact and rowwise_attention(model)  # attention query by query
        self.max_width: int | None = None  # passes wider than this are split (exact mode)
        self.padded: int | None = None  # every pass fed is padded to this many ids (exact mode)
        self.taps: list | None = None  # the tapped layers' outputs of the last pass
        self.features: Features | None = None  # their hidden states per cached position
        self.prefilled = 0  # ids fed by the last `sync` (for prefix-cache statistics)
        self.pace = threads.Pace()
        self.path = path
        self.caches = PrefixCaches(prefix_cache_mb)
        args = getattr(model, "args", None)
        self.context_length = getattr(args, "max_position_embeddings", None) or DEFAULT_CONTEXT
        self._vocab_size: int | None = None
        self.adapter: str | None = None  # a tuned LoRA in use (load_adapter)

    @property
    def table(self) -> tuple[bytes, ...]:
        from decoder.vocab import token_bytes

        return token_bytes(self.tokenizer)

    @property
    def eos_ids(self) -> frozenset[int]:
        return frozenset(self.tokenizer.eos_token_ids)

    @property
    def vocab_size(self) -> int:
        if self._vocab_size is None:
            args = getattr(self.model, "args", None)
            self._vocab_size = getattr(args, "vocab_size", None) or int(
                self.model(mx.array([[0]]), cache=None).shape[-1]
            )
        return self._vocab_size

    @property
    def can_rewind(self) -> bool:
        return can_rewind(self.cache)

    def forward(self, ids: list[int]) -> np.ndarray:
        """Feed `ids` after what the cache holds; logits (len(ids), vocab)."""
        if self.padded:
            logits = mx.concatenate(self._aligned(ids))
        elif len(ids) == 1 or not self.exact_passes:
            logits = self._pass(ids)
        else:
            with one_query_at_a_time():
                pieces = _pieces(ids, self.max_width or len(ids))
                logits = mx.concatenate([self._pass(piece) for piece in pieces])
        self.ids.extend(ids)
        return np.array(logits.astype(mx.float32))

    def _pass(self, ids: list[int], rows: slice = slice(None)) -> mx.array:
        logits = self.model(mx.array(ids)[None], cache=self.cache)[0]
        if self.features is not None:
            self.features.add(mx.concatenate(self.taps, axis=-1)[0][rows])
        return logits

    def _aligned(self, ids: list[int]) -> list[mx.array]:
        """Logits of `ids`, each fed at row (position mod `padded`) of a pass `padded` wide.

        So every product has the same shape, and a position's row in it never changes:
        whatever kernel and thread split the BLAS takes for that shape, a token gets the same
        sums fed alone or among others (rows being independent of each other). The pass's
        other rows are padding: they neither attend nor reach the cache (`rows_at`).
        """
        width, at, parts = self.padded, 0, []
        while at < len(ids):
            start = len(self.ids) + at
            row = start % width
            new = ids[at : at + min(width - row, self.max_width or width)]
            rows = range(row, row + len(new))
            fed = new[:1] * row + new + new[-1:] * (width - rows.stop)
            with rows_at(self.cache, start, rows):
                logits = self._pass(fed, slice(rows.start, rows.stop))
            parts.append(logits[rows.start : rows.stop])
            at += len(new)
        return parts

    def prefill_chunk(self, ids: list[int]) -> None:
        self._pass(ids)
        self.ids.extend(ids)
        mx.eval(
            [c.state for c in self.cache], *(self.features.chunks[-1:] if self.features else [])
        )

    def rewind(self, n: int) -> None:
        if n > 0:
            rewind(self.cache, n)
            del self.ids[-n:]
            if self.features is not None:
                self.features.trim(n)

    def split_passes(self, width: int) -> None:
        """Feed passes wider than `width` tokens in pieces of `width` (exact mode only)."""
        self.max_width = max(1, width)

    def whole_passes(self, start: int, n: int) -> int:
        """Of `n` ids to verify from `start`, as many as fill the padded passes they take.

        All that fit the first window, else up to the end of the last window they fill: a
        window started for a draft's last few ids costs as much as a full one.
        """
        first = self.padded - start % self.padded if self.padded else n
        return n if n <= first else first + (n - first) // self.padded * self.padded

    def pad_passes(self, width: int | None) -> None:
        """Feed every pass `width` ids wide, aligned to positions (exact mode only; None: stop).

        One-token steps then multiply the same shapes as verification passes, each position
        at the same row of them, so the BLAS computes it alike whatever its kernels (`_aligned`).
        """
        self.padded = width if self.exact_passes and self.can_rewind else None

    def capture(self, layer_ids: tuple[int, ...]) -> None:
        """Keep the hidden states of `layer_ids` (concatenated) for every position fed from now.

        The caches start over, so every cached position has its hidden states.
        """
        self.taps = tap_layers(self.model, tuple(layer_ids))
        self.reset()

    def hidden(self, start: int) -> mx.array:
        """Hidden states of the cached positions from `start` on: (positions, features)."""
        if self.features is None:
            raise RuntimeError("no hidden states captured: call capture() first")
        return self.features.read(start)

    def sync(self, ids: list[int], should_stop: Callable[[], bool] | None = None) -> np.ndarray:
        """Make the cache hold `ids` and return the logits after the last one.

        Keeps the longest common prefix with what is cached, rewinds the rest, and feeds the
        new tail in chunks. At least the last id is fed again, since its logits are needed.
        """
        common = plan_sync(self.ids, ids)
        if not self.can_rewind and common < len(self.ids):
            (self.cache, self.ids, self.features), common = self._empty(), 0
        self.rewind(len(self.ids) - common)
        tail = ids[common:]
        self.prefilled = len(tail)
        return prefill(self, tail, should_stop)

    def select(self, key: str | None) -> None:
        """Make `key`'s cache current; the current one is kept (LRU, capped) for its key."""
        size = sum(c.nbytes for c in self.cache if c.keys is not None)
        if self.features is not None:
            size += sum(chunk.nbytes for chunk in self.features.chunks)
        state = (self.cache, self.ids, self.features)
        changed, saved = self.caches.switch(key, lambda: (state, size))
        if changed:
            self.cache, self.ids, self.features = saved or self._empty()

    def forget(self, key: str | None) -> None:
        if self.caches.forget(key):
            self.cache, self.ids, self.features = self._empty()

    def reset(self) -> None:
        self.cache, self.ids, self.features = self._empty()
        self.caches.clear()

    def _empty(self) -> tuple[list, list[int], Features | None]:
        return make_cache(self.model), [], Features() if self.taps is not None else None

    def describe(self) -> dict:
        numerics = "batched passes as the kernels give them"
        if self.exact_passes:
            numerics = "exact passes: attention one query at a time"
            numerics += f", passes of at most {self.max_width} tokens" if self.max_width else ""
            numerics += f", every pass padded to {self.padded} tokens" if self.padded else ""
        return {
            "backend": self.name,
            "numerics": numerics,
            "build": "Metal" if mx.default_device() == mx.gpu else "CPU",
            "device": str(mx.default_device()),
            "threads": None,
            "model": self.path,
            "adapter": self.adapter,
            "platform": platform.machine(),
        }


def load(spec: str, settings: Settings, progress: bool = True) -> Model:
    """`embedded:NAME`, a .gguf (converted once), a model directory or a hub repo, on MLX."""
    dtype = settings.dtype
    if HUB_GGUF.fullmatch(spec):
        raise ModelLoadError(
            f"{spec} names a GGUF on the hub: it runs on the llama.cpp backend (--backend llamacpp)"
        )
    if dtype is not None and dtype not in DTYPES:
        raise ModelLoadError(f"unsupported dtype {dtype!r}; use one of {', '.join(DTYPES)}")
    path, source = resolve(spec, dtype=dtype, progress=progress)
    model, tokenizer = _load_dir(path, spec)
    if dtype is not None:
        model.set_dtype(getattr(mx, dtype))  # casts floating parameters only
    _check_tokenizer_fits(model, tokenizer, spec)
    backend = MLXBackend(
        model,
        tokenizer,
        prefix_cache_mb=settings.prefix_cache_mb,
        path=str(path),
        exact=settings.exact,
    )
    return Model(spec, backend, path, source)


def load_adapter(model: Model, adapter: Adapter) -> None:
    """A tuned LoRA (mlx-lm's adapter format) on a loaded model, through mlx-lm's own loader."""
    from mlx_lm.tuner.utils import load_adapters

    sha = model.path.name.split("-")[0] if model.source in ("embedded", "gguf") else None
    check_base(adapter, sha, model.spec)
    try:
        load_adapters(model.backend.model, str(adapter.folder))
    except Exception as error:  # shapes, names, a damaged file: one line for the user
        raise ModelLoadError(
            f"drafter adapter {adapter.folder} does not fit {model.spec}: {one_line(error)}"
        ) from None
    model.backend.model.eval()
    model.backend.adapter = adapter.describe()


def _load_dir(path: Path, spec: str):
    """mlx-lm's loader on a local directory, its many failure types turned into ModelLoadError."""
    from mlx_lm.utils import load as load_dir

    if not (path / "config.json").is_file():
        raise ModelLoadError(f"{spec}: no config.json in {path}; not a model directory")
    try:
        return load_dir(str(path))
    except Exception as error:  # missing weights, unknown model type, bad json, broken tokenizer...
        raise ModelLoadError(f"cannot load model {spec} from {path}: {one_line(error)}") from None


def _check_tokenizer_fits(model, tokenizer, spec: str) -> None:
    """Token ids past the embedding table would crash or read garbage mid-completion: refuse."""
    import mlx.nn as nn

    tokens = max(tokenizer.get_vocab().values()) + 1
    embeddings = [
        m for _, m in model.named_modules() if isinstance(m, (nn.Embedding, nn.QuantizedEmbedding))
    ]
    if not embeddings:
        return
    rows = max(m.weight.shape[0] for m in embeddings)  # the token table, not e.g. GPT-2's positions
    if tokens > rows:
        raise ModelLoadError(
            f"tokenizer of {spec} has {tokens} tokens but model {spec} embeds {rows}"
        )


def doctor(settings: Settings) -> list[str]:
    """MLX's version and device, and the BLAS it multiplies with on a CPU."""
    lines = [f"{mx.__version__}; device {mx.default_device()}; BLAS {loaded_blas()}"]
    if mx.default_device() == mx.cpu and loaded_blas().startswith("reference"):
        hint = (
            "OpenBLAS is installed but was not preloaded"
            if find_openblas()
            else "bielik-lsp setup builds one over PyPI's scipy-openblas32; or install the "
            "system's: apt-get install libopenblas0-pthread"
        )
        lines.append(f"WARNING MLX runs on a reference BLAS: prefill ~20x slower ({hint})")
    return lines


def outlook(settings: Settings) -> Outlook:
    """Exact mode computes attention one query at a time; the check at load confirms it."""
    if settings.exact:
        return Outlook("yes", "MLX in exact mode; checked bit for bit when the models load")
    return Outlook("no", "the exact setting is off", "exact = true in the config file")


def peers(backend: MLXBackend) -> list[tuple[str, Callable[[list[int], int], Iterator[int]]]]:
    """mlx-lm's own generation loop on the same loaded model (greedy: no sampler given)."""
    from mlx_lm import stream_generate

    def generate(prompt: list[int], max_tokens: int) -> Iterator[int]:
        # The last response carries the final token (the EOS or the max_tokens-th) once.
        for response in stream_generate(
            backend.model, backend.tokenizer, prompt, max_tokens=max_tokens
        ):
            yield response.token

    return [("mlx-lm stream_generate", generate)]
