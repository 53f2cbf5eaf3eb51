// The in-browser benchmark (docs/PERFORMANCE.md), run by `scripts/bench-page`.
//
// Headless Chromium (Debian's, software rendering) through playwright-core and the e2e harness:
//
// 1. download sizes: every file the page can load, raw and gzipped (level 9), by kind, with
//    any `weights/` folder in the repository picked up by itself;
// 2. first heatmap: navigation start to the page's first painted maps (`data-ready`, which the
//    page sets one frame after its first render), on fresh contexts, plus what it requested;
// 3. control to paint on www/bench.html (the page's wasm and drawing path on canvases of the
//    page's sizes): the shift slider with the five maps of one head and with the all-heads
//    view, picking another head (every head computed first, as the page does between frames),
//    changing the number of heads, and retyping a word, for L = 16 … 2,048 tokens and H = 1,
//    4, 8 (the all-heads view in one render, all its heads at once: the page spreads them over
//    frames when they take long);
//    median and 95th percentile, split into compute, drawing calls and rasterisation;
// 4. the engine alone in wasm (`bench_engine`), for the native/wasm ratio of scripts/bench-peer;
// 5. a cross-check on the real page (www/index.html): its own frame time for shift ticks;
// 6. the real page's all-heads view at 2,048 tokens × 8 heads after a typed word (every head's
//    maps new): the time until every head is drawn and the longest main-thread task
//    (PerformanceObserver 'longtask') and gap between frames meanwhile, on the page's one path
//    for heavy work (no Web Worker since issue 18).
//
// Usage: node benches/page.mjs [--quick] [--engine-only] [--all-heads-only] [--reps N] [--out DIR] [--tokens L,L,…]
//   --quick        one small size, few repetitions: the CI smoke run (asserts no timings, only
//                  that everything runs and that a shift tick recomputes only the shift stages
//                  and a head change nothing)
//   --engine-only  step 4 alone, written to DIR/engine-wasm.json (scripts/bench-peer)
//   --all-heads-only  step 6 alone (N repetitions of each), written to DIR/all-heads.json and .md
// Writes DIR/page.json and DIR/page.md (default test-results/bench) and prints the tables.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { CHROMIUM, ROOT, startHarness, waitForReady } from '../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const QUICK = flag('--quick');
const ENGINE_ONLY = flag('--engine-only');
const ALL_HEADS_ONLY = flag('--all-heads-only');
const REPS = Number(option('--reps', QUICK ? 3 : 40));
const OUT = path.resolve(ROOT, option('--out', 'test-results/bench'));

const TOKENS = QUICK ? [16] : (option('--tokens', '') ? option('--tokens').split(',').map(Number) : [16, 64, 128, 256, 512, 1024, 2048]);
const HEADS = QUICK ? [4] : [1, 4, 8];
// The page's canvases at a 1280 x 800 window (device pixel ratio 1), measured on index.html:
// five maps in a row of ~384 x 336, the all-heads grid ~218 x 190; its label font is
// clamp(12, css width / 30, 15) px.
const STAGES_CANVAS = { width_px: 384, height_px: 336, font_px: 13 };
const ALL_HEADS_CANVAS = { width_px: 218, height_px: 190, font_px: 12 };

// ---------------------------------------------------------------------------------------
// Statistics

function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank: the smallest value with at least q of the samples at or below it.
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

function summary(samples, keys) {
  return Object.fromEntries(
    keys.map((k) => {
      const v = samples.map((s) => s[k]);
      return [k, { median: quantile(v, 0.5), p95: quantile(v, 0.95) }];
    }),
  );
}

const ms = (v) => (Number.isFinite(v) ? (v < 10 ? v.toFixed(1) : v.toFixed(0)) : '–');
const kb = (bytes) => `${(bytes / 1000).toFixed(1)} KB`;

// ---------------------------------------------------------------------------------------
// 1. Download sizes

const SKIP_DIRS = new Set(['node_modules', 'target', '.git', '.tools', 'test-results', '.cargo']);

/** Every folder named `weights` in the repository (not in build or tool folders). */
async function weightFolders(dir = ROOT, found = []) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || SKIP_DIRS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.name === 'weights') found.push(full);
    else await weightFolders(full, found);
  }
  return found;
}

async function filesUnder(dir) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

function kindOf(file) {
  const rel = path.relative(ROOT, file).split(path.sep);
  if (rel.includes('weights')) return 'weights';
  if (file.endsWith('.wasm')) return 'wasm';
  if (/\.m?js$/.test(file)) return 'js';
  return 'other';
}

async function sizeOf(file) {
  const body = await readFile(file);
  return { file: path.relative(ROOT, file), kind: kindOf(file), raw: body.length, gzip: gzipSync(body, { level: 9 }).length };
}

/** What the page can download: pkg/ (but its .d.ts and README), www/ (but the benchmark and
 * the bundles' source maps, which only a browser's developer tools fetch), weights. */
async function shippedFiles() {
  const pkg = (await filesUnder(path.join(ROOT, 'pkg'))).filter((f) => /\.(js|wasm)$/.test(f) && !f.includes(`${path.sep}bench${path.sep}`));
  const www = (await filesUnder(path.join(ROOT, 'www'))).filter((f) => !/[/\\]bench\.(html|js)$/.test(f) && !f.endsWith('.map'));
  const weights = [];
  for (const dir of await weightFolders()) weights.push(...(await filesUnder(dir)));
  return [...new Set([...pkg, ...www, ...weights])];
}

function totals(sizes) {
  const t = {};
  for (const s of sizes) {
    t[s.kind] ??= { raw: 0, gzip: 0, files: 0 };
    t[s.kind].raw += s.raw;
    t[s.kind].gzip += s.gzip;
    t[s.kind].files += 1;
  }
  return t;
}

// ---------------------------------------------------------------------------------------
// 2. First heatmap on the real page

// Runs before any page script: notes when the page marks itself ready (its first maps were
// painted a frame earlier) relative to navigation start, which is performance.now()'s zero.
const READY_PROBE = () => {
  const observer = new MutationObserver(() => {
    if (document.body?.dataset.ready === 'true' && window.__readyAt === undefined) {
      window.__readyAt = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { attributes: true, subtree: true, attributeFilter: ['data-ready'] });
};

async function firstHeatmap(h, runs) {
  const samples = [];
  let requests = [];
  for (let i = 0; i < runs; i++) {
    const { page, context, errors } = await h.newPage({ width_px: 1280, height_px: 800 });
    const seen = [];
    page.on('requestfinished', (req) => seen.push(req.url()));
    await page.addInitScript(READY_PROBE);
    await page.goto(h.url('/www/'));
    await waitForReady(page);
    const t = await page.evaluate(() => ({
      ready_ms: window.__readyAt,
      fcp_ms: performance.getEntriesByName('first-contentful-paint')[0]?.startTime,
      dom_ms: performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd,
    }));
    if (errors.length) throw new Error(`the page reported errors: ${errors.join('; ')}`);
    samples.push(t);
    requests = seen;
    await context.close();
  }
  const files = requests
    .map((u) => new URL(u).pathname)
    .filter((p) => p !== '/favicon.ico')
    .map((p) => path.join(ROOT, decodeURIComponent(p.endsWith('/') ? `${p}index.html` : p)))
    .filter((f) => existsSync(f));
  return { samples, stats: summary(samples, ['ready_ms', 'fcp_ms', 'dom_ms']), files };
}

// ---------------------------------------------------------------------------------------
// 3. and 4. The benchmark page

async function benchPage(h, { ticks = true } = {}) {
  const { page, errors } = await h.newPage({ width_px: 1400, height_px: 900 });
  await page.goto(h.url('/www/bench.html'));
  await waitForReady(page);
  const run = (fn, arg) => page.evaluate(fn, arg);
  const results = { build: await run(() => window.bench.build), ticks: [], engine: [], sentence_128: await run(() => window.bench.sentence(128)) };
  const keys = ['total_ms', 'compute_ms', 'draw_ms', 'raster_ms'];

  // Warm up: let V8 compile the hot wasm functions with its optimising tier.
  await run((c) => window.bench.setup(c), { tokens: 128, heads: 8, ...STAGES_CANVAS });
  await run((c) => window.bench.ticks(c), { reps: 20, warmup: 0 });
  await run((c) => window.bench.engine(c), { tokens: 256, heads: 8, reps: 10 });

  const cases = [];
  for (const tokens of TOKENS) {
    for (const heads of HEADS) cases.push({ scenario: 'shift', view: 'stages', control: 'shift', tokens, heads });
    for (const heads of HEADS.filter((x) => x > 1)) {
      cases.push({ scenario: 'shift (all heads)', view: 'all_heads', control: 'shift', tokens, heads });
      cases.push({ scenario: 'head', view: 'stages', control: 'head', tokens, heads, all: true });
    }
    cases.push({ scenario: 'heads (H ↔ H/2)', view: 'stages', control: 'heads', tokens, heads: HEADS[HEADS.length - 1] });
    cases.push({ scenario: 'typing', view: 'stages', control: 'typing', tokens, heads: HEADS[HEADS.length - 1] });
  }
  for (const c of ticks ? cases : []) {
    const canvas = c.view === 'all_heads' ? ALL_HEADS_CANVAS : STAGES_CANVAS;
    const drawn = await run((cfg) => window.bench.setup(cfg), { tokens: c.tokens, heads: c.heads, view: c.view, all: !!c.all, ...canvas });
    // Typing recomputes the shown head from the projections, and the all-heads view every head:
    // fewer repetitions at the largest sizes keep the run short.
    const heavy = c.control === 'typing' || c.control === 'heads' || (c.view === 'all_heads' && c.tokens >= 1024);
    const reps = heavy ? Math.max(3, Math.round(REPS / 2)) : REPS;
    const { samples, recomputed } = await run((cfg) => window.bench.ticks(cfg), { control: c.control, reps, warmup: QUICK ? 1 : 5 });
    results.ticks.push({ ...c, maps: drawn.maps, reps, recomputed, stats: summary(samples, keys) });
    checkRecomputed(c, recomputed, reps);
  }
  for (const tokens of TOKENS) {
    for (const heads of HEADS) {
      const e = await run((cfg) => window.bench.engine(cfg), { tokens, heads, reps: QUICK ? 3 : 30 });
      results.engine.push({
        tokens,
        heads,
        maps_ms: { median: quantile(e.maps_ms, 0.5), p95: quantile(e.maps_ms, 0.95) },
        shift_ms: { median: quantile(e.shift_ms, 0.5), p95: quantile(e.shift_ms, 0.95) },
      });
    }
  }
  if (errors.length) throw new Error(`the benchmark page reported errors: ${errors.join('; ')}`);
  await page.context().close();
  return results;
}

/**
 * The caching contract (ARCHITECTURE.md), counted per head: a shift tick recomputes the shift
 * stages of the heads drawn (the shown one, or every head in the all-heads view), showing a
 * computed head nothing, the number of heads the shown head's maps and stages, and a typed word
 * the projections and the shown head's maps and stages.
 */
function checkRecomputed(c, r, reps) {
  const drawn = c.view === 'all_heads' ? c.heads : 1;
  const want = {
    shift: { projections: 0, maps: 0, shift_stages: reps * drawn },
    head: { projections: 0, maps: 0, shift_stages: 0 },
    heads: { projections: 0, maps: reps, shift_stages: reps },
    typing: { projections: reps, maps: reps, shift_stages: reps },
  }[c.control];
  for (const [k, v] of Object.entries(want)) {
    if (r[k] !== v) {
      throw new Error(`${c.scenario} at L=${c.tokens}, H=${c.heads}: ${k} recomputed ${r[k]} times in ${reps} ticks, expected ${v}`);
    }
  }
}

// ---------------------------------------------------------------------------------------
// 5. Cross-check on the real page

async function realPage(h, tokens, text, reps) {
  const { page, context, errors } = await h.newPage({ width_px: 1280, height_px: 800 });
  try {
    await page.goto(h.url('/www/'));
    await waitForReady(page);
    if (!(await page.$('#sentence')) || !(await page.$('#shift'))) return null;
    await page.fill('#sentence', text);
    await page.evaluate(() => window.diffattn?.settled?.());
    const frames = await page.evaluate(async ([n]) => {
      const d = window.diffattn;
      const slider = d?.root?.getElementById('shift');
      if (!d?.timings || !d.settled || !slider) return null;
      const out = [];
      for (let i = 0; i < n + 5; i++) {
        slider.value = String(1 + ((i + 1) % 8));
        slider.dispatchEvent(new Event('input', { bubbles: true }));
        await d.settled();
        if (i >= 5) out.push({ frame_ms: d.timings.frame_ms, compute_ms: d.timings.compute_ms, draw_ms: d.timings.draw_ms });
      }
      return out;
    }, [reps]);
    if (!frames || errors.length) return null;
    const canvases = await page.evaluate(() => window.diffattn.root.querySelectorAll('canvas.map-canvas').length);
    return { tokens, maps: canvases, stats: summary(frames, ['frame_ms', 'compute_ms', 'draw_ms']) };
  } finally {
    await context.close();
  }
}

// ---------------------------------------------------------------------------------------
// 6. The all-heads view at 2,048 × 8 on the real page

const ALL_HEADS_WORDS = 'the film was not good but the actors were wonderful and the music stayed with me long after'.split(' ');
const allHeadsText = (n, first) => [first, ...Array.from({ length: n - 1 }, (_, i) => ALL_HEADS_WORDS[i % ALL_HEADS_WORDS.length])].join(' ');

async function allHeadsPage(h, reps, tokens = 2048, heads = 8) {
  const modes = { page: [] };
  const pages = {};
  try {
    for (const mode of Object.keys(modes)) {
      const { page, context, errors } = await h.newPage({ width_px: 1280, height_px: 800 });
      const query = new URLSearchParams({ text: allHeadsText(tokens, 'the'), heads: String(heads), all: '1', weights: 'untrained' });
      await page.goto(h.url(`/www/?${query}`));
      await waitForReady(page);
      await page.evaluate(() => window.diffattn.settled());
      pages[mode] = { page, context, errors };
    }
    for (let i = 0; i < reps + 1; i++) {
      for (const mode of Object.keys(modes)) {
        const { page } = pages[mode];
        const sample = await page.evaluate(async ([text]) => {
          const d = window.diffattn;
          // Long tasks of the heads: after the first render (which computes and draws the shown
          // head).
          const renders = d.timings.renders;
          let firstRender = Infinity;
          const waitRender = () => {
            if (d.timings.renders !== renders) firstRender = performance.now();
            else requestAnimationFrame(waitRender);
          };
          requestAnimationFrame(waitRender);
          const entries = [];
          const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
          observer.observe({ type: 'longtask' });
          let gap = 0;
          let last = performance.now();
          let running = true;
          const frame = (now) => {
            gap = Math.max(gap, now - last);
            last = now;
            if (running) requestAnimationFrame(frame);
          };
          requestAnimationFrame(frame);
          const before = d.call((ex) => ex.recomputations());
          const box = d.root.getElementById('sentence');
          const started = performance.now();
          box.value = text;
          box.dispatchEvent(new Event('input', { bubbles: true }));
          await d.settled();
          const done_ms = performance.now() - started;
          // Long tasks are reported after they end: one more frame.
          await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
          running = false;
          observer.disconnect();
          let longest = 0;
          let blocking = 0;
          let heads = 0;
          for (const e of entries) {
            longest = Math.max(longest, e.duration);
            blocking += e.duration - 50;
            if (e.startTime > firstRender) heads = Math.max(heads, e.duration);
          }
          const after = d.call((ex) => ex.recomputations());
          return { done_ms, longest_task_ms: longest, heads_task_ms: heads, blocking_ms: blocking, longest_gap_ms: gap, maps: after.maps - before.maps, pending: d.call((ex) => ex.pending_heads()) };
        }, [allHeadsText(tokens, ALL_HEADS_WORDS[i % ALL_HEADS_WORDS.length] === 'the' ? 'a' : ALL_HEADS_WORDS[i % ALL_HEADS_WORDS.length])]);
        if (i > 0) modes[mode].push(sample);
      }
    }
    for (const mode of Object.keys(modes)) if (pages[mode].errors.length) throw new Error(`${mode}: ${pages[mode].errors.join('; ')}`);
  } finally {
    for (const p of Object.values(pages)) await p.context.close();
  }
  const out = { tokens, heads, reps };
  for (const [mode, samples] of Object.entries(modes)) {
    out[mode] = { samples, stats: summary(samples, ['done_ms', 'longest_task_ms', 'heads_task_ms', 'blocking_ms', 'longest_gap_ms']), maps: samples.map((s) => s.maps) };
  }
  return out;
}

function allHeadsReport(a) {
  const lines = [`### The all-heads view at ${a.tokens} tokens × ${a.heads} heads, a typed word (www/index.html, ${a.reps} each, alternating), ms: median (p95)`, ''];
  lines.push('| heads computed | every head drawn after | longest main-thread task | longest after the first render | blocking time (Σ task − 50 ms) | longest gap between frames | per word: maps computed |');
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const [mode, name] of [['page', 'on the page, in pieces between frames']]) {
    const s = a[mode].stats;
    const cell = (k) => `${ms(s[k].median)} (${ms(s[k].p95)})`;
    lines.push(`| ${name} | ${cell('done_ms')} | ${cell('longest_task_ms')} | ${cell('heads_task_ms')} | ${cell('blocking_ms')} | ${cell('longest_gap_ms')} | ${[...new Set(a[mode].maps)].join(',')} |`);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------
// Report

function machine() {
  let chromium = '?';
  try {
    chromium = execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {}
  return {
    cpu: os.cpus()[0]?.model ?? '?',
    cores: os.cpus().length,
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    chromium,
    load_before: os.loadavg().map((x) => x.toFixed(2)).join(' '),
    date: new Date().toISOString(),
  };
}

function report(r) {
  const lines = [];
  const say = (s = '') => lines.push(s);
  say(`Machine: ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memory_gib} GiB; ${r.machine.chromium}; node ${r.machine.node}.`);
  say(`Load average (1, 5, 15 min) before: ${r.machine.load_before}; after: ${r.machine.load_after}.`);
  say();
  say(`### Control to paint (www/bench.html, the ${r.page.build} wasm build, as the page loads here), ms: median (p95)`);
  say();
  say('| what | L | H | maps | total | compute | drawing calls | rasterise | recomputed (proj/maps/shift, per head) |');
  say('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const t of r.page.ticks) {
    const s = t.stats;
    const cell = (k) => `${ms(s[k].median)} (${ms(s[k].p95)})`;
    say(`| ${t.scenario} | ${t.tokens} | ${t.heads} | ${t.maps} | ${cell('total_ms')} | ${cell('compute_ms')} | ${cell('draw_ms')} | ${cell('raster_ms')} | ${t.recomputed.projections}/${t.recomputed.maps}/${t.recomputed.shift_stages} in ${t.reps} |`);
  }
  say();
  say('### The engine alone in wasm (`bench_engine`), ms: median (p95)');
  say();
  say('| L | H | projections + A | shift stages (all heads) |');
  say('| ---: | ---: | ---: | ---: |');
  for (const e of r.page.engine) {
    say(`| ${e.tokens} | ${e.heads} | ${ms(e.maps_ms.median)} (${ms(e.maps_ms.p95)}) | ${ms(e.shift_ms.median)} (${ms(e.shift_ms.p95)}) |`);
  }
  say();
  if (r.real_page) {
    const s = r.real_page.stats;
    say(`Real page (www/index.html), shift ticks at L = ${r.real_page.tokens}, ${r.real_page.maps} maps, its own timings: frame ${ms(s.frame_ms.median)} ms (p95 ${ms(s.frame_ms.p95)}), compute ${ms(s.compute_ms.median)}, draw ${ms(s.draw_ms.median)}.`);
  } else if (r.quick) {
    say('Real page cross-check: not in a quick run.');
  } else {
    say('Real page cross-check: skipped (the page lacks #sentence, #shift or window.diffattn.settled/timings).');
  }
  say();
  if (r.all_heads) {
    say(allHeadsReport(r.all_heads));
    say();
  }
  const f = r.first_heatmap.stats;
  say(`### First heatmap (www/index.html, ${r.first_heatmap.samples.length} fresh loads), ms after navigation start`);
  say();
  say(`maps painted (data-ready): median ${ms(f.ready_ms.median)}, p95 ${ms(f.ready_ms.p95)}; first contentful paint ${ms(f.fcp_ms.median)}; DOMContentLoaded ${ms(f.dom_ms.median)}.`);
  say();
  say('### Download size (gzip -9)');
  say();
  say('| set | raw | gzipped |');
  say('| --- | ---: | ---: |');
  for (const [name, t] of Object.entries(r.sizes.sets)) say(`| ${name} | ${kb(t.raw)} | ${kb(t.gzip)} |`);
  say();
  say('| file | kind | raw | gzipped | first view |');
  say('| --- | --- | ---: | ---: | --- |');
  for (const s of r.sizes.files) say(`| ${s.file} | ${s.kind} | ${kb(s.raw)} | ${kb(s.gzip)} | ${s.first_view ? 'yes' : ''} |`);
  say();
  say(r.sizes.weight_folders.length ? `Weights folders: ${r.sizes.weight_folders.join(', ')}; default model's files: ${r.sizes.default_weights.join(', ') || 'none named'}.` : 'Weights: no `weights/` folder yet (the untrained model is seeded in the wasm).');
  return lines.join('\n');
}

async function engineOnly() {
  const result = { machine: machine() };
  const h = await startHarness();
  try {
    result.engine = (await benchPage(h, { ticks: false })).engine;
  } finally {
    await h.close();
  }
  result.machine.load_after = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  await writeFile(path.join(OUT, 'engine-wasm.json'), JSON.stringify(result, null, 2));
  console.log(`bench-page: wrote ${path.relative(ROOT, path.join(OUT, 'engine-wasm.json'))}`);
}

async function main() {
  await mkdir(OUT, { recursive: true });
  if (ENGINE_ONLY) return engineOnly();
  if (ALL_HEADS_ONLY) {
    const h = await startHarness();
    try {
      const load_before = os.loadavg().map((x) => x.toFixed(2)).join(' ');
      const a = { ...(await allHeadsPage(h, REPS)), load_before, load_after: os.loadavg().map((x) => x.toFixed(2)).join(' '), date: new Date().toISOString() };
      const text = `${allHeadsReport(a)}\n\nLoad average before: ${a.load_before}; after: ${a.load_after}.`;
      await writeFile(path.join(OUT, 'all-heads.json'), JSON.stringify(a, null, 2));
      await writeFile(path.join(OUT, 'all-heads.md'), `${text}\n`);
      console.log(text);
    } finally {
      await h.close();
    }
    return;
  }
  const result = { quick: QUICK, machine: machine() };
  const h = await startHarness();
  try {
    result.first_heatmap = await firstHeatmap(h, QUICK ? 1 : 7);
    result.page = await benchPage(h);
    result.real_page = QUICK ? null : await realPage(h, 128, result.page.sentence_128, 20).catch((err) => {
      console.error(`bench-page: real page cross-check failed: ${err.message}`);
      return null;
    });
    result.all_heads = QUICK ? null : await allHeadsPage(h, Math.min(REPS, 5));
  } finally {
    await h.close();
  }

  const firstView = new Set(result.first_heatmap.files.map((f) => path.relative(ROOT, f)));
  // The default model's weights count for the first view even before the page loads them:
  // a weights folder's manifest.json names its `default` mechanism and each model's `file`.
  const defaultWeights = [];
  for (const dir of await weightFolders()) {
    try {
      const manifest = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8'));
      const model = manifest.models?.find((m) => m.mechanism === manifest.default);
      for (const f of ['manifest.json', model?.file].filter(Boolean)) {
        defaultWeights.push(path.relative(ROOT, path.join(dir, f)));
      }
    } catch {
      // No manifest (yet): only what the page requested counts.
    }
  }
  for (const f of defaultWeights) if (existsSync(path.join(ROOT, f))) firstView.add(f);
  const files = await Promise.all((await shippedFiles()).map(sizeOf));
  for (const s of files) s.first_view = firstView.has(s.file);
  // Files the first view requested that are not in the list above (none expected).
  for (const f of firstView) {
    if (!files.some((s) => s.file === f)) files.push({ ...(await sizeOf(path.join(ROOT, f))), first_view: true });
  }
  files.sort((a, b) => b.gzip - a.gzip);
  const byKind = totals(files);
  const sum = (list) => list.reduce((t, s) => ({ raw: t.raw + s.raw, gzip: t.gzip + s.gzip }), { raw: 0, gzip: 0 });
  result.sizes = {
    files,
    by_kind: byKind,
    weight_folders: (await weightFolders()).map((d) => path.relative(ROOT, d)),
    default_weights: defaultWeights,
    sets: {
      // One set per wasm build (scripts/build-wasm): the JavaScript the first view requested
      // (the glue and the page's own modules) and one of the two wasm files
      // (www/explorer/wasm-features.js says which; scripts/build-pkg measures the same).
      ...Object.fromEntries(
        files
          .filter((s) => s.kind === 'wasm' && path.dirname(s.file) === 'pkg')
          .map((w) => [`wasm + JavaScript (${path.basename(w.file)})`, sum([w, ...files.filter((s) => s.kind === 'js' && s.first_view)])]),
      ),
      'first view (what it requested + the default model: manifest, default weights)': sum(files.filter((s) => s.first_view)),
      'weights (all)': sum(files.filter((s) => s.kind === 'weights')),
      'everything (pkg, www, weights)': sum(files),
    },
  };
  result.machine.load_after = os.loadavg().map((x) => x.toFixed(2)).join(' ');

  const text = report(result);
  await writeFile(path.join(OUT, 'page.json'), JSON.stringify(result, null, 2));
  await writeFile(path.join(OUT, 'page.md'), `${text}\n`);
  console.log(text);
  console.log(`\nbench-page: wrote ${path.relative(ROOT, path.join(OUT, 'page.json'))} and page.md${QUICK ? ' (quick run: timings are not meaningful)' : ''}`);
}

main().catch((err) => {
  console.error(`bench-page: ${err.stack || err.message}`);
  process.exit(1);
});
