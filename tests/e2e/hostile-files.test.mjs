// End-to-end: hostile spec files, opened the two ways a person opens one (the file picker, and
// dropping the file on the page), each get a clear message naming the field or the limit at
// fault, raise no uncaught error, do not hold the page up, and leave it drawing a typed
// sentence afterwards (issue 14, item 5). The files are made here, in a temporary folder:
// deep nesting, 6,000 tokens (over the page's PAGE_MAX_TOKENS = 2,048), NaN, numbers that
// overflow, markup in the token labels and the file name (drawn as text, never as HTML),
// binary garbage and UTF-16 text, 50 MB files, and one over the page's 64 MB reading limit.

import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { screenshot, startHarness } from './harness.mjs';
import { canvasInfo, drawnTokens, openExplorer, settled } from './www-helpers.mjs';

const MB = 1024 * 1024;
/** The page's cap on tokens (src/text/limits.rs PAGE_MAX_TOKENS, the runtime's maxTokens). */
const PAGE_MAX_TOKENS = 2048;
/** How long the test waits for a file's message before it calls the page stuck (a hang guard;
 * no test asserts how long it took: the diagnostics print it). */
const ANSWER_MS = 10_000;
/** How long the test waits for a 50 MB valid spec to draw (a hang guard, as above). */
const BIG_DRAW_MS = 20_000;

let h;
let dir;
before(async () => {
  h = await startHarness();
  dir = await mkdtemp(path.join(tmpdir(), 'diffattn-hostile-'));
});
after(async () => {
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A seeded generator of numbers in (-1, 1) with four decimals, the same on every run. */
function numbers(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.round(((s / 2 ** 32) * 2 - 1) * 1e4) / 1e4;
  };
}

/** A valid standard-attention spec of `tokens` tokens, width `d`, as an object. */
function validSpec({ tokens = 4, d = 8, heads = 2, labels } = {}) {
  const next = numbers(tokens * 31 + d);
  const matrix = (rows, cols) => Array.from({ length: rows }, () => Array.from({ length: cols }, next));
  return {
    mechanism: 'standard',
    heads,
    causal: false,
    x: matrix(tokens, d),
    w_q: matrix(d, d),
    w_k: matrix(d, d),
    w_v: matrix(d, d),
    w_o: matrix(d, d),
    ...(labels ? { tokens: labels } : {}),
  };
}

/** `text` is the whole spec, with `value` written where the spec has `"@"` (the first one). */
function specWith(value, spec = validSpec()) {
  return JSON.stringify(spec).replace('"@"', value);
}

/** Writes `chunks()` (an iterator of strings or buffers) to `name` in the temp folder, streamed. */
async function writeStreamed(name, chunks) {
  const file = path.join(dir, name);
  const out = createWriteStream(file);
  for (const chunk of chunks()) {
    if (!out.write(chunk)) await new Promise((resolve) => out.once('drain', resolve));
  }
  await new Promise((resolve, reject) => out.end((err) => (err ? reject(err) : resolve())));
  return file;
}

/** A 50 MB spec whose `x` has rows of 2,048 values, thousands of rows past the page's cap. */
function* fiftyMbOfTokens() {
  const next = numbers(7);
  const d = 8;
  const head = validSpec({ d });
  const row = () => `[${Array.from({ length: 2048 }, next).join(',')}]`;
  // The weights must match x's width for a valid spec, but x is refused first: rows past the
  // cap are never looked at, so their width is immaterial and they are the bulk of the file.
  yield `{"mechanism":"standard","heads":2,"causal":false,"w_q":${JSON.stringify(head.w_q)},"x":[`;
  let written = 0;
  for (let i = 0; written < 50 * MB; i++) {
    const r = (i > 0 ? ',' : '') + row();
    written += r.length;
    yield r;
  }
  yield ']}';
}

/** A valid 4-token spec carrying 50 MB of exported `stages`, which the reader skips. */
function* fiftyMbOfStages() {
  const spec = JSON.stringify(validSpec());
  yield `${spec.slice(0, -1)},"stages":{"heads":[`;
  const next = numbers(11);
  const map = JSON.stringify({ a: Array.from({ length: 64 }, () => Array.from({ length: 64 }, next)) });
  let written = 0;
  for (let i = 0; written < 50 * MB; i++) {
    const m = (i > 0 ? ',' : '') + map;
    written += m.length;
    yield m;
  }
  yield ']}}';
}

/** The hostile files: name, how to make it, and what its message must say. */
const CASES = [
  {
    name: 'deep-top.json',
    what: 'a file that is 100,000 nested lists',
    make: () => `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    message: [/spec: invalid type: sequence, expected a JSON object/],
  },
  {
    name: 'deep-x.json',
    what: 'x as 100,000 nested lists',
    make: () => specWith(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, { ...validSpec(), x: '@' }),
    message: [/x\[0\]\[0\]: invalid type: sequence/],
  },
  {
    name: 'deep-gate.json',
    what: 'the gate as 100,000 nested lists',
    make: () => specWith(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, { ...validSpec(), mechanism: 'shift_diff', gate: '@' }),
    message: [/gate: invalid type: sequence, expected a JSON object/],
  },
  {
    name: 'tokens-6000.json',
    what: 'a spec of 6,000 tokens',
    make: () => JSON.stringify(validSpec({ tokens: 6000 })),
    message: [/x: more than 2,048 tokens \(rows\); the limit is 2,048 \(diffattn::text::limits::PAGE_MAX_TOKENS\) on the page/],
  },
  {
    name: 'tokens-513.json',
    what: 'a spec one token over the page cap',
    make: () => JSON.stringify(validSpec({ tokens: PAGE_MAX_TOKENS + 1 })),
    message: [/x: more than 2,048 tokens \(rows\); the limit is 2,048 \(diffattn::text::limits::PAGE_MAX_TOKENS\) on the page/],
  },
  {
    name: 'nan.json',
    what: 'NaN written as JSON has no such number',
    make: () => JSON.stringify(validSpec()).replace(/("x":\[\[)[^,]+/, '$1NaN'),
    message: [/x\[0\]\[0\]/, /not valid JSON/, /NaN is not a JSON number: JSON has no NaN or infinity/],
  },
  {
    name: 'nan-string.json',
    what: 'NaN as a string',
    make: () => JSON.stringify(validSpec()).replace(/("w_k":\[\[[^,]+,)[^,]+/, '$1"NaN"'),
    message: [/w_k\[0\]\[1\]/, /string "NaN"/],
  },
  {
    name: 'overflow-1e999.json',
    what: '1e999, past every float',
    make: () => JSON.stringify(validSpec()).replace(/("w_v":\[\[)[^,]+/, '$11e999'),
    message: [/w_v\[0\]\[0\]/, /out of range/],
  },
  {
    name: 'overflow-f32.json',
    what: '1e39, a finite f64 but not a finite f32',
    make: () => JSON.stringify(validSpec()).replace(/("x":\[\[[^\]]*\],\[)[^,]+/, '$11e39'),
    message: [/x\[1\]\[0\]/, /finite f32/],
  },
  {
    name: 'binary.json',
    what: '64 KiB of seeded random bytes',
    make: () => {
      const bytes = Buffer.alloc(64 * 1024);
      const next = numbers(99);
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor((next() + 1) * 128) & 0xff;
      return bytes;
    },
    message: [/binary\.json is not a spec: it is not UTF-8 text/],
  },
  {
    name: 'utf16.json',
    what: 'a valid spec saved as UTF-16 (with its byte-order mark)',
    make: () => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(JSON.stringify(validSpec()), 'utf16le')]),
    message: [/utf16\.json is not a spec: it is not UTF-8 text/],
  },
  {
    name: 'fifty-mb-tokens.json',
    what: '50 MB of rows of x',
    stream: fiftyMbOfTokens,
    message: [/x: more than 2,048 tokens \(rows\); the limit is 2,048 \(diffattn::text::limits::PAGE_MAX_TOKENS\) on the page/],
  },
  {
    name: 'over-64mb.json',
    what: 'a file over the 64 MB the page reads',
    big: 65 * MB,
    message: [/too large/, /64 MB/],
  },
];

/** Writes every case's file into the temp folder (once) and returns its path. */
async function fileOf(c) {
  if (c.path) return c.path;
  if (c.stream) c.path = await writeStreamed(c.name, c.stream);
  else if (c.big) {
    // All spaces and one `{`: valid-looking, but never read.
    c.path = path.join(dir, c.name);
    await writeStreamed(c.name, function* () {
      yield '{';
      const block = ' '.repeat(MB);
      for (let i = 0; i < c.big / MB; i++) yield block;
    });
  } else {
    c.path = path.join(dir, c.name);
    await writeFile(c.path, c.make());
  }
  return c.path;
}

/** Picks `file` with the explorer's file button. */
async function pick(page, file) {
  await page.setInputFiles('#spec-file', file);
}

/**
 * Drops `file` on the page as a person drags it from the desktop. The browser gives a page a
 * dropped file only through the drop event's DataTransfer; the file reaches it here by a file
 * input of the test's own (a path, so 50 MB never crosses the driver's pipe), then the
 * dragenter, dragover and drop events the page listens for.
 */
async function drop(page, file) {
  const input = await page.evaluateHandle(() => {
    const el = document.createElement('input');
    el.type = 'file';
    el.hidden = true;
    document.body.append(el);
    return el;
  });
  await input.setInputFiles(file);
  await input.evaluate((el) => {
    const transfer = new DataTransfer();
    transfer.items.add(el.files[0]);
    el.remove();
    for (const type of ['dragenter', 'dragover', 'drop']) {
      document.body.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }
  });
  await input.dispose();
}

/** The spec message shown now (its text), waiting up to ANSWER_MS for it. */
async function specMessage(page) {
  const message = page.locator('#messages .message[data-key="spec"]');
  await message.waitFor({ timeout: ANSWER_MS });
  return message.textContent();
}

/** A typed sentence draws: its tokens are the rows of every map. */
async function drawsTyped(page, sentence) {
  await page.fill('#sentence', sentence);
  await settled(page);
  assert.deepEqual(await drawnTokens(page), sentence.split(' '));
  // The mechanism is whichever the last spec drawn brought (standard attention: one map).
  const maps = await canvasInfo(page);
  assert.ok(maps.length >= 1, 'no map for the typed sentence');
  for (const m of maps) assert.ok(m.colours > 4, `a blank map after a hostile file: ${m.label}`);
}

for (const [how, open] of [
  ['picked', pick],
  ['dropped', drop],
]) {
  test(`hostile spec files ${how}: a message naming the field or limit, then a typed sentence draws`, async (t) => {
    const { page, errors, dialogs, context } = await openExplorer(h);
    try {
      for (const [i, c] of CASES.entries()) {
        const file = await fileOf(c);
        const started = performance.now();
        await open(page, file);
        const text = await specMessage(page);
        const ms = performance.now() - started;
        t.diagnostic(`${c.name} (${((await stat(file)).size / MB).toFixed(2)} MB, ${c.what}): ${Math.round(ms)} ms: ${text.slice(0, 200)}`);
        assert.ok(text.includes(c.name), `${c.name}: the message does not name the file: ${text}`);
        assert.ok(!text.includes('\ufffd'), `${c.name}: replacement characters in the message`);
        for (const want of c.message) assert.match(text, want, `${c.name}: ${text}`);
        // The page answers at once (nothing is still running on its thread) and drew no spec.
        assert.equal(await page.locator('#spec-banner').isHidden(), true, `${c.name}: a spec banner`);
        if (c.name === 'tokens-6000.json') await screenshot(page, `hostile-file-${how}-6000-tokens`);
        await page.click('#messages .message[data-key="spec"] [data-role="dismiss"]');
        await drawsTyped(page, `typed after file ${i} ${how}`);
      }
      assert.deepEqual(dialogs, []);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });
}

test('what the reader skips (exported stages) may be 50 MB or nested a million deep: the spec draws', async (t) => {
  const { page, errors, context } = await openExplorer(h);
  try {
    const deep = path.join(dir, 'deep-stages.json');
    await writeFile(deep, specWith(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`, { ...validSpec(), stages: '@' }));
    const big = await writeStreamed('fifty-mb-stages.json', fiftyMbOfStages);
    for (const [k, file] of [deep, big].entries()) {
      for (const [how, open] of [
        ['picked', pick],
        ['dropped', drop],
      ]) {
        const started = performance.now();
        await open(page, file);
        await page.locator('#spec-banner').waitFor({ timeout: BIG_DRAW_MS });
        await settled(page);
        const ms = performance.now() - started;
        const name = path.basename(file);
        t.diagnostic(`${name} ${how}: ${((await stat(file)).size / MB).toFixed(1)} MB drawn in ${Math.round(ms)} ms`);
        assert.deepEqual(await drawnTokens(page), ['t0', 't1', 't2', 't3']);
        assert.ok((await page.textContent('#spec-banner')).includes(name));
        await drawsTyped(page, `typed after file ${k} ${how}`);
      }
    }
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});

test('markup in the token labels and the file name is drawn as text, never as HTML', async () => {
  const { page, errors, dialogs, context } = await openExplorer(h);
  try {
    const labels = ['<img src=x onerror=alert(1)>', '<script>alert(2)</script>', '"><svg onload=alert(3)>', '&lt;b&gt;&amp;'];
    const name = '<img src=y onerror=alert(5)>.json';
    const file = path.join(dir, name);
    await writeFile(file, JSON.stringify(validSpec({ labels })));
    const elements = () =>
      page.evaluate(() => {
        const root = window.diffattn.root;
        const count = (s) => root.querySelectorAll(s).length + document.querySelectorAll(s).length;
        return { img: count('img'), script: count('script:not([type="module"])'), svg: count('svg'), b: count('b') };
      });
    const before = await elements();
    for (const [how, open] of [
      ['picked', pick],
      ['dropped', drop],
    ]) {
      await open(page, file);
      await page.locator('#spec-banner').waitFor({ timeout: ANSWER_MS });
      await settled(page);
      assert.deepEqual(await drawnTokens(page), labels, how);
      assert.ok((await page.textContent('#spec-banner')).includes(name), `${how}: the banner shows the name as text`);
      // The labels reach the DOM as text: the screen-reader table's headers, and the tooltip.
      await page.waitForFunction(
        (want) => {
          const heads = [...window.diffattn.root.querySelectorAll('#table-fallback tbody th')].map((th) => th.textContent);
          return want.every((l) => heads.includes(l));
        },
        labels,
      );
      const canvas = page.locator('canvas.map-canvas').first();
      await canvas.scrollIntoViewIfNeeded();
      const box = await canvas.boundingBox();
      const rect = await page.evaluate(() => window.diffattn.call((ex) => ex.cell_rect(0, 0, 0)));
      const scale = box.width / (await page.$eval('canvas.map-canvas', (c) => c.width));
      await page.mouse.move(box.x + (rect.x + rect.width / 2) * scale, box.y + (rect.y + rect.height / 2) * scale);
      await page.waitForSelector('#tooltip:not([hidden])');
      assert.ok((await page.textContent('#tooltip')).includes(labels[0]), `${how}: the tooltip shows the label`);
      await page.mouse.move(0, 0);
      assert.deepEqual(await elements(), before, `${how}: markup became elements`);
      if (how === 'picked') await screenshot(page, 'hostile-file-markup');
      await drawsTyped(page, `typed after markup ${how}`);
    }
    assert.deepEqual(dialogs, []);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});
