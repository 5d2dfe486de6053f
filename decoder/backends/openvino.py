"""OpenVINO in-process behind the Backend protocol: our decoding loop on Intel CPUs, GPUs, NPUs.

A model is an OpenVINO IR directory with a stateful LLM (`openvino_model.xml`: the KV cache
lives in the infer request's states, as optimum-intel and OpenVINO GenAI export it). A GGUF
becomes one once: OpenVINO GenAI's own GGUF reader builds the graph (weights stay compressed,
u4/u8 with scales and zero points) and writes it next to a link to the file, in the cache
(`enable_save_ov_model`), with our Hugging Face tokenizer beside it. Its reader knows the llama,
qwen2 and qwen3 architectures, weight matrices in F16, Q4_0, Q4_1, Q8_0, Q4_K or Q6_K (not F32,
BF16, Q5_0, Q5_K, ...): anything else is refused before it is tried, with the reason.

Before compiling, the logits head gets a Gather over an extra `logits_rows` input (what GenAI
does for its own speculative pipelines), so a prompt chunk computes no logits and a verification
pass exactly the rows it needs. Rewinding does not touch the states: the dropped positions stay
in the cache, masked out by `attention_mask`, and later tokens take their logical positions
(`position_ids`). The holes are squeezed out (states read, gathered and set, GenAI's own way to
trim) only when they pass a quarter of the cache. Per-document caches are copies of the states.

OpenVINO's logits depend on how a prompt is cut into passes, so prompts are cut at fixed
positions (`AlignedPace`, every PASS_IDS ids, in every lane), not by time or by lane as where
the cuts change nothing: plain decoding from a fresh cache reads the same text in every process.
They also depend on the cache's layout (rewound positions masked in place, u8 states
re-quantized when set), which a cache that held other text before can differ in: dropping that
at each request costs a copy of the whole cache (60-85 ms for 1000 positions of SmolLM2-135M),
so it is not done.

Whether a pass over n tokens gives the logits of n one-token passes is measured at load, as on
every backend (decoder/backends/exactness.py); on OpenVINO's CPU plug-in it does not, bit for bit.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import openvino as ov

from decoder.backends.base import PREFILL_CHUNK, PrefixCaches, rewind_and_prefill
from decoder.backends.files import ModelLoadError, cache_root, file_sha256
from decoder.backends.models import EMBEDDED_PREFIX, HUB_GGUF, HUB_REPO, Model
from decoder.backends.threads import AlignedPace
from decoder.errors import one_line

if TYPE_CHECKING:
    from decoder.config import Settings

from decoder.backends.registry import DEVICES

DEFAULT_CONTEXT = 8192  # positions a cache may hold; the model's own limit caps it
EXPORT_VERSION = 1  # bump when an exported directory's contents change
GGUF_ARCHITECTURES = ("llama", "qwen2", "qwen3")  # OpenVINO GenAI 2026.4's GGUF reader
GGUF_MATRIX_TYPES = ("F16", "Q4_0", "Q4_1", "Q8_0", "Q4_K", "Q6_K")  # its matmul weights
GGUF_VECTOR_TYPES = ("F32", "F16")  # its norms
MODEL_FILE = "openvino_model.xml"
META_FILE = "bielik-lsp.json"  # what the export knows and the IR does not: context, source
ROWS = "logits_rows"  # the input naming the positions whose logits a pass returns
PASS_IDS = 128  # prefill passes start at multiples of this in every lane: its logits depend on
# the cuts. Wide for prefill's sake; a request waits for one such pass of background work.
ALTERNATIVE = "use --backend llamacpp, or an OpenVINO IR directory (optimum-cli export openvino)"


class OpenVINOError(RuntimeError):
    """OpenVINO refused a model, a device or a pass; one line for the user."""


def core() -> ov.Core:
    """One Core per process; compiled models are cached on disk so a second start is fast."""
    global _core
    if _core is None:
        _core = ov.Core()
        _core.set_property({"CACHE_DIR": str(cache_root() / "openvino" / "compiled")})
    return _core


_core: ov.Core | None = None


def devices() -> list[str]:
    """The devices OpenVINO sees here, each with its full name."""
    c = core()
    return [f"{d} ({c.get_property(d, 'FULL_DEVICE_NAME')})" for d in c.available_devices]


def check_device(device: str) -> str:
    """`device` if OpenVINO can run on it here; a one-line error naming what it sees otherwise."""
    if device not in DEVICES:
        raise ModelLoadError(f"unknown OpenVINO device {device!r}; use one of {', '.join(DEVICES)}")
    seen = core().available_devices
    if device != "AUTO" and not any(d.split(".")[0] == device for d in seen):
        raise ModelLoadError(
            f"OpenVINO sees no {device} on this machine (devices: {', '.join(seen) or 'none'}); "
            "use --device CPU (or AUTO), or --backend llamacpp"
        )
    return device


# --- GGUF files: checked, then exported once into an IR directory -------------------------


def check_gguf(path: Path) -> None:
    """Refuse, with the reason and the way out, a GGUF that OpenVINO GenAI's reader cannot read.

    Its reader fails with "gguf_tensor_to_f16 failed" on a tensor type it lacks (a Q4_K_M file
    of a model whose rows are not multiples of 256 carries Q5_0 tensors: Gemma-3-270M's do) and
    knows three architectures; both are told here, before a long failed load.
    """
    from decoder.backends.gguf import _field, read_gguf

    reader = read_gguf(path)
    arch = _field(reader, "general.architecture")
    types = set()
    for tensor in reader.tensors:
        allowed = GGUF_MATRIX_TYPES if len(tensor.shape) > 1 else GGUF_VECTOR_TYPES
        if tensor.tensor_type.name not in allowed:
            types.add(f"{tensor.tensor_type.name}{' matrices' if len(tensor.shape) > 1 else ''}")
    problems = []
    if arch not in GGUF_ARCHITECTURES:
        problems.append(f"architecture {arch!r} (it reads {', '.join(GGUF_ARCHITECTURES)})")
    if types:
        problems.append(
            f"tensor types {', '.join(sorted(types))} (its weight matrices must be "
            f"{', '.join(GGUF_MATRIX_TYPES)})"
        )
    if problems:
        raise ModelLoadError(
            f"{path.name}: OpenVINO's GGUF reader cannot read its {' nor its '.join(problems)}; "
            + ALTERNATIVE
        )


def exported_dir(gguf_path: Path) -> Path:
    return cache_root() / "openvino" / f"{file_sha256(gguf_path)[:24]}-v{EXPORT_VERSION}"


def export_gguf(gguf_path: Path, progress: bool) -> Path:
    """The IR directory of a GGUF, written once by OpenVINO GenAI's GGUF reader (~5-10 s).

    GenAI writes the IR beside the file it reads, so it reads a link in a fresh directory; the
    Hugging Face tokenizer (transformers' GGUF conversion, as for MLX) goes with it.
    """
    check_gguf(gguf_path)
    out = exported_dir(gguf_path)
    if (out / MODEL_FILE).is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        if progress:
            print(f"openvino: exporting {gguf_path.name} to OpenVINO IR (once)", file=sys.stderr)
        _export(gguf_path, temp)
        temp.chmod(0o755)
        try:
            temp.rename(out)
        except OSError:
            if not (out / MODEL_FILE).is_file():
                raise
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return out


def _export(gguf_path: Path, out: Path) -> None:
    import openvino_genai

    from decoder.backends.gguf import _field, gguf_tokenizer, read_gguf

    link = out / gguf_path.name
    link.symlink_to(gguf_path.resolve())
    try:
        # SDPA: the stateful pipeline; the IR is written before either backend transforms it.
        openvino_genai.LLMPipeline(
            str(link), "CPU", enable_save_ov_model=True, ATTENTION_BACKEND="SDPA"
        )
    except Exception as error:  # its reader throws RuntimeError, IndexError (map::at), ...
        raise ModelLoadError(
            f"{gguf_path.name}: OpenVINO GenAI cannot read it ({ov_message(error)}); {ALTERNATIVE}"
        ) from None
    finally:
        link.unlink()
    reader = read_gguf(gguf_path)
    gguf_tokenizer(reader).save_pretrained(out)
    arch = _field(reader, "general.architecture")
    meta = {"source": str(gguf_path), "context_length": _field(reader, f"{arch}.context_length")}
    (out / META_FILE).write_text(json.dumps(meta), encoding="utf-8")


def ov_message(error: Exception) -> str:
    """OpenVINO's own words in an exception, without the source locations it puts first."""
    lines = [line.strip() for line in str(error).splitlines()]
    said = [line for line in lines if line and not line.startswith("Exception from ")]
    return (said[-1] if said else one_line(error))[:300]


# --- the model: read, the logits head narrowed, compiled ------------------------------------


def read_model(directory: Path) -> ov.Model:
    """The stateful LLM of an IR directory, with the `logits_rows` input added to its head."""
    if not (directory / MODEL_FILE).is_file():
        raise ModelLoadError(f"{directory}: no {MODEL_FILE}; not an OpenVINO IR directory")
    try:
        model = core().read_model(directory / MODEL_FILE)
    except RuntimeError as error:
        raise ModelLoadError(f"{directory}: OpenVINO cannot read it: {ov_message(error)}") from None
    names = {name for port in model.inputs for name in port.get_names()}
    missing = {"input_ids", "attention_mask", "beam_idx"} - names
    if missing or not model.get_sinks():
        raise ModelLoadError(
            f"{directory}: not a stateful LLM export (needs a KV cache in states and inputs "
            "input_ids, attention_mask, beam_idx); export it with optimum-cli export openvino "
            "--task text-generation-with-past"
        )
    narrow_logits(model)
    return model


def narrow_logits(model: ov.Model) -> None:
    """Gather the hidden rows named by a new `logits_rows` input before the vocabulary matmul.

    Walks from the logits output through the elementwise ops optimum puts after the head
    (convert, softcapping) to the MatMul; without one, the Gather goes on the logits themselves.
    """
    from openvino import opset13 as ops

    rows = ops.parameter([-1], ov.Type.i64, name=ROWS)
    rows.output(0).get_tensor().set_names({ROWS})
    port = model.output("logits").get_node().input(0)
    node = port.get_source_output().get_node()
    while node.get_type_name() in ("Convert", "Add", "Multiply", "Divide", "Tanh"):
        port = node.input(0)
        node = port.get_source_output().get_node()
    if node.get_type_name() == "MatMul":
        port = node.input(0)
    gathered = ops.gather(port.get_source_output(), rows, ops.constant(np.int64(1)))
    port.replace_source_output(gathered.output(0))
    model.add_parameters([rows])
    model.validate_nodes_and_infer_types()


def cpu_config(threads: int | None) -> dict:
    """The CPU plug-in's settings: f32 arithmetic, and the threads asked for.

    On a CPU with bfloat16 units (AVX512_BF16, AMX) the plug-in computes in bfloat16 unless told
    otherwise; there a continuation read after masked rewinds parts from a fresh cache's within
    24 tokens (tests/test_openvino.py), so our rollback would no longer give plain decoding's text.
    """
    config = {"INFERENCE_PRECISION_HINT": "f32"}
    return {**config, "INFERENCE_NUM_THREADS": threads} if threads else config


def compile_model(model: ov.Model, device: str, config: dict, progress: bool, name: str):
    """Compile for `device`, saying so (the first compile takes seconds, a cached one less)."""
    if progress:
        print(f"openvino: compiling {name} for {device}", file=sys.stderr, end="", flush=True)
    start = time.perf_counter()
    try:
        compiled = core().compile_model(model, device, config)
    except RuntimeError as error:
        if progress:
            print(file=sys.stderr)
        hint = " (the NPU needs static shapes: see README, OpenVINO)" if device == "NPU" else ""
        raise ModelLoadError(
            f"OpenVINO cannot compile {name} for {device}{hint}: {ov_message(error)}; "
            "use --device CPU or --backend llamacpp"
        ) from None
    seconds = time.perf_counter() - start
    if progress:
        print(f" ({seconds:.1f} s)", file=sys.stderr)
    return compiled, seconds


class HFTokenizer:
    """The model's Hugging Face tokenizer, with the ids the engine treats specially.

    Wrapped as mlx-lm wraps one (`_tokenizer`), so decoder/vocab.py reads its token table.
    """

    def __init__(self, directory: Path):
        from transformers import AutoTokenizer

        try:
            self._tokenizer = self.hf = AutoTokenizer.from_pretrained(str(directory))
        except Exception as error:  # missing files, broken json: the same one line
            raise ModelLoadError(
                f"{directory}: no usable tokenizer beside the model: {one_line(error)}"
            ) from None
        eos = set()
        for name in ("config.json", "generation_config.json"):
            path = directory / name
            if path.is_file():
                value = json.loads(path.read_text(encoding="utf-8")).get("eos_token_id")
                eos.update(
                    value if isinstance(value, list) else [value] if value is not None else []
                )
        if self.hf.eos_token_id is not None:
            eos.add(self.hf.eos_token_id)
        self.eos_token_ids = frozenset(eos)

    def __getattr__(self, name: str):
        return getattr(self.hf, name)

    def __len__(self) -> int:
        return len(self.hf)

    def __call__(self, *args, **kwargs):
        return self.hf(*args, **kwargs)


# --- the backend ---------------------------------------------------------------------------


class OpenVINOBackend:
    """One compiled stateful model and one infer request; the cache holds exactly `ids`.

    `live` marks the physical positions of the states that are in use: rewound positions stay,
    masked, until `squeeze` drops them.
    """

    name = "openvino"

    def __init__(
        self,
        directory: Path,
        *,
        device: str = "CPU",
        threads: int | None = None,
        prefix_cache_mb: float = 512,
        progress: bool = True,
        name: str = "",
    ):
        self.path = str(directory)
        self.device = check_device(device)
        model = read_model(directory)
        self.vocab_size = int(model.output("logits").get_partial_shape()[2].get_length())
        config = cpu_config(threads) if device == "CPU" else {}
        compiled, self.compile_seconds = compile_model(
            model, device, config, progress, name or directory.name
        )
        self.compiled = compiled
        self.request = compiled.create_infer_request()
        self.tokenizer = HFTokenizer(directory)
        self.context_length = min(DEFAULT_CONTEXT, _context(directory) or DEFAULT_CONTEXT)
        self.has_positions = any("position_ids" in p.get_names() for p in model.inputs)
        self.ids: list[int] = []
        self.prefilled = 0
        self.pace = AlignedPace(PASS_IDS)
        self.live = np.zeros(0, dtype=np.int64)  # attention_mask over the physical positions
        self.caches = PrefixCaches(prefix_cache_mb)
        self._beam = ov.Tensor(np.zeros(1, dtype=np.int32))

    @property
    def table(self) -> tuple[bytes, ...]:
        from decoder.vocab import token_bytes

        return token_bytes(self.tokenizer)

    @property
    def eos_ids(self) -> frozenset[int]:
        return self.tokenizer.eos_token_ids

    def _infer(self, ids: list[int], rows: list[int]) -> None:
        """One pass of `ids` after the cache, logits at `rows` (indices into `ids`)."""
        if len(self.ids) + len(ids) > self.context_length:
            raise OpenVINOError(
                f"{len(self.ids) + len(ids)} tokens exceed the {self.context_length}-token context"
            )
        if len(self.live) - len(self.ids) > max(64, len(self.live) // 4):
            self.squeeze()
        n, start = len(ids), len(self.ids)
        self.live = np.concatenate([self.live, np.ones(n, dtype=np.int64)])
        request = self.request
        request.set_tensor("input_ids", ov.Tensor(np.array([ids], dtype=np.int64)))
        request.set_tensor("attention_mask", ov.Tensor(self.live[None]))
        if self.has_positions:
            positions = np.arange(start, start + n, dtype=np.int64)[None]
            request.set_tensor("position_ids", ov.Tensor(positions))
        request.set_tensor("beam_idx", self._beam)
        request.set_tensor(ROWS, ov.Tensor(np.array(rows, dtype=np.int64)))
        try:
            request.infer()
        except RuntimeError as error:
            self.live = self.live[:-n]
            raise OpenVINOError(
                f"OpenVINO failed a pass of {n} tokens: {ov_message(error)}"
            ) from None
        self.ids.extend(ids)

    def forward(self, ids: list[int]) -> np.ndarray:
        """Feed `ids`; logits (len(ids), vocab)."""
        if len(ids) > PREFILL_CHUNK:
            self.prefill_chunk(ids[:-PREFILL_CHUNK])
            return self.forward(ids[-PREFILL_CHUNK:])
        self._infer(ids, list(range(len(ids))))
        return self.request.get_tensor("logits").data[0].copy()

    def prefill_chunk(self, ids: list[int]) -> None:
        for start in range(0, len(ids), PREFILL_CHUNK):
            self._infer(ids[start : start + PREFILL_CHUNK], [])

    def whole_passes(self, start: int, n: int) -> int:
        return n  # a pass costs what it holds

    def rewind(self, n: int) -> None:
        """Mask out the last `n` positions; their keys and values stay until `squeeze`."""
        if n <= 0:
            return
        if n > len(self.ids):
            raise ValueError(f"cannot rewind {n} positions: the cache holds {len(self.ids)}")
        self.live[np.flatnonzero(self.live)[-n:]] = 0
        del self.ids[-n:]
        if not self.ids:
            self._clear()

    def squeeze(self) -> None:
        """Drop the masked positions from the states (read, gathered, set)."""
        keep = np.flatnonzero(self.live)
        for state in self.request.query_state():
            values = state.state.data
            state.state = ov.Tensor(np.ascontiguousarray(values[:, :, keep]))
        self.live = np.ones(len(keep), dtype=np.int64)

    def sync(self, ids: list[int], should_stop: Callable[[], bool] | None = None) -> np.ndarray:
        """Make the cache hold `ids`; logits after the last one. Keeps the common prefix."""
        return rewind_and_prefill(self, ids, should_stop)

    def _clear(self) -> None:
        self.request.reset_state()
        self.live = np.zeros(0, dtype=np.int64)
        self.ids = []

    def _snapshot(self) -> tuple[object, int]:
        if not self.ids:
            return None, 0
        self.squeeze()
        states = {s.name: s.state.data.copy() for s in self.request.query_state()}
        return (states, list(self.ids)), sum(a.nbytes for a in states.values())

    def select(self, key: str | None) -> None:
        """Make `key`'s cache current; the current one is saved (LRU, capped) for its key."""
        changed, saved = self.caches.switch(key, self._snapshot)
        if not changed:
            return
        self._clear()
        if saved is not None:
            states, ids = saved
            for state in self.request.query_state():
                state.state = ov.Tensor(states[state.name])
            self.ids, self.live = list(ids), np.ones(len(ids), dtype=np.int64)

    def forget(self, key: str | None) -> None:
        if self.caches.forget(key):
            self._clear()

    def reset(self) -> None:
        self._clear()
        self.caches.clear()

    def describe(self) -> dict:
        return {
            "backend": self.name,
            "build": f"OpenVINO {ov.get_version()}",
            "device": f"{self.device} ({core().get_property(self._device(), 'FULL_DEVICE_NAME')})",
            "devices": ", ".join(core().available_devices),
            "threads": self._property("INFERENCE_NUM_THREADS"),
            "model": self.path,
            "context": self.context_length,
            "numerics": self.numerics(),
            "compile_seconds": round(self.compile_seconds, 2),
        }

    def _device(self) -> str:
        """The device compiled for (AUTO's choice where it has made one)."""
        if self.device != "AUTO":
            return self.device
        chosen = self._property("EXECUTION_DEVICES")
        return chosen[0] if chosen else "CPU"

    def _property(self, name: str):
        try:
            return self.compiled.get_property(name)
        except RuntimeError:
            return None

    def numerics(self) -> str:
        """The compiled model's precisions, which decide how far batched passes drift."""
        parts = {
            "inference precision": "INFERENCE_PRECISION_HINT",
            "KV cache": "KV_CACHE_PRECISION",
            "dynamic quantization group": "DYNAMIC_QUANTIZATION_GROUP_SIZE",
        }
        found = {label: self._property(key) for label, key in parts.items()}
        return ", ".join(
            f"{label} {getattr(value, 'get_type_name', lambda v=value: v)()}"
            for label, value in found.items()
            if value is not None
        )


def _context(directory: Path) -> int | None:
    for name, key in ((META_FILE, "context_length"), ("config.json", "max_position_embeddings")):
        path = directory / name
        if path.is_file():
            value = json.loads(path.read_text(encoding="utf-8")).get(key)
            if value:
                return int(value)
    return None


# --- specs, load, doctor, peers --------------------------------------------------------------


def resolve_dir(spec: str, progress: bool = True) -> tuple[Path, str]:
    """(IR directory, source kind): embedded:NAME and .gguf exported once; dirs; hub repos."""
    from decoder.backends.embedded import embedded_gguf
    from decoder.backends.models import _download_file

    if spec.startswith(EMBEDDED_PREFIX):
        return export_gguf(embedded_gguf(spec[len(EMBEDDED_PREFIX) :]), progress), "embedded"
    path = Path(spec).expanduser()
    hub = HUB_GGUF.fullmatch(spec)
    if hub and not path.exists():
        return export_gguf(_download_file(hub["repo"], hub["file"]), progress), "hub"
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ModelLoadError(f"{spec}: no such GGUF file")
        return export_gguf(path, progress), "gguf"
    if path.is_dir():
        return path, "dir"
    if path.exists():
        raise ModelLoadError(f"{spec} is neither a .gguf file nor an OpenVINO IR directory")
    if HUB_REPO.fullmatch(spec):
        return _snapshot(spec), "hub"
    raise ModelLoadError(
        f"unknown model {spec!r}: give embedded:smollm2-135m, a .gguf file OpenVINO reads, "
        "an OpenVINO IR directory, owner/repo (an IR on the hub) or owner/repo:FILE.gguf"
    )


def _snapshot(repo: str) -> Path:
    """A hub repo holding an OpenVINO IR, downloaded once through huggingface_hub's cache."""
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo))
    except Exception as error:  # offline, not found, gated: the same one line for the user
        raise ModelLoadError(
            f"{repo!r} is no local path and cannot be fetched from the Hugging Face hub: "
            f"{one_line(error)}"
        ) from None


def load(spec: str, settings: Settings, progress: bool = True) -> Model:
    """A model spec on OpenVINO, on the configured device."""
    directory, source = resolve_dir(spec, progress)
    try:
        backend = OpenVINOBackend(
            directory,
            device=settings.device,
            threads=settings.threads,
            prefix_cache_mb=settings.prefix_cache_mb,
            progress=progress,
            name=spec,
        )
    except OpenVINOError as error:
        raise ModelLoadError(f"{spec}: {error}") from None
    return Model(spec, backend, directory, source)


def doctor(settings: Settings) -> list[str]:
    """Versions, the devices OpenVINO sees, the one configured, where compiled models go."""
    import openvino_genai

    lines = [
        f"OpenVINO {ov.get_version()}, OpenVINO GenAI {openvino_genai.__version__}; "
        f"device setting: {settings.device}",
        f"devices seen: {'; '.join(devices()) or 'none'}",
        f"compiled models cached in {cache_root() / 'openvino' / 'compiled'}",
    ]
    if "NPU" not in core().available_devices:
        lines.append("no NPU here (the NPU path needs an Intel Core Ultra and its driver)")
    return lines


def peers(backend: OpenVINOBackend) -> list[tuple[str, Callable[[list[int], int], Iterator[int]]]]:
    """OpenVINO GenAI's own LLMPipeline on the same IR: plain, and with prompt lookup."""
    return [
        ("openvino-genai plain", genai_peer(backend)),
        ("openvino-genai prompt_lookup", genai_peer(backend, prompt_lookup=True)),
    ]


def genai_peer(
    backend: OpenVINOBackend, draft: Path | None = None, *, prompt_lookup: bool = False
) -> Callable[[list[int], int], Iterator[int]]:
    """GenAI's LLMPipeline on `backend`'s IR as a generator of token ids, greedy.

    Tokens stream out of its C++ loop through a StreamerBase as they are accepted (a prompt
    lookup or draft step hands several at once), so the bench times them as they arrive.
    `draft`: an IR directory with the same tokenizer, as GenAI's draft model.
    """
    import queue
    import threading

    import openvino_genai as genai

    extra: dict = {"prompt_lookup": True} if prompt_lookup else {}
    if draft is not None:
        extra["draft_model"] = genai.draft_model(str(draft), backend.device)
    pipe = genai.LLMPipeline(backend.path, backend.device, **extra)
    speculative = prompt_lookup or draft is not None

    class Tokens(genai.StreamerBase):
        def __init__(self, out: queue.Queue):
            super().__init__()
            self.out = out

        def write(self, token):
            for t in token if isinstance(token, list) else [token]:
                self.out.put(int(t))
            return genai.StreamingStatus.RUNNING

        def end(self):
            self.out.put(None)

    def generate(prompt: list[int], max_tokens: int) -> Iterator[int]:
        config = genai.GenerationConfig()
        config.max_new_tokens = max_tokens
        config.do_sample = False
        config.stop_token_ids = set(backend.eos_ids)
        if speculative:
            config.num_assistant_tokens = 5
        if prompt_lookup:
            config.max_ngram_size = 3
        ids = ov.Tensor(np.array([prompt], dtype=np.int64))
        inputs = genai.TokenizedInputs(ids, ov.Tensor(np.ones_like(ids.data)))
        out: queue.Queue = queue.Queue()
        thread = threading.Thread(target=pipe.generate, args=(inputs, config, Tokens(out)))
        thread.start()
        try:
            while (token := out.get()) is not None:
                yield token
        finally:
            thread.join()

    return generate
