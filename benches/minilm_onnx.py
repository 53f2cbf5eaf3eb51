"""Exports the real model (all-MiniLM-L6-v2, transformers' BertModel from the set-up's
.data/minilm/: the same safetensors that weights/minilm/minilm.bin is converted from) to ONNX in
float32, for onnxruntime-web in scripts/bench-minilm-web. Inputs `input_ids`, `attention_mask`,
`token_type_ids` (int64, batch 1, any length); output `last_hidden_state`. Eager attention, opset
17, the TorchScript exporter (`dynamo=False`; docs say why in PERFORMANCE.md).

    python benches/minilm_onnx.py MODEL_DIR OUT.onnx

Prints one JSON object: {"torch", "transformers", "onnx", "file", "bytes"}.
"""

import json
import os
import sys

import onnx
import torch
import transformers
from transformers import AutoModel


def main():
    model_dir, out = sys.argv[1], sys.argv[2]
    bert = AutoModel.from_pretrained(model_dir, attn_implementation="eager", dtype=torch.float32)
    bert.eval()

    class Encoder(torch.nn.Module):
        """The model with its three inputs by name (transformers 5 takes more positionally)."""

        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    model = Encoder(bert)
    ids = torch.tensor([[101, 7592, 2088, 102]], dtype=torch.int64)
    mask = torch.ones_like(ids)
    types = torch.zeros_like(ids)
    axes = {0: "batch", 1: "pieces"}
    with torch.inference_mode():
        torch.onnx.export(
            model,
            (ids, mask, types),
            out,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "last_hidden_state": axes},
            opset_version=17,
            dynamo=False,
        )
    onnx.checker.check_model(out)
    print(json.dumps({
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnx": onnx.__version__,
        "file": out,
        "bytes": os.path.getsize(out),
    }))


if __name__ == "__main__":
    main()
