// The engine's statistics of each head as the model view reads them (`head_statistics`,
// web/src/model_view.rs over src/engine/head_stats.rs; docs/DESIGN.md §8), and the four it
// shows under each map with their symbols. Pure: model-view.js and its exports read them.

/** The statistics shown under each map, with their symbols, in that order (the engine's names). */
export const FIGURES = Object.freeze([
  ['entropy', 'H'],
  ['sink', 'S'],
  ['previous', '←'],
  ['next', '→'],
]);

/** How many numbers the engine's `head_statistics` gives per head (web/src/model_view.rs). */
const PER_HEAD = 9;

/**
 * The engine's statistics of every head, nine numbers each (`entropy, sink, previous, next,
 * signed_sink, signed_previous, signed_next, negative, rows`), as `{ entropy, … }` per head, or
 * null for a head without any (`rows` 0).
 */
export function headStats(flat) {
  const out = [];
  for (let i = 0; i + PER_HEAD <= flat.length; i += PER_HEAD) {
    const [entropy, sink, previous, next, signedSink, signedPrevious, signedNext, negative, rows] = flat.slice(i, i + PER_HEAD);
    out.push(rows > 0 ? { entropy, sink, previous, next, signed_sink: signedSink, signed_previous: signedPrevious, signed_next: signedNext, negative: negative > 0, rows } : null);
  }
  return out;
}
