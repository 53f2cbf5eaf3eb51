// End-to-end: the heads' Web Worker (issue 13, item 4; www/explorer/heads-offload.js and
// heads-worker.js). At 2,048 tokens × 8 heads the all-heads view needs every head's maps; the
// page computes the shown head and the worker the others, which the page's handle adopts map by
// map. Checked here: the heads come from the worker (the counters say adopted, not computed),
// with the bits the page computes itself (the same page with no Worker, the fallback, draws
// the same pixels and holds the same maps); a reply computed before a person moved a control is
// dropped, never drawn; a worker that crashes is replaced, and after MAX_RESTARTS the page
// computes every head itself; the element's worker bundle runs too. The longest main-thread
// task (PerformanceObserver 'longtask') is reported, not asserted (times depend on the machine:
// docs/PERFORMANCE.md has the figures).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, startHarness, waitForReady } from './harness.mjs';
import { canvasInfo, LONG_WORDS as WORDS, longText as text, openExplorer, settled } from './www-helpers.mjs';


let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** The page with no Web Worker at all (the fallback: every head in steps on the main thread). */
const noWorker = (page) => page.addInitScript(() => delete window.Worker);

const recomputations = (page) => page.evaluate(() => window.diffattn.call((ex) => ex.recomputations()));
const offloadStats = (page) => page.evaluate(() => ({ ...window.diffattn.view.heads.offload.stats, usable: window.diffattn.view.heads.offload.usable }));

/** A hash of every head's map of `stage`, read from the handle (shows each head in turn). */
function headHashes(page, stage) {
  return page.evaluate((s) => {
    const d = window.diffattn;
    const heads = d.state.heads;
    const out = [];
    for (let head = 1; head <= heads; head++) {
      const m = d.call((ex) => {
        ex.update({ head });
        return ex.window(s, 0, 0, 1e9, 1e9);
      });
      const words = new Uint32Array(m.data.buffer, m.data.byteOffset, m.data.length);
      let hash = 2166136261;
      for (let i = 0; i < words.length; i++) hash = Math.imul(hash ^ words[i], 16777619) >>> 0;
      out.push(`${m.rows}x${m.cols}:${hash}`);
    }
    d.call((ex) => ex.update({ head: d.state.head }));
    return out;
  }, stage);
}

/** Records the longest main-thread task ('longtask', over 50 ms) and frame gap from now on. */
function watchTasks(page) {
  return page.evaluate(() => {
    window.__longest = 0;
    window.__gap = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
    }).observe({ type: 'longtask' });
    let last = performance.now();
    const frame = (now) => {
      window.__gap = Math.max(window.__gap, now - last);
      last = now;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
}
const tasks = (page) => page.evaluate(() => ({ longest_task_ms: Math.round(window.__longest), longest_gap_ms: Math.round(window.__gap) }));

test('2,048 tokens × 8, the all-heads view: the other heads come from the worker, with the bits the page computes itself', async (t) => {
  const query = { text: text(2048), heads: 8, all: 1, weights: 'untrained' };
  const withWorker = await openExplorer(h, query);
  const page = withWorker.page;
  assert.equal(page.workers().length, 1, 'one heads worker');
  let r = await recomputations(page);
  // The shown head computed here, the seven others adopted.
  assert.equal(r.maps, 1, JSON.stringify(r));
  assert.equal(r.adopted, 7, JSON.stringify(r));
  assert.equal(await page.evaluate(() => window.diffattn.root.querySelectorAll('canvas.map-canvas').length), 8);

  // A typed word: new maps for every head; the shown head's here, the rest from the worker.
  await watchTasks(page);
  const started = Date.now();
  await page.fill('#sentence', text(2048, 'a'));
  await settled(page);
  const ms = Date.now() - started;
  const before = r;
  r = await recomputations(page);
  assert.deepEqual([r.projections - before.projections, r.maps - before.maps, r.adopted - before.adopted], [1, 1, 7]);
  const stats = await offloadStats(page);
  const pageMemory = await page.evaluate(() => window.diffattn.view.runtime.exports.memory.buffer.byteLength);
  t.diagnostic(`worker: all heads in ${ms} ms after the word; ${JSON.stringify(await tasks(page))}; ${JSON.stringify(stats)}; page's wasm memory ${pageMemory} bytes`);
  // The worker keeps one head at a time, never a second copy of every head (the page's eight).
  assert.ok(stats.worker_memory > 0 && stats.worker_memory < pageMemory / 2, `worker ${stats.worker_memory}, page ${pageMemory} bytes`);

  // Every head is cached now: showing another one recomputes nothing.
  const cached = await recomputations(page);
  await page.selectOption('#head', '5');
  await settled(page);
  assert.deepEqual(await recomputations(page), cached);

  // The same page without a worker: every head computed here, the same pixels and bits.
  const fallback = await openExplorer(h, { ...query, text: text(2048, 'a'), head: 5 }, { beforeLoad: noWorker });
  assert.equal(fallback.page.workers().length, 0);
  const f = await recomputations(fallback.page);
  assert.equal(f.adopted, 0);
  assert.equal(f.maps, 8);
  assert.equal((await offloadStats(fallback.page)).usable, false);
  assert.deepEqual(await canvasInfo(page), await canvasInfo(fallback.page));
  const stage = await page.evaluate(() => window.diffattn.call((ex) => ex.view()).final_stage);
  assert.deepEqual(await headHashes(page, stage), await headHashes(fallback.page, stage));
  assert.deepEqual(await headHashes(page, 'a'), await headHashes(fallback.page, 'a'));
  assert.deepEqual(withWorker.errors, []);
  assert.deepEqual(fallback.errors, []);
  await withWorker.context.close();
  await fallback.context.close();
});

test('the prediction at 2,048 tokens: the trained model needs every head, from the worker', async (t) => {
  const { page, errors, context } = await openExplorer(h, { text: text(2048), heads: 8 });
  const r = await recomputations(page);
  assert.equal(r.maps + r.adopted, 8, JSON.stringify(r));
  assert.ok(r.adopted >= 1, JSON.stringify(r));
  assert.match(await page.textContent('#prediction-value'), /Positive|Negative/);
  t.diagnostic(JSON.stringify(await offloadStats(page)));
  // The trained model's gate moved away and back: the sliders' gate (another key), still the
  // worker's heads, with the prediction of the page's own settings.
  assert.deepEqual(errors, []);
  await context.close();
});

test('a reply computed before a control moved is dropped, never adopted', async () => {
  const query = { text: text(2048), heads: 8, all: 1, weights: 'untrained' };
  const { page, errors, context } = await openExplorer(h, query);
  // A new word sends the worker jobs; as soon as one is out, the mask changes (other maps).
  await page.fill('#sentence', text(2048, 'one'));
  await page.waitForFunction(() => window.diffattn.view.heads.offload.busy);
  await page.check('#causal');
  await settled(page);
  const stats = await offloadStats(page);
  assert.ok(stats.dropped >= 1, JSON.stringify(stats));
  // What is drawn is the final settings' (the page without a worker computes them itself).
  const fallback = await openExplorer(h, { ...query, text: text(2048, 'one'), causal: 1 }, { beforeLoad: noWorker });
  assert.deepEqual(await canvasInfo(page), await canvasInfo(fallback.page));
  assert.deepEqual(errors, []);
  assert.deepEqual(fallback.errors, []);
  await context.close();
  await fallback.context.close();
});

test('a worker that crashes is replaced; after too many crashes the page computes every head itself', async () => {
  const query = { text: text(1100), heads: 8, all: 1, weights: 'untrained' };
  const { page, errors, context } = await openExplorer(h, query);
  const max = await page.evaluate(async () => (await import('/www/explorer/heads-offload.js')).MAX_RESTARTS);
  let words = 0;
  const retype = async () => {
    words += 1;
    await page.fill('#sentence', text(1100, WORDS[words]));
    await settled(page);
  };
  for (let i = 1; i <= max + 1; i++) {
    await page.evaluate(() => window.diffattn.view.heads.offload.trapForTests());
    await page.waitForFunction((n) => window.diffattn.view.heads.offload.stats.crashes >= n, i);
    await retype();
    const stats = await offloadStats(page);
    assert.equal(stats.usable, i <= max, `after ${i} crashes: ${JSON.stringify(stats)}`);
    // Every head is drawn either way.
    assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.pending_heads())), 0);
  }
  // Now without a worker: the heads are the page's own, in steps.
  const before = await recomputations(page);
  await retype();
  const r = await recomputations(page);
  assert.deepEqual([r.maps - before.maps, r.adopted - before.adopted], [8, 0]);
  assert.deepEqual(errors, []);
  await context.close();
});

/** The captured DiffLlama layer of the fixtures (4 heads), its 12 tokens made `n`: each row of
 * `x` repeated, moved a little so no two rows are equal, at positions 0 to n − 1. */
function longSpec(n) {
  const spec = JSON.parse(readFileSync(path.join(ROOT, 'tests', 'e2e', 'fixtures', 'captured-diffllama.json'), 'utf8'));
  const rows = spec.x.length;
  spec.tokens = Array.from({ length: n }, (_, i) => `${spec.tokens[i % rows]}${i}`);
  spec.x = Array.from({ length: n }, (_, i) => spec.x[i % rows].map((v, j) => v + 0.01 * ((i * 7 + j) % 13)));
  spec.rope.positions = Array.from({ length: n }, (_, i) => i);
  return Buffer.from(JSON.stringify(spec));
}

test('a spec of 1,024 tokens: its other heads come from the worker, with the bits the page computes itself', async () => {
  const file = { name: 'long-diffllama.json', mimeType: 'application/json', buffer: longSpec(1024) };
  const open = async (options) => {
    const opened = await openExplorer(h, { text: 'the cat', weights: 'untrained' }, options);
    await opened.page.setInputFiles('#spec-file', file);
    await opened.page.waitForFunction(() => window.diffattn.view.specs.active !== null);
    await settled(opened.page);
    // Every head side by side: the view that needs every head's maps.
    await opened.page.check('#all-heads');
    await settled(opened.page);
    return opened;
  };
  const withWorker = await open();
  const page = withWorker.page;
  assert.equal(await page.evaluate(() => window.diffattn.view.runtime.worker !== null), true, 'the page has a worker');
  assert.equal(await page.evaluate(() => window.diffattn.view.view.tokens), 1024);
  assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.pending_heads())), 0);
  const r = await recomputations(page);
  // The shown head computed here, the three others adopted from the worker.
  assert.equal(r.adopted, 3, JSON.stringify(r));
  assert.ok(page.workers().some((w) => w.url().endsWith('/www/dist/heads-worker.js')), page.workers().map((w) => w.url()).join(', '));
  assert.equal(await page.evaluate(() => window.diffattn.root.querySelectorAll('canvas.map-canvas').length), 4);

  const fallback = await open({ beforeLoad: noWorker });
  const f = await recomputations(fallback.page);
  assert.equal(f.adopted, 0, JSON.stringify(f));
  const stage = await page.evaluate(() => window.diffattn.call((ex) => ex.view()).final_stage);
  assert.deepEqual(await headHashes(page, stage), await headHashes(fallback.page, stage));
  assert.deepEqual(await canvasInfo(page), await canvasInfo(fallback.page));
  assert.deepEqual(withWorker.errors, []);
  assert.deepEqual(fallback.errors, []);
  await withWorker.context.close();
  await fallback.context.close();
});

test('the element runs its own worker bundle (pkg/diffattn-heads-worker.js)', async () => {
  const { page, errors, context } = await h.newPage();
  await page.goto(h.url('/tests/e2e/fixtures/pkg.html'));
  await waitForReady(page);
  const r = await page.evaluate(async (t) => {
    await import('/pkg/diffattn-explorer.js');
    const el = document.createElement('diffattn-explorer');
    el.setAttribute('text', t);
    el.setAttribute('heads', '8');
    el.setAttribute('all_heads', 'true');
    el.setAttribute('weights', 'untrained');
    document.body.append(el);
    await customElements.whenDefined('diffattn-explorer');
    await el.settled();
    return { canvases: el.shadowRoot.querySelectorAll('canvas.map-canvas').length };
  }, text(1100));
  assert.equal(r.canvases, 8);
  assert.ok(page.workers().some((w) => w.url().endsWith('/pkg/diffattn-heads-worker.js')), page.workers().map((w) => w.url()).join(', '));
  assert.deepEqual(errors, []);
  await context.close();
});
