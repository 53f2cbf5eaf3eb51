"""The PyTorch peer of the real model's benchmark (docs/PERFORMANCE.md, "The real model"), run
by scripts/bench-minilm beside `diffattn bench-bert` on the same word pieces.

transformers' BertModel of all-MiniLM-L6-v2 (float32, eager attention, inference mode, the CPU)
on the first N word pieces of TEXTFILE's text (the tokenizer's truncation at N, as ours cuts
it), then mean pooling and L2 normalisation: the whole forward pass `diffattn encode` does.

    python benches/minilm_torch.py MODEL_DIR TEXTFILE [--pieces 16,128,512] [--threads 1]

Prints one JSON object: {"torch", "transformers", "threads", "results": [{"pieces", "reps",
"forward_ms": {"median", "p95"}}]}.
"""

import argparse
import json
import math
import time

import torch
import transformers
from transformers import AutoModel, AutoTokenizer


def quantile(values, q):
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("text_file")
    ap.add_argument("--pieces", default="16,128,512")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tok = AutoTokenizer.from_pretrained(args.model_dir)
    model = AutoModel.from_pretrained(args.model_dir, attn_implementation="eager",
                                      dtype=torch.float32)
    model.eval()
    text = open(args.text_file, encoding="utf-8").read()
    results = []
    for n in [int(p) for p in args.pieces.split(",")]:
        enc = tok(text, return_tensors="pt", truncation=True, max_length=n)
        assert enc["input_ids"].shape[1] == n, enc["input_ids"].shape

        def forward():
            with torch.inference_mode():
                hidden = model(**enc).last_hidden_state[0]
                return torch.nn.functional.normalize(hidden.mean(0), dim=0)

        forward()
        start = time.perf_counter()
        forward()
        once = time.perf_counter() - start
        reps = max(5, min(200, int(2.0 / once)))
        ms = []
        for _ in range(reps):
            start = time.perf_counter()
            forward()
            ms.append((time.perf_counter() - start) * 1e3)
        results.append({"pieces": n, "reps": reps,
                        "forward_ms": {"median": quantile(ms, 0.5), "p95": quantile(ms, 0.95)}})
    print(json.dumps({"torch": torch.__version__, "transformers": transformers.__version__,
                      "threads": torch.get_num_threads(), "results": results}, indent=1))


main()
