// Every user-visible string of the page, in English and Simplified Chinese.
//
// The dictionary is plain data so node's test runner can check it without a browser
// (tests/e2e/i18n.test.mjs: both languages have the same keys and the same {placeholders}).
// Stage names (A, shift(A), D, G, A′, A1, A2) and formulas are mathematics and are not
// translated. Placeholders are `{name}`; `format` fills them, `formatParts` keeps
// non-string values (DOM nodes) so the page never builds HTML from text.

/** The languages the page speaks, in the order the toggle cycles through them. */
export const LANGUAGES = ['en', 'zh'];

export const STRINGS = {
  en: {
    page_title: 'diffattn: differential attention, every stage',
    title: 'Differential attention, every stage',
    lede: 'Type a sentence. The page computes its attention map A, shifts it, takes the difference D, gates it with G and fuses A′ = A + G ⊙ D, live, in your browser.',
    skip: 'Skip to the maps',
    model_untrained: 'Weights: untrained (seeded random), d_model = {d}',
    model_trained: 'Weights: {label}, d_model = {d}',
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
    spec_hint: 'Your own vectors and weights: a stages spec (.json), also by dropping it on the page.',
    spec_active: 'Drawing your file {name}: {n} tokens, labelled t0, t1, …',
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
    causal_label: 'Causal mask (no looking ahead)',
    heads_label: 'Number of heads',
    heads_value: '{h} × width {dh}',
    heads_valuetext: '{h} heads',
    head_label: 'Head shown',
    head_option: 'head {n} of {total}',
    all_heads_label: 'Every head side by side',
    group_shift: 'Shift and difference',
    shift_label: 'Shift k',
    shift_value: 'k = {k} · k mod L = {m}',
    shift_value_empty: 'k = {k}',
    difference_label: 'Difference D',
    diff_single: 'single: A − shiftₖ(A)',
    diff_symmetric: 'symmetric: shift₋ₖ − shiftₖ',
    fill_label: 'Shift fill',
    fill_circular: 'circular (wraps around)',
    fill_zero: 'zero (drops the rest)',
    renorm_label: 'Renormalise A′',
    renorm_none: 'none',
    renorm_softmax: 'softmax per row',
    group_gate: 'Gate G',
    alpha_label: 'α, weight on A',
    beta_label: 'β, weight on D',
    gamma_label: 'γ, bias',
    gate_from_spec: 'The gate comes from your file (one α, β, γ per head).',
    group_params: 'Parameters',
    tau_label: 'Temperature τ',
    window_label: 'Window w (radius)',
    group_export: 'Export',
    export_map_label: 'What to export',
    export_panel: 'all maps (panel)',
    export_png: 'PNG',
    export_svg: 'SVG',
    export_json: 'JSON of all stages',
    maps_label: 'Attention maps',
    tokens_count: '{n} tokens',
    truncated: 'The text has {total} tokens; only the first {shown} are drawn.',
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
    stage_other: 'map',
    aria_map: '{name}, head {h} of {total}: {desc} of {n} tokens',
    map_keys_hint: 'Arrow keys move the selected cell, Escape clears it.',
    all_heads_hint: 'Click a map to show the stages of that head.',
    tip_query: 'query',
    tip_key: 'key',
    readout_cell: 'Row {i}, query {q} → column {j}, key {k}',
    readout_rowsums: 'Row {i} sums: Σ A = {a}, Σ A′ = {f}',
    readout_rowsum_a: 'Row {i} sums: Σ A = {a}',
    readout_hint: 'Hover over a map, tap it, or focus it and use the arrow keys, to see the arithmetic of one cell.',
    table_caption: '{name}, head {h} of {total}: rows are query tokens, columns are key tokens.',
    table_capped: 'Only the first {r} rows and {c} columns of {rows} × {cols} are listed.',
    table_corner: 'query \\ key',
    dismiss: 'Dismiss',
    engine_crashed: 'The engine hit an internal error ({msg}) and was restarted; your next change redraws the maps.',
    engine_dead: 'The engine stopped unexpectedly ({msg}). Reload the page to continue.',
    reload: 'Reload',
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
  },
  zh: {
    page_title: 'diffattn：差分注意力，逐步可视化',
    title: '差分注意力：每一步都看得见',
    lede: '输入一句话。页面会计算它的注意力图 A，将其移位，求差分 D，用门控 G 加权，再融合成 A′ = A + G ⊙ D，全部在浏览器中实时完成。',
    skip: '跳到注意力图',
    model_untrained: '权重：未训练（随机种子），d_model = {d}',
    model_trained: '权重：{label}，d_model = {d}',
    model_spec: '向量与权重：来自 {name}，d_model = {d}',
    lang_switch: 'English',
    lang_switch_label: 'Switch to English（切换到英文）',
    loading: '正在加载 WebAssembly 引擎…',
    load_failed: '引擎无法加载：{msg}',
    controls_label: '控制面板',
    group_text: '文本',
    sentence_label: '句子',
    sentence_placeholder: '输入一句话…',
    presets_label: '示例',
    presets_choose: '选择一个示例…',
    preset_group_en: '英文',
    preset_group_zh: '中文',
    spec_open: '打开规格文件…',
    spec_hint: '使用你自己的向量和权重：一个 stages 规格文件（.json），也可以直接拖到页面上。',
    spec_active: '正在绘制你的文件 {name}：{n} 个词元，标记为 t0、t1……',
    spec_back: '返回句子',
    spec_error: '无法绘制 {name}：{msg}',
    spec_read_error: '无法读取 {name}。',
    drop_here: '松开鼠标以绘制规格文件',
    group_mech: '机制',
    mechanism_label: '注意力机制',
    mech_shift_diff: '移位差分门控',
    mech_standard: '标准 softmax',
    mech_diff_transformer: '差分 Transformer',
    mech_input_diff: '输入差分',
    mech_cosine: '余弦',
    mech_local: '局部窗口',
    causal_label: '因果掩码（不看后面的词）',
    heads_label: '头数',
    heads_value: '{h} 个 × 宽 {dh}',
    heads_valuetext: '{h} 个头',
    head_label: '显示的头',
    head_option: '第 {n} 个头（共 {total} 个）',
    all_heads_label: '并排显示每一个头',
    group_shift: '移位与差分',
    shift_label: '位移 k',
    shift_value: 'k = {k} · k mod L = {m}',
    shift_value_empty: 'k = {k}',
    difference_label: '差分 D',
    diff_single: '单向：A − shiftₖ(A)',
    diff_symmetric: '对称：shift₋ₖ − shiftₖ',
    fill_label: '移位填充',
    fill_circular: '循环（首尾相接）',
    fill_zero: '补零（移出的部分丢弃）',
    renorm_label: 'A′ 重新归一化',
    renorm_none: '不归一化',
    renorm_softmax: '逐行 softmax',
    group_gate: '门控 G',
    alpha_label: 'α，A 的权重',
    beta_label: 'β，D 的权重',
    gamma_label: 'γ，偏置',
    gate_from_spec: '门控参数来自你的文件（每个头各有一组 α、β、γ）。',
    group_params: '参数',
    tau_label: '温度 τ',
    window_label: '窗口 w（半径）',
    group_export: '导出',
    export_map_label: '导出内容',
    export_panel: '全部图（面板）',
    export_png: 'PNG',
    export_svg: 'SVG',
    export_json: '全部阶段的 JSON',
    maps_label: '注意力图',
    tokens_count: '{n} 个词元',
    truncated: '文本共有 {total} 个词元，只绘制前 {shown} 个。',
    lambda_value: 'λ = {v}',
    timing: '计算 {c} 毫秒，绘制 {d} 毫秒',
    empty_hint: '在上面的输入框中输入一句话，或选择一个示例，即可看到它的注意力图。',
    stage_a: '注意力',
    stage_shifted: '位移 k = {k} 后的注意力',
    stage_shifted_back: '位移 −k = {mk} 后的注意力',
    stage_d: '差分',
    stage_g: '门控',
    stage_fused: '融合注意力',
    stage_a1: '第一个 softmax 图',
    stage_a2: '第二个 softmax 图',
    stage_diff: '差分注意力',
    stage_other: '图',
    aria_map: '{name}，第 {h} 个头（共 {total} 个）：{n} 个词元的{desc}',
    map_keys_hint: '方向键移动选中的格子，Esc 取消选择。',
    all_heads_hint: '点击一张图，查看该头的各个阶段。',
    tip_query: '查询',
    tip_key: '键',
    readout_cell: '第 {i} 行，查询 {q} → 第 {j} 列，键 {k}',
    readout_rowsums: '第 {i} 行的行和：Σ A = {a}，Σ A′ = {f}',
    readout_rowsum_a: '第 {i} 行的行和：Σ A = {a}',
    readout_hint: '将鼠标移到图上、轻点图，或聚焦图后使用方向键，即可看到单个格子的计算过程。',
    table_caption: '{name}，第 {h} 个头（共 {total} 个）：行是查询词元，列是键词元。',
    table_capped: '只列出 {rows} × {cols} 中的前 {r} 行和前 {c} 列。',
    table_corner: '查询 \\ 键',
    dismiss: '关闭',
    engine_crashed: '引擎内部出错（{msg}），已重新启动；下一次修改会重新绘制。',
    engine_dead: '引擎意外停止（{msg}）。请重新加载页面。',
    reload: '重新加载',
    howto_title: '如何阅读这些图',
    howto_intro: '每张图都是一张表：第 i 行是一个查询词元，第 j 列是一个键词元，格子 (i, j) 的颜色表示一个数。每张图旁的色条给出刻度。',
    howto_a: 'A：每个查询（行）对每个键（列）的关注程度。每一行的和为 1（softmax），颜色越亮（越接近黄色）关注越多。开启因果掩码时，每个词元只看自己和前面的词元。',
    howto_shifted: 'shift(A)：把每一行向右移动 k 列，原来对键 j 的关注移到键 j + k 上。循环填充时，移出末尾的部分回到开头；补零时则丢弃。k mod L = 0 时不变。',
    howto_d: 'D = A − shift(A)：紫色表示 A 比移位后的副本大，橙色表示更小，接近白色表示两者相同。D 标出注意力从一个键到下一个键的变化；循环填充时 D 的每一行之和为 0。',
    howto_g: 'G = σ(α·A + β·D + γ)：每个格子一个 0 到 1 之间的门控值，表示让多少 D 通过。同一个头的所有格子共用 α、β、γ 三个数。',
    howto_fused: 'A′ = A + G ⊙ D：这一层最终使用的注意力，在门控打开处对 A 进行锐化。它可以小于 0，因此和 D 一样使用发散色标（大于 0 为紫色，小于 0 为橙色）；除非用 softmax 重新归一化，它的行和为 1 + Σ G ⊙ D。',
    howto_difftr: '差分 Transformer（Ye 等，2025）：每个头的两半各算一个 softmax 图 A1 和 A2；A1 − λ·A2 抵消两者共有的注意力（噪声），整层共用一个学习得到的 λ。',
    howto_other: '输入差分注意力以相邻词元之间的差作为键（因此键比词元少一个）；余弦注意力只比较方向，由 τ 调节锐度；局部注意力只看左右各 w 个词元。',
    footer: 'diffattn {v}：Rust 编译为 WebAssembly；每一个数都在你的浏览器中计算。',
  },
};

/** Example sentences for the presets menu. Chinese ones draw one token per character. */
export const PRESETS = {
  en: [
    'The cat sat on the mat because it was tired.',
    'The animal did not cross the street because it was too wide.',
    'Attention is all you need, but the difference helps.',
    'Alice gave Bob the book, and he thanked her for it.',
    'not good, not bad, just fine',
  ],
  zh: [
    '我爱自然语言处理。',
    '小猫坐在垫子上，因为它累了。',
    '注意力机制让模型关注重要的词。',
    '今天天气很好，我们去公园散步吧。',
  ],
};

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

/** The string `key` in `lang` with its placeholders filled; falls back to English, then to the key. */
export function translate(lang, key, params = {}) {
  const template = STRINGS[lang]?.[key] ?? STRINGS.en[key] ?? key;
  return formatParts(template, params).map(String).join('');
}
