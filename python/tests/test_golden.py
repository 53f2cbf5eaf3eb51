"""The goldens of tests/golden/: the float64 reference, run on each spec that diffattn.capture
took from a real library, reproduces the maps and output that library computed in the same
forward pass (transformers' DiffLlama, Llama, Qwen2, Mistral, Qwen3, Qwen3-Next, OLMo 2, Gemma 2,
Gemma 3, gpt-oss, BERT, RoBERTa, DistilBERT, GPT-2 and ViT; the official V1 and V2 code)
within 1e-4 relative to the largest value."""

import json

import numpy as np
import pytest
from helpers import GOLDEN, relative_error, stack

import diffattn
from diffattn.io import read_safetensors

MANIFEST = json.loads((GOLDEN / "manifest.json").read_text())
TOLERANCE = 1e-4


def test_the_manifest_lists_every_golden_file():
    names = {p.name.split(".")[0] for p in GOLDEN.glob("*.safetensors")}
    assert names == set(MANIFEST)
    families = {name.split("_")[0] + ("_" + name.split("_")[1] if name.startswith(("official", "gpt_oss", "qwen3_next")) else "") for name in names}
    assert families == {"diffllama", "llama", "qwen2", "mistral", "official_v1", "official_v2", "bert", "roberta", "distilbert", "gpt2", "vit", "qwen3", "olmo2", "gemma2", "gemma3", "gpt_oss", "qwen3_next", "t5", "bart"}


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_reference_reproduces_the_library(name):
    spec = diffattn.load(GOLDEN / f"{name}.spec.safetensors")
    golden, _ = read_safetensors(GOLDEN / f"{name}.golden.safetensors")
    got = diffattn.stages(spec)
    assert {"output"} < set(golden)
    for key, want in golden.items():
        have = got[key] if key in ("output", "lambda") else stack(got, key)
        assert have.shape == want.shape, f"{key}: {have.shape} != {want.shape}"
        error = relative_error(have, want)
        assert error <= TOLERANCE, f"{name}.{key}: relative error {error:.2e}"


def test_a_wrong_pairing_or_layout_is_caught():
    # The measure can fail: the same capture read with the other pairing or rope layout.
    spec = diffattn.load(GOLDEN / "diffllama_L8_H4_kv4_d32_layer1.spec.safetensors")
    golden, _ = read_safetensors(GOLDEN / "diffllama_L8_H4_kv4_d32_layer1.golden.safetensors")
    assert relative_error(stack(diffattn.stages(dict(spec, pairing="adjacent")), "a2"), golden["a2"]) > 1e-2
    rope = dict(spec["rope"], layout="interleaved")
    assert relative_error(stack(diffattn.stages(dict(spec, rope=rope)), "a1"), golden["a1"]) > 1e-2
    assert relative_error(diffattn.stages(dict(spec, depth=spec["depth"] + 1))["output"], golden["output"]) > 1e-3


def test_captured_specs_carry_labels_model_and_layer():
    spec = diffattn.load(GOLDEN / "llama_L5_H4_kv2_d32_layer1_pos3.spec.safetensors")
    assert spec["layer"] == 1 and spec["model"] == "random LlamaForCausalLM"
    assert len(spec["tokens"]) == 5 and spec["rope"]["positions"] == [3, 4, 5, 6, 7]
    assert np.asarray(spec["x"]).shape == (5, 32)
