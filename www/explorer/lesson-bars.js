// The lesson's bar chart, the shape of the Differential Transformer paper's Figure 1: one group
// per model, a bar for attention on the answer and one for attention on the noise, on one
// signed axis (the difference maps have negative cells, so shares can be below 0). Beside each
// signed share, outlined, the share of the row's absolute values (`answer_abs`, `noise_abs`:
// src/retrieval/measure.rs), which lies between 0 and 1 whatever the signs and equals the
// signed share on a softmax map. Built as SVG from the engine's numbers; nothing here knows a
// mechanism.

const SVG = 'http://www.w3.org/2000/svg';

function el(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The bars of a group, left to right: each signed share, then its share of absolute values. */
const KINDS = Object.freeze(['answer', 'answer_abs', 'noise', 'noise_abs']);

/** The axis range: at least 0 to 1, widened to every value (rounded out to 0.25). */
export function barRange(groups) {
  const values = groups.flatMap((g) => KINDS.map((k) => g[k])).filter(Number.isFinite);
  const lo = Math.min(0, ...values);
  const hi = Math.max(1, ...values);
  return [Math.floor(lo * 4) / 4, Math.ceil(hi * 4) / 4];
}

/**
 * An `<svg>` of `groups` (`[{ name, answer, noise, answer_abs, noise_abs }]`), labelled with
 * `labels` (`{ answer, noise, abs }`); `width` in CSS pixels. Each bar is a `<rect>` with
 * `data-model`, `data-kind` (`answer` | `answer_abs` | `noise` | `noise_abs`) and `data-value`.
 */
export function barChart(groups, labels, width) {
  const height = 230;
  const pad = { left: 40, right: 8, top: 26, bottom: 40 };
  const [lo, hi] = barRange(groups);
  const y = (v) => pad.top + ((hi - v) / (hi - lo)) * (height - pad.top - pad.bottom);
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', class: 'bars' });
  const title = `${labels.answer} / ${labels.noise}: ${groups.map((g) => `${g.name} ${g.answer.toFixed(2)} / ${g.noise.toFixed(2)} (${labels.abs} ${g.answer_abs.toFixed(2)} / ${g.noise_abs.toFixed(2)})`).join('; ')}`;
  svg.append(el('title', {}, title));
  for (let t = lo; t <= hi + 1e-9; t += 0.25) {
    const major = Math.abs(t * 2 - Math.round(t * 2)) < 1e-9;
    svg.append(el('line', { x1: pad.left, x2: width - pad.right, y1: y(t), y2: y(t), class: t === 0 ? 'zero' : 'grid' }));
    if (major) svg.append(el('text', { x: pad.left - 4, y: y(t) + 4, class: 'tick' }, t.toFixed(1)));
  }
  const inner = width - pad.left - pad.right;
  const slot = inner / Math.max(1, groups.length);
  const bar = Math.min(24, slot * 0.21);
  groups.forEach((g, i) => {
    const cx = pad.left + slot * (i + 0.5);
    KINDS.forEach((kind, k) => {
      const v = g[kind];
      const x = cx - 2 * bar - 3 + k * bar + (k >= 2 ? 6 : 0);
      const top = Math.min(y(v), y(0));
      const h = Math.max(1, Math.abs(y(v) - y(0)));
      const [base, abs] = kind.endsWith('_abs') ? [kind.slice(0, -4), true] : [kind, false];
      const rect = el('rect', { x: x + 0.5, y: top, width: bar - 1, height: h, class: `bar ${base}${abs ? ' abs' : ''}`, 'data-model': g.name, 'data-kind': kind, 'data-value': v.toFixed(4) });
      rect.append(el('title', {}, `${g.name}: ${labels[base]}${abs ? ` (${labels.abs})` : ''} ${v.toFixed(3)}`));
      svg.append(rect);
      svg.append(el('text', { x: x + bar / 2, y: v >= 0 ? top - 3 : top + h + 10, class: `value${abs ? ' abs' : ''}` }, v.toFixed(2)));
    });
    svg.append(el('text', { x: cx, y: height - pad.bottom + 18, class: 'name' }, g.name));
  });
  const legend = el('g', { class: 'legend' });
  let lx = pad.left;
  for (const [cls, text] of [
    ['bar answer', labels.answer],
    ['bar noise', labels.noise],
    ['bar none abs', labels.abs],
  ]) {
    legend.append(el('rect', { x: lx, y: 6, width: 10, height: 10, class: cls }));
    const label = el('text', { x: lx + 14, y: 15, class: 'legend-text' }, text);
    legend.append(label);
    lx += 24 + text.length * 6.2;
  }
  svg.append(legend);
  return svg;
}
