"""One row of scripts/bench-kernels' table from `callgrind_annotate --inclusive=yes` on stdin.

Usage: callgrind_annotate --inclusive=yes FILE | python3 benches/callgrind_table.py L H PATH
The run is `diffattn bench --reps 1 --warmup-ms 0`: two layers, so every count is halved.
"""

import re
import sys

tokens, heads, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
counts = {}
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) \([^)]*\)\s+\S*?:(\S+)", line)
    if m:
        counts.setdefault(m.group(2), int(m.group(1).replace(",", "")))


def per_layer(*names):
    return sum(counts.get(n, 0) for n in names) / 2


stages = [
    per_layer("diffattn::engine::projection::Projected::new"),
    # `base_maps` calls `base_maps_of`, and may be inlined into the bench: the larger.
    max(
        per_layer("diffattn::engine::mechanism::base_maps"),
        per_layer("diffattn::engine::mechanism::base_maps_of"),
    ),
    per_layer("diffattn::engine::shift_diff::shift_diff_maps_into"),
    per_layer("diffattn::engine::mechanism::output"),
]
cells = heads * tokens * tokens
softmax = per_layer("diffattn::engine::kernels::softmax") + per_layer(
    "diffattn::engine::kernels::softmax_rows"
)
gate = per_layer("diffattn::engine::kernels::difference_gate")
products = per_layer("diffattn::engine::kernels::PackedB::mul_rows")
mega = [f"{v / 1e6:.2f} M" for v in [sum(stages), *stages, products]]
print(
    f"| {tokens} | {path} | {mega[0]} | {mega[1]} | {mega[2]} | {mega[3]} | {mega[4]} | "
    f"{softmax / cells:.1f} | {gate / cells:.1f} | {mega[5]} |"
)
