// The arithmetic of one cell, as text the tooltip and the readout show.
//
// `cellLines` turns what `Explorer.cell(row, col)` returns into lines of segments,
// `{ text }` for symbols and `{ text, term }` for numbers, so the page can mark each
// number (data-term="a", "g", ...) and the tests can read them back. Pure, no DOM.

/** Digits after the point in every number the page prints. */
export const DIGITS = 4;

/** A number with a true minus sign (U+2212), fixed digits, and no "−0.0000". */
export function fmt(x, digits = DIGITS) {
  if (typeof x !== 'number' || Number.isNaN(x)) return '–';
  let s = x.toFixed(digits);
  if (/^-0\.?0*$/.test(s)) s = s.slice(1);
  return s.replace('-', '\u2212');
}

/** Reads back a number `fmt` printed. */
export function parseFmt(s) {
  return Number(String(s).trim().replace('\u2212', '-'));
}

/** A number inside a longer expression: negative values get brackets, as on paper. */
function operand(term, x) {
  const text = fmt(x);
  return x < 0 && text.startsWith('\u2212') ? [{ text: '(' }, { text, term }, { text: ')' }] : [{ text, term }];
}

const SUB = 'ᵢⱼ';

/**
 * The lines of arithmetic for one cell. `cell` is `Explorer.cell()`'s value, `context`
 * `{ renormalize, lambda, columns, segment, tokens, col }` (lambda from the cell or
 * `Explorer.lambda()`; `columns` each stage's columns from the engine's view, and segment,
 * tokens and the key `col`, for a map over segments).
 * Each line is an array of `{ text, term? }`.
 */
export function cellLines(cell, context) {
  const v = cell?.values ?? {};
  const lines = [];
  const has = (id) => typeof v[id] === 'number';
  if (has('fused') && has('a') && has('d') && has('g')) {
    const pre = v.a + v.g * v.d;
    const first = [
      { text: `A′${SUB} = A${SUB} + G${SUB} × D${SUB} = ` },
      ...operand('a', v.a),
      { text: ' + ' },
      ...operand('g', v.g),
      { text: ' × ' },
      ...operand('d', v.d),
      { text: ' = ' },
    ];
    if (context.renormalize === 'softmax') {
      first.push({ text: fmt(pre), term: 'pre' });
      lines.push(first);
      lines.push([{ text: `softmax over row i → A′${SUB} = ` }, { text: fmt(v.fused), term: 'fused' }]);
    } else {
      first.push({ text: fmt(v.fused), term: 'fused' });
      lines.push(first);
    }
    if (has('shifted_back') && has('shifted')) {
      lines.push([
        { text: `D${SUB} = shift₋ₖ(A)${SUB} − shiftₖ(A)${SUB} = ` },
        ...operand('shifted_back', v.shifted_back),
        { text: ' − ' },
        ...operand('shifted', v.shifted),
        { text: ' = ' },
        { text: fmt(v.d), term: 'd2' },
      ]);
    } else if (has('shifted')) {
      lines.push([
        { text: `D${SUB} = A${SUB} − shift(A)${SUB} = ` },
        ...operand('a2', v.a),
        { text: ' − ' },
        ...operand('shifted', v.shifted),
        { text: ' = ' },
        { text: fmt(v.d), term: 'd2' },
      ]);
    }
    const gate = cell.gate;
    if (gate && typeof gate.alpha === 'number') {
      lines.push([
        { text: `G${SUB} = σ(α·A + β·D + γ) = σ(` },
        ...operand('alpha', gate.alpha),
        { text: '·' },
        ...operand('a3', v.a),
        { text: ' + ' },
        ...operand('beta', gate.beta),
        { text: '·' },
        ...operand('d3', v.d),
        { text: ' + ' },
        ...operand('gamma', gate.gamma),
        { text: ') = ' },
        { text: fmt(v.g), term: 'g2' },
      ]);
    }
    return lines;
  }
  if (has('diff') && has('a1') && has('a2')) {
    const lambda = typeof cell.lambda === 'number' ? cell.lambda : context.lambda;
    lines.push([
      { text: `(A1 − λ·A2)${SUB} = ` },
      ...operand('a1', v.a1),
      { text: ' − ' },
      ...operand('lambda', lambda),
      { text: ' × ' },
      ...operand('a2', v.a2),
      { text: ' = ' },
      { text: fmt(v.diff), term: 'diff' },
    ]);
    return lines;
  }
  // A map whose columns are segments (the engine's view says which) spreads each segment's
  // weight over its tokens: A is the other map plus that share (hierarchical attention).
  const columns = context.columns ?? {};
  const spread = Object.keys(v).find((id) => columns[id] === 'segments');
  const own = Object.keys(v).find((id) => id !== 'a' && id !== spread && columns[id] === 'keys');
  if (has('a') && spread && own && context.segment > 0 && context.tokens > 0) {
    const first = Math.floor(context.col / context.segment) * context.segment;
    const size = Math.max(1, Math.min(context.segment, context.tokens - first));
    lines.push([
      { text: `A${SUB} = ${own}${SUB} + ${spread}${SUB} / |segment of j| = ` },
      ...operand(own, v[own]),
      { text: ' + ' },
      ...operand(spread, v[spread]),
      { text: ` / ${size} = ` },
      { text: fmt(v.a), term: 'a' },
    ]);
    return lines;
  }
  for (const [id, value] of Object.entries(v)) {
    if (typeof value !== 'number') continue;
    const name = { a: 'A', shifted: 'shift(A)', d: 'D', g: 'G', fused: 'A′', a1: 'A1', a2: 'A2', diff: 'A1 − λ·A2', output_gate_mean: 'mean Gₒ' }[id] ?? id;
    const sub = id === 'output_gate_mean' ? 'ᵢ' : SUB;
    lines.push([{ text: `${name}${sub} = ` }, { text: fmt(value), term: id }]);
  }
  // Gated attention: the output gate of the shown head at this query, channel by channel
  // (the first OUTPUT_GATE_SHOWN of them).
  const gate = Array.isArray(cell?.output_gate) ? cell.output_gate : null;
  if (gate?.length) {
    const shown = gate.slice(0, OUTPUT_GATE_SHOWN).map((g) => fmt(g, 2));
    const more = gate.length > OUTPUT_GATE_SHOWN ? `, … (${gate.length})` : '';
    lines.push([{ text: 'Gₒ[i, c] = (' }, { text: shown.join(', '), term: 'output_gate' }, { text: `${more})` }]);
  }
  return lines;
}

/** Channels of the output gate a readout lists. */
export const OUTPUT_GATE_SHOWN = 8;

/**
 * Shows characters that would otherwise be invisible or reorder the text around them
 * (zero-width, bidi controls, other format and control characters) as ⟨U+200B⟩, so a
 * token is always visible in the tooltip and the table.
 */
export function visibleToken(token) {
  const s = String(token ?? '');
  const shown = s.replace(/[\p{Cc}\p{Cf}\u2028\u2029]/gu, (c) => {
    // Keep the joiner inside emoji sequences: it is part of one visible glyph.
    if (c === '\u200d' && /\p{Extended_Pictographic}\u200d\p{Extended_Pictographic}/u.test(s)) return c;
    return `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`;
  });
  return shown.trim() === '' ? `⟨${[...s].map((c) => `U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`).join(' ') || '∅'}⟩` : shown;
}
