// The noise lesson's chart: every layer (a row) and head (a column) of the model, each head
// three stacked bars, as shares of the query row's absolute values: the head's own map, the
// head minus λ × its partner, and shift-difference; red on the target, dark on [CLS]/[SEP],
// light on the rest, so a glance shows where the difference moved the row. Each bar is a link
// to its maps in the explorer. Built as SVG from the engine's figures
// (`diffattn::pretrained::noise`); nothing here computes one.

const SVG = 'http://www.w3.org/2000/svg';

function el(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The three bars of a head: `[kind, shares | null]`. */
export function headBars(h) {
  return [
    ['before', h.before],
    ['difference', h.difference?.shares ?? null],
    ['shift', h.shift],
  ];
}

/**
 * An `<svg>` of `lesson` (`Encoder.noise_lesson`'s object). `text(key, params)` gives the
 * strings (`layer`, `head`, and a bar's tooltip: `tip(h, kind)`); `href(h, kind)` the address of
 * a bar's maps; `width` in CSS pixels; `mark` the `{ layer, head }` to outline (or null). Each
 * bar is an `<a>` with `data-layer`, `data-head` (from 1), `data-kind` and `data-target`,
 * `data-sinks`, `data-other` (its shares of absolute values).
 */
export function noiseChart(lesson, { text, tip, href, mark = null }, width) {
  const layers = Math.max(...lesson.heads.map((h) => h.layer)) + 1;
  const heads = Math.max(...lesson.heads.map((h) => h.head)) + 1;
  const pad = { left: 54, right: 4, top: 16, bottom: 4 };
  const rowH = 46;
  const barMax = 36;
  const height = pad.top + layers * rowH + pad.bottom;
  const cellW = (width - pad.left - pad.right) / heads;
  const bar = Math.max(3, Math.min(11, (cellW - 6) / 3));
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, width, height, class: 'noise-chart', role: 'img' });
  svg.append(el('title', {}, text('chart_title')));
  for (let h = 0; h < heads; h++) svg.append(el('text', { x: pad.left + cellW * (h + 0.5), y: 11, class: 'col' }, String(h + 1)));
  for (let l = 0; l < layers; l++) svg.append(el('text', { x: pad.left - 6, y: pad.top + l * rowH + barMax / 2 + 4, class: 'row' }, text('layer', { l: l + 1 })));
  for (const h of lesson.heads) {
    const x0 = pad.left + cellW * h.head + (cellW - 3 * bar - 2) / 2;
    const base = pad.top + h.layer * rowH + barMax;
    if (mark && mark.layer === h.layer && mark.head === h.head) {
      svg.append(el('rect', { x: pad.left + cellW * h.head + 1, y: base - barMax - 3, width: cellW - 2, height: barMax + 6, class: 'mark' }));
    }
    headBars(h).forEach(([kind, shares], i) => {
      const s = shares ?? h.before;
      const a = el('a', { href: href(h, kind), 'data-layer': h.layer + 1, 'data-head': h.head + 1, 'data-kind': kind, 'data-target': s.target_abs.toFixed(4), 'data-sinks': s.sinks_abs.toFixed(4), 'data-other': s.other_abs.toFixed(4), class: shares ? 'bar' : 'bar none' });
      a.append(el('title', {}, tip(h, kind)));
      let y = base;
      for (const [part, v] of [
        ['target', s.target_abs],
        ['sinks', s.sinks_abs],
        ['other', s.other_abs],
      ]) {
        const hgt = Math.max(0, v) * barMax;
        y -= hgt;
        a.append(el('rect', { x: x0 + i * (bar + 1), y: y.toFixed(2), width: bar, height: hgt.toFixed(2), class: part }));
      }
      svg.append(a);
    });
  }
  return svg;
}
