// The page's two wasm builds (scripts/build-wasm): the baseline build has no SIMD instruction,
// the simd128 build has them, www/wasm-features.js picks the SIMD one in a browser that runs
// it, and in Chromium both builds load through the one glue file and give every map the same
// bits.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, startHarness } from './harness.mjs';

const WASM_OPT = path.join(ROOT, 'node_modules', 'binaryen', 'bin', 'wasm-opt');

/** How many SIMD instructions `file` holds (from binaryen's text form of it). */
function simdInstructions(file) {
  const text = execFileSync(WASM_OPT, ['--all-features', file, '--print'], {
    maxBuffer: 1 << 30,
    stdio: ['ignore', 'pipe', 'ignore'],
  }).toString();
  return (text.match(/\((v128|[if](8|16|32|64)x(2|4|8|16))\.\w+/g) ?? []).length;
}

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const files = { baseline: 'pkg/diffattn_bg.wasm', simd128: 'pkg/diffattn_simd_bg.wasm' };

test('the baseline build needs no SIMD and the simd128 build does', () => {
  for (const f of Object.values(files)) assert.ok(existsSync(path.join(ROOT, f)), `${f}: run scripts/build-wasm`);
  assert.equal(simdInstructions(path.join(ROOT, files.baseline)), 0, 'SIMD in the baseline build');
  assert.ok(simdInstructions(path.join(ROOT, files.simd128)) > 100, 'the simd128 build has no SIMD kernels');
});

test('wasm-features.js picks the simd128 build in Chromium', async () => {
  const { page, errors } = await h.newPage();
  await page.goto(h.url('/pkg/README.md'));
  const picked = await page.evaluate(async () => {
    const m = await import('/www/wasm-features.js');
    return { simd: m.simdSupported(), file: m.wasmFile(), url: String(m.wasmUrl()) };
  });
  assert.deepEqual(picked, {
    simd: true,
    file: 'diffattn_simd_bg.wasm',
    url: h.url('/pkg/diffattn_simd_bg.wasm'),
  });
  assert.deepEqual(errors, []);
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
