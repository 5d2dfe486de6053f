"""llama.cpp in-process (llama-cpp-python's low-level API) behind the Backend protocol.

GGUF files load as shipped, quantized. One context, one sequence: a batch feeds ids with logits
only where asked, a rewind removes KV positions, and the cache is keyed by the exact ids it
holds, as on MLX. Per-document caches are sequence-state snapshots (llama_state_seq_get_data),
kept in a bounded LRU. The tokenizer and the token-to-bytes table come from the GGUF vocabulary
through llama.cpp itself, so text is split exactly as llama.cpp splits it.
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from decoder.backends import llama_lib
from decoder.backends import threads as lanes
from decoder.backends.adapters import Adapter, check_base
from decoder.backends.base import PREFILL_CHUNK, PrefixCaches, rewind_and_prefill
from decoder.backends.exactness import UNKNOWN, Outlook
from decoder.backends.files import ModelLoadError, file_sha256
from decoder.backends.llama_lib import SETUP_COMMAND
from decoder.backends.models import Model, resolve_gguf
from decoder.compat import llama_cpp as compat
from decoder.compat.llama_cpp import lib

if TYPE_CHECKING:
    from decoder.config import Settings

DEFAULT_CONTEXT = 8192  # KV positions allocated; the model's training context caps it


class LlamaCppError(RuntimeError):
    """llama.cpp refused a model, a context or a batch; one line for the user."""


def physical_cores() -> int:
    """Physical cores: llama.cpp's decode is memory-bound, hyperthreads only add contention."""
    try:
        import psutil

        return psutil.cpu_count(logical=False) or os.cpu_count() or 1
    except ImportError:
        return os.cpu_count() or 1


def gpu_offload() -> bool:
    """Whether this libllama build can offload layers (CUDA, Metal, Vulkan...)."""
    return bool(lib.llama_supports_gpu_offload())


_initialised = False
_tiled_at_first_decode: bool | None = None  # llama.cpp's tiled switch, fixed by the first decode


def _init() -> None:
    global _initialised
    if not _initialised:
        lib.llama_log_set(_silent, ctypes.c_void_p())
        lib.llama_backend_init()
        _initialised = True


def _untiled_if_first() -> None:
    """Turn the tiled matmul off for this process, if no decode has read its switch yet.

    A switch the user set is kept. Other models in the process then run untiled too (slower
    prefill, same results).
    """
    if _tiled_at_first_decode is None and compat.TILED_ENV not in os.environ:
        os.environ[compat.TILED_ENV] = "0"


def _note_decode() -> None:
    """Record the tiled switch as the process's first decode reads it."""
    global _tiled_at_first_decode
    if _tiled_at_first_decode is None:
        _tiled_at_first_decode = compat.tiled_enabled()


def _tiled_state() -> bool:
    """Whether the tiled matmul is (or, before the first decode, will be) on in this process."""
    return compat.tiled_enabled() if _tiled_at_first_decode is None else _tiled_at_first_decode


@lib.llama_log_callback
def _silent(level, text, user_data) -> None:
    """llama.cpp logs every load to stderr; errors surface through return codes instead."""


class LlamaTokenizer:
    """The GGUF's own tokenizer through llama.cpp: `encode` adds the model's BOS as llama.cpp does.

    Also answers the parts of the Hugging Face interface the translator uses (call, decode,
    special ids), so a llama.cpp drafter can draft across tokenizers.
    """

    def __init__(self, vocab):
        self.vocab = vocab
        n = lib.llama_vocab_n_tokens(vocab)
        self._buf = ctypes.create_string_buffer(256)
        self.token_table = tuple(self._piece(i) for i in range(n))
        plain = lib.LLAMA_TOKEN_ATTR_NORMAL | lib.LLAMA_TOKEN_ATTR_BYTE
        marked = [i for i in range(n) if not lib.llama_vocab_get_attr(vocab, i) & plain]
        eog = {i for i in marked if lib.llama_vocab_is_eog(vocab, i)}
        control = {i for i in marked if lib.llama_vocab_is_control(vocab, i)}
        empty = {i for i in range(n) if not self.token_table[i]}
        self.special_ids = frozenset(eog | control | empty)
        self.all_special_ids = sorted(self.special_ids)
        self.eos_token_ids = frozenset(eog)
        bos = lib.llama_vocab_bos(vocab)
        self.bos_token_id = bos if bos >= 0 else None

    def _piece(self, token: int) -> bytes:
        buf = self._buf
        n = lib.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = lib.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
        return buf.raw[:n]

    def __len__(self) -> int:
        return len(self.token_table)

    def tokenize(self, text: str, *, add_special: bool) -> list[int]:
        data = text.encode("utf-8")
        size = len(data) + 8
        while True:
            buf = (lib.llama_token * size)()
            n = lib.llama_tokenize(self.vocab, data, len(data), buf, size, add_special, False)
            if n >= 0:
                return list(buf[:n])
            size = -n

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return self.tokenize(text, add_special=add_special_tokens)

    def __call__(self, text: str, add_special_tokens: bool = True, **_) -> dict:
        return {"input_ids": self.tokenize(text, add_special=add_special_tokens)}

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        data = b"".join(self.token_table[i] for i in ids)
        return data.decode("utf-8", "replace")


class LlamaCppBackend:
    """One GGUF model and one context; the cache holds exactly `ids`.

    `exact` (the default) chooses batch-invariant numerics, so that a verification pass gives
    the logits of one-token passes bit for bit: no weight repacking (a gemm from 4 rows), no
    flash attention (a split-KV kernel for one token past 512 cached positions), and llama.cpp's
    tiled K-quant matmul (from 8 rows) off. That switch is an environment variable llama.cpp reads
    once per process, at its first matmul, so an exact model turns it off only if it comes first;
    otherwise its passes stay exact up to `max_exact_width` tokens. A libllama built with
    tinyBLAS (GGML_LLAMAFILE) is never exact: install.sh builds without it. `exact=False` keeps
    llama.cpp's fastest kernels. Whether the passes are exact is measured at load
    (decoder/backends/exactness.py), not declared.
    """

    name = "llamacpp"

    def __init__(
        self,
        path: str | Path,
        *,
        threads: int | None = None,
        adapt_threads: bool = True,
        gpu_layers: int | None = None,
        context: int = DEFAULT_CONTEXT,
        prefix_cache_mb: float = 512,
        exact: bool = True,
        flash_attention: bool | None = None,
    ):
        _init()
        self.path = str(path)
        self.exact = exact
        self.flash_attention = (
            (False if exact else None) if flash_attention is None else flash_attention
        )
        self.threads = threads or physical_cores()
        self.gpu_layers = (-1 if gpu_offload() else 0) if gpu_layers is None else gpu_layers
        # A model wholly on a GPU barely uses its CPU threads: no need to count the cores.
        on_gpu = bool(self.gpu_layers) and gpu_offload()
        self.plan = lanes.ThreadPlan(self.threads, adaptive=adapt_threads and not on_gpu)
        self._threads_now = self.threads
        if exact:
            _untiled_if_first()
        self.model = self._load_model()
        self._vocab = lib.llama_model_get_vocab(self.model)
        self.tokenizer = LlamaTokenizer(self._vocab)
        train = lib.llama_model_n_ctx_train(self.model)
        self.context_length = min(context, train) if train > 0 else context
        self.ctx = self._make_context()
        self.vocab_size = lib.llama_vocab_n_tokens(self._vocab)
        self.batch = lib.llama_batch_init(PREFILL_CHUNK, 0, 1)
        self.ids: list[int] = []
        self.prefilled = 0
        self.pace = lanes.Pace()
        self.caches = PrefixCaches(prefix_cache_mb)
        self.adapter: str | None = None  # a tuned LoRA in use (use_lora)

    def use_lora(self, path: Path, describe: str) -> None:
        """Apply a LoRA GGUF to this model's context (llama.cpp frees it with the model)."""
        lora = lib.llama_adapter_lora_init(self.model, str(path).encode("utf-8"))
        if not lora:
            raise LlamaCppError(f"llama.cpp cannot load the LoRA {path} for {self.path}")
        if compat.set_lora(self.ctx, lora, 1.0) != 0:
            raise LlamaCppError(f"llama.cpp cannot apply the LoRA {path}")
        self.reset()  # caches filled without it no longer match
        self.adapter = describe

    def _load_model(self):
        mparams = lib.llama_model_default_params()
        mparams.n_gpu_layers = self.gpu_layers
        if self.exact:
            compat.exact_model_params(mparams)
        model = lib.llama_model_load_from_file(self.path.encode("utf-8"), mparams)
        if not model:
            raise LlamaCppError(f"llama.cpp cannot load {self.path} (not a GGUF it supports?)")
        return model

    def _make_context(self):
        cparams = lib.llama_context_default_params()
        cparams.n_ctx = self.context_length
        cparams.n_batch = cparams.n_ubatch = PREFILL_CHUNK
        cparams.n_seq_max = 1
        cparams.n_threads = cparams.n_threads_batch = self.threads
        cparams.swa_full = True  # sliding-window layers keep every position, so rewinds are exact
        cparams.no_perf = True
        compat.flash_attention(cparams, self.flash_attention)
        ctx = lib.llama_init_from_model(self.model, cparams)
        if not ctx:
            lib.llama_model_free(self.model)
            raise LlamaCppError(f"llama.cpp cannot make a {self.context_length}-token context")
        return ctx

    @property
    def max_exact_width(self) -> int | None:
        """The widest pass expected to match one-token passes (None: any); measure to be sure."""
        if not self.exact or self.flash_attention or compat.llamafile_compiled():
            return 1
        return compat.TILED_MIN_ROWS - 1 if _tiled_state() else None

    @property
    def table(self) -> tuple[bytes, ...]:
        return self.tokenizer.token_table

    @property
    def eos_ids(self) -> frozenset[int]:
        return self.tokenizer.eos_token_ids

    def _decode(self, ids: list[int], outputs: list[int]) -> None:
        """One llama_decode of `ids` after the cache, logits at the batch rows in `outputs`."""
        if len(self.ids) + len(ids) > self.context_length:
            raise LlamaCppError(
                f"{len(self.ids) + len(ids)} tokens exceed the {self.context_length}-token context"
            )
        b, base, want = self.batch, len(self.ids), set(outputs)
        for i, token in enumerate(ids):
            b.token[i], b.pos[i], b.n_seq_id[i] = token, base + i, 1
            b.seq_id[i][0] = 0
            b.logits[i] = i in want
        b.n_tokens = len(ids)
        self._set_threads(self.plan.threads())
        _note_decode()
        code = lib.llama_decode(self.ctx, b)
        if code != 0:
            compat.seq_rm(self.ctx, 0, base, -1)
            raise LlamaCppError(f"llama_decode failed ({code}) on {len(ids)} tokens at {base}")
        self.ids.extend(ids)

    def _set_threads(self, n: int) -> None:
        """The context's threads for the next decode (llama.cpp reads them at each pass)."""
        if n != self._threads_now:
            lib.llama_set_n_threads(self.ctx, n, n)
            self._threads_now = n

    def _logits(self, n: int) -> np.ndarray:
        """A copy: llama.cpp reuses (and may reallocate) its buffer at the next decode."""
        ptr = lib.llama_get_logits(self.ctx)
        return np.ctypeslib.as_array(ptr, shape=(n, self.vocab_size)).copy()

    def forward(self, ids: list[int], rows: list[int] | None = None) -> np.ndarray:
        """Feed `ids`; logits (len(ids), vocab), or only the rows asked for, in order."""
        if len(ids) > PREFILL_CHUNK:
            self.prefill_chunk(ids[:-PREFILL_CHUNK])
            return self.forward(ids[-PREFILL_CHUNK:], rows)
        rows = list(range(len(ids))) if rows is None else rows
        self._decode(ids, rows)
        return self._logits(len(rows))

    def prefill_chunk(self, ids: list[int]) -> None:
        for start in range(0, len(ids), PREFILL_CHUNK):  # the batch's size
            self._decode(ids[start : start + PREFILL_CHUNK], [])

    def whole_passes(self, start: int, n: int) -> int:
        return n  # a pass costs what it holds

    def rewind(self, n: int) -> None:
        if n <= 0:
            return
        if n > len(self.ids):
            raise ValueError(f"cannot rewind {n} positions: the cache holds {len(self.ids)}")
        if not compat.seq_rm(self.ctx, 0, len(self.ids) - n, -1):
            raise LlamaCppError(f"llama.cpp cannot remove the last {n} positions")
        del self.ids[-n:]

    def sync(self, ids: list[int], should_stop: Callable[[], bool] | None = None) -> np.ndarray:
        """Make the cache hold `ids`; logits after the last one. Keeps the common prefix."""
        return rewind_and_prefill(self, ids, should_stop)

    def _snapshot(self) -> tuple[object, int]:
        size = lib.llama_state_seq_get_size(self.ctx, 0)
        if not self.ids or size == 0:
            return None, 0
        buf = (ctypes.c_uint8 * size)()
        lib.llama_state_seq_get_data(self.ctx, buf, size, 0)
        return (buf, list(self.ids)), size

    def select(self, key: str | None) -> None:
        """Make `key`'s cache current; the current one is saved (LRU, capped) for its key."""
        changed, saved = self.caches.switch(key, self._snapshot)
        if not changed:
            return
        compat.clear(self.ctx)
        self.ids = []
        if saved is not None:
            buf, ids = saved
            if lib.llama_state_seq_set_data(self.ctx, buf, len(buf), 0):
                self.ids = ids
            else:
                compat.clear(self.ctx)

    def forget(self, key: str | None) -> None:
        if self.caches.forget(key):
            compat.clear(self.ctx)
            self.ids = []

    def reset(self) -> None:
        compat.clear(self.ctx)
        self.ids = []
        self.caches.clear()

    def describe(self) -> dict:
        return {
            "backend": self.name,
            "build": compat.build(),
            "device": "GPU" if self.gpu_layers and gpu_offload() else "CPU",
            "threads": self.threads,
            "adapt_threads": self.plan.adaptive,
            "gpu_layers": self.gpu_layers,
            "model": self.path,
            "adapter": self.adapter,
            "context": self.context_length,
            "exact": self.exact,
            "numerics": self.numerics(),
            "llama_cpp_python": lib.__version__,
            "platform": platform.machine(),
        }

    def numerics(self) -> str:
        """The kernel choices that decide batch invariance, in one line."""
        flash = {None: "auto", True: "on", False: "off"}[self.flash_attention]
        return (
            f"tinyBLAS {'compiled in' if compat.llamafile_compiled() else 'off'}, "
            f"repacking {'off' if self.exact else 'on'}, flash attention {flash}, "
            f"tiled matmul {'on' if _tiled_state() else 'off'}"
        )

    def __del__(self) -> None:
        if getattr(self, "batch", None) is not None:
            lib.llama_batch_free(self.batch)
        if getattr(self, "ctx", None):
            lib.llama_free(self.ctx)
        if getattr(self, "model", None):
            lib.llama_model_free(self.model)


def load(spec: str, settings: Settings, progress: bool = True) -> Model:
    """A GGUF on llama.cpp, loaded as shipped (quantized), with its own tokenizer."""
    path, source = resolve_gguf(spec)
    try:
        backend = LlamaCppBackend(
            path,
            threads=settings.threads,
            adapt_threads=settings.adapt_threads,
            gpu_layers=settings.gpu_layers,
            prefix_cache_mb=settings.prefix_cache_mb,
            exact=settings.exact,
        )
    except LlamaCppError as error:
        raise ModelLoadError(f"{spec}: {error}") from None
    return Model(spec, backend, path, source)


def load_adapter(model: Model, adapter: Adapter) -> None:
    """A tuned drafter's LoRA GGUF (written by tune-drafter beside the MLX adapter)."""
    if not adapter.gguf.is_file():
        raise ModelLoadError(
            f"drafter adapter {adapter.folder}: no {adapter.gguf.name} for llama.cpp in it"
        )
    check_base(adapter, file_sha256(model.path), model.spec)
    try:
        model.backend.use_lora(adapter.gguf, adapter.describe())
    except LlamaCppError as error:
        raise ModelLoadError(f"{model.spec}: {error}") from None


def doctor(settings: Settings) -> list[str]:
    """The bindings, which libllama they loaded and its CPU level, what it offloads to, threads."""
    threads = settings.threads or physical_cores()
    name, version = llama_lib.bindings() or ("llama_cpp", lib.__version__)
    upstream = f" (llama-cpp-python {lib.__version__})" if name != llama_lib.UPSTREAM else ""
    return [
        f"bindings {name} {version}{upstream}; build {compat.build()}; threads {threads}; "
        f"GPU offload {'yes' if gpu_offload() else 'no'}",
        f"libllama: {compat.LIBRARY}",
        cpu_level_line(compat.cpu_levels()),
    ]


def cpu_level_line(levels) -> str:
    """Which of the wheel's CPU levels runs here, and why that one."""
    if levels is None:
        return "CPU level: the one libllama was compiled for (its CPU backend is built in)"
    runs = levels.runnable()
    why = (
        f"set in {compat.CPU_LEVEL_ENV}"
        if levels.chosen_by != "score"
        else "the best this CPU runs"
    )
    return (
        f"CPU level {levels.cpu} ({why}; {len(runs)} of the {len(levels.scores)} levels "
        f"beside libllama run here: {', '.join(runs)}; doctor --cpu-levels checks each)"
    )


def outlook(settings: Settings) -> Outlook:
    """Whether speculation will be exact, from the build alone: tinyBLAS never is."""
    if not settings.exact:
        return Outlook(
            "no",
            "the exact setting is off: the fastest kernels, drafts verified as llama-server does",
            "exact = true in the config file",
        )
    if compat.llamafile_compiled():
        return Outlook(
            "no",
            "this libllama multiplies batches with tinyBLAS, so `auto` decodes plain "
            "(llama-cpp-python's default build, not bielik-llama-cpp's)",
            f"{SETUP_COMMAND} (compiles exact kernels once, a few minutes; or reinstall "
            "bielik-lsp so that bielik-llama-cpp's exact wheel provides llama_cpp)",
        )
    if gpu_offload() and settings.gpu_layers != 0:
        return UNKNOWN
    return Outlook("yes", "CPU kernels without tinyBLAS; checked bit for bit when the models load")


def peers(backend: LlamaCppBackend) -> list[tuple[str, Callable[[list[int], int], Iterator[int]]]]:
    """llama-cpp-python's own generation on the same GGUF: plain, and with prompt lookup.

    Two `Llama` objects: prompt lookup makes the library keep logits for every position
    (`logits_all`), which plain generation does not need. Greedy is `temp=0`; generation stops
    at the same EOS ids as our engine.
    """
    from llama_cpp import Llama
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    def peer(**extra) -> Callable[[list[int], int], Iterator[int]]:
        llm = Llama(
            model_path=backend.path,
            n_ctx=backend.context_length,
            n_threads=backend.threads,
            verbose=False,
            **extra,
        )

        def generate(prompt: list[int], max_tokens: int) -> Iterator[int]:
            tokens = llm.generate(prompt, temp=0.0, top_k=1, top_p=1.0, min_p=0.0, reset=True)
            for n, token in enumerate(tokens, 1):
                yield token
                if token in backend.eos_ids or n >= max_tokens:
                    return

        return generate

    return [
        ("llama-cpp-python generate", peer()),
        (
            "llama-cpp-python + LlamaPromptLookupDecoding",
            peer(draft_model=LlamaPromptLookupDecoding()),
        ),
    ]
