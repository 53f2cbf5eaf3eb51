// How long the model view (`view=model`, www/explorer/model-view.js) takes to appear for a
// capture of 32 layers × 32 heads (issue 20): the real page (www/index.html) in headless
// Chromium, the file picked in the spec control as a person picks it, then the model view
// chosen. Timed in the page from the view's choice to the first layer's maps drawn, to every
// layer's maps drawn, with the longest main-thread task meanwhile (PerformanceObserver
// 'longtask', tasks over 50 ms) and the longest gap between animation frames.
//
// The capture is made by benches/model_view_capture.py (a random Llama built from a config,
// `diffattn.capture(model, input_ids, layers="all")`, about 34 MB) into the output folder,
// once; it needs torch and transformers (scripts/setup-python's venv, or DIFFATTN_VENV).
//
// Usage: node benches/model-view.mjs [--reps N] [--layers 32] [--heads 32] [--tokens 16]
//                                    [--out DIR] [--shots DIR]
//   --shots DIR: also writes screenshots of the view at 1280 × 800 and 1024 × 768.
// Writes DIR/model-view.json and DIR/model-view.md (default test-results/bench) and prints the table.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startHarness, torchPython, waitForReady } from '../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const REPS = Number(option('--reps', 5));
const LAYERS = Number(option('--layers', 32));
const HEADS = Number(option('--heads', 32));
const TOKENS = Number(option('--tokens', 16));
const OUT = path.resolve(ROOT, option('--out', 'test-results/bench'));
const SHOTS = option('--shots', null);

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

await mkdir(OUT, { recursive: true });
const file = path.join(OUT, `model-view-${LAYERS}x${HEADS}x${TOKENS}.safetensors`);
if (!existsSync(file)) {
  const { py, why } = torchPython();
  if (!py) throw new Error(why);
  const made = spawnSync(py, [path.join(ROOT, 'benches/model_view_capture.py'), file, '--layers', String(LAYERS), '--heads', String(HEADS), '--tokens', String(TOKENS)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (made.status !== 0) throw new Error('benches/model_view_capture.py failed');
  console.log(made.stdout.trim());
}

/** Opens the page at `width` × `height`, picks the file and waits until its first layer is drawn. */
async function openCapture(h, width, height) {
  const { page } = await h.newPage({ width_px: width, height_px: height });
  await page.goto(h.url('/www/'));
  await waitForReady(page);
  await page.evaluate(() => window.diffattn.settled());
  const input = await page.evaluateHandle(() => window.diffattn.root.getElementById('spec-file'));
  await input.asElement().setInputFiles(file);
  await page.waitForFunction(() => window.diffattn.view.specs.active !== null || window.diffattn.root.getElementById('messages').textContent !== '', null, { timeout: 120_000 });
  const message = await page.evaluate(() => window.diffattn.root.getElementById('messages').textContent);
  if (message) throw new Error(`the page did not draw ${file}: ${message}`);
  await page.evaluate(() => window.diffattn.settled());
  return page;
}

/** Chooses the model view and times it in the page (ms from the choice). */
async function timeModelView(page) {
  return page.evaluate(
    (expected) =>
      new Promise((resolve, reject) => {
        const root = window.diffattn.root;
        const longTasks = [];
        const observer = new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => e.duration)));
        observer.observe({ type: 'longtask' });
        const t0 = performance.now();
        let first = null;
        let lastFrame = t0;
        let gap = 0;
        const drawn = () => root.querySelectorAll('canvas.mv-map[role="img"]').length;
        const frame = (now) => {
          gap = Math.max(gap, now - lastFrame);
          lastFrame = now;
          const n = drawn();
          if (first === null && n > 0) first = performance.now() - t0;
          if (n >= expected) {
            const all = performance.now() - t0;
            // Let the last long task be reported before reading them.
            setTimeout(() => {
              observer.disconnect();
              resolve({ first_layer_ms: first, all_ms: all, longest_task_ms: Math.max(0, ...longTasks), longest_frame_gap_ms: gap, cards: root.querySelectorAll('.mv-card').length });
            }, 100);
            return;
          }
          if (now - t0 > 120_000) return reject(new Error(`only ${n} of ${expected} maps drawn after 120 s`));
          requestAnimationFrame(frame);
        };
        window.diffattn.view.setFromPerson({ view: 'model' });
        requestAnimationFrame(frame);
      }),
    LAYERS * HEADS,
  );
}

const h = await startHarness({ root: ROOT });
const runs = [];
try {
  for (let rep = 0; rep < REPS; rep++) {
    const page = await openCapture(h, 1280, 800);
    const r = await timeModelView(page);
    if (r.cards !== LAYERS * HEADS) throw new Error(`${r.cards} cards, expected ${LAYERS * HEADS}`);
    runs.push(r);
    console.log(`rep ${rep + 1}: first layer ${r.first_layer_ms.toFixed(0)} ms, every layer ${r.all_ms.toFixed(0)} ms, longest task ${r.longest_task_ms.toFixed(0)} ms, longest gap between frames ${r.longest_frame_gap_ms.toFixed(0)} ms`);
    await page.context().close();
  }
  if (SHOTS) {
    await mkdir(path.resolve(ROOT, SHOTS), { recursive: true });
    for (const [w, hgt] of [
      [1280, 800],
      [1024, 768],
    ]) {
      const page = await openCapture(h, w, hgt);
      await timeModelView(page);
      const shot = path.resolve(ROOT, SHOTS, `model-view-${LAYERS}x${HEADS}-${w}x${hgt}.png`);
      await page.screenshot({ path: shot });
      console.log(`wrote ${shot}`);
      await page.context().close();
    }
  }
} finally {
  await h.close();
}

const figures = ['first_layer_ms', 'all_ms', 'longest_task_ms', 'longest_frame_gap_ms'];
const summary = Object.fromEntries(figures.map((k) => [k, { median: quantile(runs.map((r) => r[k]), 0.5), max: Math.max(...runs.map((r) => r[k])) }]));
const when = new Date().toISOString();
const load = os.loadavg().map((x) => x.toFixed(1)).join(' ');
const md = [
  `The model view of a ${LAYERS} × ${HEADS} capture (${TOKENS} tokens), 1280 × 800, ${REPS} runs (${when}, load ${load}; \`node benches/model-view.mjs\`)`,
  '',
  '| from choosing the view to | median ms | max ms |',
  '| --- | ---: | ---: |',
  `| the first layer's maps drawn | ${summary.first_layer_ms.median.toFixed(0)} | ${summary.first_layer_ms.max.toFixed(0)} |`,
  `| every layer's maps drawn | ${summary.all_ms.median.toFixed(0)} | ${summary.all_ms.max.toFixed(0)} |`,
  `| longest main-thread task meanwhile (over 50 ms, else 0) | ${summary.longest_task_ms.median.toFixed(0)} | ${summary.longest_task_ms.max.toFixed(0)} |`,
  `| longest gap between animation frames | ${summary.longest_frame_gap_ms.median.toFixed(0)} | ${summary.longest_frame_gap_ms.max.toFixed(0)} |`,
  '',
].join('\n');
await writeFile(path.join(OUT, 'model-view.json'), JSON.stringify({ when, load, layers: LAYERS, heads: HEADS, tokens: TOKENS, runs, summary }, null, 2));
await writeFile(path.join(OUT, 'model-view.md'), md);
console.log(`\n${md}`);
