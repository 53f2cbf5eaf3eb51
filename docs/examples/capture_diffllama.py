"""docs/MODELS.md's example: capture layer 1 of a small random DiffLlama and save it.

    python docs/examples/capture_diffllama.py [OUT_DIR]

writes OUT_DIR/diffllama-layer1.json and .safetensors (default: the current directory), which
`diffattn stages` and the page open, and prints λ and the first diff head's A1 − λ·A2 row sums.
Runs in a few seconds on a CPU; no download (the model is built from a config).
"""

import sys
from pathlib import Path

import torch
from transformers import DiffLlamaConfig, DiffLlamaForCausalLM

import diffattn


def main(out_dir="."):
    torch.manual_seed(0)
    config = DiffLlamaConfig(
        vocab_size=100,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=8,  # 4 diff heads: heads h and h + 4 are subtracted
        num_key_value_heads=4,
        attn_implementation="eager",
    )
    model = DiffLlamaForCausalLM(config).eval()
    words = ["the", "cat", "sat", "on", "the", "mat", "."]
    vocabulary = {w: i for i, w in enumerate(sorted(set(words)))}  # a stand-in for a tokenizer
    input_ids = [vocabulary[w] for w in words]

    spec = diffattn.capture(model, input_ids, layer=1, tokens=words, name="random DiffLlama")
    out = Path(out_dir)
    diffattn.save(spec, out / "diffllama-layer1.json")
    diffattn.save(spec, out / "diffllama-layer1.safetensors")

    stages = diffattn.stages(spec)  # every map, float64
    print(f"{spec['mechanism']}, pairing {spec['pairing']}: {spec['heads']} diff heads, {spec['kv_heads']} kv heads, head_dim {spec['head_dim']}")
    print(f"lambda = {stages['lambda']:.4f}")
    print("row sums of A1 - lambda A2 (head 0):", stages["heads"][0]["diff"].sum(axis=1).round(4).tolist())
    return spec, stages


if __name__ == "__main__":
    main(*sys.argv[1:])
