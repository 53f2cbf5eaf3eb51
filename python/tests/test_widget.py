"""diffattn.Explorer, the notebook widget: its synced traits carry the custom element's attribute
names (www/explorer/state.js STATE_KEYS and attributes.js: gate, maps, controls; not src), plus
spec; lists join into the element's comma lists; unknown names are refused by name. The widget
in a real JupyterLab: tests/jupyter/ (scripts/check-jupyter). Skipped without anywidget (the
`widget` extra), which scripts/check-jupyter installs."""

import pathlib
import re

import pytest

anywidget = pytest.importorskip("anywidget")

import diffattn  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def element_attributes():
    """The element's attributes, read from the page's own modules (one name everywhere)."""
    state = (ROOT / "www" / "explorer" / "state.js").read_text(encoding="utf-8")
    block = re.search(r"export const STATE_KEYS = Object\.freeze\(\{(.*?)\}\);", state, re.S).group(1)
    keys = re.findall(r"^\s*(\w+):", block, re.M)
    attributes = (ROOT / "www" / "explorer" / "attributes.js").read_text(encoding="utf-8")
    extra = re.search(r"export const ATTRIBUTES = Object\.freeze\(\[\.\.\.Object\.keys\(STATE_KEYS\), (.*?)\]\);", attributes).group(1)
    return keys + re.findall(r"'(\w+)'", extra)


def test_the_synced_traits_are_the_elements_attributes_plus_spec():
    synced = set(diffattn.Explorer().trait_names(sync=lambda v: v))
    ours = synced - set(anywidget.AnyWidget().trait_names(sync=lambda v: v))
    expected = (set(element_attributes()) - {"src"}) | {"spec"}
    assert ours == expected
    assert set(diffattn.Explorer.STATE_NAMES) == expected


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
