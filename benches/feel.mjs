// What a person feels: the real page (www/index.html), driven with real key presses through
// the browser's input pipeline (Chromium's DevTools protocol, as a keyboard would), timed from
// outside the page's code: from the key's event time to the first frame whose pixels show the
// watched map changed. The watcher is the benchmark's own script, not the page's: in every
// animation frame it posts itself a task of the highest priority, which runs once the frame's
// callbacks (the page's render among them) are done and the frame is produced, before tasks
// the page queued for later, and there hashes the watched canvas;
// the page's own timings are not read. (A canvas drawn in a task between frames is seen at the
// next frame's check, when the compositor shows it.) Ticks follow one right after the other,
// each as soon as the last one's pixels changed, while the page's other work (the other heads,
// the prediction) is still going. A key goes down and comes up once its tick's map changed, as
// a person's finger does; the benchmark waits on promises the watcher settles and puts no task
// of its own on the page's thread within a tick. What the watcher sees is the frame committed;
// the display shows it a frame later (Chromium's own figure: docs/PERFORMANCE.md, 2026-12-05).
//
// Usage: node benches/feel.mjs [--tokens 128,512,2048] [--ticks N] [--out DIR] [--what shift,type]
//                              [--compare DIR] [--rounds N]
//   --compare DIR: also serve DIR (another checkout, built) and measure both in turn, round
//                  after round, so that the two are measured side by side under the same load.
//   shift: ArrowRight / ArrowLeft on the focused shift slider, watching A′ (the last map);
//   type:  one word of the text replaced (one input event, as a paste or an IME commits it),
//          watching A (the first map).
// Writes DIR/feel.json and DIR/feel.md (default test-results/bench) and prints the table.

import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startHarness, waitForReady } from '../tests/e2e/harness.mjs';
import { longText } from '../tests/e2e/www-helpers.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const TOKENS = option('--tokens', '128,512,2048').split(',').map(Number);
const TICKS = Number(option('--ticks', 11));
const WHAT = option('--what', 'shift,type').split(',');
const OUT = path.resolve(ROOT, option('--out', 'test-results/bench'));
const COMPARE = option('--compare', null);
const ROUNDS = Number(option('--rounds', COMPARE ? 3 : 1));
/** A tick whose pixels have not changed after this long is counted as lost (ms). */
const GIVE_UP_MS = 5_000;

function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}
const ms = (v) => (Number.isFinite(v) ? (v < 10 ? v.toFixed(1) : v.toFixed(0)) : '–');

/**
 * Installs the watcher in the page: every animation frame it hashes the canvas `index` of the
 * maps (negative counts from the end) and records when the hash changes; key and input events
 * on the explorer are recorded with their event times. Nothing of the page's code is called.
 */
async function installWatcher(page, index) {
  await page.evaluate((canvasIndex) => {
    const root = window.diffattn.root;
    const w = { changes: [], keys: [], last: null, index: canvasIndex, longTasks: [], waiting: [] };
    window.__feel = w;
    // The benchmark waits on promises the watcher settles, not by polling the page: polling
    // would put tasks of its own on the page's main thread between a key and its frame.
    const settle = () => {
      w.waiting = w.waiting.filter((x) => {
        const value = x.ready();
        if (value === undefined) return true;
        x.resolve(value);
        return false;
      });
    };
    w.when = (ready, timeoutMs) =>
      new Promise((resolve) => {
        const value = ready();
        if (value !== undefined) return resolve(value);
        const waiter = { ready, resolve };
        w.waiting.push(waiter);
        setTimeout(() => {
          w.waiting = w.waiting.filter((x) => x !== waiter);
          resolve(null);
        }, timeoutMs);
      });
    w.changeAfter = (t, timeoutMs) => w.when(() => w.changes.find((x) => x > t), timeoutMs);
    w.key = (n, timeoutMs) => w.when(() => (w.keys.length >= n ? w.keys[n - 1] : undefined), timeoutMs);
    const canvasOf = () => {
      const all = [...root.querySelectorAll('canvas.map-canvas')];
      return all[w.index < 0 ? all.length + w.index : w.index] ?? null;
    };
    const hash = (canvas) => {
      const ctx = canvas.getContext('2d');
      const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
      let h = 2166136261;
      // Every 7th pixel: a shift tick recolours whole columns, a new word whole rows.
      for (let i = 0; i < data.length; i += 28) h = Math.imul(h ^ data[i] ^ (data[i + 1] << 8) ^ (data[i + 2] << 16), 16777619) >>> 0;
      return `${canvas.width}x${canvas.height}:${h}`;
    };
    const check = () => {
      // The time is taken before the watcher reads the pixels: its own reading (a millisecond
      // for a large canvas) is the benchmark's cost, not the page's.
      const seen = performance.now();
      const canvas = canvasOf();
      if (canvas && canvas.width > 0) {
        const h = hash(canvas);
        if (h !== w.last) {
          w.changes.push(seen);
          w.last = h;
          settle();
        }
      }
    };
    // The check runs in a task of the highest priority (Chromium's `scheduler.postTask`), so
    // that it comes right after the frame and before any task the page queued for its other
    // work (which runs after the frame was produced and does not hold back the pixels the
    // compositor shows).
    const frame = () => {
      scheduler.postTask(check, { priority: 'user-blocking' });
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    for (const type of ['keydown', 'beforeinput']) {
      root.addEventListener(
        type,
        (e) => {
          w.keys.push(e.timeStamp);
          settle();
        },
        { capture: true },
      );
    }
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) w.longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask' });
  }, index);
}

/** Waits until the watcher saw a change after `since` (the event time), and returns it (null
 * when none came within GIVE_UP_MS). */
async function changeAfter(page, since) {
  return page.evaluate(([t, ms]) => window.__feel.changeAfter(t, ms), [since, GIVE_UP_MS]);
}

/** The event time of the `count`th key or input event the watcher saw. */
async function lastKeyTime(page, count) {
  const at = await page.evaluate(([n, ms]) => window.__feel.key(n, ms), [count, GIVE_UP_MS]);
  if (at === null) throw new Error(`the page saw no key event number ${count}`);
  return at;
}

/** The busy state of the page's other work, read from its DOM (the busy line). */
async function otherWorkGoing(page) {
  return page.evaluate(() => !window.diffattn.root.getElementById('busy')?.hidden);
}

async function measureShift(h, tokens) {
  const { page } = await h.newPage({ width_px: 1280, height_px: 800 });
  await page.goto(h.url(`/www/?${new URLSearchParams({ text: longText(tokens), heads: '8' })}`));
  await waitForReady(page);
  await page.evaluate(() => window.diffattn.settled());
  await installWatcher(page, -1);
  // Playwright's CSS selectors reach into the explorer's open shadow root.
  await page.focus('#shift');
  const samples = [];
  let going = 0;
  let keys = await page.evaluate(() => window.__feel.keys.length);
  for (let i = 0; i < TICKS; i++) {
    // The key goes down, and up once the map changed, as a person's finger does (a key is
    // held for tens of milliseconds): a key-up sent at once would be a second input within
    // the tick, which a person's press does not have (and after which Chromium holds the
    // page's tasks back until another frame).
    const key = i % 2 === 0 ? 'ArrowRight' : 'ArrowLeft';
    await page.keyboard.down(key);
    keys += 1;
    const at = await lastKeyTime(page, keys);
    const seen = await changeAfter(page, at);
    await page.keyboard.up(key);
    samples.push(seen === null ? Infinity : seen - at);
    if (await otherWorkGoing(page)) going += 1;
  }
  const longTasks = await page.evaluate(() => window.__feel.longTasks);
  await page.context().close();
  return { samples, going, longest_task_ms: Math.max(0, ...longTasks.map((t) => t.duration)) };
}

async function measureType(h, tokens) {
  const { page } = await h.newPage({ width_px: 1280, height_px: 800 });
  await page.goto(h.url(`/www/?${new URLSearchParams({ text: longText(tokens), heads: '8' })}`));
  await waitForReady(page);
  await page.evaluate(() => window.diffattn.settled());
  await installWatcher(page, 0);
  await page.focus('#sentence');
  const samples = [];
  let going = 0;
  const words = ['good', 'bad', 'great', 'dull', 'fine'];
  let keys = await page.evaluate(() => window.__feel.keys.length);
  for (let i = 0; i < TICKS; i++) {
    // Select the first word and put another in its place: one input event, one changed token.
    await page.evaluate(() => {
      const t = window.diffattn.root.getElementById('sentence');
      const end = t.value.indexOf(' ');
      t.setSelectionRange(0, end < 0 ? t.value.length : end);
    });
    await page.keyboard.insertText(words[i % words.length]);
    keys += 1;
    const at = await lastKeyTime(page, keys);
    const seen = await changeAfter(page, at);
    samples.push(seen === null ? Infinity : seen - at);
    if (await otherWorkGoing(page)) going += 1;
  }
  const longTasks = await page.evaluate(() => window.__feel.longTasks);
  await page.context().close();
  return { samples, going, longest_task_ms: Math.max(0, ...longTasks.map((t) => t.duration)) };
}

const trees = [['this', ROOT], ...(COMPARE ? [['compare', path.resolve(COMPARE)]] : [])];
const harnesses = [];
for (const [name, root] of trees) harnesses.push([name, await startHarness({ root })]);
const samples = new Map();
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const what of WHAT) {
      for (const tokens of TOKENS) {
        for (const [name, h] of harnesses) {
          const r = what === 'shift' ? await measureShift(h, tokens) : await measureType(h, tokens);
          const key = `${name}|${what}|${tokens}`;
          const all = samples.get(key) ?? { samples: [], going: 0, longest: 0 };
          all.samples.push(...r.samples);
          all.going += r.going;
          all.longest = Math.max(all.longest, r.longest_task_ms);
          samples.set(key, all);
          console.log(`round ${round + 1} ${name} ${what} ${tokens}: median ${ms(quantile(r.samples, 0.5))} ms (${r.samples.map(ms).join(' ')}), longest task ${ms(r.longest_task_ms)} ms`);
        }
      }
    }
  }
} finally {
  for (const [, h] of harnesses) await h.close();
}
const rows = [...samples].map(([key, r]) => {
  const [tree, what, tokens] = key.split('|');
  return {
    tree,
    what,
    tokens: Number(tokens),
    heads: 8,
    median_ms: quantile(r.samples, 0.5),
    p95_ms: quantile(r.samples, 0.95),
    samples_ms: r.samples,
    ticks_with_other_work: r.going,
    ticks: r.samples.length,
    longest_task_ms: r.longest,
  };
});

await mkdir(OUT, { recursive: true });
const meta = { date: new Date().toISOString(), load: os.loadavg().map((l) => l.toFixed(1)).join(' '), ticks: TICKS, rounds: ROUNDS, compare: COMPARE };
await writeFile(path.join(OUT, 'feel.json'), JSON.stringify({ meta, rows }, null, 2));
const md = [
  `Key press to changed pixels on www/index.html (${TICKS} ticks a round, ${ROUNDS} round(s), one tick right after the other; ${meta.date}, load ${meta.load}; \`node benches/feel.mjs${COMPARE ? ' --compare …' : ''}\`)`,
  '',
  '| tree | what | tokens | heads | median ms | p95 ms | ticks with other work going | longest task ms |',
  '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map((r) => `| ${r.tree} | ${r.what} | ${r.tokens} | ${r.heads} | ${ms(r.median_ms)} | ${ms(r.p95_ms)} | ${r.ticks_with_other_work}/${r.ticks} | ${ms(r.longest_task_ms)} |`),
  '',
].join('\n');
await writeFile(path.join(OUT, 'feel.md'), md);
console.log(`\n${md}`);
