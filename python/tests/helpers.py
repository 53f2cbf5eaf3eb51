"""Shared helpers of the Python tests: random specs, paths, and the relative error measure."""

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
# The shared reference cases of DESIGN.md §6 (made by another numpy implementation).
SHARED_FIXTURES = ROOT / "tests" / "fixtures" / "stages"
REAL_FIXTURES = ROOT / "tests" / "fixtures" / "real"
GOLDEN = ROOT / "tests" / "golden"


def random_spec(mechanism="standard", length=6, d=16, heads=2, causal=True, kv_heads=None, head_dim=None, seed=0, bias=False, subln=False, **fields):
    """A spec with random x and weights of the right shapes for `mechanism`, wide enough for maps
    far from uniform; `bias` adds b_q..b_o, `subln` a random norm weight. Also makes the
    fixtures of tests/fixtures/real/make.py."""
    rng = np.random.default_rng(seed)
    dh = head_dim or (d // (2 * heads) if mechanism == "diff_transformer" else d // heads)
    kv = kv_heads or heads
    q_heads = 2 * heads if mechanism in ("diff_transformer", "diff_transformer_v2") else heads
    k_heads = 2 * kv if mechanism == "diff_transformer" else kv
    o_width = (2 * heads if mechanism == "diff_transformer" else heads) * dh

    def w(rows, cols):
        return rng.normal(0.0, 1.2 / np.sqrt(cols), (rows, cols))

    spec = {"mechanism": mechanism, "heads": heads, "causal": causal, "x": rng.normal(0.0, 1.0, (length, d))}
    if kv_heads is not None:
        spec["kv_heads"] = kv_heads
    if head_dim is not None:
        spec["head_dim"] = head_dim
    spec.update(w_q=w(q_heads * dh, d), w_k=w(k_heads * dh, d), w_v=w(k_heads * dh, d), w_o=w(d, o_width))
    if bias:
        rows = {"q": q_heads * dh, "k": k_heads * dh, "v": k_heads * dh, "o": d}
        spec.update({f"b_{p}": rng.normal(0.0, 0.3, n) for p, n in rows.items()})
    if mechanism == "diff_transformer":
        spec.update({p: rng.normal(0.0, 0.3, dh) for p in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")})
        if subln:
            spec["subln"] = rng.uniform(0.5, 1.5, 2 * dh)
        if "lambda_init" not in fields:
            spec["depth"] = 2
    if mechanism == "diff_transformer_v2":
        spec["w_lambda"] = w(heads, d)
    if mechanism == "shift_diff":
        spec["gate"] = {p: rng.normal(0.0, 1.5, heads) for p in ("alpha", "beta", "gamma")}
    if mechanism == "gated_attention":
        spec["w_output_gate"] = w(heads * dh, d)
        if bias:
            spec["b_output_gate"] = rng.normal(0.0, 0.5, heads * dh)
    spec.update(fields)
    return spec


def stack(result, name):
    return np.stack([h[name] for h in result["heads"]])


def relative_error(got, want):
    """max |got - want| / max |want|: the measure the goldens are held to (1e-4)."""
    want = np.asarray(want, dtype=np.float64)
    return float(np.max(np.abs(np.asarray(got) - want)) / max(np.max(np.abs(want)), 1e-30))


def max_abs_difference(got, want, path=""):
    """The largest |got - want| over two nested stages values of the same shape (dicts, lists of
    head dicts, arrays, numbers); raises AssertionError naming the path where shapes differ."""
    if isinstance(want, dict):
        assert set(got) == set(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        return max((max_abs_difference(got[k], want[k], f"{path}.{k}") for k in want), default=0.0)
    if isinstance(want, list) and want and isinstance(want[0], dict):
        assert len(got) == len(want), f"{path}: {len(got)} heads != {len(want)}"
        return max(max_abs_difference(g, w, f"{path}[{i}]") for i, (g, w) in enumerate(zip(got, want)))
    g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert g.shape == w.shape, f"{path}: shape {g.shape} != {w.shape}"
    return float(np.max(np.abs(g - w))) if g.size else 0.0
