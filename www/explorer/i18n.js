// Every user-visible string of the page, in English here and in Simplified Chinese in
// i18n-zh.js, which is loaded the first time an explorer speaks Chinese (`loadStrings`, a
// chunk of the bundle: docs/PERFORMANCE.md "Size of each build"); English is the fallback of
// every key.
//
// The dictionary is plain data so node's test runner can check it without a browser
// (tests/e2e/page-logic.test.mjs: both languages have the same keys and the same {placeholders}).
// Stage names (A, shift(A), D, G, A′, A1, A2) and formulas are mathematics and are not
// translated. Placeholders are `{name}`; `format` fills them, `formatParts` keeps
// non-string values (DOM nodes) so the page never builds HTML from text.

/** The languages the page speaks, in the order the toggle cycles through them. */
export const LANGUAGES = Object.freeze(['en', 'zh']);

export const STRINGS = Object.freeze({
  en: Object.freeze({
    page_title: 'diffattn: differential attention, every stage',
    title: 'Differential attention, every stage',
    lede: 'Type a sentence. The page computes its attention map A, shifts it, takes the difference D, gates it with G and fuses A′ = A + G ⊙ D, live, in your browser.',
    skip: 'Skip to the maps',
    lesson_link: 'Retrieval lesson',
    noise_link: 'Noise lesson',
    model_untrained: 'Weights: untrained (seeded random), d_model = {d}',
    model_trained: 'Weights: trained ({mech}), d_model = {d}',
    model_loading: 'Weights: loading the trained {mech} model…',
    model_label: 'Weights',
    model_opt_trained: 'trained (default)',
    model_opt_untrained: 'untrained (seeded)',
    model_opt_minilm: 'pretrained: all-MiniLM-L6-v2',
    model_pretrained: 'Weights: pretrained {name}, layer {layer} of {layers}, d_model = {d}',
    pretrained_loading: 'Loading the pretrained model all-MiniLM-L6-v2 ({done} of {total} MB)…',
    pretrained_loading_start: 'Loading the pretrained model all-MiniLM-L6-v2 (about 45 MB)…',
    pretrained_failed: 'Could not load the pretrained model ({msg}). The page now uses the untrained model.',
    pretrained_note: 'A real pretrained BERT (6 layers × 12 heads, trained on sentence similarity, not sentiment): each row is one word piece. Standard attention at 12 heads draws the model’s own maps; the other mechanisms run on this layer’s real projections, with the parameters of their sliders (none was learned here).',
    prediction_none_pretrained: 'no prediction: the pretrained model was not trained on sentiment',
    retry: 'Try again',
    layer_label: 'Layer',
    other_label: 'Compare with a second sentence',
    similarity_title: 'Similarity',
    similarity_value: '{model} (cosine of the model’s sentence embeddings)',
    similarity_moved: 'with {mech} at layer {layer} in place of the model’s attention: {value}',
    similarity_none: 'type a second sentence under Weights: the model was trained to put sentences of similar meaning close together',
    partner_label: 'A2: the layer’s head',
    partner_next: 'the next head (now {n})',
    partner_note: 'A1 is the head shown, A2 another head of the same layer: the difference cancels what both put on the same keys (often [CLS] and [SEP]). The next head is only a starting point; try others.',
    layer_option: 'layer {n} of {total}',
    weights_loading: 'Loading the trained weights for {mech} ({kb} KB)…',
    busy_computing: 'Computing the shown head over {n} tokens…',
    busy_typing: 'The shown head has {n} tokens: the maps follow when you pause typing.',
    busy_heads: 'Computing head {done} of {total} ({n} tokens)…',
    files_failed: 'Could not load the spec reader ({msg}): specs cannot be opened. Pick the file again, or reload the page.',
    weights_failed: 'Could not load the trained weights for {mech} ({msg}). The page now uses the untrained model; choose “trained” under Weights to try again.',
    weights_missing: 'no trained file for this mechanism',
    prediction_title: 'Sentiment',
    prediction_value: '{label} · {p} %',
    sentiment_positive: '▲ Positive',
    sentiment_negative: '▼ Negative',
    prediction_meter: 'probability {p} %',
    prediction_none_untrained: 'no prediction: the untrained model has random weights',
    prediction_none_loading: 'waiting for the trained weights…',
    prediction_computing: 'computing the other heads…',
    prediction_none_spec: 'no prediction for a spec file',
    prediction_none_empty: 'no prediction: the sentence is empty',
    prediction_none_mechanism: 'no prediction: these weights were trained for another mechanism',
    trained_with: 'Trained with: {settings}',
    trained_with_accuracy: '{settings} (test accuracy EN {en} %, ZH {zh} %)',
    tw_heads: '{n} heads',
    tw_heads_one: '1 head',
    tw_causal: 'causal mask',
    tw_no_causal: 'no causal mask',
    moved_away: 'You moved away from the trained settings ({what}): the prediction is what the same weights give under your settings.',
    moved_gate: 'gate sliders',
    moved_heads: 'heads',
    moved_causal: 'causal mask',
    moved_shift: 'k',
    moved_difference: 'difference',
    moved_fill: 'fill',
    moved_renormalize: 'renormalisation',
    moved_tau: 'τ',
    moved_window: 'w',
    moved_segment: 's',
    moved_lambda: 'λ',
    moved_temperature: 'T',
    model_doc_link: 'What happens to the per-head parameters',
    back_to_trained: 'Back to the trained settings',
    gate_learned: 'The gate is the trained per-head gate (the sliders show its mean) until you move a slider.',
    model_spec: 'Vectors and weights: from {name}, d_model = {d}',
    lang_switch: '中文',
    lang_switch_label: '切换到中文 (switch to Chinese)',
    loading: 'Loading the WebAssembly engine…',
    load_failed: 'The engine could not load: {msg}',
    controls_label: 'Controls',
    group_text: 'Text',
    sentence_label: 'Sentence',
    sentence_placeholder: 'Type a sentence…',
    presets_label: 'Examples',
    presets_choose: 'Choose an example…',
    preset_group_en: 'English',
    preset_group_zh: 'Chinese',
    spec_open: 'Open a spec file…',
    spec_hint: 'Your own vectors and weights, or a layer captured from your model: a stages spec (.json or .safetensors), also by dropping it on the page.',
    spec_active: 'Drawing your file {name}: {n} tokens, labelled t0, t1, …',
    spec_active_labelled: 'Drawing your file {name}: {n} tokens.',
    spec_active_layer: 'Drawing {layer} from {name}: {n} tokens.',
    spec_back: 'Back to the sentence',
    spec_error: 'Could not draw {name}: {msg}',
    spec_read_error: 'Could not read {name}.',
    drop_here: 'Drop a spec file to draw it',
    group_mech: 'Mechanism',
    mechanism_label: 'Mechanism',
    mech_shift_diff: 'Shift-difference gated',
    mech_standard: 'Standard softmax',
    mech_diff_transformer: 'Differential Transformer',
    mech_input_diff: 'Input difference',
    mech_cosine: 'Cosine',
    mech_local: 'Local window',
    mech_diff_transformer_v2: 'Differential Transformer V2',
    mech_hierarchical: 'Hierarchical (segments)',
    mech_gated_attention: 'Gated attention (output gate)',
    causal_label: 'Causal mask (no looking ahead)',
    heads_label: 'Number of heads',
    heads_value: '{h} × width {dh}',
    heads_valuetext: '{n} heads',
    heads_valuetext_one: '1 head',
    head_label: 'Head shown',
    head_option: 'head {n} of {total}',
    all_heads_label: 'Every head side by side',
    group_shift: 'Shift and difference',
    shift_label: 'Shift k',
    shift_value: 'k = {k} · k mod L = {m}',
    shift_value_empty: 'k = {k}',
    difference_label: 'Difference D',
    difference_single: 'single: A − shiftₖ(A)',
    difference_symmetric: 'symmetric: shift₋ₖ − shiftₖ',
    fill_label: 'Shift fill',
    fill_circular: 'circular (wraps around)',
    fill_zero: 'zero (drops the rest)',
    renorm_label: 'Renormalise A′',
    renormalize_none: 'none',
    renormalize_softmax: 'softmax per row',
    group_gate: 'Gate G',
    alpha_label: 'α, weight on A',
    beta_label: 'β, weight on D',
    gamma_label: 'γ, bias',
    gate_from_spec: 'The gate comes from your file (one α, β, γ per head).',
    group_params: 'Parameters',
    tau_label: 'Temperature τ',
    window_label: 'Window w (radius)',
    segment_label: 'Segment size s (tokens)',
    lambda_label: 'λ, weight on A2',
    temperature_label: 'Softmax temperature T',
    lambda_learned_trained: 'λ is the trained model’s (the slider shows it) until you move the slider.',
    lambda_learned_captured: 'λ is the loaded layer’s own (the slider shows it) until you move the slider.',
    lambda_learned_seeded: 'λ comes from the seeded parameters (the slider shows it) until you move the slider.',
    lambda_learned_token_trained: 'The trained λ is one per token and head, σ(x·W_λ), drawn as the map λ; the slider shows their mean. Moving it gives every token one λ.',
    lambda_learned_token_captured: 'The layer’s λ is one per token and head, σ(x·W_λ), drawn as the map λ; the slider shows their mean. Moving it gives every token one λ.',
    lambda_learned_token_seeded: 'λ is one per token and head, σ(x·W_λ) with seeded W_λ, drawn as the map λ; the slider shows their mean. Moving it gives every token one λ.',
    lambda_yours: 'Your λ replaces the learned one: A1 − λ·A2 and the output follow the slider.',
    lambda_yours_token: 'Your λ replaces σ(x·W_λ) for every token and head: A1 − λ·A2 and the output follow the slider.',
    lambda_back_trained: 'Back to the trained λ',
    lambda_back_captured: 'Back to the layer’s λ',
    lambda_back_seeded: 'Back to the seeded λ',
    lambda_learned_pretrained: 'Nothing was learned here (a standard model): λ is the paper’s λ_init at this layer’s depth until you move the slider.',
    lambda_back_pretrained: 'Back to λ_init',
    heads_fixed: '{shown} (fixed)',
    heads_fixed_title: 'The loaded layer’s weights fix its heads.',
    heads_fixed_paired_title: 'Each of the model’s heads is paired with a partner head (A2): as many heads as the model has.',
    group_export: 'Export',
    export_map_label: 'What to export',
    export_panel: 'all maps (panel)',
    export_png: 'PNG',
    export_svg: 'SVG',
    export_json: 'JSON (opens again)',
    export_json_model: 'The JSON is one layer, which opens again: open a head (click it) to export its layer.',
    maps_label: 'Attention maps',
    tokens_count: '{n} tokens',
    pieces_count: '{n} word pieces',
    truncated_pieces: 'The text has {total} word pieces; the model reads at most {shown} (its positions, [CLS] and [SEP] included), so the rest is cut.',
    truncated: 'The text has {total} tokens; only the first {shown} are drawn (the page’s limit; `diffattn stages` runs longer inputs).',
    lambda_value: 'λ = {v}',
    timing: 'computed in {c} ms, drawn in {d} ms',
    empty_hint: 'Type a sentence in the box above, or pick an example, to see its attention maps.',
    stage_a: 'attention',
    stage_shifted: 'attention shifted by k = {k}',
    stage_shifted_back: 'attention shifted by −k = {mk}',
    stage_d: 'difference',
    stage_g: 'gate',
    stage_fused: 'fused attention',
    stage_a1: 'first softmax map',
    stage_a2: 'second softmax map',
    stage_diff: 'differential attention',
    stage_lambda: 'λ per token (rows) and head (columns)',
    stage_output_gate_mean: 'output gate Gₒ, mean over each head’s channels, per token (rows) and head (columns)',
    stage_local: 'attention within the own segment',
    stage_segments: 'attention to the other segments’ summaries',
    stage_other: 'map',
    aria_map: '{name}, head {h} of {total}: {desc} of {n} tokens',
    map_keys_hint: 'Arrow keys move the selected cell, Escape clears it; on a long map + and − zoom and 0 shows it whole.',
    all_heads_hint: 'Click a map to show the stages of that head.',
    tip_query: 'query',
    tip_key: 'key',
    readout_cell: 'Row {i}, query {q} → column {j}, key {k}',
    readout_rowsums: 'Row {i} sums: {sums}',
    readout_sink: 'The learned sink takes {v} of this row: it joins the softmax as one more key and is dropped, so the row sums to less than 1.',
    readout_sinks: 'The learned sinks take {list} of this row: each joins its map’s softmax as one more key and is dropped, so those rows sum to less than 1.',
    readout_sink_cell: 'Row {i}, query {q} → the learned sink (the strip beside the map, not a key)',
    readout_masked: 'This cell is masked: the query may not look at this key, so its attention is 0 here.',
    model_opt_spec: 'from your file',
    views_label: 'View',
    view_explore: 'Explore',
    view_walk: 'Guided walk',
    view_compare: 'Compare',
    view_model: 'Model',
    present: 'Present',
    present_title: 'Present: full screen, large type (P)',
    more_shift: 'Difference, fill, renormalisation',
    more_gate: 'α, β, γ',
    group_view: 'View',
    group_heads: 'Heads and mask',
    shared_scale_label: 'One colour scale for all maps',
    all_heads_stage_label: 'Map shown for every head',
    export_size_label: 'PNG size',
    export_size_1: 'as on screen',
    export_size_2: 'twice as large (2×)',
    export_size_1920: '1920 px wide, for slides',
    heads_explain: 'The trained model learned one gate (α, β, γ) per head at its trained head count. With another count the same channels are split differently, so each new head takes the mean of the trained heads whose channels it covers; the Differential Transformer keeps its one λ exactly. The maps then show what the same weights do under your settings, not what the model learned to do.',
    walk_back: '← Back',
    walk_next: 'Next →',
    walk_title: 'Step {n} of {total}: {name}',
    walk_output_name: 'the output',
    walk_a: 'Each row is one token, the query, sharing out its attention over the keys (the columns); every row sums to 1. The brightest cell: «{q}» attends most to «{key}» ({v}).',
    walk_a_sink: 'Each row is one token, the query, sharing out its attention over the keys (the columns) and this layer’s learned sink, which takes its share and is dropped: so every row sums to less than 1, and the strip right of the map, labelled sink, is what the sink took of each row. The brightest cell: «{q}» attends most to «{key}» ({v}).',
    walk_sink: 'This layer’s learned sink takes a share of each row of this map and is dropped, so its rows sum to less than 1: the strip right of the map, labelled sink, is what it took.',
    walk_shifted: 'The same rows, moved {k} column(s) to the right ({fill}): what a token gave to key j now sits on key j + {k}. It asks: what did my neighbour attend to? Its brightest cell is now «{q}» → «{key}» ({v}).',
    walk_shifted_back: 'The rows moved {k} column(s) the other way, to the left ({fill}), for the symmetric difference. Brightest: «{q}» → «{key}» ({v}).',
    walk_d: 'D = A − shift(A): purple where a token attends more to a key than its shifted copy does, orange where less, near-white where they agree. The darkest purple cell, «{q}» → «{key}» (+{v}), is where attention is sharper than its neighbour’s; the deepest orange, «{q_min}» → «{key_min}» ({v_min}), where it is weaker.',
    walk_g: 'G = σ(α·A + β·D + γ) decides, cell by cell, how much of D to let through (0 closed, 1 open). It is most open at «{q}» → «{key}» ({v}) and most closed at «{q_min}» → «{key_min}» ({v_min}).',
    walk_fused: 'A′ = A + G ⊙ D: attention sharpened where the gate opened. Its largest cell is «{q}» → «{key}» ({v}); it can go below 0 (orange), lowest at «{q_min}» → «{key_min}» ({v_min}). Rows need not sum to 1 any more.',
    walk_a1: 'A1, the first of the two softmax maps each diff head makes. Brightest: «{q}» → «{key}» ({v}).',
    walk_a2: 'A2, the second map, from the other half of the head’s queries and keys. Brightest: «{q}» → «{key}» ({v}).',
    walk_diff: 'A1 − λ·A2 ({lambda}): attention both maps share, the noise, cancels; what is left can be negative. Largest: «{q}» → «{key}» ({v}); lowest: «{q_min}» → «{key_min}» ({v_min}).',
    walk_output: 'The layer’s output: every token’s new vector, the values mixed by the final map’s row and projected back by W_o (one row per token, one column per channel). The next layer, or the classifier, reads this.',
    walk_other: 'Brightest cell: «{q}» → «{key}» ({v}); lowest: «{q_min}» → «{key_min}» ({v_min}).',
    walk_fill_zero: 'what falls off the end is dropped',
    walk_fill_circular: 'what falls off the end comes back at the start',
    row_close: 'Close the row view',
    row_view_title: 'Row {i}: what «{q}» draws from each key, in every stage',
    row_view_aria: 'Row view of row {i}, query {q}: one line per stage over {n} keys',
    compare_aria: '{name}: the final map of {n} tokens',
    compare_matched: 'Its head whose {own} is closest to the shown {ref} (cosine {cos}): head numbers differ from model to model.',
    compare_shown: 'The model and head the explorer shows.',
    compare_unmatched: 'Its first head (too many tokens to match heads).',
    aria_output: 'The layer output: {n} tokens by {d} channels',
    output_caption: 'O = A′·V·W_oᵀ (rows: tokens, columns: channels)',
    unknown_some: '{u} of {n} tokens are unknown to this model (it reads them as <unk>; marked † on the axes): {words}.',
    unknown_most: 'Most tokens ({u} of {n}) are unknown to this model (read as <unk>; marked † on the axes): the prediction means little. Unknown: {words}.',
    lede_shift_diff: 'Type a sentence. The page computes its attention map A, shifts it, takes the difference D, gates it with G and fuses A′ = A + G ⊙ D, live, in your browser.',
    lede_diff_transformer: 'Type a sentence. The page computes the Differential Transformer’s two attention maps A1 and A2 and subtracts them, A1 − λ·A2, live, in your browser.',
    lede_standard: 'Type a sentence. The page computes its attention map A = softmax(QKᵀ/√dₕ), live, in your browser.',
    lede_input_diff: 'Type a sentence. The page computes attention from each token to the steps between its neighbours, live, in your browser.',
    lede_cosine: 'Type a sentence. The page computes cosine attention, softmax(τ·cos(q, k)), live, in your browser.',
    lede_local: 'Type a sentence. The page computes local attention, each token looking w tokens either way, live, in your browser.',
    lede_diff_transformer_v2: 'Type a sentence. The page computes the Differential Transformer V2’s two attention maps A1 and A2 and subtracts them with a λ of each token, A1 − λᵢ·A2, live, in your browser.',
    lede_hierarchical: 'Type a sentence. The page computes hierarchical attention, each token looking at its own segment of s tokens and at the other segments’ summaries, live, in your browser.',
    lede_layer: 'Layer {layer} of {model}, captured: its own vectors, weights and token labels, every stage drawn live in your browser.',
    lede_layer_unnamed: 'A captured layer from {name}: its own vectors, weights and token labels, every stage drawn live in your browser.',
    spec_layer: 'layer {layer} of {model}',
    spec_layout: '{n} heads of {dh} channels, key/value heads: {kv}, d_model = {d}',
    spec_layout_one: '1 head of {dh} channels, key/value heads: {kv}, d_model = {d}',
    spec_rope: 'RoPE ({layout}, θ = {theta})',
    spec_rope_explicit: 'RoPE ({layout})',
    spec_biases: 'biases',
    spec_reading: 'Reading {name} ({mb} MB)…',
    spec_parsing: 'Preparing {name}: {n} MB of vectors and weights…',
    walk_lambda: 'λ of every token (rows) in every head (columns), σ(x·W_λ): how much of A2 each query row subtracts. Largest: «{q}» ({v}); smallest: «{q_min}» ({v_min}).',
    walk_local: 'Each token’s attention to the tokens of its own segment (s = {s}); the rest of its weight goes to the other segments’ summaries. Brightest: «{q}» → «{key}» ({v}).',
    walk_segments: 'The weight each token puts on the other segments’ summaries (one column per segment, the mean of its keys). Largest: «{q}» → the summary of tokens {key} ({v}).',
    masked_label: 'masked',
    constant_label: 'constant',
    row_label: 'row',
    sink_label: 'sink',
    spec_too_large_bytes: '{name} is too large for the page ({mb} MB; it reads at most {max} MB, and safetensors files, which diffattn.save writes, up to {bin} MB). The command line runs any size: diffattn stages {name}.',
    spec_not_text: '{name} is not a spec: it is not UTF-8 text (as a JSON spec is), nor a .safetensors file.',
    tokens_count_one: '1 token',
    readout_hint: 'Hover over a map, tap it, or focus it and use the arrow keys, to see the arithmetic of one cell.',
    table_caption: '{name}, head {h} of {total}: rows are query tokens, columns are key tokens.',
    table_capped: 'Only the first {r} rows and {c} columns of {rows} × {cols} are listed.',
    table_window: 'Rows {r0}–{r1} and columns {c0}–{c1} of {rows} × {cols} are listed (the part zoomed into).',
    zoom_in: 'Zoom in',
    zoom_out: 'Zoom out',
    zoom_whole: 'Whole map',
    zoom_hint: 'Ctrl + scroll or pinch on a map to zoom, drag to move; + − 0 on a focused map.',
    zoom_status: 'Showing rows {r0}–{r1} and keys {c0}–{c1} of {n} tokens',
    zoom_whole_status: 'The whole map of {n} tokens. Zoom in to read the labels.',
    zoom_labels_hidden: 'At this size 1 label in {every} of the {n} tokens is shown: zoom in to read them all.',
    zoom_overview_label: 'Overview of the whole map; the box marks the part shown. {status}. Arrow keys move the box.',
    table_corner: 'query \\ key',
    dismiss: 'Dismiss',
    engine_crashed: 'The engine hit an internal error ({msg}) and was restarted; your next change redraws the maps.',
    engine_dead: 'The engine stopped unexpectedly ({msg}). Reload the page to continue.',
    reload: 'Reload',
    purpose_title: 'What is differential attention for?',
    purpose_noise: 'Attention often spends much of a row on tokens that say nothing about what the query looks for ([CLS], [SEP], punctuation): attention noise. The Differential Transformer (Ye et al., 2025) draws two maps and subtracts one from the other, A1 − λ·A2: what both share cancels, as noise-cancelling headphones cancel the hum both ears hear, and what only A1 sees stands out.',
    purpose_picture: 'The row of «it» in a real model (all-MiniLM-L6-v2, layer 4): head 2 (A1) puts 0.68 on «animal», head 8 (A2) spreads over [CLS] and the first words; A1 − 0.8·A2 keeps 0.52 on «animal» and cancels what the two share (orange: below 0, where A2 had more).',
    purpose_shift: 'The seed article’s shift-difference subtracts a shifted copy of the same map instead, A − shift(A) (the last row): it marks where attention changes from one key to the next, a negative copy beside each peak, and cancels nothing that two maps share.',
    purpose_lesson: 'The noise lesson: every head of the real model, before and after the difference →',
    howto_title: 'How to read these maps',
    howto_intro: 'Every map is a table: row i is a query token, column j is a key token, and the colour of cell (i, j) is one number. The colour bar beside each map gives the scale.',
    howto_a: 'A: how much each query row attends to each key column. Every row sums to 1 (softmax); brighter (towards yellow) means more attention. With the causal mask, a token only looks at itself and earlier tokens.',
    howto_shifted: 'shift(A): the same rows moved k columns to the right, so attention to key j now sits on key j + k. With circular fill what falls off the end comes back at the start; with zero fill it is dropped. k mod L = 0 changes nothing.',
    howto_d: 'D = A − shift(A): purple where A is larger than its shifted copy, orange where it is smaller, near-white where they agree. D marks where attention changes from one key to the next; with circular fill every row of D sums to 0.',
    howto_g: 'G = σ(α·A + β·D + γ): a gate between 0 and 1 for each cell, saying how much of D is let through. α, β and γ are the same three numbers for every cell of a head.',
    howto_fused: 'A′ = A + G ⊙ D: the attention the layer finally uses, A sharpened where the gate opens. It can go below 0, so it has a diverging scale like D (purple above 0, orange below); its rows sum to 1 + Σ G ⊙ D unless it is renormalised with a softmax.',
    howto_difftr: 'Differential Transformer (Ye et al., 2025): two softmax maps A1 and A2 from two halves of each head; A1 − λ·A2 cancels attention both maps share (noise), with one learned λ for the layer.',
    howto_other: 'Input-difference attention uses the steps between neighbouring tokens as keys (so it has one key fewer than tokens); cosine attention compares directions only, sharpened by τ; local attention only looks w tokens to either side.',
    footer: 'diffattn {v}: Rust compiled to WebAssembly; every number is computed in your browser.',
  }),
});

/** Example sentences for the presets menu. Chinese ones draw one token per character. */
export const PRESETS = Object.freeze({
  en: Object.freeze([
    'The acting is wonderful, but the plot is thin.',
    'A wonderful, moving and beautifully acted film.',
    'A dull, boring mess of a movie.',
    'The cat sat on the mat because it was tired.',
    'The animal did not cross the street because it was too wide.',
    'Attention is all you need, but the difference helps.',
    'Alice gave Bob the book, and he thanked her for it.',
    'not good, not bad, just fine',
  ]),
  zh: Object.freeze([
    '我爱自然语言处理。',
    '小猫坐在垫子上，因为它累了。',
    '注意力机制让模型关注重要的词。',
    '今天天气很好，我们去公园散步吧。',
  ]),
});

/** Picks the page language from the browser's preferences: Chinese for any `zh*`, else English. */
export function detectLanguage(preferences = []) {
  for (const tag of preferences) {
    const primary = String(tag || '').toLowerCase().split('-')[0];
    if (primary === 'zh') return 'zh';
    if (primary === 'en') return 'en';
  }
  return 'en';
}

/** Normalises a language code from the address; anything unknown is `undefined`. */
export function parseLanguage(value) {
  const primary = String(value ?? '').toLowerCase().split('-')[0];
  return LANGUAGES.includes(primary) ? primary : undefined;
}

/** The placeholder names in one template, sorted: `'{a} of {b}'` gives `['a', 'b']`. */
export function placeholders(template) {
  return [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
}

/**
 * Splits a template into literal strings and parameter values, in order.
 * `formatParts('x {a} y', { a: node })` gives `['x ', node, ' y']`; a missing parameter
 * is kept as its `{name}` so a mistake is visible rather than silent.
 */
export function formatParts(template, params = {}) {
  const parts = [];
  let last = 0;
  for (const m of template.matchAll(/\{(\w+)\}/g)) {
    if (m.index > last) parts.push(template.slice(last, m.index));
    parts.push(Object.hasOwn(params, m[1]) ? params[m[1]] : m[0]);
    last = m.index + m[0].length;
  }
  if (last < template.length) parts.push(template.slice(last));
  return parts;
}

/** The string `key` of `strings` (a language's table) with its placeholders filled; falls back to English, then to the key.
 * A count `n` of 1 takes the language's `key_one` where it has one ("1 head", not "1 heads"). */
export function translate(strings, key, params = {}) {
  const template = (params.n === 1 && strings?.[`${key}_one`]) || (strings?.[key] ?? STRINGS.en[key] ?? key);
  return formatParts(template, params).map(String).join('');
}

/** The strings of `lang` (one of LANGUAGES): English at once, Chinese from its chunk. */
export async function loadStrings(lang) {
  if (lang === 'zh') return (await import('./i18n-zh.js')).ZH;
  return STRINGS.en;
}

/** The string `key` in `lang`, once its strings are loaded (English if they could not be). */
export async function translated(lang, key, params = {}) {
  const strings = await loadStrings(lang).catch(() => STRINGS.en);
  return translate(strings, key, params);
}

/**
 * The language one explorer speaks: `strings`, the table of the last language asked for once
 * it is loaded (English until then); `pending`, the load in flight or null. `use(lang,
 * onReady)` asks for a language; `onReady()` runs once its strings are in (English, if they
 * could not load), unless a language was asked for again meanwhile.
 */
export class Language {
  strings = STRINGS.en;
  pending = null;
  #asked = 0;

  use(lang, onReady) {
    const id = ++this.#asked;
    const job = loadStrings(lang)
      .catch(() => STRINGS.en)
      .then((strings) => {
        if (id !== this.#asked) return;
        this.strings = strings;
        onReady();
      })
      .finally(() => {
        if (this.pending === job) this.pending = null;
      });
    this.pending = job;
  }
}
