"""mlx-lm internals used by the MLX backend. Checked against mlx-lm 0.32.2.

- `_get_classes(config)`: the model and arguments classes for a config, which the GGUF import
  needs to build a model before it has weights (mlx-lm's public `load` wants a directory).
- `_download(repo)`: mlx-lm's own hub snapshot (the allow-list of files it loads).
- `TokenizerWrapper._tokenizer`: the Hugging Face tokenizer behind the wrapper, for byte-exact
  token tables and offsets that the wrapper does not expose.
- `scaled_dot_product_attention`, the module-level name each model module (llama, gemma3_text,
  ...) imports from `mlx_lm.models.base` and calls from its attention: `rowwise_attention`
  wraps it so that, inside `one_query_at_a_time()`, a pass over n tokens attends for each
  query exactly as a one-token pass would, and skips the rows a padded pass only carries for
  its shape (see decoder/backends/mlx.py, exact passes).
- the attention modules' order of calls, `rope(..., offset=cache.offset)` then
  `cache.update_and_fetch(keys, values)`, and `KVCache.offset` as a plain attribute:
  `rows_at` makes a padded pass write only its real rows, at their positions.
- `model.layers` / `model.model.layers`: the decoder layers, which `tap_layers` wraps to read
  their outputs (the hidden states a DFlash drafter is conditioned on).
- `model.model` then `lm_head` or the tied `embed_tokens.as_linear`: the llama layout's output
  head, which `output_head` hands to the drafter's tuning (logits at the scored positions only),
  checked against the model's own output first.
- `model.model.embed_tokens`, `.layers`, `.norm` and `mlx_lm.models.base.create_attention_mask`:
  the llama layout's decoder split at a layer (`hidden_below`, `hidden_above`), so the tuning
  keeps the frozen bottom layers' output per row; `split_width` checks the split against the
  model's own `last_hidden` first.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from pathlib import Path

CHECKED = "0.32.2"


def model_classes(config: dict) -> tuple[type, type]:
    """(Model class, ModelArgs class) for an mlx-lm config dict."""
    from mlx_lm.utils import _get_classes

    return _get_classes(config)


def download(repo: str) -> Path:
    """A local snapshot of a hub repo, with the files mlx-lm's loader uses."""
    from mlx_lm.utils import _download

    return Path(_download(repo))


def hf_tokenizer(tokenizer):
    """The Hugging Face tokenizer behind an mlx-lm TokenizerWrapper (or the tokenizer itself)."""
    return getattr(tokenizer, "_tokenizer", tokenizer)


_ONE_QUERY = ContextVar("one_query_at_a_time", default=False)
_ROWS: ContextVar[range | None] = ContextVar("padded_rows", default=None)


@contextmanager
def one_query_at_a_time(rows: range | None = None):
    """Inside, wrapped attention computes each query of a pass as a one-token pass would.

    Only the queries of `rows` (all, if None) attend, the last of them to every key the cache
    returns; the pass's other rows (padding that gives it a fixed width) get zeros.
    """
    token, rows_token = _ONE_QUERY.set(True), _ROWS.set(rows)
    try:
        yield
    finally:
        _ROWS.reset(rows_token)
        _ONE_QUERY.reset(token)


@contextmanager
def rows_at(cache: list, start: int, rows: range):
    """Inside, a pass feeds only `rows` of its input to `cache`, at positions from `start`.

    mlx-lm's attention reads `cache.offset` as the position of the pass's first row (RoPE, the
    masks), then calls `update_and_fetch` with every row's keys and values. So the offset reads
    `start - rows.start` until then, and only `rows` are written, from `start` on: the other
    rows keep their places in the pass, and nothing of them reaches the cache or attends
    (`one_query_at_a_time(rows)`, entered here too). A pass that fails leaves the cache at
    `start`.
    """

    def write(layer, keys, values):
        layer.offset = start
        real = slice(rows.start, rows.stop)
        return type(layer).update_and_fetch(layer, keys[..., real, :], values[..., real, :])

    for layer in cache:
        layer.offset = start - rows.start
        layer.update_and_fetch = partial(write, layer)
    try:
        with one_query_at_a_time(rows):
            yield
    except BaseException:
        for layer in cache:
            layer.offset = start
        raise
    finally:
        for layer in cache:
            del layer.update_and_fetch


def _rowwise(attend):
    """`attend` (mlx-lm's scaled_dot_product_attention), query by query when asked.

    A one-token pass attends with mask None (full attention) or, on a windowed layer, with its
    one row of the causal window mask; query i of an n-token pass sees the same keys (those up
    to its own position) and the same row of the mask, so its kernel call is the one-token one.
    """

    def attention(queries, keys, values, cache, scale, mask, sinks=None):
        n, rows = queries.shape[2], _ROWS.get()
        if not _ONE_QUERY.get() or (n == 1 and rows is None):  # batched outside (prefill)
            return attend(queries, keys, values, cache=cache, scale=scale, mask=mask, sinks=sinks)
        import mlx.core as mx

        rows = range(n) if rows is None else rows
        total = keys.shape[2]  # the last query of `rows` sees them all
        out = [_zeros(queries, values, rows.start)]
        for i in rows:
            seen = total - rows.stop + i + 1
            row_mask = mask[..., i : i + 1, :seen] if hasattr(mask, "shape") else None
            out.append(
                attend(
                    queries[:, :, i : i + 1],
                    keys[:, :, :seen],
                    values[:, :, :seen],
                    cache=cache,
                    scale=scale,
                    mask=row_mask,
                    sinks=sinks,
                )
            )
        out.append(_zeros(queries, values, n - rows.stop))
        return mx.concatenate([part for part in out if part is not None], axis=2)

    attention.rowwise = True
    return attention


def _zeros(queries, values, n: int):
    """`n` rows of attention output that nothing reads (None for none)."""
    import mlx.core as mx

    return mx.zeros((*queries.shape[:2], n, values.shape[-1]), queries.dtype) if n else None


def rowwise_attention(model) -> bool:
    """Wrap the attention of every model module `model` is built from; False if none has it."""
    wrapped = False
    for _, module in model.named_modules():
        owner = sys.modules.get(type(module).__module__)
        attend = getattr(owner, "scaled_dot_product_attention", None)
        if attend is None:
            continue
        if not getattr(attend, "rowwise", False):
            owner.scaled_dot_product_attention = _rowwise(attend)
        wrapped = True
    return wrapped


def decoder_layers(model) -> list:
    """The model's list of decoder layers (mlx-lm keeps it on the model or its inner model)."""
    language = getattr(model, "language_model", None)
    owners = (model, getattr(model, "model", None), language, getattr(language, "model", None))
    for owner in owners:
        layers = getattr(owner, "layers", None)
        if isinstance(layers, list) and layers:
            return layers
    raise AttributeError(f"cannot find the decoder layers of {type(model).__name__}")


class _Tap:
    """A decoder layer that also keeps its output (its hidden state) for the last call."""

    def __init__(self, layer, store: list, slot: int):
        self._layer, self._store, self._slot = layer, store, slot

    def __call__(self, *args, **kwargs):
        out = self._layer(*args, **kwargs)
        self._store[self._slot] = out[0] if isinstance(out, tuple) else out
        return out

    def __getattr__(self, name):
        return getattr(self._layer, name)


def tap_layers(model, layer_ids: tuple[int, ...]) -> list:
    """Make layers `layer_ids` keep their outputs; returns the list they write into, in order.

    Wraps each layer in place (after loading and any dtype cast: the wrapper hides its weights
    from `parameters()`); a layer already tapped is tapped again over its inner layer.
    """
    layers = decoder_layers(model)
    store: list = [None] * len(layer_ids)
    for slot, index in enumerate(layer_ids):
        layer = layers[index]
        layers[index] = _Tap(getattr(layer, "_layer", layer), store, slot)
    return store


def last_hidden(model, inputs):
    """What the output head of a model of the llama layout reads: the decoder after its norm."""
    return model.model(inputs)


def output_head(model):
    """The model's output head as a function of `last_hidden`, or None where it is not one.

    Checked once per model against its own output on a few tokens: a model that does more
    (soft-capped logits, another layout) gets None, and its callers run the whole model.
    """
    known = model.__dict__.get("_bielik_head", False)
    if known is not False:
        return known
    import mlx.core as mx

    head = None
    inner = getattr(model, "model", None)
    if inner is not None and hasattr(inner, "embed_tokens"):
        candidate = model.lm_head if "lm_head" in model else inner.embed_tokens.as_linear
        probe = mx.array([[1, 2, 3]])
        try:
            if mx.allclose(model(probe), candidate(inner(probe)), rtol=1e-4, atol=1e-4).item():
                head = candidate
        except (TypeError, ValueError, AttributeError):
            head = None
    object.__setattr__(model, "_bielik_head", head)
    return head


def hidden_below(model, inputs, start: int):
    """The llama layout's hidden state entering layer `start`: embeddings, layers[:start]."""
    inner = model.model
    return _through(inner.layers[:start], inner.embed_tokens(inputs))


def hidden_above(model, hidden, start: int):
    """`last_hidden` from the state entering layer `start`: the layers from there, the norm."""
    inner = model.model
    return inner.norm(_through(inner.layers[start:], hidden))


def _through(layers, hidden):
    """`hidden` through `layers`, causally masked, with no cache (whole rows at once)."""
    from mlx_lm.models.base import create_attention_mask

    mask = create_attention_mask(hidden, None)
    for layer in layers:
        hidden = layer(hidden, mask, cache=None)
    return hidden


def split_width(model) -> int:
    """The hidden state's width where `hidden_above(hidden_below(x, n), n)` is `last_hidden`.

    Checked once per model on a few tokens; a layout that does more between layers (sliding
    windows, per-layer inputs) gets 0, and its callers run the whole decoder.
    """
    known = model.__dict__.get("_bielik_split")
    if known is not None:
        return known
    import mlx.core as mx

    width = 0
    inner = getattr(model, "model", None)
    if inner is not None and getattr(inner, "swa_idx", None) is None:
        probe = mx.array([[1, 2, 3, 4]])
        start = len(getattr(inner, "layers", [])) // 2
        try:
            split = hidden_above(model, hidden_below(model, probe, start), start)
            same = mx.allclose(split, last_hidden(model, probe), rtol=1e-5, atol=1e-5).item()
            width = split.shape[-1] if same else 0
        except (TypeError, ValueError, AttributeError):
            width = 0
    object.__setattr__(model, "_bielik_split", width)
    return width
