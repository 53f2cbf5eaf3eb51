"""Writes the multi-layer capture benches/model-view.mjs draws in the model view:

    python benches/model_view_capture.py OUT.safetensors [--layers 32] [--heads 32]
                                          [--tokens 16] [--seed 0]

Every layer of a random Llama built from a config (no download): `--layers` decoder layers of
`--heads` heads of 8 channels each (hidden size 8 × heads), as many key/value heads, RoPE
θ = 10000, captured by `diffattn.capture(model, input_ids, layers="all")` at `--tokens` tokens
and saved in the binary form (docs/DESIGN.md §7.11: tensors named `layers.I.FIELD`). At the
defaults, 32 × 32 heads, the file is about 34 MB. The tokens are labelled `<word>·<index>`.
Seeded: the same file every run. Prints one JSON line (the shape, the file's size, the time
each step took). Needs torch and transformers (scripts/setup-python).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import diffattn  # noqa: E402

WORDS = "the cat sat on the mat because it was tired and the dog did not".split()
VOCAB = 256
HEAD_DIM = 8


def labels(n):
    """`<word>·<index>` for each of n tokens."""
    return [f"{WORDS[i % len(WORDS)]}\u00b7{i}" for i in range(n)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--heads", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    from transformers import LlamaConfig, LlamaForCausalLM

    timings = {}
    started = time.perf_counter()
    torch.manual_seed(args.seed)
    with torch.no_grad():
        config = LlamaConfig(
            vocab_size=VOCAB,
            hidden_size=HEAD_DIM * args.heads,
            intermediate_size=2 * HEAD_DIM * args.heads,
            num_hidden_layers=args.layers,
            num_attention_heads=args.heads,
            num_key_value_heads=args.heads,
            max_position_embeddings=max(64, args.tokens),
            # Wider than the default 0.02, so that the random maps are not flat.
            initializer_range=0.08,
            attn_implementation="eager",
        )
        model = LlamaForCausalLM(config).eval()
        name = f"random Llama, {args.layers} layers × {args.heads} heads"
        timings["build_s"] = time.perf_counter() - started
        generator = torch.Generator().manual_seed(args.seed)
        input_ids = torch.randint(0, VOCAB, (args.tokens,), generator=generator).tolist()
        t = time.perf_counter()
        spec = diffattn.capture(model, input_ids, layers="all", tokens=labels(args.tokens), name=name)
        timings["capture_s"] = time.perf_counter() - t
    t = time.perf_counter()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    diffattn.save(spec, args.out)
    timings["save_s"] = time.perf_counter() - t
    first = spec["layers"][0]
    print(
        json.dumps(
            {
                "file": str(args.out),
                "bytes": os.path.getsize(args.out),
                "model": name,
                "layers": len(spec["layers"]),
                "heads": first["heads"],
                "mechanism": first["mechanism"],
                "tokens": args.tokens,
                **{k: round(v, 2) for k, v in timings.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
