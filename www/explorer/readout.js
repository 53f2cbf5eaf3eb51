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
  head.append(
    nodesOf(t, 'readout_cell', {
      i: String(cell.row + 1),
      j: String(cell.col + 1),
      q: tokenNode(info.query),
      k: tokenNode(info.key),
    }),
  );
  fragment.append(head);
  if (info.masked) fragment.append(make('p', 'masked-note', t('readout_masked')));
  for (const line of cellLines(info, context)) {
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
    const names = { a: 'A', fused: 'A′', a1: 'A1', diff: 'A1 − λ·A2' };
    const text = sums.map(([id, v]) => `Σ ${names[id] ?? id} = ${fmt(v)}`).join(', ');
    fragment.append(make('p', 'rowsum', t('readout_rowsums', { i: cell.row + 1, sums: text })));
  }
  if (info.sink != null) fragment.append(make('p', 'rowsum', t('readout_sink', { v: fmt(info.sink) })));
  return fragment;
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
