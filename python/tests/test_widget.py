"""diffattn.Explorer, the notebook widget: its synced traits carry the custom element's attribute
names, one for each name of the Rust schema the generated diffattn/_settings.py lists (every
attribute but src, plus spec; tests/schema.rs keeps that file fresh and equal to the element's
attributes); lists join into the element's comma lists; unknown names are refused by name. The
widget in a real JupyterLab: tests/jupyter/ (scripts/check-jupyter). Skipped without anywidget
(the `widget` extra), which scripts/check-jupyter installs."""

import pathlib

import pytest

anywidget = pytest.importorskip("anywidget")
traitlets = pytest.importorskip("traitlets")

import diffattn  # noqa: E402
from diffattn._settings import TRAITS  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: The trait class each kind of the schema's traits is.
KINDS = {"text": traitlets.Unicode, "int": traitlets.Int, "float": traitlets.Float, "bool": traitlets.Bool, "list": traitlets.Unicode, "spec": traitlets.Dict}


def test_the_synced_traits_are_the_schemas_names_of_the_right_kinds():
    synced = set(diffattn.Explorer().trait_names(sync=lambda v: v))
    ours = synced - set(anywidget.AnyWidget().trait_names(sync=lambda v: v))
    expected = {name for name, _, _ in TRAITS}
    assert ours == expected
    assert set(diffattn.Explorer.STATE_NAMES) == expected
    assert {"text", "shift", "lambda", "gate", "maps", "controls", "spec"} <= expected and "src" not in expected
    for name, kind, doc in TRAITS:
        trait = diffattn.Explorer.class_traits()[name]
        assert isinstance(trait, KINDS[kind]), (name, kind, type(trait))
        assert doc and f"``{name}``: {doc}" in diffattn.Explorer.__doc__


def test_state_goes_in_by_name_and_lists_become_comma_lists():
    w = diffattn.Explorer(text="The cat sat.", shift=2, causal=True, maps=["A", "D"], controls=("shift",), gate=[1.5, 3, -0.5])
    assert (w.text, w.shift, w.causal, w.maps, w.controls, w.gate) == ("The cat sat.", 2, True, "A,D", "shift", "1.5,3,-0.5")
    assert w.heads is None and w.spec is None, "unset traits leave the explorer's default"
    w.maps = {"fused"}
    assert w.maps == "fused"


def test_unknown_names_are_refused_by_name():
    with pytest.raises(TypeError, match="shfit"):
        diffattn.Explorer(shfit=2)


def test_the_front_end_is_the_single_file_build():
    if not (ROOT / "pkg" / "diffattn-explorer.inline.js").is_file():
        pytest.skip("pkg/diffattn-explorer.inline.js is not built yet (scripts/build-pkg)")
    esm = str(diffattn.Explorer._esm)
    assert "diffattn explorer, single-file build (ES module)" in esm
    assert "export{" in esm.replace(" ", "")


def test_lambda_is_a_trait_under_its_own_name_and_lambda_underscore_in_python():
    w = diffattn.Explorer(lambda_=0.25, segment=3)
    assert getattr(w, "lambda") == 0.25 and w.lambda_ == 0.25 and w.segment == 3
    assert "lambda" in w.trait_names(sync=lambda v: v)
    w.lambda_ = 0.5
    assert getattr(w, "lambda") == 0.5
    assert diffattn.Explorer(**{"lambda": 0.75}).lambda_ == 0.75
    with pytest.raises(TypeError, match="one setting"):
        diffattn.Explorer(lambda_=0.1, **{"lambda": 0.2})


def test_a_captured_spec_with_numpy_arrays_syncs_as_lists():
    np = pytest.importorskip("numpy")
    spec = {"mechanism": "standard", "heads": 1, "x": np.eye(2), "w_q": np.eye(2), "w_k": np.eye(2), "w_v": np.eye(2), "w_o": np.eye(2), "tokens": ["a", "b"]}
    w = diffattn.Explorer(spec=spec)
    assert w.spec["x"] == [[1.0, 0.0], [0.0, 1.0]] and w.spec["tokens"] == ["a", "b"]


def test_a_multi_layer_capture_syncs_as_lists_with_its_layer():
    # diffattn.capture(..., layers="all") (DESIGN.md §7.11): the element draws the `layer` trait's
    # layer of it (www/explorer/layers.js; tests/e2e/multilayer.test.mjs draws one by its JSON).
    np = pytest.importorskip("numpy")

    def layer(scale):
        return {"mechanism": "standard", "heads": 1, "causal": False, "x": np.eye(2) * scale, "w_q": np.eye(2), "w_k": np.eye(2), "w_v": np.eye(2), "w_o": np.eye(2), "tokens": ["a", "b"]}

    w = diffattn.Explorer(spec={"layers": [layer(1.0), layer(2.0)]}, layer=2)
    assert [l["x"] for l in w.spec["layers"]] == [[[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]]]
    assert w.layer == 2
    w.layer = 1
    assert w.layer == 1
