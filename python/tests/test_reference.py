"""The float64 reference (diffattn.reference): the shared fixtures, hand-derived cases and the
identities DESIGN.md §7 states for RoPE, grouped-query attention, biases, the two pairings,
Differential Transformer V2, hierarchical and gated attention; and errors that name the field."""

import copy
import json
import math

import numpy as np
import pytest
from helpers import SHARED_FIXTURES, max_abs_difference, random_spec, stack

from diffattn.reference import SpecError, stages, to_json


def test_every_shared_fixture_is_reproduced():
    specs = sorted(SHARED_FIXTURES.glob("*.spec.json"))
    assert len(specs) >= 100, f"expected the shared fixtures in {SHARED_FIXTURES}"
    for path in specs:
        want = json.loads(path.with_name(path.name.replace(".spec.", ".expected.")).read_text())
        got = to_json(stages(json.loads(path.read_text())))
        assert max_abs_difference(got, want) < 1e-12, path.name


# --- RoPE ---------------------------------------------------------------------------------------


def test_rope_on_a_hand_made_layer():
    # d = head_dim = 2, W_q = W_k = W_v = W_o = I, x_i = (1, 0). With rotary_dim 2 the one
    # frequency is theta^0 = 1, so q_i = k_i = (cos i, sin i) and the score of (i, j) is
    # cos(i - j) / sqrt(2): row 0 is softmax([1, cos 1] / sqrt 2).
    eye = np.eye(2)
    spec = {"mechanism": "standard", "heads": 1, "causal": False, "x": [[1.0, 0.0]] * 2, "w_q": eye, "w_k": eye, "w_v": eye, "w_o": eye, "rope": {"layout": "half", "theta": 123.0}}
    a = stages(spec)["heads"][0]["a"]
    a01 = 1.0 / (1.0 + math.exp((1.0 - math.cos(1.0)) / math.sqrt(2.0)))
    np.testing.assert_allclose(a, [[1 - a01, a01], [a01, 1 - a01]], atol=1e-15)


def test_rope_sees_only_relative_positions():
    for layout in ("half", "interleaved"):
        spec = random_spec(length=7, d=16, heads=2, rope={"layout": layout, "theta": 10.0})
        moved = copy.deepcopy(spec)
        moved["rope"]["positions"] = list(range(40, 47))
        assert max_abs_difference(stages(moved)["heads"], stages(spec)["heads"]) < 1e-12
        # A permutation of the positions is not a shift: the maps change.
        moved["rope"]["positions"] = [3, 1, 0, 2, 6, 5, 4]
        assert max_abs_difference(stages(moved)["heads"], stages(spec)["heads"]) > 1e-3


def test_half_and_interleaved_layouts_are_a_permutation_of_channels_apart():
    # Half pairs channels (k, k + r/2), interleaved (2k, 2k + 1), both at frequency k: moving
    # row k of each head's W_q and W_k to 2k and row k + r/2 to 2k + 1 turns one into the other.
    dh, heads = 4, 2
    spec = random_spec(length=6, d=8, heads=heads, rope={"layout": "half", "theta": 100.0})
    order = [0, 2, 1, 3]  # interleaved channel c takes half channel order[c]
    rows = [h * dh + c for h in range(heads) for c in order]
    other = copy.deepcopy(spec)
    other["rope"]["layout"] = "interleaved"
    other["w_q"], other["w_k"] = spec["w_q"][rows], spec["w_k"][rows]
    assert max_abs_difference(stages(other), stages(spec)) < 1e-12
    other["w_q"], other["w_k"] = spec["w_q"], spec["w_k"]
    assert max_abs_difference(stages(other)["heads"], stages(spec)["heads"]) > 1e-3


def test_partial_rotary_leaves_the_other_channels_alone():
    # rotary_dim 2 of head_dim 4: with W_q, W_k zero on channels 0..1, no channel that carries
    # a score is rotated, so the maps are those without rope.
    spec = random_spec(length=5, d=8, heads=2, causal=False)
    for w in ("w_q", "w_k"):
        spec[w][[0, 1, 4, 5]] = 0.0
    rotated = dict(spec, rope={"layout": "interleaved", "theta": 10.0, "rotary_dim": 2})
    assert max_abs_difference(stages(rotated), stages(spec)) < 1e-12
    rotated["rope"]["rotary_dim"] = 4
    assert max_abs_difference(stages(rotated)["heads"], stages(spec)["heads"]) > 1e-3


def test_attention_scaling_scales_queries_and_keys():
    spec = random_spec(length=5, d=8, heads=2, rope={"layout": "half", "theta": 10.0, "attention_scaling": 1.5})
    plain = dict(spec, rope={"layout": "half", "theta": 10.0}, w_q=spec["w_q"] * 1.5, w_k=spec["w_k"] * 1.5)
    assert max_abs_difference(stages(spec), stages(plain)) < 1e-12


def test_inv_freq_is_the_frequencies_theta_gives():
    spec = random_spec(length=5, d=8, heads=2, rope={"layout": "half", "theta": 50.0})
    explicit = dict(spec, rope={"layout": "half", "inv_freq": [1.0, 50.0**-0.5]})
    assert max_abs_difference(stages(spec), stages(explicit)) < 1e-12


# --- grouped-query attention, head width, biases ----------------------------------------------------


def test_grouped_query_attention_is_multi_head_with_repeated_keys_and_values():
    # kv_heads 2 of 4 heads: query heads 0, 1 use key/value head 0 and heads 2, 3 head 1.
    spec = random_spec(length=6, d=16, heads=4, kv_heads=2, rope={"layout": "half", "theta": 10.0})
    dh = 4
    rows = [g * dh + c for g in (0, 0, 1, 1) for c in range(dh)]
    full = dict(spec, w_k=spec["w_k"][rows], w_v=spec["w_v"][rows])
    del full["kv_heads"]
    for mechanism in ("standard", "local", "cosine", "hierarchical"):
        extra = {"window": 1, "tau": 3.0, "segment": 2}
        assert max_abs_difference(stages(dict(spec, mechanism=mechanism, **extra)), stages(dict(full, mechanism=mechanism, **extra))) < 1e-12


def test_head_dim_wider_than_d_over_heads():
    spec = random_spec(length=4, d=8, heads=2, head_dim=6)
    result = stages(spec)
    assert stack(result, "a").shape == (2, 4, 4) and result["output"].shape == (4, 8)


def test_a_value_bias_adds_w_o_b_v_to_every_row():
    # Rows of A sum to 1, so A·(V + 1 b_vᵀ) = A·V + 1 b_vᵀ; the output moves by W_o b_v (+ b_o).
    spec = random_spec(length=5, d=8, heads=2)
    b_v, b_o = np.arange(8) / 8.0, np.full(8, 0.25)
    shifted = stages(dict(spec, b_v=b_v, b_o=b_o))["output"] - stages(spec)["output"]
    np.testing.assert_allclose(shifted, np.tile(spec["w_o"] @ b_v + b_o, (5, 1)), atol=1e-12)


def test_a_key_bias_changes_nothing_a_query_bias_does():
    # q·(k + b) = q·k + q·b: the same for every key, so softmax ignores it.
    spec = random_spec(length=5, d=8, heads=2)
    assert max_abs_difference(stages(dict(spec, b_k=np.ones(8))), stages(spec)) < 1e-12
    assert max_abs_difference(stages(dict(spec, b_q=np.ones(8)))["heads"], stages(spec)["heads"]) > 1e-3


# --- the Differential Transformer's pairings and λ ------------------------------------------------


def test_without_grouping_the_two_pairings_are_a_permutation_of_heads_apart():
    # adjacent: diff head h = query and key heads 2h, 2h+1, value head h (2 dh wide); halves:
    # query and key heads h and h + H, value heads h and h + H joined.
    heads, dh = 3, 2
    spec = random_spec("diff_transformer", length=7, d=12, heads=heads, rope={"layout": "half", "theta": 10.0}, pairing="halves")
    blocks = [i // 2 + (i % 2) * heads for i in range(2 * heads)]  # adjacent block i is halves block blocks[i]
    rows = [b * dh + c for b in blocks for c in range(dh)]
    adjacent = dict(spec, pairing="adjacent", w_q=spec["w_q"][rows], w_k=spec["w_k"][rows], w_v=spec["w_v"][rows])
    assert max_abs_difference(stages(adjacent), stages(spec)) < 1e-12
    assert max_abs_difference(stages(dict(spec, pairing="adjacent")), stages(spec)) > 1e-3


def test_grouped_pairings_pick_key_heads_as_their_code_does():
    # 4 diff heads, kv_heads 2: the official code repeats its 2·kv key heads over 2H query heads,
    # so query heads 2h and 2h+1 both use key head h; DiffLlama's query heads h and h + H use
    # key heads h // 2 and h // 2 + kv. With twin query heads (2h = 2h+1, or h = h + H), the
    # official code's A1 and A2 are then equal and DiffLlama's are not.
    spec = random_spec("diff_transformer", length=6, d=16, heads=4, kv_heads=2)
    dh, w_q = 2, spec["w_q"].copy()
    for h in range(4):
        w_q[(2 * h + 1) * dh : (2 * h + 2) * dh] = w_q[2 * h * dh : (2 * h + 1) * dh]
    adjacent = stages(dict(spec, w_q=w_q, pairing="adjacent"))
    np.testing.assert_allclose(stack(adjacent, "a1"), stack(adjacent, "a2"), atol=1e-15)
    w_q = spec["w_q"].copy()
    w_q[8:16] = w_q[0:8]
    halves = stages(dict(spec, w_q=w_q, pairing="halves"))
    assert np.max(np.abs(stack(halves, "a1") - stack(halves, "a2"))) > 1e-3


def test_lambda_from_depth_or_lambda_init():
    spec = random_spec("diff_transformer", length=4, d=8, heads=1)
    for p in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
        spec[p] = np.zeros(4)
    # λ = exp(0) - exp(0) + λ_init, λ_init(0) = 0.8 - 0.6 = 0.2.
    assert stages(dict(spec, depth=0))["lambda"] == pytest.approx(0.2, abs=1e-15)
    by_depth = stages(dict(spec, depth=3))
    del spec["depth"]
    by_init = stages(dict(spec, lambda_init=0.8 - 0.6 * math.exp(-0.9)))
    assert max_abs_difference(by_depth, by_init) < 1e-12


def test_the_temperature_divides_both_maps_scores():
    # Scores over T are the scores of queries over T: the same maps with w_q (no bias) / T.
    spec = random_spec("diff_transformer", length=5, d=8, heads=1)
    hot = stages(dict(spec, temperature=2.5))
    cooled_queries = stages(dict(spec, w_q=spec["w_q"] / 2.5))
    assert max_abs_difference(hot, cooled_queries) < 1e-12
    assert max_abs_difference(stages(dict(spec, temperature=1.0)), stages(spec)) == 0.0
    # By hand (tests/engine_cases.rs): W = I, d_h = 2, a first row of scores [ln 3, 0]:
    # softmax([ln 3 / 2, 0]) = [√3, 1] / (√3 + 1) at T = 2.
    eye = np.eye(4)
    s = math.sqrt(math.sqrt(2) * math.log(3))
    hand = {"mechanism": "diff_transformer", "heads": 1, "causal": False, "x": np.array([[s, 0, 0, 0], [0, 0, 0, 0.0]]),
            "w_q": eye, "w_k": eye, "w_v": eye, "w_o": eye, "depth": 0, "temperature": 2.0,
            **{p: np.zeros(2) for p in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2")}}
    a1 = stages(hand)["heads"][0]["a1"]
    assert a1[0] == pytest.approx([math.sqrt(3) / (math.sqrt(3) + 1), 1 / (math.sqrt(3) + 1)], abs=1e-12)
    with pytest.raises(SpecError, match="temperature"):
        stages(dict(spec, temperature=0))


def test_no_subln_weight_is_a_weight_of_ones():
    spec = random_spec("diff_transformer", length=5, d=8, heads=1)
    assert max_abs_difference(stages(spec), stages(dict(spec, subln=np.ones(8)))) < 1e-12


def test_v2_lambda_is_a_sigmoid_per_token_and_head():
    spec = random_spec("diff_transformer_v2", length=5, d=8, heads=2, head_dim=4)
    result = stages(dict(spec, w_lambda=np.zeros((2, 8))))
    np.testing.assert_array_equal(result["lambda"], np.full((5, 2), 0.5))
    np.testing.assert_allclose(stack(result, "diff"), stack(result, "a1") - 0.5 * stack(result, "a2"), atol=1e-15)
    lam = stages(spec)["lambda"]
    np.testing.assert_allclose(lam, 1.0 / (1.0 + np.exp(-spec["x"] @ spec["w_lambda"].T)), atol=1e-15)


def test_v2_with_twin_query_heads_scales_each_row_by_one_minus_lambda():
    # When query heads 2h and 2h+1 are equal, A1 = A2 and the diff map is (1 - λ_i)·A1, so the
    # output is standard attention with each value row of head h scaled by 1 - λ[i, h].
    spec = random_spec("diff_transformer_v2", length=6, d=8, heads=2, kv_heads=1, head_dim=4)
    w_q = spec["w_q"].copy()
    w_q[4:8], w_q[12:16] = w_q[0:4], w_q[8:12]
    result = stages(dict(spec, w_q=w_q))
    lam = result["lambda"]
    standard = stages(dict(spec, mechanism="standard", w_q=w_q[[*range(0, 4), *range(8, 12)]]))
    for h in range(2):
        np.testing.assert_allclose(result["heads"][h]["diff"], (1 - lam[:, h : h + 1]) * standard["heads"][h]["a"], atol=1e-14)


# --- gated attention ------------------------------------------------------------------------------


def test_gated_attention_by_hand():
    # x = I, weights I, two heads of one channel (DESIGN.md §4.1): head 0's row 0 scores
    # [1, 0] give A·V = e/(e+1) = 0.73106, its row 1 is uniform (0.5); head 1 mirrors it.
    # W_og = diag(ln 3, -ln 3): gates [3/4, 1/2] for token 0 and [1/2, 1/4] for token 1.
    ln3 = math.log(3.0)
    eye = np.eye(2)
    spec = {"mechanism": "gated_attention", "heads": 2, "causal": False, "x": eye, "w_q": eye, "w_k": eye, "w_v": eye, "w_o": eye, "w_output_gate": np.diag([ln3, -ln3])}
    result = stages(spec)
    s = math.e / (math.e + 1)
    np.testing.assert_allclose(result["output_gate_mean"], [[0.75, 0.5], [0.5, 0.25]], atol=1e-15)
    np.testing.assert_allclose(result["output"], [[0.75 * s, 0.25], [0.25, 0.25 * s]], atol=1e-15)
    np.testing.assert_allclose(result["heads"][1]["gated"], [[0.25], [0.25 * s]], atol=1e-15)


@pytest.mark.parametrize("causal", [False, True])
def test_gated_attention_is_standard_attention_halved_opened_and_closed_by_its_gate(causal):
    spec = random_spec("gated_attention", length=6, d=16, heads=4, kv_heads=2, causal=causal, seed=3)
    plain = {k: v for k, v in spec.items() if k != "w_output_gate"}
    standard = stages(dict(plain, mechanism="standard"))
    np.testing.assert_array_equal(stack(stages(spec), "a"), stack(standard, "a"))
    half = stages(dict(spec, w_output_gate=np.zeros((16, 16))))
    np.testing.assert_allclose(half["output"], 0.5 * standard["output"], atol=1e-14)
    opened = stages(dict(spec, b_output_gate=np.full(16, 60.0)))
    np.testing.assert_allclose(opened["output"], standard["output"], atol=1e-12)
    closed = stages(dict(spec, b_output_gate=np.full(16, -60.0)))
    np.testing.assert_allclose(closed["output"], 0.0, atol=1e-12)
    gate = stages(spec)["heads"][1]["output_gate"]
    assert np.all((gate > 0) & (gate < 1))


def test_bad_gated_attention_specs_name_their_field():
    spec = random_spec("gated_attention", length=4, d=8, heads=2)
    with pytest.raises(SpecError, match="w_output_gate"):
        stages({k: v for k, v in spec.items() if k != "w_output_gate"})
    with pytest.raises(SpecError, match="w_output_gate"):
        stages(dict(spec, w_output_gate=np.zeros((4, 8))))
    with pytest.raises(SpecError, match="b_output_gate"):
        stages(dict(spec, b_output_gate=np.zeros(3)))
    with pytest.raises(SpecError, match="only gated_attention"):
        stages(dict(spec, mechanism="standard"))


# --- hierarchical ---------------------------------------------------------------------------------


def test_hierarchical_by_hand():
    # One head of width 1, W = 1, x = (0, 1, 2), segments {0, 1} and {2} (segment 2, no mask).
    # Token 2's key set is itself (score 2·2) and segment 0's mean key 0.5 (score 2·0.5);
    # token 1 sees keys 0 and 1 and segment 1's mean 2: softmax([0, 1, 2]).
    one = [[1.0]]
    spec = {"mechanism": "hierarchical", "heads": 1, "causal": False, "segment": 2, "x": [[0.0], [1.0], [2.0]], "w_q": one, "w_k": one, "w_v": one, "w_o": one}
    head = stages(spec)["heads"][0]
    p = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    s = 1.0 / (math.e**3 + 1.0)  # e^1 / (e^4 + e^1)
    np.testing.assert_allclose(head["local"], [[1 / 3, 1 / 3, 0], [p[0], p[1], 0], [0, 0, 1 - s]], atol=1e-15)
    np.testing.assert_allclose(head["segments"], [[0, 1 / 3], [0, p[2]], [s, 0]], atol=1e-15)
    np.testing.assert_allclose(head["a"], [[1 / 3, 1 / 3, 1 / 3], [p[0], p[1], p[2]], [s / 2, s / 2, 1 - s]], atol=1e-15)
    out = stages(spec)["output"][:, 0]
    np.testing.assert_allclose(out, [1.0, p[1] + 2 * p[2], 2 * (1 - s) + 0.5 * s], atol=1e-15)


@pytest.mark.parametrize("causal", [False, True])
def test_hierarchical_is_standard_attention_at_segment_1_and_at_segment_L(causal):
    # Segment 1: every summary is a token itself. Segment >= L: one segment, all local.
    spec = random_spec(length=7, d=16, heads=2, kv_heads=1, causal=causal, rope={"layout": "half", "theta": 10.0})
    standard = stages(spec)
    for size in (1, 7, 50):
        got = stages(dict(spec, mechanism="hierarchical", segment=size))
        np.testing.assert_allclose(stack(got, "a"), stack(standard, "a"), atol=1e-12)
        np.testing.assert_allclose(got["output"], standard["output"], atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_hierarchical_maps_keep_to_their_cells(causal):
    spec = random_spec("hierarchical", length=10, d=8, heads=2, causal=causal, segment=3)
    for head in stages(spec)["heads"]:
        segment_of = np.arange(10) // 3
        own = segment_of[:, None] == segment_of[None, :]
        assert np.all(head["local"][~own] == 0)
        assert np.all(head["segments"][np.arange(10), segment_of] == 0)
        if causal:
            assert np.all(np.triu(head["local"], 1) == 0)
            later = np.arange(4)[None, :] > segment_of[:, None]
            assert np.all(head["segments"][later] == 0)
        np.testing.assert_allclose(head["a"].sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(head["local"].sum(axis=1) + head["segments"].sum(axis=1), 1.0, atol=1e-12)


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change, field, words",
    [
        (dict(mechanism="hierarchy"), "mechanism", "expected one of"),
        (dict(kv_heads=3), "kv_heads", "expected a divisor of heads 4, found 3"),
        (dict(kv_heads=2), "w_k", "key heads 2 x head_dim 4"),
        (dict(heads=3), "heads", "give head_dim"),
        (dict(b_q=[1.0, 2.0]), "b_q", "expected 16 values"),
        (dict(rope={"layout": "rotate", "theta": 1.0}), "rope.layout", "'half' or 'interleaved'"),
        (dict(rope={"layout": "half"}), "rope", "exactly one of theta and inv_freq"),
        (dict(rope={"layout": "half", "theta": 1.0, "inv_freq": [1, 1]}), "rope", "exactly one of theta and inv_freq"),
        (dict(rope={"layout": "half", "theta": 1.0, "rotary_dim": 3}), "rope.rotary_dim", "even integer"),
        (dict(rope={"layout": "half", "inv_freq": [1.0]}), "rope.inv_freq", "expected 2 values"),
        (dict(rope={"layout": "half", "theta": 1.0, "positions": [0, 1]}), "rope.positions", "6 integers"),
        (dict(rope={"layout": "half", "theta": 1.0, "positions": [0, 1, 2, 3, 4, 5.5]}), "rope.positions", "non-negative integers"),
        (dict(mechanism="input_diff", rope={"layout": "half", "theta": 1.0}), "rope", "input_diff"),
        (dict(tokens=["a", "b"]), "tokens", "expected 6 labels"),
        (dict(layer=-1), "layer", "at least 0"),
        (dict(mechanism="hierarchical"), "segment", "missing"),
        (dict(mechanism="hierarchical", segment=0), "segment", "at least 1"),
    ],
)
def test_bad_specs_name_their_field(change, field, words):
    spec = random_spec(length=6, d=16, heads=4)
    spec.update(change)
    with pytest.raises(SpecError) as error:
        stages(spec)
    assert error.value.field == field and words in str(error.value), str(error.value)


@pytest.mark.parametrize(
    "change, field, words",
    [
        (dict(pairing="halfs"), "pairing", "'adjacent', 'halves'"),
        (dict(lambda_init=0.5), "depth", "exactly one of depth and lambda_init"),
        (dict(subln=[1.0, 1.0]), "subln", "expected 8 values"),
        (dict(w_v=np.zeros((4, 16))), "w_v", "expected 8 x 16"),
    ],
)
def test_bad_diff_transformer_specs_name_their_field(change, field, words):
    spec = random_spec("diff_transformer", length=5, d=16, heads=2, kv_heads=1)
    spec.update(change)
    with pytest.raises(SpecError) as error:
        stages(spec)
    assert error.value.field == field and words in str(error.value), str(error.value)


def test_bad_v2_specs_name_their_field():
    spec = random_spec("diff_transformer_v2", length=5, d=16, heads=2)
    spec["w_lambda"] = np.zeros((3, 16))
    with pytest.raises(SpecError, match=r"^w_lambda: expected 2 x 16 \(heads, d_model\)"):
        stages(spec)
