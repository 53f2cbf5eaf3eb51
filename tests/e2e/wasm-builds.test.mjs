// The two wasm builds of each module (scripts/build-wasm), one per SIMD flavour: the baseline
// build has no SIMD instruction, the simd128 build has them; www/explorer/wasm-features.js picks
// the SIMD one in a browser that runs it; the page, the lesson, the package's element (with a
// spec at start or not) and the single-file build each instantiate the build it picks, in
// Chromium and in a browser without wasm SIMD (stood in for by a WebAssembly.validate that
// rejects every module, as such a browser rejects the SIMD probe), and draw with either; both
// builds load through the one glue file and give every map the same bits. The page's module has
// everything the page draws with (the spec reader, the exports): opening a spec or exporting
// one instantiates nothing more. The pretrained model's code is not in it (no BERT reader, no
// word-piece tokenizer, no export of the model's module): `weights=minilm` instantiates the
// model's own module, of the same flavour, after the page's; the lesson loads its own module,
// not the page's.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, startHarness, startServer, waitForReady } from './harness.mjs';
import { openDetails } from './www-helpers.mjs';

const WASM_OPT = path.join(ROOT, 'node_modules', 'binaryen', 'bin', 'wasm-opt');

/** How many SIMD instructions `file` holds (from binaryen's text form of it). */
function simdInstructions(file) {
  const text = execFileSync(WASM_OPT, ['--all-features', file, '--print'], {
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'pipe', 'ignore'],
  }).toString();
  return (text.match(/\((v128|[if](8|16|32|64)x(2|4|8|16))\.\w+/g) ?? []).length;
}

/** FNV-1a (32 bits) of some bytes; the same function runs in the page (`recordInstances`). */
function fnv1a(bytes) {
  let hash = 0x811c9dc5;
  for (const b of bytes) hash = Math.imul(hash ^ b, 0x01000193) >>> 0;
  return hash;
}

let h;
const temps = [];
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});

const files = { baseline: 'pkg/diffattn_bg.wasm', simd128: 'pkg/diffattn_simd_bg.wasm' };
/** The other modules' builds: the pretrained model's and the retrieval lesson's. */
const moduleFiles = {
  diffattn_pretrained: { baseline: 'pkg/diffattn_pretrained_bg.wasm', simd128: 'pkg/diffattn_pretrained_simd_bg.wasm' },
  diffattn_lesson: { baseline: 'pkg/diffattn_lesson_bg.wasm', simd128: 'pkg/diffattn_lesson_simd_bg.wasm' },
};
const hashOf = (build, module = null) => fnv1a(readFileSync(path.join(ROOT, module ? moduleFiles[module][build] : files[build])));

/**
 * Before any script of the page runs: records in `window.wasmInstances` every module the page
 * instantiates (the FNV-1a hash of its bytes, whether they came as bytes or as a fetched
 * response), and with `simd: false` makes the page a browser without wasm SIMD.
 */
async function recordInstances(page, { simd }) {
  await page.addInitScript((simdOn) => {
    const hash = (buffer) => {
      let v = 0x811c9dc5;
      for (const b of new Uint8Array(buffer)) v = Math.imul(v ^ b, 0x01000193) >>> 0;
      return v;
    };
    window.wasmInstances = [];
    const instantiate = WebAssembly.instantiate.bind(WebAssembly);
    const streaming = WebAssembly.instantiateStreaming?.bind(WebAssembly);
    WebAssembly.instantiate = (source, imports) => {
      if (!(source instanceof WebAssembly.Module)) window.wasmInstances.push(hash(ArrayBuffer.isView(source) ? source.buffer.slice(source.byteOffset, source.byteOffset + source.byteLength) : source));
      return instantiate(source, imports);
    };
    // Read the response here (a clone), so the glue's own path is the one taken.
    WebAssembly.instantiateStreaming = async (source, imports) => {
      const response = await source;
      window.wasmInstances.push(hash(await response.clone().arrayBuffer()));
      return streaming(response, imports);
    };
    // The runtime compiles the module itself (runtime.js) and instantiates the compiled
    // module: the bytes are seen here.
    const compile = WebAssembly.compile.bind(WebAssembly);
    const compileStreaming = WebAssembly.compileStreaming?.bind(WebAssembly);
    WebAssembly.compile = (bytes) => {
      window.wasmInstances.push(hash(ArrayBuffer.isView(bytes) ? bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) : bytes));
      return compile(bytes);
    };
    WebAssembly.compileStreaming = async (source) => {
      const response = await source;
      window.wasmInstances.push(hash(await response.clone().arrayBuffer()));
      return compileStreaming(response);
    };
    if (!simdOn) WebAssembly.validate = () => false;
  }, simd);
}

/** Every map of the element `selector` has pixels, once it has drawn. */
async function elementDrew(page, selector = 'diffattn-explorer') {
  await page.waitForFunction(() => customElements.get('diffattn-explorer') !== undefined);
  return page.evaluate(async (sel) => {
    const el = document.querySelector(sel);
    await el.settled();
    const canvases = [...el.shadowRoot.querySelectorAll('canvas.map-canvas')];
    return canvases.length > 0 && canvases.every((c) => c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some((v) => v !== 0));
  }, selector);
}

test('the baseline build needs no SIMD and the simd128 build does; there is no other build', () => {
  for (const f of Object.values(files)) assert.ok(existsSync(path.join(ROOT, f)), `${f}: run scripts/build-wasm`);
  // The folders of the earlier first-view/full split are gone (scripts/build-wasm removes them).
  for (const gone of ['pkg/full', 'pkg/lesson']) assert.ok(!existsSync(path.join(ROOT, gone)), `${gone} is left from an old build`);
  // The glue can make a fresh instance after a panic (runtime.js `reset`).
  assert.match(readFileSync(path.join(ROOT, 'pkg', 'diffattn.js'), 'utf8'), /export function __wbg_reset_state\b/);
  assert.equal(simdInstructions(path.join(ROOT, files.baseline)), 0, 'SIMD in the baseline build');
  assert.ok(simdInstructions(path.join(ROOT, files.simd128)) > 100, 'the simd128 build has no SIMD kernels');
  assert.notEqual(hashOf('simd128'), hashOf('baseline'));
  // The other modules, the same way: the pretrained model's (it can be made afresh too).
  assert.match(readFileSync(path.join(ROOT, 'pkg', 'diffattn_pretrained.js'), 'utf8'), /export function __wbg_reset_state\b/);
  for (const [module, builds] of Object.entries(moduleFiles)) {
    for (const f of Object.values(builds)) assert.ok(existsSync(path.join(ROOT, f)), `${f}: run scripts/build-wasm`);
    assert.equal(simdInstructions(path.join(ROOT, builds.baseline)), 0, `SIMD in ${module}'s baseline build`);
    assert.ok(simdInstructions(path.join(ROOT, builds.simd128)) > 100, `${module}'s simd128 build has no SIMD kernels`);
  }
});

test('the page\'s module carries none of the pretrained model\'s code nor the lesson\'s', () => {
  // The model's weights file reader (its tensor names, its tokenizer's settings) is in the
  // model's module, and not in either build of the page's.
  const has = (file, text) => readFileSync(path.join(ROOT, file)).includes(Buffer.from(text));
  for (const marker of ['embeddings.word', 'max_word_chars']) {
    for (const f of Object.values(moduleFiles.diffattn_pretrained)) assert.ok(has(f, marker), `${f} has the model's ${marker}: the check is sound`);
    for (const f of Object.values(files)) assert.ok(!has(f, marker), `${f} has the model's ${marker}`);
  }
  // The page's glue exports the explorer's handle, not the model's nor the lesson's.
  const glue = readFileSync(path.join(ROOT, 'pkg', 'diffattn.js'), 'utf8');
  assert.match(glue, /export class Explorer\b/);
  for (const other of ['Encoder', 'Lesson', 'BenchBert']) assert.doesNotMatch(glue, new RegExp(`export class ${other}\\b`), `the page's glue exports ${other}`);
  assert.match(readFileSync(path.join(ROOT, 'pkg', 'diffattn_pretrained.js'), 'utf8'), /export class Encoder\b/);
  assert.match(readFileSync(path.join(ROOT, 'pkg', 'diffattn_lesson.js'), 'utf8'), /export class Lesson\b/);
});

test('wasm-features.js picks the simd128 build in Chromium and the baseline build without SIMD', async () => {
  for (const simd of [true, false]) {
    const { page, errors, context } = await h.newPage();
    if (!simd) await page.addInitScript(() => (WebAssembly.validate = () => false));
    await page.goto(h.url('/pkg/README.md'));
    const picked = await page.evaluate(async () => {
      const m = await import('/www/explorer/wasm-features.js');
      return { simd: m.simdSupported(), build: m.wasmBuild(), file: m.wasmFile(), url: String(m.wasmUrl(new URL('/pkg/', location.href))), baseline: m.wasmFile('baseline') };
    });
    assert.deepEqual(picked, {
      simd,
      build: simd ? 'simd128' : 'baseline',
      file: simd ? 'diffattn_simd_bg.wasm' : 'diffattn_bg.wasm',
      url: h.url(simd ? '/pkg/diffattn_simd_bg.wasm' : '/pkg/diffattn_bg.wasm'),
      baseline: 'diffattn_bg.wasm',
    });
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('the page, the lessons, the element and the single file each instantiate the build wasm-features.js picks, and draw', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'diffattn-builds-'));
  temps.push(dir);
  await copyFile(path.join(ROOT, 'pkg', 'diffattn-explorer.inline.js'), path.join(dir, 'diffattn-explorer.inline.js'));
  await writeFile(
    path.join(dir, 'index.html'),
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>single file</title><script type="module" src="diffattn-explorer.inline.js"></script></head><body><diffattn-explorer text="The cat sat." maps="A,D"></diffattn-explorer></body></html>\n',
  );
  const single = await startServer({ root: dir });
  try {
    for (const simd of [true, false]) {
      const want = [hashOf(simd ? 'simd128' : 'baseline')];
      const label = simd ? 'with SIMD' : 'without SIMD';

      // The page: its runtime says which build it loaded.
      let { page, errors, context } = await h.newPage();
      await recordInstances(page, { simd });
      const requested = [];
      page.on('request', (req) => requested.push(new URL(req.url()).pathname));
      await page.goto(h.url('/www/?text=The+cat+sat+on+the+mat'));
      await waitForReady(page);
      assert.deepEqual(await page.evaluate(() => window.wasmInstances), want, `the page, ${label}`);
      assert.equal(await page.evaluate(() => window.diffattn.view.runtime.build), simd ? 'simd128' : 'baseline');
      assert.deepEqual(requested.filter((p) => p.endsWith('.wasm')), [simd ? '/pkg/diffattn_simd_bg.wasm' : '/pkg/diffattn_bg.wasm'], `the page fetches one build, ${label}`);
      assert.deepEqual(errors, []);
      await context.close();

      // The lesson (`?lesson=retrieval`): the same choice, the same build.
      ({ page, errors, context } = await h.newPage());
      await recordInstances(page, { simd });
      const lessonRequested = [];
      page.on('request', (req) => lessonRequested.push(new URL(req.url()).pathname));
      await page.goto(h.url('/www/?lesson=retrieval'));
      await waitForReady(page);
      assert.deepEqual(await page.evaluate(() => window.wasmInstances), [hashOf(simd ? 'simd128' : 'baseline', 'diffattn_lesson')], `the lesson, ${label}`);
      assert.deepEqual(lessonRequested.filter((p) => p.endsWith('.wasm')), [simd ? '/pkg/diffattn_lesson_simd_bg.wasm' : '/pkg/diffattn_lesson_bg.wasm'], `the lesson fetches its own module's build, ${label}`);
      assert.deepEqual(errors, []);
      await context.close();

      // The noise lesson (`?lesson=noise`): the model's module only, the same build.
      ({ page, errors, context } = await h.newPage());
      await recordInstances(page, { simd });
      const noiseRequested = [];
      page.on('request', (req) => noiseRequested.push(new URL(req.url()).pathname));
      await page.goto(h.url('/www/?lesson=noise'));
      await waitForReady(page);
      assert.deepEqual(await page.evaluate(() => window.wasmInstances), [hashOf(simd ? 'simd128' : 'baseline', 'diffattn_pretrained')], `the noise lesson, ${label}`);
      assert.deepEqual(noiseRequested.filter((p) => p.endsWith('.wasm')), [simd ? '/pkg/diffattn_pretrained_simd_bg.wasm' : '/pkg/diffattn_pretrained_bg.wasm'], `the noise lesson fetches the model's module only, ${label}`);
      assert.deepEqual(errors, []);
      await context.close();

      // weights=minilm: the page's module first, then the model's own, of the same flavour.
      ({ page, errors, context } = await h.newPage());
      await recordInstances(page, { simd });
      const modelRequested = [];
      page.on('request', (req) => modelRequested.push(new URL(req.url()).pathname));
      await page.goto(h.url('/www/?weights=minilm&text=The+cat+sat.'));
      await waitForReady(page);
      await page.evaluate(() => window.diffattn.settled());
      assert.deepEqual(await page.evaluate(() => window.wasmInstances), [...want, hashOf(simd ? 'simd128' : 'baseline', 'diffattn_pretrained')], `the page with the pretrained model, ${label}`);
      assert.deepEqual(
        modelRequested.filter((p) => p.endsWith('.wasm')),
        simd ? ['/pkg/diffattn_simd_bg.wasm', '/pkg/diffattn_pretrained_simd_bg.wasm'] : ['/pkg/diffattn_bg.wasm', '/pkg/diffattn_pretrained_bg.wasm'],
        `the page fetches the model's module with the model, ${label}`,
      );
      assert.deepEqual(await page.evaluate(() => window.diffattn.call((ex) => ex.labels().rows)), ['[CLS]', 'the', 'cat', 'sat', '.', '[SEP]']);
      assert.deepEqual(errors, []);
      await context.close();

      // The package's element (the example page, three elements: one instance).
      ({ page, errors, context } = await h.newPage());
      await recordInstances(page, { simd });
      await page.goto(h.url('/www/examples/'));
      assert.ok(await elementDrew(page), `the element draws, ${label}`);
      assert.deepEqual(await page.evaluate(() => window.wasmInstances), want, `the element, ${label}`);
      assert.deepEqual(errors, []);
      await context.close();

      // An element with a spec (`src`) set before it connects: the same build.
      ({ page, errors, context } = await h.newPage());
      await recordInstances(page, { simd });
      await page.goto(h.url('/pkg/README.md'));
      await page.evaluate(async () => {
        const el = document.createElement('diffattn-explorer');
        el.setAttribute('src', '/tests/e2e/fixtures/captured-diffllama.json');
        document.body.append(el);
        await import('/pkg/diffattn-explorer.js');
      });
      assert.ok(await elementDrew(page), `the element with a spec draws, ${label}`);
      assert.deepEqual(await page.evaluate(() => window.wasmInstances), want, `the element with a spec, ${label}`);
      assert.equal(await page.evaluate(() => document.querySelector('diffattn-explorer').shadowRoot.querySelector('#spec-banner').hidden), false, 'the spec is drawn');
      assert.deepEqual(errors, []);
      await context.close();

      // The single-file build, alone in a folder: both builds inside, the one picked decoded.
      ({ page, errors, context } = await h.newPage());
      await recordInstances(page, { simd });
      await page.goto(single.url('/'));
      assert.ok(await elementDrew(page), `the single file draws, ${label}`);
      assert.deepEqual(await page.evaluate(() => window.wasmInstances), want, `the single file, ${label}`);
      assert.deepEqual(errors, []);
      await context.close();
    }
  } finally {
    await single.close();
  }
});

/** The size and a hash of the pixels of every map canvas of the page's explorer, once two looks 300 ms apart agree. */
async function mapPixels(page) {
  let last = null;
  for (;;) {
    const now = await mapPixelsOnce(page);
    if (JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

async function mapPixelsOnce(page) {
  return page.evaluate(async () => {
    const view = window.diffattn.view;
    await view.settled();
    return [...view.root.querySelectorAll('canvas.map-canvas')].map((c) => {
      let v = 0x811c9dc5;
      for (const b of c.getContext('2d').getImageData(0, 0, c.width, c.height).data) v = Math.imul(v ^ b, 0x01000193) >>> 0;
      return `${c.width}x${c.height}:${v}`;
    });
  });
}

test('opening and exporting a spec instantiate nothing more: the one handle reads it, and the maps stay the same', async () => {
  for (const simd of [true, false]) {
    const label = simd ? 'with SIMD' : 'without SIMD';
    const build = simd ? 'simd128' : 'baseline';
    const { page, errors, context } = await h.newPage();
    await recordInstances(page, { simd });
    const requested = [];
    page.on('request', (req) => requested.push(new URL(req.url()).pathname));
    await page.goto(h.url('/www/?text=The+cat+sat+on+the+mat+because+it+was+tired&shift=2&heads=2&head=2&theme=dark&lang=zh&viewport=1,1,5'));
    await waitForReady(page);
    const handle = await page.evaluateHandle(() => window.diffattn.view.engine.call((ex) => ex));
    // The export tools open first: opening them may move the maps (a new size, new pixels).
    await openDetails(page, 'export-tools');
    const before = await mapPixels(page);
    const stateBefore = await page.evaluate(() => window.diffattn.view.getState());
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
    const json = readFileSync(await download.path(), 'utf8');
    assert.equal(JSON.parse(json).heads, 2);
    const [svg] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
    assert.match(readFileSync(await svg.path(), 'utf8'), /<svg[ >]/);
    assert.equal(await page.evaluate((h0) => window.diffattn.view.engine.call((ex) => ex === h0), handle), true, 'the same handle');
    assert.deepEqual(await mapPixels(page), before, `the same maps after the exports, ${label}`);
    assert.deepEqual(await page.evaluate(() => window.diffattn.view.getState()), stateBefore, 'the same state');
    // The exported spec opens on the same handle, and the sentence comes back as it was.
    await page.setInputFiles('#spec-file', { name: 'exported.json', mimeType: 'application/json', buffer: Buffer.from(json) });
    await page.waitForFunction(() => window.diffattn.view.specs.active !== null);
    await page.click('#spec-back');
    await page.waitForFunction(() => window.diffattn.view.specs.active === null);
    assert.deepEqual(await mapPixels(page), before, `the sentence again, the same maps, ${label}`);
    assert.deepEqual(await page.evaluate(() => window.wasmInstances), [hashOf(build)], `one instance, ${label}`);
    assert.deepEqual(requested.filter((p) => p.endsWith('.wasm')), [`/${files[build]}`], `one wasm fetched, ${label}`);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('a spec picked first draws as on a handle of the same build made alone', async () => {
  const { page, errors, context } = await h.newPage();
  await recordInstances(page, { simd: true });
  await page.goto(h.url('/www/?text=The+cat+sat'));
  await waitForReady(page);
  await page.setInputFiles('#spec-file', path.join(ROOT, 'tests', 'e2e', 'fixtures', 'captured-diffllama.json'));
  await page.waitForFunction(() => window.diffattn.view.specs.active !== null);
  assert.deepEqual(await page.evaluate(() => window.wasmInstances), [hashOf('simd128')]);
  const drawn = await page.evaluate(async () => {
    const view = window.diffattn.view;
    await view.settled();
    return view.engine.call((ex) => ex.window(view.view.final_stage, 0, 0, 32, 32)).data.join(',');
  });
  // The same spec in a handle made here from the glue (the spec's own settings, as the page drew it).
  const alone = await page.evaluate(async (bytes) => {
    const glue = await import('/pkg/diffattn.js');
    await glue.default({ module_or_path: '/pkg/diffattn_simd_bg.wasm' });
    const ex = new glue.Explorer();
    ex.load_spec_bytes(new Uint8Array(bytes));
    ex.work(1e9, false);
    return ex.window(window.diffattn.view.view.final_stage, 0, 0, 32, 32).data.join(',');
  }, [...readFileSync(path.join(ROOT, 'tests', 'e2e', 'fixtures', 'captured-diffllama.json'))]);
  assert.equal(drawn, alone);
  assert.deepEqual(errors, []);
  await context.close();
});

test('both builds load through one glue file and give every map the same bits', async () => {
  const bits = {};
  for (const [build, file] of Object.entries(files)) {
    // A fresh page per build: the glue instantiates one module per page.
    const { page, errors, context } = await h.newPage();
    await page.goto(h.url('/pkg/README.md'));
    bits[build] = await page.evaluate(async (wasm) => {
      const glue = await import('/pkg/diffattn.js');
      await glue.default({ module_or_path: wasm });
      const ex = new glue.Explorer();
      ex.set_text('the cat sat on a mat because it was tired and then she saw that every dog ran');
      ex.work(1e9, false);
      const out = {};
      // The sentence is 18 tokens: one window (at most 32 × 32) holds each map whole.
      for (const stage of ['a', 'shifted', 'd', 'g', 'fused']) {
        const w = ex.window(stage, 0, 0, 32, 32);
        out[stage] = Array.from(new Uint32Array(w.data.buffer, w.data.byteOffset, w.data.length));
      }
      return out;
    }, `/${file}`);
    assert.deepEqual(errors, [], build);
    await context.close();
  }
  assert.ok(bits.baseline.a.length > 0);
  for (const stage of Object.keys(bits.baseline)) {
    assert.deepEqual(bits.simd128[stage], bits.baseline[stage], `${stage}: the builds differ`);
  }
});
