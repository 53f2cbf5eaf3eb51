"""diffattn.save / diffattn.load: JSON and the safetensors form (DESIGN.md §7.8), read and
written by the package's own codec and checked against the safetensors library both ways."""

import json

import numpy as np
import pytest
from helpers import random_spec
from safetensors.numpy import load_file, save_file

import diffattn
from diffattn.io import read_safetensors
from diffattn.reference import SpecError


def _spec():
    spec = random_spec("diff_transformer", length=5, d=16, heads=2, kv_heads=1, pairing="halves", seed=3)
    spec.update(tokens=["a", "b", "c", "d", "e"], model="m", layer=2, rope={"layout": "half", "theta": 10.0, "positions": [0, 1, 2, 3, 4]})
    return spec


def _same(got, want):
    assert set(got) == set(want)
    for k, v in want.items():
        if isinstance(v, np.ndarray):
            np.testing.assert_array_equal(got[k], v.astype(np.float32), err_msg=k)
        else:
            assert got[k] == v, k


def test_json_round_trip(tmp_path):
    spec = _spec()
    diffattn.save(spec, tmp_path / "s.json")
    loaded = diffattn.load(tmp_path / "s.json")
    assert loaded["tokens"] == spec["tokens"] and loaded["rope"] == spec["rope"]
    np.testing.assert_array_equal(loaded["w_q"], spec["w_q"])
    assert json.loads((tmp_path / "s.json").read_text())["pairing"] == "halves"


def test_safetensors_round_trip_keeps_float32_values_and_every_other_field(tmp_path):
    spec = _spec()
    diffattn.save(spec, tmp_path / "s.safetensors")
    _same(diffattn.load(tmp_path / "s.safetensors"), spec)
    stages = diffattn.stages(diffattn.load(tmp_path / "s.safetensors"))
    assert stages["output"].shape == (5, 16)


def test_the_safetensors_library_reads_what_save_writes(tmp_path):
    spec = _spec()
    diffattn.save(spec, tmp_path / "s.safetensors")
    tensors = load_file(tmp_path / "s.safetensors")
    assert set(tensors) == {"x", "w_q", "w_k", "w_v", "w_o", "lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"}
    np.testing.assert_array_equal(tensors["w_k"], spec["w_k"].astype(np.float32))
    _, metadata = read_safetensors(tmp_path / "s.safetensors")
    rest = json.loads(metadata["spec"])
    assert metadata["format"] == "diffattn.stages" and metadata["version"] == "1"
    assert rest["tokens"] == spec["tokens"] and "x" not in rest


def test_load_reads_what_the_safetensors_library_writes(tmp_path):
    spec = random_spec(length=4, d=8, heads=2)
    arrays = {k: spec.pop(k).astype(np.float64) for k in ("x", "w_q", "w_k", "w_v", "w_o")}
    save_file(arrays, str(tmp_path / "s.safetensors"), metadata={"format": "diffattn.stages", "version": "1", "spec": json.dumps(spec)})
    loaded = diffattn.load(tmp_path / "s.safetensors")
    np.testing.assert_array_equal(loaded["x"], arrays["x"])
    assert loaded["mechanism"] == "standard"


@pytest.mark.parametrize(
    "tensors, metadata, field, words",
    [
        ({"x": np.zeros((2, 2), np.float32)}, {"format": "other", "version": "1", "spec": "{}"}, "__metadata__.format", "diffattn.stages"),
        ({"x": np.zeros((2, 2), np.float32)}, {"format": "diffattn.stages", "version": "2", "spec": "{}"}, "__metadata__.version", "'1'"),
        ({"x": np.zeros((2, 2), np.float32)}, {"format": "diffattn.stages", "version": "1", "spec": "{"}, "__metadata__.spec", "not JSON"),
        ({"x": np.zeros((2, 2), np.float32)}, {"format": "diffattn.stages", "version": "1", "spec": '{"x": [[1]]}'}, "x", "both as a tensor"),
        ({"gate": np.zeros(2, np.float32)}, {"format": "diffattn.stages", "version": "1", "spec": "{}"}, "gate", "not an array field"),
        ({"x": np.zeros((2, 2), np.int32)}, {"format": "diffattn.stages", "version": "1", "spec": "{}"}, "x", "expected F32 or F64"),
    ],
)
def test_bad_binary_specs_name_their_field(tmp_path, tensors, metadata, field, words):
    save_file(tensors, str(tmp_path / "s.safetensors"), metadata=metadata)
    with pytest.raises(SpecError) as error:
        diffattn.load(tmp_path / "s.safetensors")
    assert error.value.field == field and words in str(error.value), str(error.value)


def test_truncated_file_is_an_error(tmp_path):
    diffattn.save(random_spec(), tmp_path / "s.safetensors")
    raw = (tmp_path / "s.safetensors").read_bytes()
    (tmp_path / "t.safetensors").write_bytes(raw[:-4])
    with pytest.raises(SpecError, match="do not fit shape"):
        diffattn.load(tmp_path / "t.safetensors")


def test_other_extensions_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"\.json or \.safetensors"):
        diffattn.save(random_spec(), tmp_path / "s.bin")
    with pytest.raises(ValueError, match=r"\.json or \.safetensors"):
        diffattn.load(tmp_path / "s.npz")
