"""The PyTorch peer of docs/PERFORMANCE.md, run by scripts/bench-peer.

One full shift-difference attention layer on the CPU, eager mode, float32, inference mode: the
work `diffattn bench` (src/bench.rs) times natively and `bench_engine` in wasm, stage by stage:

* projection: Q, K, V = X·Wᵀ
* maps:       A = softmax(Q_h·K_hᵀ / sqrt(d_h)) for every head (no mask)
* shift:      shift_k(A) = roll(A, k, keys), D = A - shift_k(A),
              G = sigmoid(alpha·A + beta·D + gamma), A' = A + G ⊙ D, every head, with a shift
              that changes every layer
* output:     concat_h(A'_h·V_h)·W_oᵀ

d = 64, alpha, beta, gamma = 0, 4, 0 (the page's defaults). `--threads N` sets PyTorch's
intra-op threads (default 1). Prints one JSON object:
{"torch": version, "threads": n, "results": [{"tokens", "heads", "reps", "layer_ms",
"projection_ms", "maps_ms", "shift_ms", "output_ms"}]}, each a {"median", "p95"} in ms.
"""

import argparse
import json
import math
import time

import torch

D_MODEL = 64


def quantile(values, q):
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def stats(values):
    return {"median": quantile(values, 0.5), "p95": quantile(values, 0.95)}


def layer(x, w_q, w_k, w_v, w_o, heads, shift, alpha=0.0, beta=4.0, gamma=0.0):
    """One layer; returns the output and the end time of each stage (perf_counter, s)."""
    tokens = x.shape[0]
    d_h = D_MODEL // heads
    t0 = time.perf_counter()
    q = x @ w_q.T
    k = x @ w_k.T
    v = x @ w_v.T
    t1 = time.perf_counter()
    qh = q.view(tokens, heads, d_h).transpose(0, 1)
    kh = k.view(tokens, heads, d_h).transpose(0, 1)
    a = torch.softmax(qh @ kh.transpose(1, 2) / math.sqrt(d_h), dim=-1)
    t2 = time.perf_counter()
    shifted = torch.roll(a, shifts=shift, dims=-1)
    d = a - shifted
    g = torch.sigmoid(alpha * a + beta * d + gamma)
    fused = a + g * d
    t3 = time.perf_counter()
    vh = v.view(tokens, heads, d_h).transpose(0, 1)
    out = (fused @ vh).transpose(0, 1).reshape(tokens, D_MODEL) @ w_o.T
    t4 = time.perf_counter()
    return out, (t0, t1, t2, t3, t4)


def reps_for(tokens):
    return 30 if tokens <= 512 else 10 if tokens <= 1024 else 5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[16, 64, 128, 256, 512, 1024, 2048])
    parser.add_argument("--heads", type=int, nargs="+", default=[8])
    parser.add_argument("--reps", type=int, default=0, help="repetitions (default: 30, 10 or 5 by size)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(9)
    scale = 1.0 / math.sqrt(D_MODEL)
    w_q, w_k, w_v, w_o = (torch.randn(D_MODEL, D_MODEL, generator=generator) * scale for _ in range(4))
    results = []
    with torch.inference_mode():
        for tokens in args.tokens:
            x = torch.randn(tokens, D_MODEL, generator=generator)
            for heads in args.heads:
                # Warm-up: first calls allocate and pick kernels.
                for i in range(3):
                    layer(x, w_q, w_k, w_v, w_o, heads, 1 + i)
                reps = args.reps or reps_for(tokens)
                stages = {k: [] for k in ["layer_ms", "projection_ms", "maps_ms", "shift_ms", "output_ms"]}
                for rep in range(reps):
                    _, t = layer(x, w_q, w_k, w_v, w_o, heads, 1 + rep % 8)
                    ms = [(b - a) * 1000.0 for a, b in zip(t, t[1:])]
                    for key, value in zip(["projection_ms", "maps_ms", "shift_ms", "output_ms"], ms):
                        stages[key].append(value)
                    stages["layer_ms"].append((t[4] - t[0]) * 1000.0)
                results.append(
                    {"tokens": tokens, "heads": heads, "reps": reps, **{k: stats(v) for k, v in stages.items()}}
                )
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "results": results}))


if __name__ == "__main__":
    main()
