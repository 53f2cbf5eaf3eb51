"""The PyTorch peer of docs/PERFORMANCE.md, run by scripts/bench-peer.

The same stages of shift-difference attention as the engine's `page_engine/*` benchmarks
(benches/engine.rs) and `bench_engine` in wasm (src/web.rs), on the CPU, eager mode:

* maps:  Q, K, V = X·Wᵀ; A = softmax(Q_h·K_hᵀ / sqrt(d_h)) for every head (no mask);
* shift: shift_k(A) = roll(A, k, keys), D = A - shift_k(A), G = sigmoid(alpha·A + beta·D + gamma),
         A' = A + G ⊙ D, for every head, with a shift that changes every repetition.

d = 64, alpha, beta, gamma = 0, 4, 0 (the page's defaults), float32, inference mode. One thread
by default, as the engine uses one (`--threads N` to change). Prints one JSON object:
{"torch": version, "threads": n, "results": [{"tokens", "heads", "maps_ms", "shift_ms"}]},
each a {"median", "p95"} over the repetitions.
"""

import argparse
import json
import math
import time

import torch

D_MODEL = 64


def quantile(values, q):
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[min(len(ordered), rank) - 1]


def stats(values):
    return {"median": quantile(values, 0.5), "p95": quantile(values, 0.95)}


def maps(x, w_q, w_k, w_v, heads):
    tokens = x.shape[0]
    d_h = D_MODEL // heads
    q = (x @ w_q.T).view(tokens, heads, d_h).transpose(0, 1)
    k = (x @ w_k.T).view(tokens, heads, d_h).transpose(0, 1)
    v = x @ w_v.T
    a = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d_h), dim=-1)
    return a, v


def shift_stages(a, shift, alpha=0.0, beta=4.0, gamma=0.0):
    shifted = torch.roll(a, shifts=shift, dims=-1)
    d = a - shifted
    g = torch.sigmoid(alpha * a + beta * d + gamma)
    fused = a + g * d
    return shifted, d, g, fused


def timed(fn, reps):
    out = []
    for rep in range(reps):
        t0 = time.perf_counter()
        fn(rep)
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[16, 64, 128, 256, 512])
    parser.add_argument("--heads", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    generator = torch.Generator().manual_seed(9)
    scale = 1.0 / math.sqrt(D_MODEL)
    w_q, w_k, w_v = (torch.randn(D_MODEL, D_MODEL, generator=generator) * scale for _ in range(3))
    results = []
    with torch.inference_mode():
        for tokens in args.tokens:
            x = torch.randn(tokens, D_MODEL, generator=generator)
            for heads in args.heads:
                # Warm-up: first calls allocate and pick kernels.
                for _ in range(3):
                    a, _ = maps(x, w_q, w_k, w_v, heads)
                    shift_stages(a, 1)
                maps_ms = timed(lambda _rep: maps(x, w_q, w_k, w_v, heads), args.reps)
                a, _ = maps(x, w_q, w_k, w_v, heads)
                shift_ms = timed(lambda rep: shift_stages(a, 1 + rep % 8), args.reps)
                results.append(
                    {"tokens": tokens, "heads": heads, "maps_ms": stats(maps_ms), "shift_ms": stats(shift_ms)}
                )
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "results": results}))


if __name__ == "__main__":
    main()
