// The exports of the model view (`view=model`, model-view.js): the view as it is on screen,
// every layer × head in the order shown (sorted or not), each head's label, its map of the
// chosen stage and its figures (H, S, ←, →), under a header naming the mechanism, the stage,
// the model, the sentence and the sort. A PNG composed from the cards' own canvases (their
// pixels, not drawn again: the model view's handle walked the layers one at a time and keeps
// only the last), and an SVG with vector text, each map as vector cells or, when they are too
// many, as an embedded PNG of its canvas. Only exporter.js imports this module (a chunk the
// first view does not load), and its strings are kept here for the same reason.

import { make } from './dom.js';

/** The exports' strings, in both languages the page speaks (English the fallback of every key). */
export const WORDS = Object.freeze({
  en: Object.freeze({
    mx_title: '{mech}: the map {stage} of every head',
    mx_model: '{weights} · layers × heads: {layers} × {heads} · sorted by {sort}',
    mx_weights_trained: 'trained {mech} model',
    mx_weights_untrained: 'untrained model (seeded random weights)',
    mx_weights_minilm: 'pretrained all-MiniLM-L6-v2',
    mx_weights_spec: 'from {name}',
    mx_legend: 'H mean row entropy (nats) · S mass on the sink tokens · ← previous token · → next token',
    mx_nothing: 'The model view has no head drawn to export.',
  }),
  zh: Object.freeze({
    mx_title: '{mech}：每个头的 {stage} 图',
    mx_model: '{weights} · {layers} 层 × {heads} 个头 · 排序：{sort}',
    mx_weights_trained: '训练过的 {mech} 模型',
    mx_weights_untrained: '未训练的模型（种子随机权重）',
    mx_weights_minilm: '预训练的 all-MiniLM-L6-v2',
    mx_weights_spec: '来自 {name}',
    mx_legend: 'H 各行平均熵（奈特）· S 汇聚词元上的质量 · ← 前一词元 · → 后一词元',
    mx_nothing: '全模型视图中没有可导出的头。',
  }),
});

/**
 * The exports' string `key` in the explorer's language, its `{placeholders}` filled from
 * `params` (as i18n.js `translate` does; not imported from there, so that the first view's
 * modules are bundled as they were).
 */
function say(v, key, params = {}) {
  const template = (WORDS[v.state.lang] ?? WORDS.en)[key] ?? WORDS.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (m, name) => (Object.hasOwn(params, name) ? String(params[name]) : m));
}

/**
 * The most cells (layers × heads × rows × keys) an SVG draws as vector rectangles; above it,
 * each map is an embedded PNG of its canvas. A cell is one `<rect>` of about 57 bytes (MiniLM's
 * 72 heads over 50 word pieces, 180,000 cells: 10.3 MB), so the bound keeps the file under
 * about 11.5 MB, which browsers and vector editors still open in a second or two (MiniLM's 72
 * heads are vector up to 52 word pieces, a trained model's 4 heads up to the 112 a map has
 * pixels for); past it the file and its drawing time grow with the square of the sentence,
 * while the embedded maps stay a few hundred KB and are the canvases' pixels exactly.
 */
export const VECTOR_CELLS = 200_000;

/** The width of the export "for slides" (the export size control's `1920`), in pixels. */
const SLIDE_PX = 1920;

/** The room around and between the heads, and the sort's meter under a map (CSS px, times the scale). */
const MARGIN_PX = 16;
const GAP_PX = 10;
const METER_PX = 3;
/** The header's type on an export the size of the screen (CSS px, times the scale). */
const HEADER_FONT_PX = 13;
/** The narrowest export the size of the screen (CSS px, times the scale): room for the header. */
const MIN_WIDTH_PX = 720;

/** The theme's colours and type of view `v`, for the exports. */
function theme(v) {
  const style = getComputedStyle(v.el.explorer);
  const css = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  return {
    background: v.highlightColors().surface,
    text: css('--text', '#111'),
    muted: css('--muted', '#666'),
    accent: css('--accent', '#36c'),
    placeholder: css('--surface-2', '#eee'),
    family: style.fontFamily || 'sans-serif',
  };
}

/** The header's lines: the title, the model and the sort, the sentence, the legend. */
function headerLines(v, model) {
  const mech = v.mechName(v.state.mechanism);
  const spec = v.specs.active;
  const weights = spec ? say(v, 'mx_weights_spec', { name: spec.name }) : say(v, `mx_weights_${model.weights}`, { mech });
  const sentence = spec ? spec.name : v.state.text;
  return [
    { text: say(v, 'mx_title', { mech, stage: model.stageLabel }), weight: 'bold', size: 1.35 },
    { text: say(v, 'mx_model', { weights, layers: model.layers, heads: model.heads, sort: model.sortLabel }), size: 1 },
    { text: `“${sentence}”`, size: 1, wrap: true },
    { text: say(v, 'mx_legend'), size: 0.85, muted: true },
  ];
}

/** The message shown when there is no head to export, in the explorer's language. */
export function nothingToExport(v) {
  return say(v, 'mx_nothing');
}

/** `text` cut into lines no wider than `width` (by `measure`): at spaces, and inside a word wider than a line. */
export function wrapText(text, width, measure) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word;
    if (measure(next) <= width) {
      line = next;
      continue;
    }
    if (line) lines.push(line);
    line = '';
    let rest = word;
    while (measure(rest) > width && rest.length > 1) {
      let n = rest.length - 1;
      while (n > 1 && measure(rest.slice(0, n)) > width) n -= 1;
      lines.push(rest.slice(0, n));
      rest = rest.slice(n);
    }
    line = rest;
  }
  lines.push(line);
  return lines;
}

/** Where a line of type `px` whose top is at `y` has its baseline (the PNG's and the SVG's text alike). */
const baseline = (y, px) => y + Math.round(px * 0.92);

/**
 * Where everything goes, at `scale` times the canvases' pixels (the screen's device pixels):
 * `{ width, height, header: [{ text, x, y, px, weight, muted }], cards: [{ card, x, y, map: { x, y, w, h }, label, figures, meter }], font }`.
 * The heads go in rows of a layer's count, as on screen (where, unsorted, each layer starts a row).
 */
export function modelLayout(v, model, { scale = 1, width: fixedWidth = 0, headerPx = 0 } = {}) {
  const colours = theme(v);
  const first = model.cards[0].canvas;
  const [mapW, mapH] = [Math.round(first.width * scale), Math.round(first.height * scale)];
  const dpr = globalThis.devicePixelRatio || 1;
  const unit = dpr * Math.max(scale, 1);
  // The cards' type as on screen: a seventh of the map's side, between 8 and 11 CSS px.
  const font = Math.round(Math.min(11, Math.max(8, first.width / dpr / 7)) * dpr * scale);
  const line = Math.round(font * 1.3);
  const measurer = make('canvas').getContext('2d');
  const measure = (text, px, weight = '') => {
    measurer.font = `${weight} ${px}px ${colours.family}`;
    return measurer.measureText(text).width;
  };
  const figureW = Math.max(...model.cards.flatMap((c) => c.figures.map((f) => measure(f.text, font, 'bold'))));
  const cellW = Math.max(mapW, Math.ceil(2 * figureW + font), Math.ceil(Math.max(...model.cards.map((c) => measure(c.label, font, 'bold')))));
  const margin = Math.round(MARGIN_PX * unit);
  const gap = Math.round(GAP_PX * unit);
  const meterH = Math.max(1, Math.round(METER_PX * unit));
  const cardH = line + mapH + 2 * line + meterH;
  const cols = Math.max(1, Math.min(model.heads, model.cards.length));
  const rows = Math.ceil(model.cards.length / cols);
  const gridW = cols * cellW + (cols - 1) * gap;
  const width = fixedWidth || Math.max(gridW + 2 * margin, Math.round(MIN_WIDTH_PX * unit));
  const hf = headerPx || Math.round(HEADER_FONT_PX * unit);
  const header = [];
  let y = margin;
  for (const h of headerLines(v, model)) {
    const px = Math.round(hf * h.size);
    const texts = h.wrap ? wrapText(h.text, width - 2 * margin, (t) => measure(t, px, h.weight)) : [h.text];
    for (const text of texts) {
      header.push({ text, x: margin, y, px, weight: h.weight ?? '', muted: !!h.muted });
      y += Math.round(px * 1.35);
    }
  }
  const top = y + Math.round(hf * 0.6);
  const max = Math.max(1e-9, ...model.cards.map((c) => c.stats?.[model.sort] ?? 0));
  const cards = model.cards.map((card, i) => {
    const x = margin + (i % cols) * (cellW + gap);
    const cy = top + Math.floor(i / cols) * (cardH + gap);
    const sorted = card.figures.some((f) => f.sorted);
    const ratio = sorted && card.stats ? Math.max(0, card.stats[model.sort] / max) : 0;
    return {
      card,
      x,
      y: cy,
      label: { text: card.label, x, y: cy },
      map: { x, y: cy + line, w: mapW, h: mapH },
      figures: card.figures.map((f, j) => ({ ...f, x: x + (j % 2) * Math.round(cellW / 2), y: cy + line + mapH + Math.floor(j / 2) * line })),
      meter: ratio > 0 ? { x, y: cy + line + mapH + 2 * line, w: Math.round(ratio * mapW), h: meterH } : null,
    };
  });
  const height = top + rows * cardH + (rows - 1) * gap + margin;
  return { width, height, header, cards, font, colours, scale, gridW, margin };
}

/**
 * The layout of the export for slides: 1,920 px wide, the heads as wide as they fit. Its maps
 * are drawn again from their cells (`cells`) when every cell has a pixel of its canvas; else
 * at the largest whole multiple of their pixels that fits, or shrunk when not even one does.
 */
function slideLayout(v, model) {
  const at = (scale) => modelLayout(v, model, { scale, width: SLIDE_PX, headerPx: Math.min(32, Math.max(22, Math.round(HEADER_FONT_PX * scale))) });
  const fits = (l) => l.gridW + 2 * l.margin <= SLIDE_PX;
  const natural = at(1);
  const first = model.cards[0].canvas;
  if (model.rows <= first.height && model.cols <= first.width) {
    // The text and the room between the heads grow with the scale too: a few steps to the widest that fits.
    let scale = Math.max(1, (SLIDE_PX - 2 * natural.margin) / natural.gridW);
    for (let step = 0; step < 6; step += 1) {
      const l = at(scale);
      if (fits(l) && SLIDE_PX - (l.gridW + 2 * l.margin) < 4) return { ...l, cells: true };
      scale *= (SLIDE_PX - 2 * l.margin) / l.gridW;
    }
    for (let s = scale; s >= 1; s *= 0.98) if (fits(at(s))) return { ...at(s), cells: true };
  }
  for (let scale = Math.floor((SLIDE_PX - 2 * natural.margin) / natural.gridW); scale >= 1; scale -= 1) {
    const l = at(scale);
    if (fits(l)) return l;
  }
  return at((SLIDE_PX - 2 * natural.margin) / natural.gridW);
}

/**
 * The model view on one canvas at `size` (the export size control's choice): `'1'` the maps'
 * pixels as on screen (device pixels), `'2'` each pixel twice over (nearest neighbour: cells
 * stay sharp), `'1920'` 1,920 pixels wide for slides (`slideLayout`).
 */
export function modelCanvas(v, model, size) {
  const layout = size === String(SLIDE_PX) ? slideLayout(v, model) : modelLayout(v, model, { scale: size === '2' ? 2 : 1 });
  const { width, height, colours, font, scale } = layout;
  const out = make('canvas');
  out.width = width;
  out.height = height;
  const ctx = out.getContext('2d');
  ctx.fillStyle = colours.background;
  ctx.fillRect(0, 0, width, height);
  ctx.textBaseline = 'alphabetic';
  const text = (t, x, y, px, weight = '', colour = colours.text, maxWidth = undefined) => {
    ctx.font = `${weight} ${px}px ${colours.family}`;
    ctx.fillStyle = colour;
    ctx.fillText(t, x, baseline(y, px), maxWidth);
  };
  for (const h of layout.header) text(h.text, h.x, h.y, h.px, h.weight, h.muted ? colours.muted : colours.text, width - 2 * h.x);
  for (const c of layout.cards) {
    text(c.label.text, c.label.x, c.label.y, font, 'bold');
    ctx.fillStyle = colours.placeholder;
    ctx.fillRect(c.map.x, c.map.y, c.map.w, c.map.h);
    if (layout.cells) {
      drawCells(ctx, c.card.canvas, model.rows, model.cols, c.map);
    } else {
      // Whole multiples stay pixel-exact (each pixel a block); a shrunk map is smoothed.
      ctx.imageSmoothingEnabled = scale < 1;
      ctx.drawImage(c.card.canvas, c.map.x, c.map.y, c.map.w, c.map.h);
    }
    for (const f of c.figures) text(f.text, f.x, f.y + Math.round(font * 0.15), font, f.sorted ? 'bold' : '');
    if (c.meter) {
      ctx.fillStyle = colours.accent;
      ctx.fillRect(c.meter.x, c.meter.y, c.meter.w, c.meter.h);
    }
  }
  return out;
}

/** Text escaped for XML (an element's content or an attribute's value). */
function xml(text) {
  return String(text).replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[ch]);
}

/**
 * The pixels `[from, to)` of each of `count` cells along `extent` pixels, as the engine assigns
 * them (src/render/layout.rs `cell_index`: a pixel to the cell its centre is in); null for a
 * cell with no pixel.
 */
export function cellSpans(count, extent) {
  const spans = Array.from({ length: count }, () => [Infinity, -Infinity]);
  for (let p = 0; p < extent; p += 1) {
    const i = Math.min(count - 1, Math.floor(((2 * p + 1) * count) / (2 * extent)));
    spans[i][0] = Math.min(spans[i][0], p);
    spans[i][1] = Math.max(spans[i][1], p + 1);
  }
  return spans.map(([from, to]) => (to > from ? [from, to] : null));
}

const hex = (data, i) => `#${[data[i], data[i + 1], data[i + 2]].map((b) => b.toString(16).padStart(2, '0')).join('')}`;

/**
 * Every cell of a map read from its canvas's pixels, row by row: `{ row, col, x, y, light,
 * dark, alpha }`, `x` and `y` its pixels `[from, to)`, `light` and `dark` its lightest and
 * darkest colours (`#rrggbb`; two for a cell the mask forbids, which is hatched), `alpha` its
 * lightest pixel's (0–255); a cell with no pixel is left out.
 */
function readCells(canvas, rows, cols) {
  const { width, height } = canvas;
  const data = canvas.getContext('2d').getImageData(0, 0, width, height).data;
  const lum = (i) => data[i] * 299 + data[i + 1] * 587 + data[i + 2] * 114;
  const xs = cellSpans(cols, width);
  const out = [];
  cellSpans(rows, height).forEach((y, row) => {
    if (!y) return;
    xs.forEach((x, col) => {
      if (!x) return;
      let light = -1;
      let dark = -1;
      for (let py = y[0]; py < y[1]; py += 1) {
        for (let px = x[0]; px < x[1]; px += 1) {
          const i = (py * width + px) * 4;
          if (light < 0 || lum(i) > lum(light)) light = i;
          if (dark < 0 || lum(i) < lum(dark)) dark = i;
        }
      }
      out.push({ row, col, x, y, light: hex(data, light), dark: hex(data, dark), alpha: data[light + 3] });
    });
  });
  return out;
}

/**
 * One map as vector cells from its canvas's pixels: a rectangle of each cell's colour; a cell
 * of two colours (one the mask forbids, hatched) its lighter colour crossed by one diagonal of
 * its darker, as the engine's SVG draws it (src/render/svg.rs).
 */
function vectorCells(canvas, rows, cols) {
  return readCells(canvas, rows, cols)
    .map(({ x, y, light, dark, alpha }) => {
      const opacity = alpha < 255 ? ` fill-opacity="${(alpha / 255).toFixed(3)}"` : '';
      const rect = `<rect x="${x[0]}" y="${y[0]}" width="${x[1] - x[0]}" height="${y[1] - y[0]}" fill="${light}"${opacity}/>`;
      return light === dark ? rect : `${rect}<path d="M${x[0]} ${y[1]}L${x[1]} ${y[0]}" stroke="${dark}"/>`;
    })
    .join('');
}

/**
 * One map drawn again at `w` × `h` px from (`x`, `y`) on `ctx` from its canvas's cells, each
 * cell the pixels the engine would give it at that size (so every cell stays sharp and whole
 * at any scale): a cell of one colour filled with it, a hatched one its canvas's pixels
 * stretched (nearest neighbour).
 */
function drawCells(ctx, canvas, rows, cols, { x, y, w, h }) {
  const xs = cellSpans(cols, w);
  const ys = cellSpans(rows, h);
  ctx.imageSmoothingEnabled = false;
  for (const cell of readCells(canvas, rows, cols)) {
    const [tx, ty] = [xs[cell.col], ys[cell.row]];
    if (!tx || !ty) continue;
    const [dx, dy, dw, dh] = [x + tx[0], y + ty[0], tx[1] - tx[0], ty[1] - ty[0]];
    if (cell.light === cell.dark) {
      ctx.globalAlpha = cell.alpha / 255;
      ctx.fillStyle = cell.light;
      ctx.fillRect(dx, dy, dw, dh);
      ctx.globalAlpha = 1;
    } else {
      ctx.drawImage(canvas, cell.x[0], cell.y[0], cell.x[1] - cell.x[0], cell.y[1] - cell.y[0], dx, dy, dw, dh);
    }
  }
}

/**
 * The model view as an SVG document (text), laid out as the PNG the size of the screen: vector
 * text; each map as vector cells when the view has at most `vectorLimit` cells in all and every
 * cell has a pixel of its canvas, else as an embedded PNG of its canvas.
 */
export function modelSvg(v, model, { vectorLimit = VECTOR_CELLS } = {}) {
  const layout = modelLayout(v, model, { scale: 1 });
  const { width, height, colours, font } = layout;
  const first = model.cards[0].canvas;
  const cells = model.cards.length * model.rows * model.cols;
  const vector = cells <= vectorLimit && model.rows <= first.height && model.cols <= first.width;
  const text = (t, x, y, px, { weight = '', fill = colours.text, cls = '' } = {}) =>
    `<text${cls ? ` class="${cls}"` : ''} x="${x}" y="${baseline(y, px)}" font-size="${px}"${weight ? ` font-weight="${weight}"` : ''}${fill === colours.text ? '' : ` fill="${xml(fill)}"`}>${xml(t)}</text>`;
  const parts = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${xml(colours.family)}" fill="${xml(colours.text)}" data-maps="${vector ? 'vector' : 'image'}">`,
    `<title>${xml(layout.header[0].text)}</title>`,
    `<rect class="background" width="100%" height="100%" fill="${xml(colours.background)}"/>`,
    '<g class="header">',
    ...layout.header.map((h) => text(h.text, h.x, h.y, h.px, { weight: h.weight, fill: h.muted ? colours.muted : colours.text })),
    '</g>',
  ];
  for (const c of layout.cards) {
    const { card, map } = c;
    parts.push(`<g class="head" id="head-L${card.layer}-H${card.head}" data-layer="${card.layer}" data-head="${card.head}">`);
    if (card.title) parts.push(`<title>${xml(card.title)}</title>`);
    parts.push(text(card.label, c.label.x, c.label.y, font, { weight: 'bold', cls: 'label' }));
    parts.push(`<rect class="map-background" x="${map.x}" y="${map.y}" width="${map.w}" height="${map.h}" fill="${xml(colours.placeholder)}"/>`);
    if (vector) {
      parts.push(`<g class="map" transform="translate(${map.x} ${map.y})" shape-rendering="crispEdges">${vectorCells(card.canvas, model.rows, model.cols)}</g>`);
    } else {
      parts.push(`<image class="map" x="${map.x}" y="${map.y}" width="${map.w}" height="${map.h}" image-rendering="pixelated" preserveAspectRatio="none" href="${card.canvas.toDataURL('image/png')}"/>`);
    }
    for (const f of c.figures) parts.push(text(f.text, f.x, f.y + Math.round(font * 0.15), font, { weight: f.sorted ? 'bold' : '', cls: `figure ${f.name}` }));
    if (c.meter) parts.push(`<rect class="meter" x="${c.meter.x}" y="${c.meter.y}" width="${c.meter.w}" height="${c.meter.h}" fill="${xml(colours.accent)}"/>`);
    parts.push('</g>');
  }
  parts.push('</svg>');
  return parts.join('\n');
}
