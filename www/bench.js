// The in-browser benchmark's page side (docs/PERFORMANCE.md; driven by benches/page.mjs).
//
// It runs the page's own wasm and drawing path (`Explorer.render`, `render_all_heads`) on
// canvases of the page's sizes, and times what a person waits for after moving a control:
// from the control's input event until every visible map is painted. Chromium records 2D
// canvas drawing and rasterises it later; reading one pixel back forces that, so "painted"
// here includes the rasterisation, and nothing of it is left for the next frame.
//
// The input handler renders at once. The page instead renders in the next animation frame;
// Chromium delivers a dragged slider's input events aligned to frames, just before the
// animation-frame callbacks, so on the page the render runs in the same frame too. Rendering
// in the handler measures the same work without the random wait for a frame that a synthetic
// event, dispatched at any moment, would add. Ticks are paced one per frame, as a drag is.

import init, { Explorer, bench_engine, defaults, version } from '../pkg/bench/diffattn.js';
import { WASM_FILES, wasmBuild, wasmUrl } from './explorer/wasm-features.js';

// Words the tokenizer keeps whole: a sentence of n of them is n tokens.
const WORDS = (
  'the cat sat on a mat because it was tired and then she saw that every dog in ' +
  'this old town ran to see what made those small birds sing so loud at night'
).split(' ');

/** A sentence of exactly `n` tokens (the same words every run). */
export function sentence(n, last = null) {
  const words = Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length]);
  if (last !== null && n > 0) words[n - 1] = last;
  return words.join(' ');
}

/** The benchmark over one handle `ex`: `{ setup, ticks, engine }` (window.bench). */
function createBench(ex) {
  const shiftInput = document.getElementById('shift');
  const headSelect = document.getElementById('head');
  const mapsDiv = document.getElementById('maps');

  /** What is drawn now: { view, canvases, contexts, font_px, heads, tokens }. */
  let current = null;
  /** Samples of the ticks being timed. */
  let samples = [];

  const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

  function render() {
    const { view, canvases, font_px } = current;
    return view === 'all_heads' ? ex.render_all_heads(canvases, font_px, '') : ex.render(canvases, font_px, []);
  }

  /** Forces every canvas's recorded drawing to be rasterised (see the header). */
  function flush() {
    for (const ctx of current.contexts) ctx.getImageData(0, 0, 1, 1);
  }

  /** Times one control change: the setter, the render and the rasterisation. */
  function timed(apply) {
    const t0 = performance.now();
    apply();
    const result = render();
    const t1 = performance.now();
    flush();
    const t2 = performance.now();
    const compute = result.compute_ms;
    samples.push({
      total_ms: t2 - t0,
      compute_ms: compute,
      // Everything up to the end of the render that is not the engine: the drawing calls.
      draw_ms: t1 - t0 - compute,
      raster_ms: t2 - t1,
    });
  }

  shiftInput.addEventListener('input', () => timed(() => ex.update({ shift: Number(shiftInput.value) })));
  headSelect.addEventListener('change', () => timed(() => ex.update({ head: Number(headSelect.value) })));

  /**
   * Draws `tokens` tokens with `heads` heads: the five stages of head 0 (`view: "stages"`) or
   * the final map of every head (`view: "all_heads"`), each on a `width_px` x `height_px` canvas;
   * `all` computes every head before the ticks.
   */
  function setup({ tokens, heads, view = 'stages', width_px = 384, height_px = 336, font_px = 13, all = false }) {
    const info = ex.set_text(sentence(tokens));
    if (info.tokens.length !== tokens) throw new Error(`sentence(${tokens}) gave ${info.tokens.length} tokens`);
    // The engine's default mechanism is shift-difference attention, the one the page opens with.
    ex.update({ mechanism: defaults().mechanism, heads, head: 1, shift: 1 });
    shiftInput.min = String(-tokens);
    shiftInput.max = String(tokens);
    shiftInput.value = '1';
    headSelect.replaceChildren(
      ...Array.from({ length: heads }, (_, h) => new Option(String(h + 1), String(h + 1))),
    );
    const count = view === 'all_heads' ? heads : ex.view().stages.length;
    const dpr = window.devicePixelRatio || 1;
    const canvases = Array.from({ length: count }, () => {
      const c = document.createElement('canvas');
      c.width = width_px;
      c.height = height_px;
      c.style.width = `${width_px / dpr}px`;
      c.style.height = `${height_px / dpr}px`;
      return c;
    });
    mapsDiv.replaceChildren(...canvases);
    current = {
      view,
      canvases,
      contexts: canvases.map((c) => c.getContext('2d')),
      font_px,
      heads,
      tokens,
    };
    render();
    // `all`: every head computed first (the page does it between frames for the all-heads view
    // and the prediction), so that showing another head finds it cached.
    if (all) ex.work(1e9, true);
    flush();
    return { tokens: info.tokens.length, maps: count, stages: ex.view().stages.map((s) => s.id) };
  }

  /**
   * Moves a control `reps` times, one tick per animation frame, after `warmup` untimed ticks.
   * `control`: "shift" (the shift slider, k = 1..8 round and round), "head" (the head shown),
   * "heads" (the number of heads, H and H / 2 in turn) or "typing" (the last word retyped).
   * Returns the samples and how often each cache layer was recomputed meanwhile.
   */
  async function ticks({ control = 'shift', reps = 30, warmup = 5 }) {
    const tick = (i) => {
      if (control === 'shift') {
        shiftInput.value = String(1 + ((i + 1) % 8));
        shiftInput.dispatchEvent(new Event('input', { bubbles: true }));
      } else if (control === 'head') {
        headSelect.value = String(((i + 1) % current.heads) + 1);
        headSelect.dispatchEvent(new Event('change', { bubbles: true }));
      } else if (control === 'heads') {
        // The number of heads, back and forth between H and H / 2: the shown head's maps.
        timed(() => ex.update({ heads: i % 2 ? current.heads : current.heads / 2, head: 1 }));
      } else if (control === 'typing') {
        // Retyping the last word: the tokens change, so everything is recomputed.
        timed(() => ex.set_text(sentence(current.tokens, i % 2 ? 'tired' : 'tried')));
      } else {
        throw new Error(`unknown control ${control}`);
      }
    };
    for (let i = 0; i < warmup; i++) {
      await nextFrame();
      tick(i);
    }
    samples = [];
    const before = ex.recomputations();
    for (let i = warmup; i < warmup + reps; i++) {
      await nextFrame();
      tick(i);
    }
    const after = ex.recomputations();
    const recomputed = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
    const timedSamples = samples;
    samples = [];
    return { samples: timedSamples, recomputed };
  }

  /** The engine alone in wasm: see `bench_engine` in web/src/bench.rs. */
  function engine({ tokens, heads, reps = 20 }) {
    return bench_engine(tokens, heads, reps);
  }

  return { setup, ticks, engine };
}

async function main() {
  // The build the page would load here (www/explorer/wasm-features.js), or `?build=baseline`.
  const asked = new URLSearchParams(location.search).get('build');
  const build = asked in WASM_FILES ? asked : wasmBuild();
  await init({ module_or_path: wasmUrl(new URL('../pkg/bench/', import.meta.url), build) });
  const { setup, ticks } = (window.bench = { ...createBench(new Explorer()), sentence, version: version(), build });
  document.body.dataset.ready = 'true';
  if (new URLSearchParams(location.search).has('run')) {
    const log = document.getElementById('log');
    for (const tokens of [16, 128, 512]) {
      setup({ tokens, heads: 8 });
      const { samples: s } = await ticks({ reps: 20 });
      const med = (k) => s.map((x) => x[k]).sort((a, b) => a - b)[Math.floor(s.length / 2)].toFixed(1);
      log.textContent += `L=${tokens} H=8 shift tick: total ${med('total_ms')} ms (compute ${med('compute_ms')}, draw ${med('draw_ms')}, raster ${med('raster_ms')})\n`;
    }
  }
}

main();
