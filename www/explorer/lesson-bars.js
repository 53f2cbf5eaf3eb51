// The lesson's bar chart, the shape of the Differential Transformer paper's Figure 1: one group
// per model, a bar for attention on the answer and one for attention on the noise, on one
// signed axis (the difference maps have negative cells, so shares can be below 0). Built as
// SVG from the engine's numbers; nothing here knows a mechanism.

const SVG = 'http://www.w3.org/2000/svg';

function el(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The axis range: at least 0 to 1, widened to every value (rounded out to 0.25). */
export function barRange(groups) {
  const values = groups.flatMap((g) => [g.answer, g.noise]).filter(Number.isFinite);
  const lo = Math.min(0, ...values);
  const hi = Math.max(1, ...values);
  return [Math.floor(lo * 4) / 4, Math.ceil(hi * 4) / 4];
}

/**
 * An `<svg>` of `groups` (`[{ name, answer, noise }]`), labelled with `labels`
 * (`{ answer, noise }`); `width` in CSS pixels. Each bar is a `<rect>` with `data-model`,
 * `data-kind` (`answer` | `noise`) and `data-value`.
 */
export function barChart(groups, labels, width) {
  const height = 220;
  const pad = { left: 40, right: 8, top: 26, bottom: 40 };
  const [lo, hi] = barRange(groups);
  const y = (v) => pad.top + ((hi - v) / (hi - lo)) * (height - pad.top - pad.bottom);
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', class: 'bars' });
  const title = `${labels.answer} / ${labels.noise}: ${groups.map((g) => `${g.name} ${g.answer.toFixed(2)} / ${g.noise.toFixed(2)}`).join('; ')}`;
  svg.append(el('title', {}, title));
  for (let t = lo; t <= hi + 1e-9; t += 0.25) {
    const major = Math.abs(t * 2 - Math.round(t * 2)) < 1e-9;
    svg.append(el('line', { x1: pad.left, x2: width - pad.right, y1: y(t), y2: y(t), class: t === 0 ? 'zero' : 'grid' }));
    if (major) svg.append(el('text', { x: pad.left - 4, y: y(t) + 4, class: 'tick' }, t.toFixed(1)));
  }
  const inner = width - pad.left - pad.right;
  const slot = inner / Math.max(1, groups.length);
  const bar = Math.min(34, slot * 0.34);
  groups.forEach((g, i) => {
    const cx = pad.left + slot * (i + 0.5);
    [
      ['answer', g.answer, cx - bar - 1],
      ['noise', g.noise, cx + 1],
    ].forEach(([kind, v, x]) => {
      const top = Math.min(y(v), y(0));
      const h = Math.max(1, Math.abs(y(v) - y(0)));
      const rect = el('rect', { x, y: top, width: bar, height: h, class: `bar ${kind}`, 'data-model': g.name, 'data-kind': kind, 'data-value': v.toFixed(4) });
      rect.append(el('title', {}, `${g.name}: ${labels[kind]} ${v.toFixed(3)}`));
      svg.append(rect);
      svg.append(el('text', { x: x + bar / 2, y: v >= 0 ? top - 3 : top + h + 11, class: 'value' }, v.toFixed(2)));
    });
    svg.append(el('text', { x: cx, y: height - pad.bottom + 16, class: 'name' }, g.name));
  });
  const legend = el('g', { class: 'legend' });
  legend.append(el('rect', { x: pad.left, y: 6, width: 10, height: 10, class: 'bar answer' }));
  legend.append(el('text', { x: pad.left + 14, y: 15, class: 'legend-text' }, labels.answer));
  legend.append(el('rect', { x: pad.left + 150, y: 6, width: 10, height: 10, class: 'bar noise' }));
  legend.append(el('text', { x: pad.left + 164, y: 15, class: 'legend-text' }, labels.noise));
  svg.append(legend);
  return svg;
}
