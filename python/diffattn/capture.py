"""Capturing one attention layer of a real model as a stages spec (docs/MODELS.md).

`capture(model, input_ids, layer=N)` runs a Hugging Face transformers model once and records,
through a forward pre-hook on layer N's attention module, the vectors entering it (after the
layer's norm where the model normalises first), the mask and, for rotary decoders, the
positions and rotary tables the model passed it; then it reads the layer's weights. Rotary
decoders: DiffLlama, Llama, Mistral, Qwen2, and with query and key norms, their own score
scale, a soft cap or learned sinks (DESIGN.md §7.9) Qwen3, OLMo 2, Gemma 2, Gemma 3 (its text
model) and gpt-oss; Qwen3-Next's full-attention layers as gated attention (its output gate). Encoders with absolute positions (already in the
vectors entering the layer) and biases: BERT, RoBERTa, DistilBERT (and so all-MiniLM-L6-v2, a
BERT). GPT-2 (its fused `c_attn` and `c_proj` are `Conv1D`s, weights stored `[in, out]`;
causal). ViT (`pixel_values=` instead of input ids; its tokens are `[CLS]` and the patches,
labelled by their row and column). T5 and BART: the encoder's or the decoder's self-attention
(T5's unscaled scores and relative position bias, DESIGN.md §7.9), and the decoder's
cross-attention (keys and values from the encoder's output, §7.10). `capture_module(module, x)` does the same
for the official Differential Transformer modules of microsoft/unilm (V1 `MultiheadDiffAttn`,
V2 `MultiheadFlashDiffV2`), which take their input and rotary tables from the caller.

torch and transformers are imported when these functions run, never at package import.
Arrays in the returned spec are float32 numpy arrays; `diffattn.save` writes them.
"""

import math

import numpy as np

from .reference import validate

STANDARD_MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "olmo2", "gemma2", "gemma3_text", "gpt_oss", "qwen3_next")
DIFF_MODEL_TYPES = ("diffllama",)
# Families without rotary positions, by the module path of layer N's attention (transformers 5).
ABSOLUTE_MODEL_TYPES = {
    "bert": r"encoder\.layer\.(\d+)\.attention",
    "roberta": r"encoder\.layer\.(\d+)\.attention",
    "distilbert": r"transformer\.layer\.(\d+)\.attention",
    "gpt2": r"h\.(\d+)\.attn",
    "vit": r"layers\.(\d+)\.attention",
}
# Encoder-decoders: the encoder's or the decoder's self-attention of layer N.
ENCODER_DECODER_MODEL_TYPES = ("t5", "bart")
MODEL_TYPES = STANDARD_MODEL_TYPES + DIFF_MODEL_TYPES + tuple(ABSOLUTE_MODEL_TYPES) + ENCODER_DECODER_MODEL_TYPES


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


def _rope_fields(rotary_emb, config, cos, sin, positions, layer_type=None):
    """The spec's `rope` for transformers' rotate-half layout, checked against the model's own
    cos/sin tables (so a rope variant this format cannot express is an error, not a wrong map).
    `layer_type`: the layer's kind where the model rotates each kind with its own frequencies
    (Gemma 3's sliding and full layers)."""
    prefix = f"{layer_type}_" if layer_type is not None and hasattr(rotary_emb, f"{layer_type}_inv_freq") else ""
    inv_freq = getattr(rotary_emb, prefix + "inv_freq").detach().double().cpu().numpy()
    rotary_dim = 2 * inv_freq.shape[0]
    scaling = float(getattr(rotary_emb, prefix + "attention_scaling", 1.0))
    rope = {"layout": "half", "rotary_dim": rotary_dim}
    params = getattr(config, "rope_parameters", None) or {}
    if prefix and isinstance(params.get(layer_type), dict):
        params = params[layer_type]
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
    got_cos, got_sin = _np(cos), _np(sin)
    if got_cos.shape[-1] == rotary_dim // 2:
        # gpt-oss passes one angle per pair (its rotation pairs the halves the same way).
        got_cos, got_sin = np.concatenate([got_cos] * 2, axis=-1), np.concatenate([got_sin] * 2, axis=-1)
    got_cos, got_sin = got_cos.reshape(-1, rotary_dim), got_sin.reshape(-1, rotary_dim)
    if not (np.allclose(got_cos, want_cos, atol=tolerance) and np.allclose(got_sin, want_sin, atol=tolerance)):
        raise ValueError("rope: the model's cos/sin tables are not cos/sin(position · inv_freq); this rope type is not supported")
    return rope


def _check_mask(mask, tokens, window, causal=True):
    """The captured additive mask must be the plain causal mask (with an optional sliding
    window), or for an encoder allow every key (or be absent)."""
    if mask is None:
        return
    boolean = str(getattr(mask, "dtype", "")) == "torch.bool"
    allowed = mask.detach().cpu().numpy() if boolean else _np(mask)
    if allowed.ndim <= 2 and allowed.size == tokens:  # a padding mask (1, L) over the keys: 1 keeps a key
        allowed = np.broadcast_to(allowed.reshape(1, tokens) > 0.5, (tokens, tokens))[None]
    else:
        allowed = allowed.reshape(-1, tokens, tokens)
        if allowed.shape[0] != 1:
            raise ValueError("attention_mask: capture takes one sequence")
        # A boolean mask keeps a key where it is true; an additive one where it is not -inf.
        allowed = allowed if boolean else allowed > np.finfo(np.float32).min / 2
    allowed = allowed[0]
    i, j = np.arange(tokens)[:, None], np.arange(tokens)[None, :]
    want = j <= i if causal else np.ones((tokens, tokens), dtype=bool)
    if window is not None:
        want &= i - j <= window
    if not np.array_equal(allowed, want):
        what = "the model's causal mask" if causal else "every key allowed"
        raise ValueError(f"attention_mask: capture supports one unpadded sequence with {what}")


def _observe(attn, layer, run):
    """Runs `run()` once (without gradients) with hooks on the attention module `attn`: what it
    was called with (`x`, the vectors entering it; `args`, `kwargs`) and what it returned
    (`output`). An error if it did not run."""
    import torch

    seen = {}

    def pre_hook(module, args, kwargs):
        seen.update(x=kwargs["hidden_states"] if "hidden_states" in kwargs else args[0], args=args, kwargs=kwargs)

    def hook(module, args, output):
        seen["output"] = output

    handles = [attn.register_forward_pre_hook(pre_hook, with_kwargs=True), attn.register_forward_hook(hook)]
    try:
        with torch.no_grad():
            run()
    finally:
        for h in handles:
            h.remove()
    if "x" not in seen:
        raise RuntimeError(f"layer {layer}'s attention did not run")
    return seen


def _one_sequence(input_ids):
    import torch

    ids = torch.as_tensor(input_ids, dtype=torch.long)
    ids = ids.reshape(1, -1) if ids.dim() == 1 else ids
    if ids.shape[0] != 1:
        raise ValueError(f"input_ids: capture takes one sequence, found a batch of {ids.shape[0]}")
    return ids


def capture(model, input_ids, layer=None, tokens=None, tokenizer=None, name=None, position_ids=None, pixel_values=None, decoder_input_ids=None, attention="self", key_tokens=None, layers=None):
    """Runs `model` once on `input_ids` and returns layer `layer`'s attention as a stages spec.

    `layers="all"` (every softmax-attention layer, in order) or a list of layer numbers
    (numbered as `layer`, from 0) in place of `layer`: a multi-layer file (docs/DESIGN.md
    §7.11), `{"layers": [spec, ...]}`, each entry exactly what `layer=N` captures (the model
    runs once per layer). `diffattn.save` writes it as JSON or safetensors.

    `input_ids`: a list of ints or a (1, L) / (L,) tensor (None for ViT, which takes
    `pixel_values`, one image (1, C, H, W)). `tokens`: axis labels; by default the tokenizer's
    string for each id when `tokenizer` is given (ViT's are `[CLS]` and `r{row}c{col}` for
    each patch). `name` goes to the spec's `model` field (default: the config's name or the
    model's class). `position_ids`: positions to run with (rotary decoders; default 0 .. L-1).
    Encoder-decoders (T5, BART): without `decoder_input_ids`, the encoder's layer N; with them
    and `attention="self"`, the decoder's layer N self-attention (causal; `tokens` and the
    tokenizer then label the decoder's tokens); with `attention="cross"`, its cross-attention:
    queries from the decoder, keys and values from the encoder's output (`x_kv`, DESIGN.md
    §7.10; `key_tokens`, or the tokenizer, label the encoder's tokens).
    Supports DiffLlama, Llama, Mistral, Qwen2, Qwen3, OLMo 2, Gemma 2, Gemma 3 (text), gpt-oss,
    BERT, RoBERTa, DistilBERT, GPT-2, ViT, T5 and BART models.
    """
    import torch

    config = model.config
    model_type = getattr(config, "model_type", None)
    if model_type not in MODEL_TYPES:
        raise TypeError(f"model_type {model_type!r}: capture supports {', '.join(MODEL_TYPES)}")
    if layers is not None:
        if layer is not None:
            raise ValueError("layer, layers: give one of them (layers for a multi-layer file)")
        numbers = _layer_numbers(model, model_type, layers, decoder_input_ids, attention)
        one = dict(tokens=tokens, tokenizer=tokenizer, name=name, position_ids=position_ids, pixel_values=pixel_values, decoder_input_ids=decoder_input_ids, attention=attention, key_tokens=key_tokens)
        return {"layers": [capture(model, input_ids, layer=n, **one) for n in numbers]}
    if layer is None:
        raise ValueError("layer: give a layer number (from 0), or layers='all' or a list of them")
    if model_type in ENCODER_DECODER_MODEL_TYPES:
        return _capture_encoder_decoder(model, model_type, input_ids, layer, tokens, tokenizer, name, decoder_input_ids, attention, key_tokens)
    if decoder_input_ids is not None or attention != "self":
        raise TypeError(f"decoder_input_ids, attention: {model_type} is not an encoder-decoder")
    if model_type in ABSOLUTE_MODEL_TYPES:
        return _capture_absolute(model, model_type, input_ids, layer, tokens, tokenizer, name, position_ids, pixel_values)
    if pixel_values is not None:
        raise TypeError(f"pixel_values: {model_type} takes input_ids")
    layers, rotary_emb = _decoder_parts(model)
    if not isinstance(layer, int) or not 0 <= layer < len(layers):
        raise ValueError(f"layer: expected 0 to {len(layers) - 1}, found {layer!r}")
    attn = getattr(layers[layer], "self_attn", None)
    if attn is None:
        kinds = getattr(config, "layer_types", None)
        kind = kinds[layer] if kinds else type(layers[layer]).__name__
        raise TypeError(f"layer {layer} is a {kind} layer, not softmax attention; capture one of its full-attention layers")
    ids = _one_sequence(input_ids)
    n = ids.shape[1]
    if position_ids is not None:
        position_ids = torch.as_tensor(position_ids, dtype=torch.long).reshape(1, n)

    seen = _observe(attn, layer, lambda: model(input_ids=ids, position_ids=position_ids))
    seen.update(rope=seen["kwargs"].get("position_embeddings"), mask=seen["kwargs"].get("attention_mask"), positions=seen["kwargs"].get("position_ids"))

    positions = seen["positions"] if seen["positions"] is not None else position_ids
    positions = list(range(n)) if positions is None else [int(p) for p in positions.reshape(-1).tolist()]
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
    if model_type == "qwen3_next":
        spec.update(_qwen3_next_fields(attn, heads))
    else:
        spec.update(_projections(attn.q_proj, attn.k_proj, attn.v_proj, attn.o_proj))
    spec.update(_score_fields(attn, config))
    layer_types = getattr(config, "layer_types", None)
    spec["rope"] = _rope_fields(rotary_emb, config, cos, sin, positions, layer_types[layer] if layer_types else None)
    return validate(_ordered(spec))


def _qwen3_next_fields(attn, heads):
    """Qwen3-Next's full-attention layer is gated attention (DESIGN.md §4.1): its q_proj holds,
    head by head, the query's d_h rows and then the output gate's d_h rows; the gate is
    σ(that projection) times each head's A·V, before o_proj."""
    dh = attn.head_dim
    w = attn.q_proj.weight.detach()
    b = attn.q_proj.bias
    per_head = w.reshape(heads, 2, dh, -1)
    fields = {"mechanism": "gated_attention"}

    class _Rows:
        def __init__(self, part):
            self.weight = per_head[:, part].reshape(heads * dh, -1)
            self.bias = None if b is None else b.detach().reshape(heads, 2, dh)[:, part].reshape(-1)

    fields.update(_projections(_Rows(0), attn.k_proj, attn.v_proj, attn.o_proj))
    gate = _Rows(1)
    fields["w_output_gate"] = _np(gate.weight)
    if gate.bias is not None:
        fields["b_output_gate"] = _np(gate.bias)
    return fields


def _score_fields(attn, config):
    """§7.9: the query and key norms (Qwen3, OLMo 2, Gemma 3), the scores' scale when not
    1/sqrt(head_dim) (Gemma's query_pre_attn_scalar), Gemma 2's soft cap and gpt-oss's sinks."""
    fields = {}
    eps = set()
    for name in ("q_norm", "k_norm"):
        norm = getattr(attn, name, None)
        if norm is None:
            continue
        weight, e = _rms_norm_weight(norm, name)
        fields[name] = weight
        eps.add(e)
    if len(eps) > 1:
        raise TypeError(f"q_norm and k_norm: different eps {sorted(eps)}; the format has one qk_norm_eps")
    if eps:
        fields["qk_norm_eps"] = eps.pop()
    scaling = getattr(attn, "scaling", None)
    if scaling is not None and not math.isclose(scaling, attn.head_dim**-0.5, rel_tol=1e-9):
        fields["scale"] = float(scaling)
    softcap = getattr(attn, "attn_logit_softcapping", None)
    if softcap is None:
        softcap = getattr(config, "attn_logit_softcapping", None)
    if softcap is not None:
        fields["softcap"] = float(softcap)
    sinks = getattr(attn, "sinks", None)
    if sinks is not None:
        # gpt-oss: one learned logit per query head joins each row's softmax and is dropped.
        fields["sinks"] = _np(sinks).reshape(-1)
    return fields


def _rms_norm_weight(norm, name):
    """The effective weight and ε of an RMSNorm module (Gemma's multiplies by 1 + weight),
    checked against the module itself on random rows: a norm of another kind is an error."""
    import torch

    eps = getattr(norm, "variance_epsilon", None)
    eps = getattr(norm, "eps", None) if eps is None else eps
    if eps is None:
        raise TypeError(f"{name}: {type(norm).__name__} has no eps")
    raw = norm.weight.detach().double()
    probe = torch.randn(3, raw.shape[0], generator=torch.Generator().manual_seed(0), dtype=torch.float32)
    with torch.no_grad():
        got = norm(probe).double()
    p = probe.double()
    unit = p / torch.sqrt((p * p).mean(-1, keepdim=True) + eps)
    # Llama's kind multiplies by its weight; Gemma's and Qwen3-Next's (zero-centred) by 1 + it.
    for weight in (raw, raw + 1.0):
        if torch.allclose(got, unit * weight, rtol=1e-4, atol=1e-5):
            return weight.float().numpy(), float(eps)
    raise TypeError(f"{name}: {type(norm).__name__} is not an RMSNorm this format describes (u / sqrt(mean(u²) + eps) · weight)")


def _attention_layers(model, model_type):
    """Layer index → attention module, found by the family's module path (any wrapper around
    the base model: BertForMaskedLM's `bert.encoder.layer.N.attention` matches too)."""
    import re

    pattern = re.compile(r"(?:^|\.)" + ABSOLUTE_MODEL_TYPES[model_type] + "$")
    found = {}
    for path, module in model.named_modules():
        m = pattern.search(path)
        if m and not getattr(module, "is_cross_attention", False):
            found.setdefault(int(m.group(1)), module)
    if not found or sorted(found) != list(range(len(found))):
        raise TypeError(f"{type(model).__name__}: no attention layers at {ABSOLUTE_MODEL_TYPES[model_type]!r}")
    return [found[i] for i in range(len(found))]


class _Conv1D:
    """GPT-2's `Conv1D` (y = x·W + b, W stored [in, out]) seen as an nn.Linear (W stored [out, in])."""

    def __init__(self, weight, bias):
        self.weight = weight.t()
        self.bias = bias


def _absolute_projections(model_type, attn, d):
    """(q, k, v, o) as nn.Linear-like modules, the scores' scale, heads, and whether causal."""
    config_heads = None
    if model_type in ("bert", "roberta"):
        core = attn.self
        q, k, v, o = core.query, core.key, core.value, attn.output.dense
        scale, heads = core.scaling, core.num_attention_heads
        causal = bool(getattr(core, "is_causal", False) or getattr(core, "is_decoder", False))
    elif model_type == "distilbert":
        q, k, v, o = attn.q_lin, attn.k_lin, attn.v_lin, attn.out_lin
        scale, config_heads = attn.scaling, "n_heads"
        causal = bool(getattr(attn, "is_causal", False))
    elif model_type == "vit":
        q, k, v, o = attn.q_proj, attn.k_proj, attn.v_proj, attn.o_proj
        scale, config_heads = attn.scaling, "num_attention_heads"
        causal = bool(getattr(attn, "is_causal", False))
    else:  # gpt2: c_attn holds [W_q | W_k | W_v] side by side, [in, 3·d].
        w, b = attn.c_attn.weight, attn.c_attn.bias
        q, k, v = (_Conv1D(w[:, i * d : (i + 1) * d], None if b is None else b[i * d : (i + 1) * d]) for i in range(3))
        o = _Conv1D(attn.c_proj.weight, attn.c_proj.bias)
        scale, heads, causal = attn.scaling, attn.num_heads, bool(attn.is_causal)
    if config_heads is not None:
        heads = getattr(attn, "num_heads", None) or getattr(attn, "n_heads", None) or getattr(attn.config, config_heads)
    return (q, k, v, o), float(scale), int(heads), causal


def _capture_absolute(model, model_type, input_ids, layer, tokens, tokenizer, name, position_ids, pixel_values):
    """capture() for the families whose positions are already in the vectors entering a layer."""
    import torch

    layers = _attention_layers(model, model_type)
    if not isinstance(layer, int) or not 0 <= layer < len(layers):
        raise ValueError(f"layer: expected 0 to {len(layers) - 1}, found {layer!r}")
    if position_ids is not None:
        raise TypeError(f"position_ids: {model_type} adds its positions before the first layer; capture runs it with its own")
    attn = layers[layer]
    if model_type == "vit":
        if input_ids is not None or pixel_values is None:
            raise TypeError("vit: give pixel_values (one image), not input_ids")
        pixels = torch.as_tensor(pixel_values, dtype=torch.float32)
        pixels = pixels.unsqueeze(0) if pixels.dim() == 3 else pixels
        if pixels.dim() != 4 or pixels.shape[0] != 1:
            raise ValueError(f"pixel_values: capture takes one image (1, C, H, W), found shape {tuple(pixels.shape)}")
        inputs = {"pixel_values": pixels}
    else:
        if pixel_values is not None:
            raise TypeError(f"pixel_values: {model_type} takes input_ids")
        ids = _one_sequence(input_ids)
        inputs = {"input_ids": ids}

    seen = _observe(attn, layer, lambda: model(**inputs))
    args = seen["args"]
    seen["mask"] = seen["kwargs"].get("attention_mask", args[1] if len(args) > 1 else None)

    x = _np(seen["x"])
    if x.ndim != 3 or x.shape[0] != 1:
        raise ValueError(f"the attention's input has shape {x.shape}: capture takes one sequence")
    x = x[0]
    n, d = x.shape
    (q, k, v, o), scale, heads, causal = _absolute_projections(model_type, attn, d)
    if d % heads:
        raise TypeError(f"hidden size {d} is not a multiple of the {heads} heads")
    head_dim = d // heads
    if not math.isclose(scale, head_dim**-0.5, rel_tol=1e-9):
        raise TypeError(f"scaling {scale}: the format scales scores by 1/sqrt(head_dim) (GPT-2's scale_attn_by_inverse_layer_idx and unscaled scores are not described)")
    _check_mask(seen["mask"], n, None, causal)

    if model_type == "vit":
        if tokens is None:
            tokens = _patch_labels(model, pixels, n)
        labels = _token_labels(list(range(n)), tokens, None)
    else:
        labels = _token_labels(ids[0].tolist(), tokens, tokenizer)
    spec = {
        "mechanism": "standard",
        "model": name or getattr(model.config, "name_or_path", "") or type(model).__name__,
        "layer": layer,
        "heads": heads,
        "causal": causal,
        "head_dim": head_dim,
    }
    if labels is not None:
        spec["tokens"] = labels
    spec["x"] = x
    spec.update(_projections(q, k, v, o))
    return validate(_ordered(spec))


def _encoder_decoder_layers(model, model_type, decoder, cross):
    """The encoder's or decoder's stack and its layers' self- or cross-attention modules."""
    stack = model.get_decoder() if decoder else model.get_encoder()
    if model_type == "t5":
        layers = [block.layer[1 if cross else 0] for block in stack.block]
        layers = [l.EncDecAttention if cross else l.SelfAttention for l in layers]
    else:
        layers = [l.encoder_attn if cross else l.self_attn for l in stack.layers]
    return stack, layers


def _layer_numbers(model, model_type, layers, decoder_input_ids, attention):
    """`layers` ("all" or a list of layer numbers) as the list of layer numbers to capture:
    "all" is every layer with softmax attention (a hybrid's linear-attention layers are left
    out), a list is checked against the model's layers."""
    if model_type in ENCODER_DECODER_MODEL_TYPES:
        count = len(_encoder_decoder_layers(model, model_type, decoder_input_ids is not None, attention == "cross")[1])
        softmax = range(count)
    elif model_type in ABSOLUTE_MODEL_TYPES:
        count = len(_attention_layers(model, model_type))
        softmax = range(count)
    else:
        decoder_layers = _decoder_parts(model)[0]
        count = len(decoder_layers)
        softmax = [i for i, l in enumerate(decoder_layers) if getattr(l, "self_attn", None) is not None]
    if isinstance(layers, str):
        if layers != "all":
            raise ValueError(f"layers: expected 'all' or a list of layer numbers, found {layers!r}")
        return list(softmax)
    try:
        numbers = list(layers)
    except TypeError:
        raise ValueError(f"layers: expected 'all' or a list of layer numbers, found {layers!r}") from None
    if not numbers:
        raise ValueError("layers: an empty list; give at least one layer number")
    for n in numbers:
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n < count:
            raise ValueError(f"layers: expected layer numbers from 0 to {count - 1}, found {n!r}")
    return numbers


def _capture_encoder_decoder(model, model_type, input_ids, layer, tokens, tokenizer, name, decoder_input_ids, attention, key_tokens):
    """T5 and BART: layer N's self-attention in the encoder, or with `decoder_input_ids` in the
    decoder, or the decoder's cross-attention. T5's scores are unscaled (`scale: 1`) and its
    self-attention biased by the relative position bias the model computed, written as
    `relative_bias` (one value per offset j − i, checked to be what the model added to every
    cell)."""
    import torch

    if attention not in ("self", "cross"):
        raise ValueError(f"attention: expected 'self' or 'cross', found {attention!r}")
    cross = attention == "cross"
    if cross and decoder_input_ids is None:
        raise ValueError("attention='cross': give decoder_input_ids (the queries come from the decoder)")
    if key_tokens is not None and not cross:
        raise ValueError("key_tokens: only cross-attention has keys of its own (attention='cross')")
    ids = _one_sequence(input_ids)
    decoder = decoder_input_ids is not None
    stack, layers = _encoder_decoder_layers(model, model_type, decoder, cross)
    if not isinstance(layer, int) or not 0 <= layer < len(layers):
        raise ValueError(f"layer: expected 0 to {len(layers) - 1}, found {layer!r}")
    attn = layers[layer]
    own = _one_sequence(decoder_input_ids) if decoder else ids
    seen = _observe(attn, layer, lambda: model(input_ids=ids, decoder_input_ids=own) if decoder else stack(input_ids=ids))
    kwargs = seen["kwargs"]
    seen.update(mask=kwargs.get("mask", kwargs.get("attention_mask")), kv=kwargs.get("key_value_states"))
    seen["bias"] = seen["output"][1] if model_type == "t5" else None
    x = _np(seen["x"])[0]
    n = x.shape[0]
    if model_type == "t5":
        heads, head_dim = attn.n_heads, attn.key_value_proj_dim
        q, k, v, o = attn.q, attn.k, attn.v, attn.o
    else:
        heads, head_dim = attn.num_heads, attn.head_dim
        q, k, v, o = attn.q_proj, attn.k_proj, attn.v_proj, attn.out_proj
    spec = {
        "mechanism": "standard",
        "model": name or getattr(model.config, "name_or_path", "") or type(model).__name__,
        "layer": layer,
        "heads": int(heads),
        "causal": decoder and not cross,
        "head_dim": int(head_dim),
    }
    labels = _token_labels(own[0].tolist(), tokens, tokenizer)
    if labels is not None:
        spec["tokens"] = labels
    spec["x"] = x
    if cross:
        spec.update(_cross_fields(seen, layer, ids[0].tolist(), key_tokens, tokenizer))
    else:
        _check_mask(seen["mask"], n, None, decoder)
    spec.update(_projections(q, k, v, o))
    scale = float(attn.scaling)
    if not math.isclose(scale, head_dim**-0.5, rel_tol=1e-9):
        spec["scale"] = scale
    if seen.get("bias") is not None and not cross:
        spec["relative_bias"] = _relative_bias(_np(seen["bias"]).reshape(heads, n, n), decoder)
    return validate(_ordered(spec))


def _cross_fields(seen, layer, key_ids, key_tokens, tokenizer):
    """The decoder's cross-attention: its keys and values from the encoder's output the model
    passed it (`x_kv`, DESIGN.md §7.10), every key allowed and no position bias."""
    if seen.get("kv") is None:
        raise RuntimeError(f"layer {layer}'s cross-attention got no encoder states")
    mask = seen.get("mask")
    if mask is not None and not np.all(_np(mask) > np.finfo(np.float32).min / 2):
        raise ValueError("attention_mask: capture supports one unpadded encoder sequence (every key allowed)")
    bias = seen.get("bias")
    if bias is not None and np.any(_np(bias) != 0):
        raise TypeError("cross-attention with a position bias: not in the format")
    fields = {"x_kv": _np(seen["kv"])[0]}
    labels = _token_labels(key_ids, key_tokens, tokenizer)
    if labels is not None:
        fields["key_tokens"] = labels
    return fields


def _relative_bias(bias, causal):
    """(heads, 2L − 1): each head's bias by offset j − i, read off the model's (heads, L, L)
    bias and checked against every cell the mask allows (a bias that is not a function of the
    offset is an error, not a wrong map)."""
    heads, n, _ = bias.shape
    out = np.zeros((heads, 2 * n - 1), dtype=np.float32)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    allowed = j <= i if causal else np.ones((n, n), dtype=bool)
    for off in range(-(n - 1), n):
        cells = (j - i == off) & allowed
        if cells.any():
            out[:, off + n - 1] = bias[:, cells][:, 0]
    rebuilt = out[:, (j - i + n - 1)]
    if not np.allclose(np.where(allowed, rebuilt, 0), np.where(allowed, bias, 0), rtol=0, atol=1e-6):
        raise TypeError("relative_bias: the model's score bias is not a function of the offset j − i")
    return out


def _patch_labels(model, pixels, n):
    """ViT's tokens: `[CLS]`, then `r{row}c{col}` for each patch in row-major order (from 1)."""
    patch = model.config.patch_size
    rows, cols = pixels.shape[2] // patch, pixels.shape[3] // patch
    if 1 + rows * cols != n:
        raise ValueError(f"vit: {n} tokens for {rows} x {cols} patches and [CLS]")
    return ["[CLS]"] + [f"r{r + 1}c{c + 1}" for r in range(rows) for c in range(cols)]


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
