// The retrieval lesson's strings in English and Simplified Chinese (the contexts stay
// English: the models read English), and its starting context. Plain data, so node can check
// that both languages have the same keys (tests/e2e/lesson.test.mjs).

import { formatParts } from './i18n.js';

export const LESSON_STRINGS = Object.freeze({
  en: Object.freeze({
    title: 'Retrieval lesson: does differential attention cancel attention noise?',
    intro: 'Four small models, one per mechanism, read the context and answer the question. The bars show, for the question mark, how much attention falls on the answer and how much on the rest of the context (the noise), averaged over heads: the measure of the Differential Transformer paper (Ye et al., ICLR 2025, Figure 1 and Table 3).',
    context: 'Context',
    question: 'Question',
    add_fact: 'Add a fact',
    reset: 'Reset the text',
    tokens: 'Tokens (red: the answer; blue: the facts)',
    bars_title: 'Attention from «?» at layer {layer}',
    bar_answer: 'on the answer',
    bar_noise: 'on the noise',
    bar_abs: 'outlined: share of |values|',
    model: 'Maps of',
    layer: 'Layer',
    answers: '{model} answers {answer} ({p} %)',
    expected: 'the context says {n}',
    no_answer_in_context: 'the context has no fact about the question’s key',
    no_question: 'The text must end with a question “What is the NOUN of NAME?”: no measure without it.',
    unknown_keys: '{keys} is outside the vocabulary: the model reads it as <unk> and its answer is a guess.',
    knob: '{model}, layer {layer}: {name}',
    knob_trained: 'trained {v}',
    knob_reset: 'Trained value',
    maps_caption: 'The final map of each head of layer {layer} ({formula}); rows are queries, columns keys; red marks the answer, blue the facts, on both axes.',
    every_layer: 'Every layer and head of {model}',
    every_layer_loading: 'Loading the explorer…',
    every_layer_note: 'The explorer’s model view of {model} ({layers} layers) on the text as it was when the button was pressed, with the knobs as set: each layer is what enters that layer’s attention (its vectors after the layers before it, its weights and parameters, the causal mask). Press the button again after a change.',
    every_layer_failed: 'The explorer could not load: {msg}',
    loading: 'Loading the retrieval models…',
    failed: 'The lesson could not start: {msg}',
    back: 'Back to the explorer',
    honest: 'Over three seeds these small models do not reproduce the paper’s effect (docs/LESSON.md): these are the seed-1 models.',
    negative_share: 'A share below 0 ({models}) means that the map is a difference (A1 − λ·A2, or A − shift(A)) whose subtracted map outweighs the first at those tokens, so the layer takes their values away from its output instead of adding them (a weight, not a probability); the outlined bars beside each share count the same tokens as a share of the row’s absolute values, which stays between 0 and 1. Each model’s answer (below) comes from all of its layers.',
    lede: 'The noise lesson: the Differential Transformer paper’s measure, live, on four small trained models.',
  }),
  zh: Object.freeze({
    title: '检索课：差分注意力能消除注意力噪声吗？',
    intro: '四个小模型（每种机制一个）读取上下文并回答问题。柱状图显示问号处的注意力有多少落在答案上、多少落在上下文其余部分（噪声）上，按头平均：这正是差分 Transformer 论文（Ye 等，ICLR 2025，图 1 与表 3）的度量。',
    context: '上下文',
    question: '问题',
    add_fact: '添加一条事实',
    reset: '恢复文本',
    tokens: '词元（红色：答案；蓝色：事实）',
    bars_title: '第 {layer} 层「?」的注意力',
    bar_answer: '落在答案上',
    bar_noise: '落在噪声上',
    bar_abs: '空心：绝对值的份额',
    model: '显示的模型',
    layer: '层',
    answers: '{model} 的回答是 {answer}（{p} %）',
    expected: '上下文给出的是 {n}',
    no_answer_in_context: '上下文中没有关于所问键的事实',
    no_question: '文本必须以问题 “What is the NOUN of NAME?” 结尾：没有问题就没有度量。',
    unknown_keys: '{keys} 不在词表中：模型把它读作 <unk>，回答只是猜测。',
    knob: '{model}，第 {layer} 层：{name}',
    knob_trained: '训练值 {v}',
    knob_reset: '恢复训练值',
    maps_caption: '第 {layer} 层每个头的最终注意力图（{formula}）；行是查询，列是键；两条坐标轴上红色标出答案，蓝色标出事实。',
    every_layer: '{model} 的每一层与每个头',
    every_layer_loading: '正在加载探索器…',
    every_layer_note: '探索器的全模型视图：{model}（{layers} 层），所用文本为按下按钮时的文本，旋钮取当前值；每一层显示进入该层注意力的内容（经过前面各层后的向量、该层的权重与参数、因果掩码）。修改后请再次按下按钮。',
    every_layer_failed: '探索器无法加载：{msg}',
    loading: '正在加载检索模型…',
    failed: '检索课无法启动：{msg}',
    back: '返回探索器',
    honest: '在三个随机种子上，这些小模型都没有稳定复现论文的效果（docs/LESSON.md）：这里显示的是种子 1 的模型。',
    negative_share: '份额低于 0（{models}）表示这张图是一个差（A1 − λ·A2，或 A − shift(A)），在这些词元上被减去的图超过了第一张图，所以这一层从输出中减去而不是加上它们的值（这是权重而不是概率）；每个份额旁边的空心柱把同样的词元算作该行绝对值中的份额，总在 0 与 1 之间。每个模型的回答（见下）来自它的全部层。',
    lede: '噪声课：差分 Transformer 论文的度量，在四个训练好的小模型上实时计算。',
  }),
});

/** The starting context and question (names, nouns and fillers the vocabulary holds). */
export const LESSON_TEXT = Object.freeze({
  context: 'The room of Anna is 42. The film was long but never dull. The room of Ben is 15. The code of Maria is 7. It was a cold and quiet morning.',
  question: 'What is the room of Anna?',
});

/** Facts the "Add a fact" button cycles through (keys in the vocabulary). */
export const EXTRA_FACTS = Object.freeze([
  'The seat of Anna is 63.',
  'The room of Maria is 28.',
  'The door of Tom is 91.',
  'The page of Anna is 5.',
  'The room of Lucy is 70.',
  'The number of Ben is 34.',
]);

/** The string `key` in `lang` with `{placeholders}` filled, as text. */
export function lessonText(lang, key, params = {}) {
  const table = LESSON_STRINGS[lang] ?? LESSON_STRINGS.en;
  return formatParts(table[key] ?? LESSON_STRINGS.en[key] ?? key, params)
    .map(String)
    .join('');
}
