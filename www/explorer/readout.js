// The arithmetic of one cell, in the tooltip beside the pointer and in the readout below the
// maps (which screen readers announce). Built from text nodes only.

import { make, tokenNode } from './dom.js';
import { cellLines, fmt } from './format.js';
import { formatParts } from './i18n.js';

/** A translated template whose placeholders may be DOM nodes (tokens stay text). */
export function nodesOf(t, key, params) {
  const fragment = document.createDocumentFragment();
  const template = t(key, Object.fromEntries(Object.keys(params).map((k) => [k, `{${k}}`])));
  for (const part of formatParts(template, params)) {
    fragment.append(part instanceof Node ? part : document.createTextNode(String(part)));
  }
  return fragment;
}

/**
 * The cell's tokens, its arithmetic and the row sums. `info` is `Explorer.cell()`'s value,
 * `cell` `{ row, col }` (shown counted from 1, as heads are), `context` what `cellLines`
 * needs (`{ renormalize, lambda }`), `t` the translator.
 */
export function cellContent(info, cell, context, t) {
  const fragment = document.createDocumentFragment();
  const head = make('p', 'tokens');
  const where = { i: String(cell.row + 1), q: tokenNode(info.query) };
  head.append(info.sink_cell ? nodesOf(t, 'readout_sink_cell', where) : nodesOf(t, 'readout_cell', { ...where, j: String(cell.col + 1), k: tokenNode(info.key) }));
  fragment.append(head);
  if (info.masked) fragment.append(make('p', 'masked-note', t('readout_masked')));
  const lines = info.sink_cell ? sinkLines(info, t('sink_label')) : cellLines(info, context);
  for (const line of lines) {
    const p = make('p', 'eq');
    for (const seg of line) {
      if (seg.term) {
        const span = make('span', 'num', seg.text);
        span.dataset.term = seg.term;
        p.append(span);
      } else {
        p.append(seg.text);
      }
    }
    fragment.append(p);
  }
  const sums = Object.entries(info.row_sum ?? {});
  if (sums.length) {
    const text = sums.map(([id, v]) => `Σ ${MAP_NAMES[id] ?? id} = ${fmt(v)}`).join(', ');
    fragment.append(make('p', 'rowsum', t('readout_rowsums', { i: cell.row + 1, sums: text })));
  }
  const sinks = Object.entries(info.sink ?? {});
  if (sinks.length === 1) fragment.append(make('p', 'rowsum', t('readout_sink', { v: fmt(sinks[0][1]) })));
  else if (sinks.length > 1) fragment.append(make('p', 'rowsum', t('readout_sinks', { list: sinks.map(([id, v]) => `${MAP_NAMES[id] ?? id}: ${fmt(v)}`).join(', ') })));
  return fragment;
}

const MAP_NAMES = Object.freeze({ a: 'A', fused: 'A′', a1: 'A1', a2: 'A2', diff: 'A1 − λ·A2' });

/** A cell of the learned sink's strip: the sink's share of the row in each map with a strip,
 * `sinkᵢ = 1 − Σⱼ Aᵢⱼ` (data-term `sink_<map>`), as `cellLines` gives a key's cell. */
export function sinkLines(info, word) {
  return Object.entries(info.sink ?? {}).map(([id, v]) => {
    const name = MAP_NAMES[id] ?? id;
    return [{ text: `${word}(${name})ᵢ = 1 − Σⱼ ${name}ᵢⱼ = ` }, { text: fmt(v), term: `sink_${id}` }];
  });
}

/** Places `tip` near the client point `at`, inside the viewport. */
export function placeTooltip(tip, at) {
  if (!at) {
    tip.hidden = true;
    return;
  }
  tip.hidden = false;
  const pad = 8;
  const w = tip.offsetWidth;
  const h = tip.offsetHeight;
  let left = at.x + 16;
  let top = at.y + 16;
  if (left + w + pad > innerWidth) left = Math.max(pad, at.x - 16 - w);
  if (top + h + pad > innerHeight) top = Math.max(pad, at.y - 16 - h);
  tip.style.left = `${Math.round(left)}px`;
  tip.style.top = `${Math.round(top)}px`;
}
