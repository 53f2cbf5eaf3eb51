"""docs/examples/capture_diffllama.py, the example of docs/MODELS.md, runs and writes specs
that load back to the same layer."""

import importlib.util

import numpy as np
from helpers import ROOT

import diffattn


def test_the_models_md_example_runs(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("capture_diffllama", ROOT / "docs" / "examples" / "capture_diffllama.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    captured, stages = example.main(tmp_path)
    assert "lambda = " in capsys.readouterr().out
    for name in ("diffllama-layer1.json", "diffllama-layer1.safetensors"):
        loaded = diffattn.load(tmp_path / name)
        assert loaded["tokens"] == ["the", "cat", "sat", "on", "the", "mat", "."]
        np.testing.assert_allclose(diffattn.stages(loaded)["output"], stages["output"], rtol=1e-6, atol=1e-7)
    # Each row of A1 - λ·A2 sums to 1 - λ.
    np.testing.assert_allclose(stages["heads"][0]["diff"].sum(axis=1), 1 - stages["lambda"], atol=1e-12)
