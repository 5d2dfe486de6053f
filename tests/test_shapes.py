"""Bielik-shaped GGUFs for cost curves: written quickly, loaded by llama.cpp as published ones."""

from __future__ import annotations

import numpy as np
import pytest

from app.bench import shapes

pytest.importorskip("llama_cpp")

from decoder.backends.llamacpp import LlamaCppBackend  # noqa: E402

MINI = shapes.Shape(layers=8, hidden=256, heads=4, kv_heads=2, ffn=512, vocab=1000, tied=False)


def test_q4_k_m_mix_follows_llama_cpp():
    types = shapes.tensor_types(shapes.SHAPES["bielik-11b-v3"], "q4_k_m")
    assert types["output.weight"] == shapes.T.Q6_K and types["token_embd.weight"] == shapes.T.Q4_K
    v = [types[f"blk.{i}.attn_v.weight"] == shapes.T.Q6_K for i in range(50)]
    assert sum(v) == 25 and v[:6] == [True] * 6 and v[-7:] == [True] * 7 and not v[6]
    tied = shapes.tensor_types(shapes.SHAPES["qwen2.5-1.5b"], "q4_0")
    assert "output.weight" not in tied and set(tied.values()) == {shapes.T.Q4_0}


@pytest.mark.parametrize("quant", ["q4_k_m", "q4_0"])
def test_written_file_loads_and_decodes(tmp_path, monkeypatch, quant):
    monkeypatch.setitem(shapes.SHAPES, "mini", MINI)
    path = shapes.write("mini", quant, tmp_path)
    assert path.stat().st_size >= shapes.file_size(MINI, quant)
    assert shapes.write("mini", quant, tmp_path) == path  # reused, not rewritten
    backend = LlamaCppBackend(path, threads=1, context=256)
    assert backend.vocab_size == 1000
    assert np.isfinite(backend.forward(list(range(300, 310)))).all()
    found = shapes.measure(path, exact=True, prompt=8, reps=1)
    assert found["ratios"][1] == 1.0 and found["t1_ms"] > 0
