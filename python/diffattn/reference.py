"""The float64 numpy reference of the stages format (docs/DESIGN.md §6 and §7).

`stages(spec)` validates a spec (a dict as JSON has it, or with numpy arrays in place of
lists) and returns every map the format defines, computed in float64 from the formulas of
DESIGN.md (§1–§4.1 and §7), independently of the Rust engine. It makes the fixtures of tests/fixtures/real/
and checks captured layers against what transformers and the official code computed.

Conventions: row = query token, column = key token; head stacks are (heads, queries, keys);
weights are PyTorch [out, in], so a projection is `x @ w.T + b`.
"""

import math

import numpy as np

MECHANISMS = (
    "standard",
    "shift_diff",
    "diff_transformer",
    "input_diff",
    "cosine",
    "local",
    "diff_transformer_v2",
    "hierarchical",
    "gated_attention",
)


class SpecError(ValueError):
    """A spec that was rejected, with the field at fault (`w_k`, `rope.theta`, ...)."""

    def __init__(self, field, message):
        super().__init__(f"{field}: {message}")
        self.field = field


# --- reading fields -------------------------------------------------------------------------


def _required(spec, name):
    if name not in spec or spec[name] is None:
        raise SpecError(name, "missing")
    return spec[name]


def _array(value, name, ndim):
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (ValueError, TypeError):
        raise SpecError(name, "expected numbers in rows of equal length") from None
    if arr.ndim != ndim:
        raise SpecError(name, f"expected a {'matrix' if ndim == 2 else 'list of numbers'}")
    if not np.all(np.isfinite(arr)):
        raise SpecError(name, "every value must be finite")
    return arr


def _matrix(spec, name, rows, cols, why=""):
    arr = _array(_required(spec, name), name, 2)
    if arr.shape != (rows, cols):
        raise SpecError(name, f"expected {rows} x {cols}{why}, found {arr.shape[0]} x {arr.shape[1]}")
    return arr


def _vector(spec, name, n, why=""):
    arr = _array(_required(spec, name), name, 1)
    if arr.shape != (n,):
        raise SpecError(name, f"expected {n} values{why}, found {arr.shape[0]}")
    return arr


def _optional_vector(spec, name, n, why=""):
    return None if spec.get(name) is None else _vector(spec, name, n, why)


def _int(spec, name, minimum=None, default=None):
    value = spec.get(name, default)
    if value is None:
        raise SpecError(name, "missing")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SpecError(name, f"expected an integer, found {value!r}")
    if minimum is not None and value < minimum:
        raise SpecError(name, f"expected at least {minimum}, found {value}")
    return int(value)


def _number(spec, name, default=None):
    value = spec.get(name, default)
    if value is None:
        raise SpecError(name, "missing")
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise SpecError(name, f"expected a number, found {value!r}")
    if not math.isfinite(value):
        raise SpecError(name, "must be finite")
    return float(value)


def _choice(spec, name, choices, default=None):
    value = spec.get(name, default)
    if value not in choices:
        raise SpecError(name, f"expected one of {', '.join(map(repr, choices))}, found {value!r}")
    return value


class Layer:
    """A validated spec: the shapes, the projected heads and the mechanism's parameters."""

    def __init__(self, spec):
        if not isinstance(spec, dict):
            raise SpecError("spec", "expected a JSON object")
        self.spec = spec
        self.mechanism = _choice(spec, "mechanism", MECHANISMS)
        self.heads = _int(spec, "heads", 1)
        causal = _required(spec, "causal")
        if not isinstance(causal, bool):
            raise SpecError("causal", f"expected true or false, found {causal!r}")
        self.causal = causal
        self.x = _array(_required(spec, "x"), "x", 2)
        self.tokens, self.d_model = self.x.shape
        if self.tokens < 1:
            raise SpecError("x", "expected at least one token")
        self._read_metadata()
        self._read_cross()
        self._read_shapes()
        self._read_weights()
        self.rope = _read_rope(spec, self)
        self._read_scores()

    def _read_scores(self):
        """The norms of queries and keys, the scores' scale and soft cap: DESIGN.md §7.9."""
        s = self.spec
        self.q_norm, self.k_norm = None, None
        for name, rows in (("q_norm", self.w_q.shape[0]), ("k_norm", self.w_k.shape[0])):
            if s.get(name) is None:
                continue
            if self.mechanism == "input_diff":
                raise SpecError(name, "input_diff's keys are steps between tokens, which no model normalises")
            w = _array(s[name], name, 1)
            if w.shape[0] not in (self.head_dim, rows):
                raise SpecError(name, f"expected {self.head_dim} values (head_dim: each head alone) or {rows} (the rows of w_{name[0]}), found {w.shape[0]}")
            setattr(self, name, w)
        if s.get("qk_norm_eps") is not None and self.q_norm is None and self.k_norm is None:
            raise SpecError("qk_norm_eps", "given without q_norm or k_norm")
        self.qk_norm_eps = _number(s, "qk_norm_eps", default=1e-6)
        if not self.qk_norm_eps > 0:
            raise SpecError("qk_norm_eps", "must be positive")
        self.sinks = None
        if s.get("sinks") is not None:
            if self.mechanism in ("cosine", "input_diff", "hierarchical"):
                raise SpecError("sinks", "only the scaled dot product's mechanisms take it")
            self.sinks = _vector(s, "sinks", self.query_heads, " (one per softmax query head)")
        self.relative_bias = None
        if s.get("relative_bias") is not None:
            if self.mechanism in ("cosine", "input_diff", "hierarchical"):
                raise SpecError("relative_bias", "only the scaled dot product's mechanisms take it")
            self.relative_bias = _matrix(s, "relative_bias", self.query_heads, 2 * self.tokens - 1, " (one row per softmax query head, one column per offset j - i)")
        self.scale = self.head_dim**-0.5
        self.softcap = None
        for name in ("scale", "softcap"):
            if s.get(name) is None:
                continue
            if self.mechanism in ("cosine", "input_diff", "hierarchical"):
                raise SpecError(name, "only the scaled dot product's mechanisms take it")
            value = _number(s, name)
            if not value > 0:
                raise SpecError(name, f"must be positive, found {value}")
            setattr(self, name, value)

    def queries(self):
        """(query heads, L, dh): projected, normalised (§7.9), rotated (§7.2)."""
        y = _norm_groups(_linear(self.x, self.w_q, self.b_q), self.q_norm, self.qk_norm_eps)
        return _rotate(_split(y, self.head_dim), self.rope)

    def keys(self, x=None):
        """(key heads, keys, dh) from the tokens (or `x`, input difference's steps)."""
        y = _linear(self.x if x is None else x, self.w_k, self.b_k)
        return _rotate(_split(_norm_groups(y, self.k_norm, self.qk_norm_eps), self.head_dim), self.rope)

    def softmax(self, scores, allowed, query_head):
        """_softmax, with the query head's learned sink joining each row's sum (§7.9)."""
        if self.sinks is None:
            return _softmax(scores, allowed)
        sink = self.sinks[query_head]
        s = np.where(allowed, scores, -np.inf)
        top = np.maximum(np.max(s, axis=-1, keepdims=True, initial=-np.inf), sink)
        e = np.where(allowed, np.exp(s - top), 0.0)
        return e / (e.sum(axis=-1, keepdims=True) + np.exp(sink - top))

    def scores(self, q, k, temperature=1.0, query_head=None):
        """q·kᵀ times the scale (over T), plus the query head's relative bias, soft-capped when
        the layer caps (§7.9)."""
        s = q @ k.T * (self.scale / temperature)
        if self.relative_bias is not None:
            n = self.tokens
            offsets = np.arange(n)[None, :] - np.arange(n)[:, None] + n - 1
            s = s + self.relative_bias[query_head][offsets]
        return s if self.softcap is None else self.softcap * np.tanh(s / self.softcap)

    def _read_metadata(self):
        tokens = self.spec.get("tokens")
        if tokens is not None:
            if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
                raise SpecError("tokens", "expected a list of strings")
            if len(tokens) != self.tokens:
                raise SpecError("tokens", f"expected {self.tokens} labels (one per row of x), found {len(tokens)}")
        if self.spec.get("model") is not None and not isinstance(self.spec["model"], str):
            raise SpecError("model", "expected a string")
        if self.spec.get("layer") is not None:
            _int(self.spec, "layer", 0)

    def _read_cross(self):
        """Cross-attention, DESIGN.md §7.10: keys and values from `x_kv`, a second sequence."""
        s = self.spec
        self.x_kv = None
        if s.get("x_kv") is None:
            if s.get("key_tokens") is not None:
                raise SpecError("key_tokens", "given without x_kv (the keys are the tokens: label them with tokens)")
            return
        self.x_kv = _array(s["x_kv"], "x_kv", 2)
        if self.mechanism != "standard":
            raise SpecError("x_kv", "only standard attention reads its keys and values from a second sequence")
        if self.causal:
            raise SpecError("x_kv", "cross-attention has no causal mask: give causal false")
        if s.get("rope") is not None:
            raise SpecError("x_kv", "cross-attention has no rotary positions (rope)")
        if s.get("relative_bias") is not None:
            raise SpecError("x_kv", "cross-attention has no relative bias between its two sequences")
        if self.x_kv.shape[1] != self.d_model:
            raise SpecError("x_kv", f"rows of width {self.d_model} (d_model, as x), found {self.x_kv.shape[1]}")
        labels = s.get("key_tokens")
        if labels is not None and len(labels) != self.x_kv.shape[0]:
            raise SpecError("key_tokens", f"expected {self.x_kv.shape[0]} labels (one per row of x_kv), found {len(labels)}")

    def _read_shapes(self):
        """Head counts and widths: DESIGN.md §7.1."""
        h, d = self.heads, self.d_model
        pairs = self.mechanism in ("diff_transformer", "diff_transformer_v2")
        # The softmax heads per diff head: two for both Differential Transformers.
        split = 2 * h if self.mechanism == "diff_transformer" else h
        if self.spec.get("head_dim") is None:
            if d % split:
                what = f"{'2 x ' if split != h else ''}heads {split}"
                raise SpecError("heads", f"{what} does not divide d_model {d}; give head_dim")
            self.head_dim = d // split
        else:
            self.head_dim = _int(self.spec, "head_dim", 1)
        self.kv_heads = _int(self.spec, "kv_heads", 1, default=h)
        if h % self.kv_heads:
            raise SpecError("kv_heads", f"expected a divisor of heads {h}, found {self.kv_heads}")
        self.group = h // self.kv_heads
        # Query heads, key heads and the rows of w_v; the Differential Transformer splits its
        # heads into twice as many softmax heads (and as many value rows), V2 only its queries.
        kv = self.kv_heads
        if self.mechanism == "diff_transformer":
            self.query_heads, self.key_heads, self.value_heads = 2 * h, 2 * kv, 2 * kv
        elif pairs:
            self.query_heads, self.key_heads, self.value_heads = 2 * h, kv, kv
        else:
            self.query_heads, self.key_heads, self.value_heads = h, kv, kv
        self.o_heads = 2 * h if self.mechanism == "diff_transformer" else h

    def _read_weights(self):
        d, s, dh = self.d_model, self.spec, self.head_dim

        def why(n, what):
            return f" ({what} {n} x head_dim {dh}, d_model {d})"

        q_rows, k_rows, v_rows = (n * dh for n in (self.query_heads, self.key_heads, self.value_heads))
        self.w_q = _matrix(s, "w_q", q_rows, d, why(self.query_heads, "query heads"))
        self.w_k = _matrix(s, "w_k", k_rows, d, why(self.key_heads, "key heads"))
        self.w_v = _matrix(s, "w_v", v_rows, d, why(self.value_heads, "value heads"))
        self.w_o = _matrix(s, "w_o", d, self.o_heads * dh, f" (d_model {d}, {self.o_heads} heads x head_dim {dh})")
        self.b_q = _optional_vector(s, "b_q", q_rows, " (rows of w_q)")
        self.b_k = _optional_vector(s, "b_k", k_rows, " (rows of w_k)")
        self.b_v = _optional_vector(s, "b_v", v_rows, " (rows of w_v)")
        self.b_o = _optional_vector(s, "b_o", d, " (rows of w_o)")
        if self.mechanism != "gated_attention":
            for field in ("w_output_gate", "b_output_gate"):
                if s.get(field) is not None:
                    raise SpecError(field, "only gated_attention has an output gate")


def _read_rope(spec, layer):
    """Rotary position embeddings: DESIGN.md §7.2. Returns None or (layout, cos, sin, dim)."""
    rope = spec.get("rope")
    if rope is None:
        return None
    if not isinstance(rope, dict):
        raise SpecError("rope", "expected an object")
    if layer.mechanism == "input_diff":
        raise SpecError("rope", "input_diff has no positions for its keys (steps between tokens)")
    layout = rope.get("layout")
    if layout not in ("half", "interleaved"):
        raise SpecError("rope.layout", f"expected 'half' or 'interleaved', found {layout!r}")
    dim = rope.get("rotary_dim", layer.head_dim)
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 2 or dim % 2 or dim > layer.head_dim:
        raise SpecError("rope.rotary_dim", f"expected an even integer from 2 to head_dim {layer.head_dim}, found {dim!r}")
    has_theta, has_inv = rope.get("theta") is not None, rope.get("inv_freq") is not None
    if has_theta == has_inv:
        raise SpecError("rope", "give exactly one of theta and inv_freq")
    if has_theta:
        theta = _number(rope, "theta")
        if theta <= 0:
            raise SpecError("rope.theta", f"expected a positive number, found {theta}")
        inv_freq = theta ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)
    else:
        try:
            inv_freq = _vector(rope, "inv_freq", dim // 2, " (rotary_dim / 2)")
        except SpecError as e:
            raise SpecError("rope." + e.field, str(e).split(": ", 1)[1]) from None
    positions = rope.get("positions")
    if positions is None:
        positions = np.arange(layer.tokens, dtype=np.float64)
    else:
        if not isinstance(positions, (list, np.ndarray)) or len(positions) != layer.tokens:
            raise SpecError("rope.positions", f"expected {layer.tokens} integers (one per token)")
        if not all(isinstance(p, (int, np.integer)) and not isinstance(p, bool) and p >= 0 for p in positions):
            raise SpecError("rope.positions", "expected non-negative integers")
        positions = np.asarray(positions, dtype=np.float64)
    scaling = _number(rope, "attention_scaling", default=1.0)
    angles = positions[:, None] * inv_freq[None, :]
    return layout, np.cos(angles) * scaling, np.sin(angles) * scaling, int(dim)


# --- the shared stages ----------------------------------------------------------------------


def _linear(x, w, b):
    y = x @ w.T
    return y if b is None else y + b


def _split(y, width):
    """(tokens, n * width) -> (n, tokens, width): head `i` is columns i*width .. (i+1)*width."""
    return y.reshape(y.shape[0], y.shape[1] // width, width).transpose(1, 0, 2)


def _rotate(t, rope):
    """Applies rotary embeddings to a head stack (n, tokens, head_dim) (DESIGN.md §7.2)."""
    if rope is None:
        return t
    layout, cos, sin, dim = rope
    out = t.copy()
    if layout == "half":
        first, second = slice(0, dim // 2), slice(dim // 2, dim)
    else:
        first, second = slice(0, dim, 2), slice(1, dim, 2)
    a, b = t[..., first], t[..., second]
    out[..., first] = a * cos - b * sin
    out[..., second] = b * cos + a * sin
    return out


def _softmax(scores, allowed):
    """Row softmax over the allowed cells; a row with none allowed is all zeros."""
    s = np.where(allowed, scores, -np.inf)
    top = np.max(s, axis=-1, keepdims=True, initial=-np.inf)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(allowed, np.exp(s - top), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _mask(layer, keys=None, key_position=None):
    """Allowed (query, key) cells: the causal mask, and local's window."""
    n = layer.tokens
    keys = n if keys is None else keys
    i = np.arange(n)[:, None]
    j = np.arange(keys)[None, :] if key_position is None else key_position[None, :]
    allowed = np.ones((n, keys), dtype=bool)
    if layer.causal:
        allowed &= j <= i
    if layer.mechanism == "local":
        allowed &= np.abs(i - j) <= layer.window
    return allowed


def _kv_index(query_head, query_heads, kv_heads):
    """Grouped-query attention: query head j uses key/value head j // (query_heads / kv_heads)."""
    return query_head // (query_heads // kv_heads)


def _scores(q, k, scale):
    return q @ k.T * scale


def _output(layer, per_head_values):
    """concat_h(values_h) · W_oᵀ + b_o; values_h is (tokens, width)."""
    return _linear(np.concatenate(per_head_values, axis=1), layer.w_o, layer.b_o)


def _norm_groups(y, weight, eps):
    """§7.9: every group of len(weight) channels of each row RMS-normalised, times the weight."""
    if weight is None:
        return y
    groups = y.reshape(y.shape[0], -1, weight.shape[0])
    return _rms_norm(groups, weight, eps).reshape(y.shape)


def _rms_norm(v, weight, eps):
    v = v / np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + eps)
    return v if weight is None else v * weight


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


# --- one map per head: standard, local, cosine, input_diff, shift_diff, hierarchical ----------


def _one_map_heads(layer):
    """(Q, K, V) head stacks, queries (H, L, dh) and keys/values (kv_heads, keys, dh)."""
    dh = layer.head_dim
    kv_input = layer.x if layer.x_kv is None else layer.x_kv
    if layer.mechanism == "input_diff":
        kv_input = layer.x[1:] - layer.x[:-1]
    q = layer.queries()
    k = layer.keys(kv_input)
    v = _split(_linear(kv_input, layer.w_v, layer.b_v), dh)
    return q, k, v


def _one_map(layer):
    s = layer.spec
    if layer.mechanism == "cosine":
        tau = _number(s, "tau")
    if layer.mechanism == "local":
        layer.window = _int(s, "window", 0)
    q, k, v = _one_map_heads(layer)
    h = layer.heads
    if layer.mechanism == "input_diff":
        # Key j is the step into token j + 1, so for the mask it sits at position j + 1.
        allowed = _mask(layer, keys=layer.tokens - 1, key_position=np.arange(1, layer.tokens))
    elif layer.x_kv is not None:
        allowed = _mask(layer, keys=layer.x_kv.shape[0])
    else:
        allowed = _mask(layer)
    maps, values = [], []
    for j in range(h):
        g = _kv_index(j, h, layer.kv_heads)
        if layer.mechanism == "cosine":
            scores = tau * _normalize(q[j]) @ _normalize(k[g]).T
        else:
            scores = layer.scores(q[j], k[g], query_head=j)
        a = layer.softmax(scores, allowed, j)
        maps.append({"a": a})
        values.append(v[g])
    if layer.mechanism == "shift_diff":
        _shift_diff(layer, maps, allowed)
        used = [m["fused"] for m in maps]
    else:
        used = [m["a"] for m in maps]
    return {"heads": maps, "output": _output(layer, [a @ vv for a, vv in zip(used, values)])}


def _normalize(t):
    norm = np.linalg.norm(t, axis=-1, keepdims=True)
    return np.divide(t, norm, out=np.zeros_like(t), where=norm > 0)


def _shift(a, k, fill):
    """shift_k(A)[i, j] = A[i, j - k]: circular, or zero where j - k falls outside."""
    if fill == "circular":
        return np.roll(a, k, axis=-1)
    out = np.zeros_like(a)
    n = a.shape[-1]
    for j in range(n):
        if 0 <= j - k < n:
            out[:, j] = a[:, j - k]
    return out


def _shift_diff(layer, maps, allowed):
    """DESIGN.md §2, with every shifted map masked again after the shift."""
    s, h = layer.spec, layer.heads
    k = _int(s, "shift")
    difference = _choice(s, "difference", ("single", "symmetric"))
    renormalize = _choice(s, "renormalize", ("none", "softmax"))
    fill = _choice(s, "shift_fill", ("circular", "zero"), default="circular")
    gate = _required(s, "gate")
    if not isinstance(gate, dict):
        raise SpecError("gate", "expected an object with alpha, beta and gamma")
    alpha, beta, gamma = (_vector(gate, p, h, " (one per head)") for p in ("alpha", "beta", "gamma"))
    for i, m in enumerate(maps):
        a = m["a"]
        shifted = np.where(allowed, _shift(a, k, fill), 0.0)
        m["shifted"] = shifted
        if difference == "single":
            d = a - shifted
        else:
            back = np.where(allowed, _shift(a, -k, fill), 0.0)
            m["shifted_back"] = back
            d = back - shifted
        g = _sigmoid(alpha[i] * a + beta[i] * d + gamma[i])
        fused = a + g * d
        if renormalize == "softmax":
            fused = _softmax(fused, allowed)
        m.update(d=d, g=g, fused=fused)


# --- hierarchical ---------------------------------------------------------------------------


def _hierarchical(layer):
    """DESIGN.md §7.6: one softmax over the own segment's tokens and the other segments' means."""
    size = _int(layer.spec, "segment", 1)
    q, k, v = _one_map_heads(layer)
    n = layer.tokens
    segment_of = np.arange(n) // size
    segments = int(segment_of[-1]) + 1
    # P averages the tokens of each segment: (segments, tokens), rows sum to 1.
    pool = np.zeros((segments, n))
    pool[segment_of, np.arange(n)] = 1.0
    pool /= pool.sum(axis=1, keepdims=True)
    i, j, m = np.arange(n)[:, None], np.arange(n)[None, :], np.arange(segments)[None, :]
    local_allowed = segment_of[:, None] == segment_of[None, :]
    summary_allowed = m != segment_of[:, None]
    if layer.causal:
        local_allowed &= j <= i
        summary_allowed &= m < segment_of[:, None]
    allowed = np.concatenate([local_allowed, summary_allowed], axis=1)
    heads, values = [], []
    scale = layer.head_dim ** -0.5
    for h in range(layer.heads):
        g = _kv_index(h, layer.heads, layer.kv_heads)
        keys = np.concatenate([k[g], pool @ k[g]], axis=0)
        joint = _softmax(_scores(q[h], keys, scale), allowed)
        local, summary = joint[:, :n], joint[:, n:]
        a = local + summary @ pool
        heads.append({"local": local, "segments": summary, "a": a})
        values.append(a @ v[g])
    return {"heads": heads, "output": _output(layer, values)}


# --- the Differential Transformers ------------------------------------------------------------


def _diff_transformer(layer):
    """DESIGN.md §3 and §7.4: two softmax maps per diff head, one λ for the layer."""
    s, h, dh = layer.spec, layer.heads, layer.head_dim
    pairing = _choice(s, "pairing", ("adjacent", "halves"), default="adjacent")
    has_depth, has_init = s.get("depth") is not None, s.get("lambda_init") is not None
    if has_depth == has_init:
        raise SpecError("depth", "give exactly one of depth and lambda_init")
    lambda_init = 0.8 - 0.6 * math.exp(-0.3 * _int(s, "depth", 0)) if has_depth else _number(s, "lambda_init")
    lq1, lk1, lq2, lk2 = (_vector(s, p, dh, " (head_dim)") for p in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"))
    subln = _optional_vector(s, "subln", 2 * dh, " (2 x head_dim)")
    eps = _number(s, "subln_eps", default=1e-5)
    temperature = _number(s, "temperature", default=1.0)
    if not temperature > 0:
        raise SpecError("temperature", "expected a positive number")
    lam = math.exp(lq1 @ lk1) - math.exp(lq2 @ lk2) + lambda_init

    q = layer.queries()  # (2H, L, dh)
    k = layer.keys()  # (2 kv, L, dh)
    v_all = _linear(layer.x, layer.w_v, layer.b_v)
    kv = layer.kv_heads
    if pairing == "adjacent":
        # Official code: query heads 2h and 2h+1; value heads of width 2·dh.
        first, second = [2 * i for i in range(h)], [2 * i + 1 for i in range(h)]
        v_heads = _split(v_all, 2 * dh)
        values = [v_heads[i // layer.group] for i in range(h)]
    else:
        # DiffLlama: query heads h and h + H; the value of diff head h joins value heads
        # g and g + kv (g its key group), as torch.chunk(V, 2) over the heads does.
        first, second = list(range(h)), [i + h for i in range(h)]
        v_heads = _split(v_all, dh)
        values = [np.concatenate([v_heads[i // layer.group], v_heads[i // layer.group + kv]], axis=1) for i in range(h)]
    allowed = _mask(layer)
    heads, outs = [], []
    for i in range(h):
        # §3: both maps' scores over T.
        a1 = layer.softmax(layer.scores(q[first[i]], k[_kv_index(first[i], 2 * h, 2 * kv)], temperature, first[i]), allowed, first[i])
        a2 = layer.softmax(layer.scores(q[second[i]], k[_kv_index(second[i], 2 * h, 2 * kv)], temperature, second[i]), allowed, second[i])
        diff = a1 - lam * a2
        heads.append({"a1": a1, "a2": a2, "diff": diff})
        outs.append((1.0 - lambda_init) * _rms_norm(diff @ values[i], subln, eps))
    return {"heads": heads, "lambda": lam, "output": _output(layer, outs)}


def _diff_transformer_v2(layer):
    """DESIGN.md §7.5: query heads 2h, 2h+1 share a key/value head; λ per token and head."""
    s, h, dh = layer.spec, layer.heads, layer.head_dim
    w_lambda = _matrix(s, "w_lambda", h, layer.d_model, " (heads, d_model)")
    lam = _sigmoid(layer.x @ w_lambda.T)  # (tokens, heads)
    q = layer.queries()  # (2H, L, dh)
    k = layer.keys()  # (kv, L, dh)
    v = _split(_linear(layer.x, layer.w_v, layer.b_v), dh)
    allowed = _mask(layer)
    heads, outs = [], []
    for i in range(h):
        g = _kv_index(i, h, layer.kv_heads)
        a1 = layer.softmax(layer.scores(q[2 * i], k[g], query_head=2 * i), allowed, 2 * i)
        a2 = layer.softmax(layer.scores(q[2 * i + 1], k[g], query_head=2 * i + 1), allowed, 2 * i + 1)
        diff = a1 - lam[:, i : i + 1] * a2
        heads.append({"a1": a1, "a2": a2, "diff": diff})
        outs.append(diff @ v[g])
    return {"heads": heads, "lambda": lam, "output": _output(layer, outs)}


def _gated_attention(layer):
    """DESIGN.md §4.1: standard attention per head, then the output gate
    G[t, h, c] = σ((x·W_ogᵀ + b_og)[t, h·dh + c]) times each head's A·V, before W_o."""
    s, h, dh = layer.spec, layer.heads, layer.head_dim
    rows = h * dh
    why = f" (heads {h} x head_dim {dh}, d_model {layer.d_model})"
    w_og = _matrix(s, "w_output_gate", rows, layer.d_model, why)
    b_og = _optional_vector(s, "b_output_gate", rows, " (rows of w_output_gate)")
    gate = _sigmoid(_linear(layer.x, w_og, b_og))  # (tokens, H * dh)
    q, k, v = _one_map_heads(layer)
    allowed = _mask(layer)
    heads, outs = [], []
    for j in range(h):
        g = _kv_index(j, h, layer.kv_heads)
        a = layer.softmax(layer.scores(q[j], k[g], query_head=j), allowed, j)
        gate_h = gate[:, j * dh : (j + 1) * dh]
        gated = (a @ v[g]) * gate_h
        heads.append({"a": a, "output_gate": gate_h, "gated": gated})
        outs.append(gated)
    mean = gate.reshape(layer.tokens, h, dh).mean(axis=2)  # (tokens, heads)
    return {"heads": heads, "output_gate_mean": mean, "output": _output(layer, outs)}


# --- entry points -----------------------------------------------------------------------------


def stages(spec):
    """Every stage of the spec's layer, in float64: {"heads": [...], "output": ..., ["lambda"]}.

    Raises SpecError naming the field for a bad spec.
    """
    layer = Layer(spec)
    if layer.mechanism == "diff_transformer":
        return _diff_transformer(layer)
    if layer.mechanism == "diff_transformer_v2":
        return _diff_transformer_v2(layer)
    if layer.mechanism == "hierarchical":
        return _hierarchical(layer)
    if layer.mechanism == "gated_attention":
        return _gated_attention(layer)
    return _one_map(layer)


def validate(spec):
    """Raises SpecError naming the field if `spec` is not a valid stages spec; returns it."""
    stages(spec)
    return spec


def to_json(value):
    """Stages (or a spec) with numpy arrays turned into nested lists, ready for json.dump."""
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
