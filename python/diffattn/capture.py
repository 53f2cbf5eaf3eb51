"""Capturing one attention layer of a real model as a stages spec (docs/MODELS.md).

`capture(model, input_ids, layer=N)` runs a Hugging Face transformers model once (DiffLlama,
Llama, Mistral, Qwen2) and records, through a forward pre-hook on layer N's attention module,
the vectors entering it (after the input RMSNorm), the positions and the rotary tables the
model passed it; then it reads the layer's weights. `capture_module(module, x)` does the same
for the official Differential Transformer modules of microsoft/unilm (V1 `MultiheadDiffAttn`,
V2 `MultiheadFlashDiffV2`), which take their input and rotary tables from the caller.

torch and transformers are imported when these functions run, never at package import.
Arrays in the returned spec are float32 numpy arrays; `diffattn.save` writes them.
"""

import math

import numpy as np

from .reference import validate

STANDARD_MODEL_TYPES = ("llama", "mistral", "qwen2")
DIFF_MODEL_TYPES = ("diffllama",)


def _lambda_init(depth):
    """λ_init of both implementations: 0.8 - 0.6·exp(-0.3·depth), depth the 0-based layer index."""
    return 0.8 - 0.6 * math.exp(-0.3 * depth)


def _np(tensor):
    return None if tensor is None else tensor.detach().to("cpu").float().numpy()


def _projections(q, k, v, o):
    """The w_* and (present) b_* fields of four nn.Linear modules."""
    spec = {}
    for name, lin in zip("qkvo", (q, k, v, o)):
        spec["w_" + name] = _np(lin.weight)
        if lin.bias is not None:
            spec["b_" + name] = _np(lin.bias)
    return spec


def _decoder_parts(model):
    """The list of decoder layers and the rotary embedding module of a transformers model."""
    obj = model
    for _ in range(4):
        if obj is None:
            break
        if hasattr(obj, "layers") and hasattr(obj, "rotary_emb"):
            return obj.layers, obj.rotary_emb
        obj = getattr(obj, "model", None)
    raise TypeError(f"{type(model).__name__}: no decoder layers with a rotary embedding found")


def _token_labels(ids, tokens, tokenizer):
    if tokens is not None:
        tokens = [str(t) for t in tokens]
        if len(tokens) != len(ids):
            raise ValueError(f"tokens: {len(tokens)} labels for {len(ids)} input ids")
        return tokens
    if tokenizer is not None:
        return [tokenizer.decode([i]) for i in ids]
    return None


def _rope_fields(rotary_emb, config, cos, sin, positions):
    """The spec's `rope` for transformers' rotate-half layout, checked against the model's own
    cos/sin tables (so a rope variant this format cannot express is an error, not a wrong map)."""
    inv_freq = rotary_emb.inv_freq.detach().double().cpu().numpy()
    rotary_dim = 2 * inv_freq.shape[0]
    scaling = float(getattr(rotary_emb, "attention_scaling", 1.0))
    rope = {"layout": "half", "rotary_dim": rotary_dim}
    params = getattr(config, "rope_parameters", None) or {}
    theta = params.get("rope_theta", getattr(config, "rope_theta", None))
    default = None if theta is None else theta ** (-np.arange(0, rotary_dim, 2) / rotary_dim)
    if default is not None and np.allclose(inv_freq, default, rtol=1e-6, atol=0):
        rope["theta"] = float(theta)
    else:
        rope["inv_freq"] = inv_freq.astype(np.float32)
    if scaling != 1.0:
        rope["attention_scaling"] = scaling
    rope["positions"] = [int(p) for p in positions]
    # The model's tables: cat(freqs, freqs) for the rotate-half layout.
    angles = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
    want_cos = np.concatenate([np.cos(angles)] * 2, axis=1) * scaling
    want_sin = np.concatenate([np.sin(angles)] * 2, axis=1) * scaling
    tolerance = 1e-6 * (1 + max(positions)) + 1e-5
    got_cos, got_sin = _np(cos).reshape(-1, rotary_dim), _np(sin).reshape(-1, rotary_dim)
    if not (np.allclose(got_cos, want_cos, atol=tolerance) and np.allclose(got_sin, want_sin, atol=tolerance)):
        raise ValueError("rope: the model's cos/sin tables are not cos/sin(position · inv_freq); this rope type is not supported")
    return rope


def _check_mask(mask, tokens, window):
    """The captured additive mask must be the plain causal mask (with an optional sliding window)."""
    if mask is None:
        return
    allowed = _np(mask).reshape(-1, tokens, tokens)
    if allowed.shape[0] != 1:
        raise ValueError("attention_mask: capture takes one sequence")
    allowed = allowed[0] > np.finfo(np.float32).min / 2
    i, j = np.arange(tokens)[:, None], np.arange(tokens)[None, :]
    want = j <= i
    if window is not None:
        want &= i - j <= window
    if not np.array_equal(allowed, want):
        raise ValueError("attention_mask: capture supports one unpadded sequence with the model's causal mask")


def capture(model, input_ids, layer, tokens=None, tokenizer=None, name=None, position_ids=None):
    """Runs `model` once on `input_ids` and returns layer `layer`'s attention as a stages spec.

    `input_ids`: a list of ints or a (1, L) / (L,) tensor. `tokens`: axis labels; by default the
    tokenizer's string for each id when `tokenizer` is given. `name` goes to the spec's `model`
    field (default: the config's name or the model's class). `position_ids`: positions to run
    with (default 0 .. L-1). Supports DiffLlama, Llama, Mistral and Qwen2 models.
    """
    import torch

    config = model.config
    model_type = getattr(config, "model_type", None)
    if model_type not in STANDARD_MODEL_TYPES + DIFF_MODEL_TYPES:
        raise TypeError(f"model_type {model_type!r}: capture supports {', '.join(STANDARD_MODEL_TYPES + DIFF_MODEL_TYPES)}")
    layers, rotary_emb = _decoder_parts(model)
    if not isinstance(layer, int) or not 0 <= layer < len(layers):
        raise ValueError(f"layer: expected 0 to {len(layers) - 1}, found {layer!r}")
    attn = layers[layer].self_attn
    ids = torch.as_tensor(input_ids, dtype=torch.long)
    ids = ids.reshape(1, -1) if ids.dim() == 1 else ids
    if ids.shape[0] != 1:
        raise ValueError(f"input_ids: capture takes one sequence, found a batch of {ids.shape[0]}")
    n = ids.shape[1]
    if position_ids is not None:
        position_ids = torch.as_tensor(position_ids, dtype=torch.long).reshape(1, n)

    seen = {}

    def pre_hook(module, args, kwargs):
        seen["x"] = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
        seen["rope"] = kwargs.get("position_embeddings")
        seen["mask"] = kwargs.get("attention_mask")
        seen["positions"] = kwargs.get("position_ids")

    handle = attn.register_forward_pre_hook(pre_hook, with_kwargs=True)
    try:
        with torch.no_grad():
            model(input_ids=ids, position_ids=position_ids)
    finally:
        handle.remove()
    if "x" not in seen:
        raise RuntimeError(f"layer {layer}'s attention did not run")

    positions = seen["positions"] if seen["positions"] is not None else position_ids
    positions = list(range(n)) if positions is None else [int(p) for p in positions.reshape(-1).tolist()]
    if getattr(attn, "scaling", None) is not None and not math.isclose(attn.scaling, attn.head_dim**-0.5, rel_tol=1e-9):
        raise TypeError(f"scaling {attn.scaling}: the format scales scores by 1/sqrt(head_dim)")
    heads = config.num_attention_heads
    kv_heads = config.num_key_value_heads or heads
    cos, sin = seen["rope"]
    spec = {
        "model": name or getattr(config, "name_or_path", "") or type(model).__name__,
        "layer": layer,
        "heads": heads,
        "causal": True,
        "head_dim": int(attn.head_dim),
        "kv_heads": kv_heads,
    }
    window = None
    if model_type in DIFF_MODEL_TYPES:
        spec.update(_diffllama_fields(attn, heads, kv_heads))
    else:
        spec["mechanism"] = "standard"
        sliding = config.sliding_window if model_type == "mistral" else getattr(attn, "sliding_window", None)
        if sliding is not None:
            # transformers allows key j for query i when j > i - sliding_window: radius sliding_window - 1.
            window = int(sliding) - 1
            spec.update(mechanism="local", window=window)
    _check_mask(seen["mask"], n, window)
    labels = _token_labels(ids[0].tolist(), tokens, tokenizer)
    if labels is not None:
        spec["tokens"] = labels
    spec["x"] = _np(seen["x"]).reshape(n, -1)
    spec.update(_projections(attn.q_proj, attn.k_proj, attn.v_proj, attn.o_proj))
    spec["rope"] = _rope_fields(rotary_emb, config, cos, sin, positions)
    return validate(_ordered(spec))


def _diffllama_fields(attn, heads, kv_heads):
    """DiffLlama: query heads h and h + H/2 form diff head h (DESIGN.md §7.4, pairing "halves")."""
    fields = {
        "mechanism": "diff_transformer",
        "heads": heads // 2,
        "kv_heads": kv_heads // 2,
        "pairing": "halves",
    }
    fields.update(_lambda_fields(attn, attn.layer_idx))
    norm = attn.groupnorm
    if norm.weight is not None:
        fields["subln"] = _np(norm.weight)
    fields["subln_eps"] = float(norm.eps) if norm.eps is not None else float(np.finfo(np.float32).eps)
    return fields


def _lambda_fields(attn, depth):
    """λ's four vectors and λ_init: `depth` when the layer index gives it, else `lambda_init`."""
    fields = {p: _np(getattr(attn, p)) for p in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")}
    if depth is not None and math.isclose(_lambda_init(depth), attn.lambda_init, rel_tol=1e-12):
        fields["depth"] = int(depth)
    else:
        fields["lambda_init"] = float(attn.lambda_init)
    return fields


def capture_module(module, x, theta=10000.0, rotary_dim=None, positions=None, tokens=None, layer=None, name=None):
    """The stages spec of an official Differential Transformer module on input `x` (1, L, d).

    The official modules take `rel_pos = (cos, sin)` from the caller: `theta`, `rotary_dim`
    (default: head_dim) and `positions` (default 0 .. L-1) describe the tables you pass, built as
    cos/sin(position · theta^(-2k / rotary_dim)), interleaved layout. Supports V1
    `MultiheadDiffAttn` and V2 `MultiheadFlashDiffV2` (with or without `use_diff_v2`).
    """
    kind = type(module).__name__
    x = _np(x) if hasattr(x, "detach") else np.asarray(x, dtype=np.float32)
    if x.ndim == 3:
        if x.shape[0] != 1:
            raise ValueError(f"x: capture_module takes one sequence, found a batch of {x.shape[0]}")
        x = x[0]
    n = x.shape[0]
    spec = {"model": name or kind}
    if layer is not None:
        spec["layer"] = int(layer)
    if kind == "MultiheadDiffAttn":
        spec.update(mechanism="diff_transformer", heads=module.num_heads, kv_heads=module.num_kv_heads, pairing="adjacent")
        spec.update(_lambda_fields(module, layer))
        spec["subln"] = _np(module.subln.weight) if module.subln.weight is not None else None
        spec["subln_eps"] = float(module.subln.eps)
        out_proj = module.out_proj
    elif kind == "MultiheadFlashDiffV2":
        mechanism = "diff_transformer_v2" if module.use_diff_v2 else "standard"
        spec.update(mechanism=mechanism, heads=module.num_heads, kv_heads=module.num_kv_heads)
        if module.use_diff_v2:
            spec["w_lambda"] = _np(module.lambda_proj.weight)
        out_proj = module.o_proj
    else:
        raise TypeError(f"{kind}: capture_module supports MultiheadDiffAttn and MultiheadFlashDiffV2")
    spec.update(causal=True, head_dim=int(module.head_dim))
    if spec.get("subln") is None:
        spec.pop("subln", None)
    labels = _token_labels(list(range(n)), tokens, None)
    if labels is not None:
        spec["tokens"] = labels
    spec["x"] = x
    spec.update(_projections(module.q_proj, module.k_proj, module.v_proj, out_proj))
    rope = {"layout": "interleaved", "theta": float(theta), "rotary_dim": int(rotary_dim or module.head_dim)}
    rope["positions"] = list(range(n)) if positions is None else [int(p) for p in positions]
    spec["rope"] = rope
    return validate(_ordered(spec))


# The order fields are written in: metadata and shapes first, arrays last.
_ORDER = ("mechanism", "model", "layer", "tokens", "heads", "kv_heads", "head_dim", "causal")


def _ordered(spec):
    first = {k: spec[k] for k in _ORDER if k in spec}
    return {**first, **{k: v for k, v in spec.items() if k not in first}}
