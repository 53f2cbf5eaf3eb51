// The model view's own strings (model-view.js), in both languages the page speaks: kept in its
// chunk, not in i18n.js, so the first view carries none of them.

/** The view's strings by language; English is the fallback of every key. */
export const WORDS = Object.freeze({
  en: Object.freeze({
    model_stage_label: 'Map',
    model_sort_label: 'Sort by',
    model_sort_layer: 'layer and head',
    model_sort_entropy: 'entropy (H), highest first',
    model_sort_sink: 'sink mass (S), highest first',
    model_sort_previous: 'previous token (←), highest first',
    model_sort_next: 'next token (→), highest first',
    model_note:
      'Layers × heads: {layers} × {heads}, each its map {stage}. Under each: H the mean row entropy (nats), S the mass on the sink tokens ({sinks}), ← the previous-token and → the next-token score (on |map| made a distribution per row). Click a head, or focus it and press Enter, to open it with every stage.',
    model_note_mixed: 'A layer of another mechanism, which has no such map, shows its map in the same place (its final map for a final map, else its first), named in its heads’ titles.',
    model_head: 'L{layer} H{head}',
    model_head_stats: 'Layer {layer}, head {head}: entropy {entropy} nats, sink mass {sink}, previous token {previous}, next token {next}',
    model_signed: 'on the signed values: sink {sink}, previous {previous}, next {next}',
    model_before: 'on {stage}: entropy {entropy}, sink mass {sink}, previous {previous}, next {next}',
    model_progress: 'Computing layer {layer} of {layers}…',
    model_note_compact:
      'Layers × heads: {layers} × {heads}, each its map {stage}, a row per layer. Point at a head, or focus it, for its figures: H the mean row entropy (nats), S the mass on the sink tokens ({sinks}), ← the previous-token and → the next-token score (on |map| made a distribution per row); sorting by one draws it as a bar under each map. Click or tap a head, or press Enter on it, to open it with every stage.',
    model_layer_row: 'L{layer}',
  }),
  zh: Object.freeze({
    model_stage_label: '图',
    model_sort_label: '排序',
    model_sort_layer: '按层与头',
    model_sort_entropy: '熵（H），从高到低',
    model_sort_sink: '汇聚质量（S），从高到低',
    model_sort_previous: '前一词元（←），从高到低',
    model_sort_next: '后一词元（→），从高到低',
    model_note:
      '{layers} 层 × {heads} 个头，每个显示其 {stage} 图。下方：H 为各行平均熵（奈特），S 为汇聚词元（{sinks}）上的质量，← 为前一词元得分，→ 为后一词元得分（按行将 |图| 归一化为分布）。点击一个头，或聚焦后按回车，即可查看它的所有阶段。',
    model_note_mixed: '另一种机制的层没有此图，则显示其同一位置的图（所选为最终图时显示其最终图，否则显示其第一个图），并在各头的标题中注明。',
    model_head: 'L{layer} H{head}',
    model_head_stats: '第 {layer} 层第 {head} 个头：熵 {entropy} 奈特，汇聚质量 {sink}，前一词元 {previous}，后一词元 {next}',
    model_signed: '按带符号的值：汇聚 {sink}，前一词元 {previous}，后一词元 {next}',
    model_before: '在 {stage} 上：熵 {entropy}，汇聚质量 {sink}，前一词元 {previous}，后一词元 {next}',
    model_progress: '正在计算第 {layer} 层，共 {layers} 层…',
    model_note_compact:
      '{layers} 层 × {heads} 个头，每个显示其 {stage} 图，每层一行。将指针移到某个头上或聚焦它，即可看到它的各项数值：H 为各行平均熵（奈特），S 为汇聚词元（{sinks}）上的质量，← 为前一词元得分，→ 为后一词元得分（按行将 |图| 归一化为分布）；按其中一项排序时，它以条形显示在每个图下方。点击或轻触一个头，或在其上按回车，即可查看它的所有阶段。',
    model_layer_row: 'L{layer}',
  }),
});
