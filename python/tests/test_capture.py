"""diffattn.capture on small random transformers models, live: the captured spec, run by the
float64 reference, gives back the maps and output the model computed in the same pass; labels
come from a tokenizer; unsupported models and inputs are refused with a clear message."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch
import transformers
from helpers import ROOT, relative_error, stack

import diffattn

VOCAB = 40


def _model(family, **fields):
    config_cls, model_cls = {
        "diffllama": (transformers.DiffLlamaConfig, transformers.DiffLlamaForCausalLM),
        "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
        "qwen3": (transformers.Qwen3Config, transformers.Qwen3ForCausalLM),
        "olmo2": (transformers.Olmo2Config, transformers.Olmo2ForCausalLM),
        "gemma2": (transformers.Gemma2Config, transformers.Gemma2ForCausalLM),
        "gemma3": (transformers.Gemma3TextConfig, transformers.Gemma3ForCausalLM),
        "gpt_oss": (transformers.GptOssConfig, transformers.GptOssForCausalLM),
        "xlnet": (transformers.XLNetConfig, transformers.XLNetModel),
        "qwen3_next": (transformers.Qwen3NextConfig, transformers.Qwen3NextForCausalLM),
        "gpt2": (transformers.GPT2Config, transformers.GPT2LMHeadModel),
    }[family]
    torch.manual_seed(7)
    base = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, attn_implementation="eager")
    if family == "gpt2":
        base = dict(vocab_size=VOCAB, n_embd=16, n_layer=1, n_head=2)
    if family == "xlnet":
        base = dict(vocab_size=VOCAB, d_model=16, n_layer=1, n_head=2, d_inner=32)
    model = model_cls(config_cls(**{**base, **fields})).eval()
    if family in ("diffllama", "llama"):
        with torch.no_grad():
            for p in model.model.layers[1].self_attn.parameters():
                if p.dim() == 2:
                    p.normal_(0.0, 0.3)
    return model


def _sharpen(model, std=0.4):
    """Random projections wide enough that the maps are far from uniform."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, std)


def _run(model, ids, layer):
    seen = {}
    attn = model.model.layers[layer].self_attn
    handle = attn.register_forward_hook(lambda m, a, o: seen.update(output=o[0][0].double().numpy(), weights=o[1][0].double().numpy()))
    try:
        spec = diffattn.capture(model, ids, layer=layer)
    finally:
        handle.remove()
    return spec, seen


@pytest.mark.parametrize("kv_heads", [2, 4])
def test_diffllama_capture_reproduces_the_model(kv_heads):
    model = _model("diffllama", num_key_value_heads=kv_heads, lambda_std_dev=0.3)
    spec, seen = _run(model, torch.randint(0, VOCAB, (1, 11)), layer=1)
    assert (spec["mechanism"], spec["pairing"], spec["heads"], spec["kv_heads"], spec["depth"]) == ("diff_transformer", "halves", 2, kv_heads // 2, 1)
    assert "subln" not in spec and spec["subln_eps"] == 1e-5
    got = diffattn.stages(spec)
    # modeling_diffllama.py subtracts head h + H/2 from head h.
    assert relative_error(stack(got, "a1"), seen["weights"][:2]) < 1e-5
    assert relative_error(stack(got, "a2"), seen["weights"][2:]) < 1e-5
    assert relative_error(got["output"], seen["output"]) < 1e-5
    lam = math.exp(spec["lambda_q1"] @ spec["lambda_k1"]) - math.exp(spec["lambda_q2"] @ spec["lambda_k2"]) + model.model.layers[1].self_attn.lambda_init
    assert got["lambda"] == pytest.approx(lam, rel=1e-6)


def test_llama_capture_with_biases_and_positions_reproduces_the_model():
    model = _model("llama", attention_bias=True, num_key_value_heads=1)
    ids = torch.randint(0, VOCAB, (1, 9))
    seen = {}
    handle = model.model.layers[1].self_attn.register_forward_hook(lambda m, a, o: seen.update(output=o[0][0].double().numpy(), weights=o[1][0].double().numpy()))
    spec = diffattn.capture(model, ids, layer=1, position_ids=torch.arange(5, 14))
    handle.remove()
    assert spec["rope"]["positions"] == list(range(5, 14)) and {"b_q", "b_k", "b_v", "b_o"} <= set(spec)
    got = diffattn.stages(spec)
    assert relative_error(stack(got, "a"), seen["weights"]) < 1e-5
    assert relative_error(got["output"], seen["output"]) < 1e-5


def test_x_is_the_input_of_the_attention_after_the_input_norm():
    model = _model("llama")
    with torch.no_grad():
        model.model.layers[1].input_layernorm.weight.uniform_(0.5, 2.0)
    ids = torch.randint(0, VOCAB, (1, 6))
    spec = diffattn.capture(model, ids, layer=1)
    with torch.no_grad():
        hidden = model.model(input_ids=ids, output_hidden_states=True).hidden_states[1]  # layer 1's input
        normed = model.model.layers[1].input_layernorm(hidden)[0].numpy()
    np.testing.assert_allclose(spec["x"], normed, rtol=1e-6, atol=1e-6)


def test_tokens_come_from_the_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = {"[UNK]": 0, "the": 1, "cat": 2, "sat": 3, "down": 4}
    backend = Tokenizer(models.WordLevel(words, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=backend)
    ids = tokenizer("the cat sat down")["input_ids"]
    model = _model("llama")
    assert diffattn.capture(model, ids, layer=0, tokenizer=tokenizer)["tokens"] == ["the", "cat", "sat", "down"]
    assert diffattn.capture(model, ids, layer=0, tokens=["A", "B", "C", "D"])["tokens"] == ["A", "B", "C", "D"]
    assert "tokens" not in diffattn.capture(model, ids, layer=0)
    with pytest.raises(ValueError, match="tokens: 2 labels for 4 input ids"):
        diffattn.capture(model, ids, layer=0, tokens=["A", "B"])


@pytest.mark.parametrize(
    "family, ids, layer, error, words",
    [
        ("llama", [[1, 2], [3, 4]], 0, ValueError, "one sequence, found a batch of 2"),
        ("llama", [1, 2, 3], 2, ValueError, "layer: expected 0 to 1"),
        ("gpt2", [1, 2, 3], 1, ValueError, "layer: expected 0 to 0"),
        ("gpt2", [[1, 2], [3, 4]], 0, ValueError, "one sequence, found a batch of 2"),
        # XLNet's two-stream attention is not an attention the format describes.
        ("xlnet", [1, 2, 3], 0, TypeError, "model_type 'xlnet': capture supports llama, mistral, qwen2, qwen3, olmo2, gemma2, gemma3_text, gpt_oss, qwen3_next, diffllama, bert, roberta, distilbert, gpt2, vit, t5, bart"),
    ],
)
def test_unsupported_inputs_are_refused(family, ids, layer, error, words):
    model = _model(family)
    with pytest.raises(error, match=words):
        diffattn.capture(model, ids, layer=layer)


QWEN3_NEXT = dict(head_dim=8, layer_types=["linear_attention", "full_attention"], num_experts=2, num_experts_per_tok=1, moe_intermediate_size=16, shared_expert_intermediate_size=16, linear_num_value_heads=2, linear_num_key_heads=2, linear_key_head_dim=8, linear_value_head_dim=8)


def test_a_layer_that_is_not_softmax_attention_is_refused():
    model = _model("qwen3_next", **QWEN3_NEXT)
    with pytest.raises(TypeError, match="layer 0 is a linear_attention layer"):
        diffattn.capture(model, [1, 2, 3], layer=0)


@pytest.mark.parametrize(
    "family, fields, layer, expect",
    [
        # Qwen3: RMSNorm of each query and key head (weights of head_dim values).
        ("qwen3", dict(head_dim=8), 1, {"q_norm": 8, "k_norm": 8}),
        # OLMo 2: RMSNorm of the whole query (H·d_h) and key (G·d_h) projections.
        ("olmo2", {}, 1, {"q_norm": 32, "k_norm": 16}),
        # Gemma 2: query_pre_attn_scalar's scale, a soft cap, a sliding layer.
        ("gemma2", dict(head_dim=8, attn_logit_softcapping=2.0, sliding_window=3, query_pre_attn_scalar=16), 0, {"scale": 0.25, "softcap": 2.0, "window": 2}),
        # Gemma 3: norms with 1 + weight, its own scale, a full layer with its own rope theta.
        ("gemma3", dict(head_dim=8, sliding_window=3, layer_types=["sliding_attention", "full_attention"]), 1, {"q_norm": 8, "scale": 256**-0.5}),
        # Qwen3-Next: a full-attention layer is gated attention; q/k norms with 1 + weight, a
        # quarter of each head rotated.
        ("qwen3_next", QWEN3_NEXT, 1, {"mechanism": "gated_attention", "w_output_gate": 32, "q_norm": 8}),
        # gpt-oss: a learned sink per head, YaRN rope, biases; its sliding layer.
        ("gpt_oss", dict(head_dim=8, sliding_window=3, num_local_experts=2, num_experts_per_tok=1), 0, {"sinks": 4, "window": 2}),
    ],
)
def test_todays_decoders_are_captured_exactly(family, fields, layer, expect):
    expect = dict(expect)
    assert expect.pop("mechanism", None) in (None, "gated_attention")
    model = _model(family, **fields)
    attn = model.model.layers[layer].self_attn
    with torch.no_grad():
        for p in attn.parameters():
            p.normal_(0.0, 0.4 if p.dim() == 2 else 0.5)
    spec, seen = _run(model, [3, 9, 4, 17, 25, 8, 1, 30], layer)
    for field, value in expect.items():
        have = spec[field]
        assert (len(have) if hasattr(have, "__len__") else have) == pytest.approx(value), field
    got = diffattn.stages(spec)
    assert relative_error(stack(got, "a"), seen["weights"]) < 1e-5
    assert relative_error(got["output"], seen["output"]) < 1e-5
    # The measure can fail: the same capture without its norms or cap is another map.
    bare = {k: v for k, v in spec.items() if k not in ("q_norm", "k_norm", "qk_norm_eps", "softcap", "scale", "sinks")}
    if family == "qwen3_next":
        assert spec["mechanism"] == "gated_attention" and spec["rope"]["rotary_dim"] == 2
    assert relative_error(stack(diffattn.stages(bare), "a"), seen["weights"]) > 1e-3


# The families whose positions are in the vectors entering the layer: model, the module whose
# output is the attention's output projection, and the model's inputs.
ABSOLUTE = {
    "bert": lambda: transformers.BertModel(transformers.BertConfig(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32, attn_implementation="eager")),
    "roberta": lambda: transformers.RobertaModel(transformers.RobertaConfig(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=2, num_attention_heads=4, intermediate_size=32, attn_implementation="eager")),
    "distilbert": lambda: transformers.DistilBertModel(transformers.DistilBertConfig(vocab_size=VOCAB, dim=16, n_layers=2, n_heads=2, hidden_dim=32, attn_implementation="eager")),
    "gpt2": lambda: transformers.GPT2Model(transformers.GPT2Config(vocab_size=VOCAB, n_embd=16, n_layer=2, n_head=2, attn_implementation="eager")),
    "vit": lambda: transformers.ViTModel(transformers.ViTConfig(hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32, image_size=12, patch_size=4, attn_implementation="eager")),
}
OUTPUT_PROJECTION = {
    "bert": lambda m: m.encoder.layer[1].attention.output.dense,
    "roberta": lambda m: m.encoder.layer[1].attention.output.dense,
    "distilbert": lambda m: m.transformer.layer[1].attention.out_lin,
    "gpt2": lambda m: m.h[1].attn.c_proj,
    "vit": lambda m: m.layers[1].attention.o_proj,
}


@pytest.mark.parametrize("family", sorted(ABSOLUTE))
def test_encoder_gpt2_and_vit_captures_reproduce_the_model(family):
    torch.manual_seed(3)
    model = ABSOLUTE[family]().eval()
    _sharpen(model)
    seen = {}
    handle = OUTPUT_PROJECTION[family](model).register_forward_hook(lambda m, a, o: seen.update(output=o[0].double().numpy()))
    try:
        if family == "vit":
            inputs = {"pixel_values": torch.randn(1, 3, 12, 12)}
            spec = diffattn.capture(model, None, layer=1, **inputs)
        else:
            inputs = {"input_ids": torch.tensor([[3, 9, 4, 17, 25, 8, 1]])}
            spec = diffattn.capture(model, inputs["input_ids"], layer=1)
        with torch.no_grad():
            maps = model(**inputs, output_attentions=True).attentions[1][0].double().numpy()
    finally:
        handle.remove()
    assert spec["causal"] == (family == "gpt2") and "rope" not in spec
    got = diffattn.stages(spec)
    assert relative_error(stack(got, "a"), maps) < 1e-5
    assert relative_error(got["output"], seen["output"]) < 1e-5
    # Biases are part of every one of these families' projections.
    assert all(f"b_{p}" in spec for p in "qkvo")
    if family == "gpt2":
        # Causal: no query sees a later key.
        assert np.allclose(np.triu(stack(got, "a")[0], 1), 0)
    if family == "vit":
        assert spec["tokens"] == ["[CLS]"] + [f"r{r}c{c}" for r in (1, 2, 3) for c in (1, 2, 3)]


def test_a_scale_the_format_does_not_describe_is_refused():
    model = transformers.GPT2Model(transformers.GPT2Config(vocab_size=VOCAB, n_embd=16, n_layer=2, n_head=2, scale_attn_by_inverse_layer_idx=True, attn_implementation="eager")).eval()
    assert diffattn.capture(model, [1, 2, 3], layer=0)["heads"] == 2  # layer 0: 1 / (0 + 1)
    with pytest.raises(TypeError, match="scales scores by 1/sqrt"):
        diffattn.capture(model, [1, 2, 3], layer=1)


def test_vit_takes_pixels_and_the_others_ids():
    vit = ABSOLUTE["vit"]().eval()
    with pytest.raises(TypeError, match="give pixel_values"):
        diffattn.capture(vit, [1, 2, 3], layer=0)
    with pytest.raises(TypeError, match="pixel_values: bert takes input_ids"):
        diffattn.capture(ABSOLUTE["bert"]().eval(), [1, 2], layer=0, pixel_values=torch.zeros(1, 3, 12, 12))
    with pytest.raises(TypeError, match="adds its positions before the first layer"):
        diffattn.capture(ABSOLUTE["bert"]().eval(), [1, 2], layer=0, position_ids=[3, 4])


ENCODER_DECODERS = {
    "t5": lambda: transformers.T5Model(transformers.T5Config(vocab_size=VOCAB, d_model=16, d_kv=8, d_ff=32, num_layers=2, num_heads=2, attn_implementation="eager")),
    "bart": lambda: transformers.BartModel(transformers.BartConfig(vocab_size=VOCAB, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, attn_implementation="eager")),
}


@pytest.mark.parametrize("family", sorted(ENCODER_DECODERS))
@pytest.mark.parametrize("part", ["encoder", "decoder"])
def test_encoder_decoders_self_attention_is_captured_exactly(family, part):
    torch.manual_seed(5)
    model = ENCODER_DECODERS[family]().eval()
    _sharpen(model)
    stack = model.get_decoder() if part == "decoder" else model.get_encoder()
    attn = stack.block[1].layer[0].SelfAttention if family == "t5" else stack.layers[1].self_attn
    seen = {}
    handle = attn.register_forward_hook(lambda m, a, o: seen.update(output=o[0][0].double().numpy(), weights=o[-1][0].double().numpy()))
    ids, decoder = [3, 9, 4, 17, 25, 8, 1], ([5, 6, 7, 30, 2] if part == "decoder" else None)
    try:
        spec = diffattn.capture(model, ids, layer=1, decoder_input_ids=decoder)
    finally:
        handle.remove()
    assert spec["causal"] == (part == "decoder")
    assert len(spec["x"]) == (5 if part == "decoder" else 7)
    # T5: unscaled scores and its relative position bias, one value per offset.
    assert ("relative_bias" in spec) == (family == "t5") and (spec.get("scale") == 1.0) == (family == "t5")
    got = diffattn.stages(spec)
    assert relative_error(stack_maps(got), seen["weights"]) < 1e-5
    assert relative_error(got["output"], seen["output"]) < 1e-5
    if family == "t5":
        bare = {k: v for k, v in spec.items() if k != "relative_bias"}
        assert relative_error(stack_maps(diffattn.stages(bare)), seen["weights"]) > 1e-3


def stack_maps(stages):
    return stack(stages, "a")


@pytest.mark.parametrize("family", sorted(ENCODER_DECODERS))
def test_cross_attention_reads_its_keys_from_the_encoder(family):
    torch.manual_seed(6)
    model = ENCODER_DECODERS[family]().eval()
    _sharpen(model)
    stack = model.get_decoder()
    attn = stack.block[1].layer[1].EncDecAttention if family == "t5" else stack.layers[1].encoder_attn
    seen = {}
    handle = attn.register_forward_hook(lambda m, a, o: seen.update(output=o[0][0].double().numpy(), weights=o[-1][0].double().numpy()))
    try:
        spec = diffattn.capture(model, [3, 9, 4, 17, 25, 8, 1], layer=1, decoder_input_ids=[5, 6, 7], attention="cross", key_tokens=list("abcdefg"))
    finally:
        handle.remove()
    # Three decoder queries, seven encoder keys: the maps are 3 × 7.
    assert spec["x"].shape[0] == 3 and spec["x_kv"].shape[0] == 7 and spec["key_tokens"] == list("abcdefg")
    assert spec["causal"] is False and "relative_bias" not in spec
    got = diffattn.stages(spec)
    assert stack_maps(got).shape == (2, 3, 7)
    assert relative_error(stack_maps(got), seen["weights"]) < 1e-5
    assert relative_error(got["output"], seen["output"]) < 1e-5


def test_cross_attention_needs_the_decoder_and_an_encoder_decoder():
    model = ENCODER_DECODERS["bart"]().eval()
    with pytest.raises(ValueError, match="give decoder_input_ids"):
        diffattn.capture(model, [1, 2, 3], layer=0, attention="cross")
    with pytest.raises(ValueError, match="key_tokens: only cross-attention"):
        diffattn.capture(model, [1, 2, 3], layer=0, key_tokens=["a", "b", "c"])
    with pytest.raises(TypeError, match="not an encoder-decoder"):
        diffattn.capture(ABSOLUTE["bert"]().eval(), [1, 2, 3], layer=0, decoder_input_ids=[4, 5])


MINILM = ROOT / ".data" / "minilm"


@pytest.mark.skipif(not (MINILM / "model.safetensors").exists(), reason="the real model is fetched by scripts/setup (scripts/fetch-model)")
def test_the_real_minilm_is_captured_exactly():
    # all-MiniLM-L6-v2 (docs/MINILM.md): layer 4, head 2 puts most of «it» on «animal».
    model = transformers.AutoModel.from_pretrained(MINILM, attn_implementation="eager").eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(MINILM)
    ids = tokenizer("The animal didn't cross the street because it was too tired.")["input_ids"]
    seen = {}
    handle = model.encoder.layer[3].attention.output.dense.register_forward_hook(lambda m, a, o: seen.update(output=o[0].double().numpy()))
    try:
        spec = diffattn.capture(model, ids, layer=3, tokenizer=tokenizer)
        with torch.no_grad():
            maps = model(input_ids=torch.tensor([ids]), output_attentions=True).attentions[3][0].double().numpy()
    finally:
        handle.remove()
    assert spec["heads"] == 12 and spec["head_dim"] == 32 and spec["tokens"][0] == "[CLS]"
    got = diffattn.stages(spec)
    assert relative_error(stack(got, "a"), maps) < 1e-5
    assert relative_error(got["output"], seen["output"]) < 1e-5
    it, animal = spec["tokens"].index("it"), spec["tokens"].index("animal")
    assert stack(got, "a")[1][it, animal] > 0.6


class _Linear:
    def __init__(self, rows, cols, seed):
        self.weight = torch.from_numpy(np.random.default_rng(seed).normal(0, 0.3, (rows, cols)).astype(np.float32))
        self.bias = None


class MultiheadDiffAttn:
    """The attributes of the official V1 module that capture_module reads (its own class is not
    vendored here; tests/golden/ holds captures of the real one)."""

    def __init__(self, embed_dim=16, num_heads=2, num_kv_heads=1, depth=3):
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.head_dim = embed_dim // num_heads // 2
        kv_rows = embed_dim // (num_heads // num_kv_heads)
        self.q_proj, self.out_proj = _Linear(embed_dim, embed_dim, 1), _Linear(embed_dim, embed_dim, 2)
        self.k_proj, self.v_proj = _Linear(kv_rows, embed_dim, 3), _Linear(kv_rows, embed_dim, 4)
        self.lambda_init = 0.8 - 0.6 * math.exp(-0.3 * depth)
        for i, p in enumerate(("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")):
            setattr(self, p, torch.full((self.head_dim,), 0.1 * i))
        self.subln = type("RMSNorm", (), {"weight": torch.ones(2 * self.head_dim), "eps": 1e-5})()


def test_capture_module_reads_the_official_layout():
    module = MultiheadDiffAttn()
    x = torch.randn(1, 5, 16)
    spec = diffattn.capture_module(module, x, theta=500.0, rotary_dim=2)
    assert (spec["mechanism"], spec["pairing"], spec["heads"], spec["kv_heads"], spec["head_dim"]) == ("diff_transformer", "adjacent", 2, 1, 4)
    assert spec["rope"] == {"layout": "interleaved", "theta": 500.0, "rotary_dim": 2, "positions": [0, 1, 2, 3, 4]}
    assert spec["lambda_init"] == module.lambda_init and "depth" not in spec
    np.testing.assert_array_equal(spec["x"], x[0].numpy())
    # Told the layer, it writes the depth the official formula takes instead.
    assert diffattn.capture_module(module, x, layer=3)["depth"] == 3
    with pytest.raises(TypeError, match="capture_module supports MultiheadDiffAttn and MultiheadFlashDiffV2"):
        diffattn.capture_module(object(), x)


def _cli():
    """The `diffattn` binary built for this checkout (CARGO_TARGET_DIR or target/), if built."""
    import os

    for base in (os.environ.get("CARGO_TARGET_DIR"), ROOT / "target"):
        if base:
            for profile in ("debug", "release"):
                path = Path(base) / profile / "diffattn"
                if path.is_file():
                    return path
    return None


def _multi_layer_models():
    llama = _model("llama", num_hidden_layers=3)
    _sharpen(llama)
    bert = ABSOLUTE["bert"]().eval()
    _sharpen(bert)
    return {"llama": llama, "bert": bert}


@pytest.mark.parametrize("family", ["llama", "bert"])
def test_layers_all_writes_every_layer_as_its_single_layer_capture(family, tmp_path):
    import json
    import subprocess

    torch.manual_seed(5)
    model = _multi_layer_models()[family]
    ids = [3, 9, 4, 17, 25, 8, 1]
    count = model.config.num_hidden_layers
    whole = diffattn.capture(model, ids, layers="all")
    assert list(whole) == ["layers"] and len(whole["layers"]) == count
    singles = [diffattn.capture(model, ids, layer=n) for n in range(count)]
    for got, want in zip(whole["layers"], singles):
        assert got["layer"] == want["layer"]
        for key in ("x", "w_q", "w_o"):
            assert np.array_equal(np.asarray(got[key]), np.asarray(want[key]))
        a, b = diffattn.stages(got), diffattn.stages(want)
        assert np.array_equal(stack(a, "a"), stack(b, "a")) and np.array_equal(a["output"], b["output"])
    # A list picks those layers, numbered as layer=.
    picked = diffattn.capture(model, ids, layers=[count - 1, 0])
    assert [l["layer"] for l in picked["layers"]] == [count - 1, 0]
    # Saved and loaded, both forms; the CLI's --layer N (from 1) gives layer N's stages.
    cli = _cli()
    for suffix in (".json", ".safetensors"):
        path = tmp_path / f"all{suffix}"
        diffattn.save(whole, path)
        loaded = diffattn.load(path)
        assert len(loaded["layers"]) == count
        for n in range(count):
            want = diffattn.stages(singles[n])
            assert relative_error(stack(diffattn.stages(loaded["layers"][n]), "a"), stack(want, "a")) < 1e-6
            if cli is None:
                continue
            out = subprocess.run([cli, "stages", "--layer", str(n + 1), path], capture_output=True, check=True)
            printed = json.loads(out.stdout)
            maps = np.array([h["a"] for h in printed["heads"]])
            assert relative_error(maps, stack(want, "a")) < 1e-5
            assert relative_error(np.array(printed["output"]), want["output"]) < 1e-4
        if cli is not None:
            out = subprocess.run([cli, "stages", "--layer", str(count + 1), path], capture_output=True)
            assert out.returncode == 2 and f"expected 1 to {count}" in out.stderr.decode()


def test_layers_is_checked():
    model = _model("llama")
    ids = [3, 9, 4]
    for layers, words in [("some", "'all' or a list"), ([], "an empty list"), ([0, 2], "from 0 to 1"), (5, "'all' or a list")]:
        with pytest.raises(ValueError, match=words):
            diffattn.capture(model, ids, layers=layers)
    with pytest.raises(ValueError, match="give one of them"):
        diffattn.capture(model, ids, layer=0, layers="all")
    with pytest.raises(ValueError, match="give a layer number"):
        diffattn.capture(model, ids)


def test_layers_works_for_every_family_capture_supports():
    ids = [3, 9, 4, 17, 25, 8, 1]
    for family, make in ABSOLUTE.items():
        model = make().eval()
        given = {"pixel_values": torch.randn(1, 3, 12, 12)} if family == "vit" else {}
        whole = diffattn.capture(model, None if family == "vit" else ids, layers="all", **given)
        one = diffattn.capture(model, None if family == "vit" else ids, layer=1, **given)
        assert len(whole["layers"]) == 2, family
        assert np.array_equal(np.asarray(whole["layers"][1]["w_q"]), np.asarray(one["w_q"])), family
    config = transformers.BartConfig(vocab_size=VOCAB, d_model=16, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=32)
    bart = transformers.BartModel(config).eval()
    for attention in ("self", "cross"):
        picked = diffattn.capture(bart, ids, layers=[1, 0], decoder_input_ids=[2, 5, 6], attention=attention)
        assert [l["layer"] for l in picked["layers"]] == [1, 0]
    # A hybrid's "all": its softmax-attention layers only (Qwen3-Next: every fourth).
    hybrid = _model("qwen3_next", num_hidden_layers=4)
    assert [l["layer"] for l in diffattn.capture(hybrid, ids, layers="all")["layers"]] == [3]
