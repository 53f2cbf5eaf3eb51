"""Makes the golden files of tests/golden/: what the real libraries compute for one layer.

Run by scripts/golden-transformers (which picks the venv). For each case it builds a model
with random weights from a config (the hub is never used), captures one attention layer with
diffattn.capture / capture_module, and records what the library itself computed in that same
forward pass: the softmax maps of every head and the attention layer's output (and V2's λ).

    NAME.spec.safetensors     the captured spec (docs/DESIGN.md §7.8)
    NAME.golden.safetensors   the library's maps: `a` (heads, L, L) or `a1`, `a2` (diff heads,
                              L, L) paired as the library's own code subtracts them, `lambda`
                              (L, heads) for V2, and `output` (L, d)
    manifest.json             every case: source, versions, what it covers, and the largest
                              difference of the float64 reference from the golden maps

transformers runs with eager attention. The official code (microsoft/unilm Diff-Transformer,
not vendored: pass a checkout with --unilm) runs unpatched on the CPU: its Triton rotary kernel
in Triton's interpreter (TRITON_INTERPRET=1, with torch.cuda.device as a no-op context since
there is no GPU), and V2's flash_attn_func, which needs a GPU, replaced by the naive attention
below, which also records the maps.
"""

import argparse
import contextlib
import json
import os
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "python"))

import numpy as np  # noqa: E402

import diffattn  # noqa: E402
from diffattn.io import write_safetensors  # noqa: E402
from diffattn.reference import stages  # noqa: E402

# (name, model family, config fields, layer captured, tokens, position offset)
TRANSFORMERS_CASES = [
    ("diffllama_L1_H4_kv2_d32", "diffllama", dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2), 0, 1, 0),
    ("diffllama_L8_H4_kv4_d32_layer1", "diffllama", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4), 1, 8, 0),
    ("diffllama_L24_H8_kv2_d64_layer2_bias_theta5e5", "diffllama", dict(hidden_size=64, num_hidden_layers=3, num_attention_heads=8, num_key_value_heads=2, attention_bias=True, rope_parameters={"rope_type": "default", "rope_theta": 500000.0}), 2, 24, 0),
    ("diffllama_L64_H8_kv8_d64_hd16_layer1", "diffllama", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=8, head_dim=16), 1, 64, 0),
    ("diffllama_L17_H6_kv2_d48_layer2_llama3rope", "diffllama", dict(hidden_size=48, num_hidden_layers=3, num_attention_heads=6, num_key_value_heads=2, rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8}), 2, 17, 0),
    ("llama_L1_H2_kv1_d16", "llama", dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1), 0, 1, 0),
    ("llama_L5_H4_kv2_d32_layer1_pos3", "llama", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2), 1, 5, 3),
    ("llama_L33_H4_kv4_d32_layer2_bias_theta5e5", "llama", dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=4, attention_bias=True, rope_parameters={"rope_type": "default", "rope_theta": 500000.0}), 2, 33, 0),
    ("llama_L64_H8_kv1_d64_layer1", "llama", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=1), 1, 64, 0),
    ("llama_L40_H4_kv2_d32_yarn", "llama", dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=2, rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 64}), 0, 40, 0),
    ("qwen2_L12_H4_kv2_d32_layer1", "qwen2", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2), 1, 12, 0),
    ("mistral_L10_H4_kv1_d32_layer1_window4", "mistral", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1, sliding_window=4), 1, 10, 0),
    # DESIGN.md §7.9: query/key norms per head (Qwen3, Gemma 3) or over the whole row (OLMo 2),
    # Gemma's own scale (query_pre_attn_scalar) and Gemma 2's soft cap, sliding and full layers.
    ("qwen3_L11_H4_kv2_d32_hd8_layer1", "qwen3", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8), 1, 11, 0),
    ("olmo2_L13_H4_kv2_d32_layer1", "olmo2", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2), 1, 13, 0),
    ("gemma2_L12_H4_kv2_d32_hd8_softcap2_window4", "gemma2", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8, attn_logit_softcapping=2.0, sliding_window=4), 0, 12, 0),
    ("gemma2_L9_H4_kv2_d32_hd8_layer1", "gemma2", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8), 1, 9, 0),
    ("gemma3_L14_H4_kv2_d32_hd8_layer1", "gemma3", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8, sliding_window=5, layer_types=["sliding_attention", "full_attention"]), 1, 14, 0),
    # gpt-oss: a learned sink per head (rows sum to less than 1), YaRN rope, biases, a sliding
    # and a full layer.
    ("gpt_oss_L11_H4_kv2_d32_hd8_window4_sinks", "gpt_oss", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8, sliding_window=4, num_local_experts=2, num_experts_per_tok=1), 0, 11, 0),
    ("gpt_oss_L16_H4_kv2_d32_hd8_layer1_sinks", "gpt_oss", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8, num_local_experts=2, num_experts_per_tok=1), 1, 16, 0),
    # Qwen3-Next's full-attention layer: gated attention (q_proj holds the query and the output
    # gate head by head), q/k norms with 1 + weight, partial rotary (a quarter of each head).
    ("qwen3_next_L10_H4_kv2_d32_hd8_layer1_gated", "qwen3_next", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8, layer_types=["linear_attention", "full_attention"], num_experts=2, num_experts_per_tok=1, moe_intermediate_size=16, shared_expert_intermediate_size=16, linear_num_value_heads=2, linear_num_key_heads=2, linear_key_head_dim=8, linear_value_head_dim=8), 1, 10, 0),
    ("gemma3_L10_H4_kv2_d32_hd8_window5", "gemma3", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8, sliding_window=5, layer_types=["sliding_attention", "full_attention"]), 0, 10, 0),
]

# Families whose positions are in the vectors entering a layer (no rotary tables):
# (name, family, config fields, layer captured, tokens; for ViT the image side in pixels)
ABSOLUTE_CASES = [
    ("bert_L12_H4_d32_layer1", "bert", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4), 1, 12),
    ("roberta_L9_H4_d32", "roberta", dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=4), 0, 9),
    ("distilbert_L10_H4_d32_layer1", "distilbert", dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64), 1, 10),
    ("gpt2_L14_H4_d32_layer1", "gpt2", dict(n_embd=32, n_layer=2, n_head=4), 1, 14),
    ("gpt2_L33_H2_d16", "gpt2", dict(n_embd=16, n_layer=1, n_head=2), 0, 33),
    ("vit_L17_H4_d32_patch8_layer1", "vit", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, image_size=32, patch_size=8), 1, 32),
]

# Encoder-decoders: (name, family, config fields, layer, encoder tokens, decoder tokens or None
# for the encoder's self-attention[, "cross" for the decoder's cross-attention])
ENCODER_DECODER_CASES = [
    ("t5_L9_H4_d32_kv8_layer1_encoder", "t5", dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4), 1, 9, None),
    ("t5_L7_H4_d32_kv8_decoder_self", "t5", dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4), 0, 9, 7),
    ("t5_L20_H2_d32_kv16_layer1_decoder_self", "t5", dict(d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, relative_attention_num_buckets=8, relative_attention_max_distance=12), 1, 5, 20),
    ("bart_L10_H4_d32_layer1_encoder", "bart", dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64), 1, 10, None),
    ("bart_L8_H4_d32_decoder_self", "bart", dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64), 0, 6, 8),
    # Cross-attention (DESIGN.md §7.10): queries from the decoder's tokens, keys and values from
    # the encoder's output; maps of decoder tokens × encoder tokens.
    ("t5_L7x11_H4_d32_kv8_layer1_cross", "t5", dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4), 1, 11, 7, "cross"),
    ("bart_L5x12_H4_d32_cross", "bart", dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64), 0, 12, 5, "cross"),
]

# (name, module, constructor arguments, tokens, rotary_dim or None for head_dim)
OFFICIAL_CASES = [
    ("official_v1_L1_H1_d16", "v1", dict(embed_dim=16, depth=0, num_heads=1, num_kv_heads=None), 1, None),
    ("official_v1_L9_H2_d32_depth0", "v1", dict(embed_dim=32, depth=0, num_heads=2, num_kv_heads=None), 9, None),
    ("official_v1_L20_H4_kv2_d64_depth5_rotary6", "v1", dict(embed_dim=64, depth=5, num_heads=4, num_kv_heads=2), 20, 6),
    ("official_v1_L48_H4_kv1_d64_depth2", "v1", dict(embed_dim=64, depth=2, num_heads=4, num_kv_heads=1), 48, None),
    ("official_v2_L11_H2_kv1_hd8_d32", "v2", dict(use_diff_v2=True, d_model=32, num_heads=2, num_kv_heads=1, head_dim=8), 11, None),
    ("official_v2_L24_H4_kv4_hd16_d48", "v2", dict(use_diff_v2=True, d_model=48, num_heads=4, num_kv_heads=4, head_dim=16), 24, None),
    ("official_v2_L33_H4_kv2_hd8_d32_rotary4", "v2", dict(use_diff_v2=True, d_model=32, num_heads=4, num_kv_heads=2, head_dim=8), 33, 4),
    ("official_v2_baseline_L6_H2_kv1_hd8_d16", "v2", dict(use_diff_v2=False, d_model=16, num_heads=2, num_kv_heads=1, head_dim=8), 6, None),
]

VOCAB = 97


def relative_errors(spec, golden):
    """max |reference - golden| / max |golden| for each golden array (the test's measure)."""
    got = stages(spec)
    errors = {}
    for name, want in golden.items():
        if name == "output":
            have = got["output"]
        elif name == "lambda":
            have = got["lambda"]
        else:
            have = np.stack([h[name] for h in got["heads"]])
        errors[name] = float(np.max(np.abs(have - want)) / max(np.max(np.abs(want)), 1e-30))
    return errors


def write_case(out, name, spec, golden, info):
    diffattn.save(spec, out / f"{name}.spec.safetensors")
    tensors = {k: np.asarray(v, dtype="<f4") for k, v in golden.items()}
    write_safetensors(out / f"{name}.golden.safetensors", tensors, {"format": "diffattn.golden", "source": info["source"]})
    info["errors"] = relative_errors(diffattn.load(out / f"{name}.spec.safetensors"), {k: v.astype(np.float64) for k, v in tensors.items()})
    worst = max(info["errors"].values())
    print(f"  {name}: max relative error {worst:.2e} ({', '.join(f'{k} {v:.1e}' for k, v in info['errors'].items())})")
    return info


def sharpen(module, std):
    """Random projections wide enough that the softmax maps are far from uniform."""
    import torch

    with torch.no_grad():
        for p in module.parameters():
            if p.dim() == 2:
                p.normal_(0.0, std)


def transformers_cases(out):
    import torch
    import transformers

    families = {
        "diffllama": (transformers.DiffLlamaConfig, transformers.DiffLlamaForCausalLM),
        "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
        "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
        "mistral": (transformers.MistralConfig, transformers.MistralForCausalLM),
        "qwen3": (transformers.Qwen3Config, transformers.Qwen3ForCausalLM),
        "olmo2": (transformers.Olmo2Config, transformers.Olmo2ForCausalLM),
        "gemma2": (transformers.Gemma2Config, transformers.Gemma2ForCausalLM),
        "gemma3": (transformers.Gemma3TextConfig, transformers.Gemma3ForCausalLM),
        "gpt_oss": (transformers.GptOssConfig, transformers.GptOssForCausalLM),
        "qwen3_next": (transformers.Qwen3NextConfig, transformers.Qwen3NextForCausalLM),
    }
    source = f"transformers {transformers.__version__}, torch {torch.__version__}, eager attention, float32, random weights"
    manifest = {}
    for seed, (name, family, fields, layer, n, offset) in enumerate(TRANSFORMERS_CASES):
        torch.manual_seed(1000 + seed)
        config_cls, model_cls = families[family]
        extra = {"lambda_std_dev": 0.3} if family == "diffllama" else {}
        config = config_cls(vocab_size=VOCAB, intermediate_size=2 * fields["hidden_size"], max_position_embeddings=256, attn_implementation="eager", **extra, **fields)
        model = model_cls(config).eval()
        sharpen(model.model.layers[layer].self_attn, 0.25)
        attn = model.model.layers[layer].self_attn
        with torch.no_grad():
            # Norm weights away from their initial ones (ones; Gemma's zeros, for 1 + w).
            for norm in (getattr(attn, "q_norm", None), getattr(attn, "k_norm", None)):
                if norm is not None:
                    norm.weight.normal_(0.0, 0.5)
            if getattr(attn, "sinks", None) is not None:
                attn.sinks.normal_(0.0, 1.0)
        seen = {}
        handle = attn.register_forward_hook(lambda m, a, o: seen.update(output=o[0], weights=o[1]))
        ids = torch.randint(0, VOCAB, (1, n))
        positions = torch.arange(offset, offset + n).reshape(1, n)
        try:
            spec = diffattn.capture(model, ids, layer=layer, name=f"random {model_cls.__name__}", position_ids=positions, tokens=[f"t{i}" for i in ids[0].tolist()])
        finally:
            handle.remove()
        weights = seen["weights"][0].detach().double().numpy()
        golden = {"output": seen["output"][0].detach().double().numpy()}
        if family == "diffllama":
            # modeling_diffllama.py: torch.chunk(attn_output, 2, dim=2) subtracts head h + H/2 from head h.
            half = weights.shape[0] // 2
            golden.update(a1=weights[:half], a2=weights[half:])
        else:
            golden["a"] = weights
        info = {"source": f"{model_cls.__name__} ({source})", "config": fields, "layer": layer, "tokens": n, "first_position": offset}
        manifest[name] = write_case(out, name, spec, golden, info)
    return manifest


def absolute_cases(out):
    """BERT, RoBERTa, DistilBERT, GPT-2 and ViT: random weights, eager attention; the maps from
    the model's own `attentions`, the output from its output projection in the same pass."""
    import torch
    import transformers

    families = {
        "bert": (transformers.BertConfig, transformers.BertModel, lambda m, i: m.encoder.layer[i].attention.output.dense),
        "roberta": (transformers.RobertaConfig, transformers.RobertaModel, lambda m, i: m.encoder.layer[i].attention.output.dense),
        "distilbert": (transformers.DistilBertConfig, transformers.DistilBertModel, lambda m, i: m.transformer.layer[i].attention.out_lin),
        "gpt2": (transformers.GPT2Config, transformers.GPT2Model, lambda m, i: m.h[i].attn.c_proj),
        "vit": (transformers.ViTConfig, transformers.ViTModel, lambda m, i: m.layers[i].attention.o_proj),
    }
    source = f"transformers {transformers.__version__}, torch {torch.__version__}, eager attention, float32, random weights"
    manifest = {}
    for seed, (name, family, fields, layer, n) in enumerate(ABSOLUTE_CASES):
        torch.manual_seed(2000 + seed)
        config_cls, model_cls, out_proj = families[family]
        extra = {} if family in ("gpt2", "distilbert", "vit") else {"intermediate_size": 2 * fields["hidden_size"]}
        vocab = {} if family == "vit" else {"vocab_size": VOCAB}
        config = config_cls(attn_implementation="eager", **vocab, **extra, **fields)
        model = model_cls(config).eval()
        sharpen(model, 0.25)
        seen = {}
        handle = out_proj(model, layer).register_forward_hook(lambda m, a, o: seen.update(output=o))
        try:
            if family == "vit":
                pixels = torch.randn(1, 3, n, n)
                spec = diffattn.capture(model, None, layer=layer, name=f"random {model_cls.__name__}", pixel_values=pixels)
                with torch.no_grad():
                    result = model(pixel_values=pixels, output_attentions=True)
            else:
                ids = torch.randint(0, VOCAB, (1, n))
                spec = diffattn.capture(model, ids, layer=layer, name=f"random {model_cls.__name__}", tokens=[f"t{i}" for i in ids[0].tolist()])
                with torch.no_grad():
                    result = model(input_ids=ids, output_attentions=True)
        finally:
            handle.remove()
        # capture ran the model once; the second pass (for the maps) must give the same output.
        golden = {"a": result.attentions[layer][0].detach().double().numpy(), "output": seen["output"][0].detach().double().numpy()}
        info = {"source": f"{model_cls.__name__} ({source})", "config": fields, "layer": layer, "tokens": len(spec["x"])}
        manifest[name] = write_case(out, name, spec, golden, info)
    return manifest


def encoder_decoder_cases(out):
    """T5 and BART: the encoder's or the decoder's self-attention of layer N, random weights,
    eager attention; the maps are what the attention module returned, in the same pass."""
    import torch
    import transformers

    families = {
        "t5": (transformers.T5Config, transformers.T5Model, lambda stack, i, cross: stack.block[i].layer[1].EncDecAttention if cross else stack.block[i].layer[0].SelfAttention),
        "bart": (transformers.BartConfig, transformers.BartModel, lambda stack, i, cross: stack.layers[i].encoder_attn if cross else stack.layers[i].self_attn),
    }
    source = f"transformers {transformers.__version__}, torch {torch.__version__}, eager attention, float32, random weights"
    manifest = {}
    for seed, (name, family, fields, layer, n, m, *part) in enumerate(ENCODER_DECODER_CASES):
        torch.manual_seed(3000 + seed)
        cross = part == ["cross"]
        config_cls, model_cls, attention = families[family]
        model = model_cls(config_cls(vocab_size=VOCAB, attn_implementation="eager", **fields)).eval()
        sharpen(model, 0.25)
        attn = attention(model.get_decoder() if m else model.get_encoder(), layer, cross)
        seen = {}
        handle = attn.register_forward_hook(lambda mod, a, o: seen.update(output=o[0], weights=o[-1]))
        ids = torch.randint(0, VOCAB, (1, n))
        decoder = torch.randint(0, VOCAB, (1, m)) if m else None
        own = decoder if m else ids
        try:
            labels = {"key_tokens": [f"e{i}" for i in ids[0].tolist()], "attention": "cross"} if cross else {}
            spec = diffattn.capture(model, ids, layer=layer, decoder_input_ids=decoder, name=f"random {model_cls.__name__}", tokens=[f"t{i}" for i in own[0].tolist()], **labels)
        finally:
            handle.remove()
        golden = {"a": seen["weights"][0].detach().double().numpy(), "output": seen["output"][0].detach().double().numpy()}
        part = "decoder cross-attention" if cross else "decoder self-attention" if m else "encoder self-attention"
        info = {"source": f"{model_cls.__name__} ({source})", "config": fields, "layer": layer, "tokens": int(own.shape[1]), "part": part}
        if cross:
            info["keys"] = int(ids.shape[1])
        manifest[name] = write_case(out, name, spec, golden, info)
    return manifest


def load_official(unilm):
    """Imports the official modules from a checkout, unpatched, set up to run on the CPU."""
    import torch

    root = Path(unilm) / "Diff-Transformer"
    for path in (root / "multihead_diffattn.py", root / "kernel" / "rotary.py", root / "Diff-Transformer-V2" / "multihead_flashdiffv2.py"):
        if not path.exists():
            sys.exit(f"golden: {path} not found; --unilm takes a checkout of microsoft/unilm")
    # Triton's interpreter runs the rotary kernel on CPU tensors; the kernel enters
    # torch.cuda.device(x.device.index) first, which has no meaning without a GPU.
    torch.cuda.device = lambda index: contextlib.nullcontext()
    recorded = []

    def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, **rest):
        """Naive stand-in for flash_attn_func (GPU only): (batch, L, heads, d), GQA by groups."""
        if dropout_p or any(v not in (None, False, (-1, -1)) for v in rest.values()):
            raise NotImplementedError(f"flash_attn_func stand-in: {rest}")
        scale = softmax_scale if softmax_scale is not None else q.shape[-1] ** -0.5
        group = q.shape[2] // k.shape[2]
        k, v = (t.repeat_interleave(group, dim=2).transpose(1, 2) for t in (k, v))
        scores = q.transpose(1, 2) @ k.transpose(-1, -2) * scale
        if causal:
            n = scores.shape[-1]
            scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
        probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        recorded.append(probs.detach())
        return (probs @ v).transpose(1, 2)

    flash_attn = types.ModuleType("flash_attn")
    flash_attn.flash_attn_func = flash_attn_func
    sys.modules["flash_attn"] = flash_attn
    sys.path.insert(0, str(root))
    sys.path.insert(0, str(root / "Diff-Transformer-V2"))
    import multihead_diffattn
    import multihead_flashdiffv2

    return multihead_diffattn.MultiheadDiffAttn, multihead_flashdiffv2.MultiheadFlashDiffV2, recorded


class SoftmaxRecorder:
    """Records every torch.nn.functional.softmax result while active (V1's two maps)."""

    def __enter__(self):
        import torch
        from torch.overrides import TorchFunctionMode

        recorder = self
        self.results = []

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                result = func(*args, **(kwargs or {}))
                if func is torch.nn.functional.softmax:
                    recorder.results.append(result.detach())
                return result

        self.mode = Mode()
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        self.mode.__exit__(*exc)


def official_cases(out, unilm):
    import torch

    v1_cls, v2_cls, flash_recorded = load_official(unilm)
    commit = _checkout_commit(unilm)
    manifest = {}
    theta = 10000.0
    for seed, (name, kind, kwargs, n, rotary_dim) in enumerate(OFFICIAL_CASES):
        torch.manual_seed(2000 + seed)
        module = (v1_cls if kind == "v1" else v2_cls)(**kwargs).eval()
        sharpen(module, 0.3 if kind == "v1" else 0.25)
        if kind == "v1":
            with torch.no_grad():
                for p in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
                    getattr(module, p).normal_(0.0, 0.3)
                module.subln.weight.uniform_(0.5, 1.5)
        x = torch.randn(1, n, kwargs.get("embed_dim", kwargs.get("d_model")))
        dim = rotary_dim or module.head_dim
        # The caller's rotary tables, as flash-attn's RotaryEmbedding builds them.
        inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        angles = torch.arange(n, dtype=torch.float32)[:, None] * inv_freq[None, :]
        rel_pos = (angles.cos(), angles.sin())
        spec = diffattn.capture_module(module, x, theta=theta, rotary_dim=dim, layer=kwargs.get("depth"), name=f"random official {type(module).__name__}")
        seen = {}
        hook = None
        if kind == "v2" and module.use_diff_v2:
            hook = module.lambda_proj.register_forward_hook(lambda m, a, o: seen.update(lam=torch.sigmoid(o)))
        flash_recorded.clear()
        with torch.no_grad(), SoftmaxRecorder() as softmaxes:
            output = module(x, rel_pos)
        if hook is not None:
            hook.remove()
        golden = {"output": output[0].double().numpy()}
        maps = (softmaxes.results if kind == "v1" else flash_recorded)
        if len(maps) != 1:
            sys.exit(f"golden: {name}: expected one attention call, saw {len(maps)}")
        probs = maps[0][0].double().numpy()  # (query heads, L, L)
        if kind == "v2" and not module.use_diff_v2:
            golden["a"] = probs
        else:
            # Both official versions subtract query head 2h+1 from query head 2h.
            golden.update(a1=probs[0::2], a2=probs[1::2])
        if "lam" in seen:
            golden["lambda"] = seen["lam"][0].double().numpy()
        info = {"source": f"microsoft/unilm {commit} {type(module).__name__} (torch {torch.__version__}, CPU; see tests/golden/make.py)", "arguments": kwargs, "tokens": n, "rotary_dim": dim}
        manifest[name] = write_case(out, name, spec, golden, info)
    return manifest


def _checkout_commit(path):
    head = Path(path) / "COMMIT"
    if head.exists():
        return head.read_text().strip()
    with contextlib.suppress(Exception):
        import subprocess

        return subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    return "(unknown commit)"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--unilm", help="a checkout of microsoft/unilm: also remake the official-code goldens")
    parser.add_argument("--out", default=str(HERE), help="where to write (default: tests/golden)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    print("golden: transformers")
    manifest.update(transformers_cases(out))
    manifest.update(absolute_cases(out))
    manifest.update(encoder_decoder_cases(out))
    if args.unilm:
        if os.environ.get("TRITON_INTERPRET") != "1":
            sys.exit("golden: the official code needs TRITON_INTERPRET=1 (scripts/golden-transformers sets it)")
        print(f"golden: official code in {args.unilm}")
        manifest.update(official_cases(out, args.unilm))
    manifest_path.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")
    print(f"golden: wrote {len(manifest)} cases to {out}")


if __name__ == "__main__":
    main()
