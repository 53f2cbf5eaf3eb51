// The engine alone in wasm, both builds (scripts/build-wasm), in headless Chromium: `bench_engine`
// (src/web.rs, the workload of `diffattn bench`) at every size, one fresh page per build.
// Run by scripts/bench-peer; writes test-results/bench/engine-wasm.json.
//
// Usage: node benches/engine-wasm.mjs [--tokens 16,64,...] [--heads 8] [--quick] [--out DIR]

import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startHarness } from '../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const QUICK = args.includes('--quick');
const TOKENS = option('--tokens', QUICK ? '16' : '16,64,128,256,512,1024,2048').split(',').map(Number);
const HEADS = Number(option('--heads', '8'));
const OUT = path.resolve(ROOT, option('--out', 'test-results/bench'));
// The benchmark builds (scripts/build-wasm-bench): the page's two builds with `bench_engine`.
const BUILDS = { simd128: 'diffattn_simd_bg.wasm', baseline: 'diffattn_bg.wasm' };
const PKG = '/pkg/bench';
const reps = (tokens) => (QUICK ? 2 : tokens <= 512 ? 20 : tokens <= 1024 ? 8 : 5);

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const m = (s.length - 1) / 2;
  return (s[Math.floor(m)] + s[Math.ceil(m)]) / 2;
}

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const result = { load_before: load(), chromium: null, builds: {} };
const h = await startHarness();
try {
  for (const [build, file] of Object.entries(BUILDS)) {
    const { page, errors, context } = await h.newPage();
    page.setDefaultTimeout(600_000);
    await page.goto(h.url('/pkg/README.md'));
    result.chromium ??= await page.evaluate(() => navigator.userAgent.match(/Chrom\w+\/[\d.]+/)?.[0]);
    await page.evaluate(async ([wasm, pkg]) => {
      const glue = await import(`${pkg}/diffattn.js`);
      await glue.default({ module_or_path: wasm });
      window.glue = glue;
    }, [`${PKG}/${file}`, PKG]);
    const rows = [];
    for (const tokens of TOKENS) {
      const t = await page.evaluate(([l, hh, n]) => window.glue.bench_engine(l, hh, n), [tokens, HEADS, reps(tokens)]);
      const row = { tokens, heads: HEADS, reps: t.layer.layer_ms.length, batch: t.layer.batch, kernels: t.kernels };
      for (const [k, v] of Object.entries(t.layer)) if (Array.isArray(v)) row[k] = median(v);
      rows.push(row);
      console.log(`engine-wasm: ${build} L=${tokens} H=${HEADS}: layer ${row.layer_ms.toFixed(3)} ms (${row.kernels})`);
    }
    if (errors.length) throw new Error(`${build}: ${errors.join('; ')}`);
    result.builds[build] = rows;
    await context.close();
  }
} finally {
  await h.close();
}
result.load_after = load();
await mkdir(OUT, { recursive: true });
await writeFile(path.join(OUT, 'engine-wasm.json'), JSON.stringify(result, null, 2));
console.log(`engine-wasm: wrote ${path.relative(ROOT, path.join(OUT, 'engine-wasm.json'))}`);
