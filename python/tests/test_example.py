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


def test_the_example_notebook_is_saved_without_outputs_and_its_cells_run(tmp_path, monkeypatch):
    """docs/examples/capture.ipynb (tests/jupyter/ runs it in a real JupyterLab): its code cells,
    in order, capture the layer and set the widget's traits; without anywidget the widget cells
    are not run (scripts/check-jupyter installs it)."""
    import json

    notebook = json.loads((ROOT / "docs" / "examples" / "capture.ipynb").read_text(encoding="utf-8"))
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert all(c["cell_type"] == "markdown" for c in notebook["cells"][:1]), "it opens with an explanation"
    try:
        import anywidget  # noqa: F401
    except ImportError:
        anywidget = None
    monkeypatch.chdir(tmp_path)
    scope = {}
    for cell in code:
        source = "".join(cell["source"])
        if anywidget is None and ("Explorer(" in source or "w." in source):
            continue
        exec(compile(source, "capture.ipynb", "exec"), scope)
    spec = scope["spec"]
    assert spec["mechanism"] == "diff_transformer" and spec["heads"] == 4
    assert spec["tokens"][8] == "wonderful"
    assert (tmp_path / "diffllama-layer1.safetensors").is_file()
    if anywidget is not None:
        w = scope["w"]
        assert (w.head, w.lambda_) == (2, 0.2)
        assert w.spec["tokens"] == spec["tokens"]
