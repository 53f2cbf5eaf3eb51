// The real model's whole forward pass in the browser, side by side in one headless Chromium page
// (docs/PERFORMANCE.md, "The real model"): ours (`BenchBert` of the benchmark build's simd128
// wasm, over weights/minilm/minilm.bin) against onnxruntime-web (the runtime transformers.js
// uses; its wasm backend, one thread, SIMD) on the same model exported to ONNX from the same
// safetensors (benches/minilm_onnx.py), on the same word-piece ids, in alternating rounds.
// Checks first that both compute the same model: the mean-pooled, normalised embeddings' cosine.
// Run by scripts/bench-minilm-web; writes test-results/bench/minilm-web.json and .md.
//
// Usage: node benches/minilm-web.mjs --onnx PATH --ort DIR [--pieces 16,128,512] [--rounds 3]
//   PATH and DIR are under the repository root (the harness serves the root).

import { readFile, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ROOT, startHarness } from '../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const PIECES = option('--pieces', '16,128,512').split(',').map(Number);
const ROUNDS = Number(option('--rounds', '3'));
const ONNX = option('--onnx', '.data/minilm/model.onnx');
const ORT = option('--ort', '.tools/ort/node_modules/onnxruntime-web/dist');
const OUT = path.join(ROOT, 'test-results', 'bench');
const served = (p) => `/${path.relative(ROOT, path.resolve(ROOT, p)).split(path.sep).join('/')}`;

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  const m = (s.length - 1) / 2;
  return (s[Math.floor(m)] + s[Math.ceil(m)]) / 2;
};
const reps = (n) => (n <= 16 ? 60 : n <= 128 ? 20 : 8);
const para =
  'Attention lets every word of a sentence look at every other word and decide how much ' +
  'of each to take in. A head that looks at the word before it learns the order of words; ' +
  'a head that links a pronoun to the noun it stands for learns a little grammar. ';
const TEXT = para.repeat(20);

const h = await startHarness();
const result = { load_before: os.loadavg().map((x) => x.toFixed(2)).join(' '), rounds: ROUNDS, pieces: PIECES, results: [] };
try {
  const { page, errors, context } = await h.newPage();
  page.setDefaultTimeout(900_000);
  await page.goto(h.url('/pkg/README.md'));
  result.chromium = await page.evaluate(() => navigator.userAgent.match(/Chrom\w+\/[\d.]+/)?.[0]);
  result.ort = JSON.parse(await readFile(path.join(ROOT, ORT, '..', 'package.json'), 'utf8')).version;
  await page.evaluate(
    async ({ onnx, ort }) => {
      const glue = await import('/pkg/bench/diffattn_pretrained.js');
      await glue.default({ module_or_path: '/pkg/bench/diffattn_pretrained_simd_bg.wasm' });
      const bytes = new Uint8Array(await (await fetch('/weights/minilm/minilm.bin')).arrayBuffer());
      window.ours = new glue.BenchBert(bytes);
      const o = await import(`${ort}/ort.wasm.min.mjs`);
      o.env.wasm.numThreads = 1;
      o.env.wasm.simd = true;
      o.env.wasm.wasmPaths = `${ort}/`;
      const model = new Uint8Array(await (await fetch(onnx)).arrayBuffer());
      window.ort = o;
      window.session = await o.InferenceSession.create(model, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
      const feeds = (ids) => {
        const n = ids.length;
        const t = (v) => new o.Tensor('int64', BigInt64Array.from(v, BigInt), [1, n]);
        return { input_ids: t(ids), attention_mask: t(ids.map(() => 1)), token_type_ids: t(ids.map(() => 0)) };
      };
      window.ortRun = (ids) => window.session.run(feeds(ids));
      window.ortTime = async (ids, reps, warmupMs) => {
        await window.ortRun(ids);
        const start = performance.now();
        while (performance.now() - start < warmupMs) await window.ortRun(ids);
        const ms = [];
        for (let i = 0; i < reps; i++) {
          const t = performance.now();
          await window.ortRun(ids);
          ms.push(performance.now() - t);
        }
        return ms;
      };
      window.ortEmbedding = async (ids) => {
        const out = (await window.ortRun(ids)).last_hidden_state;
        const [, n, d] = out.dims;
        const e = new Float64Array(d);
        for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) e[j] += out.data[i * d + j] / n;
        const norm = Math.hypot(...e);
        return Array.from(e, (v) => v / norm);
      };
    },
    { onnx: served(ONNX), ort: served(ORT) },
  );
  const ids = {};
  for (const n of PIECES) {
    ids[n] = await page.evaluate(([text, k]) => Array.from(window.ours.ids(text, k)), [TEXT, n]);
    if (ids[n].length !== n) throw new Error(`the text has ${ids[n].length} pieces, fewer than ${n}`);
    // The same model: the two embeddings' cosine.
    const cos = await page.evaluate(async (v) => {
      const a = Array.from(window.ours.embedding(Uint32Array.from(v)));
      const b = await window.ortEmbedding(v);
      return a.reduce((s, x, i) => s + x * b[i], 0) / Math.hypot(...a);
    }, ids[n]);
    result.results.push({ pieces: n, cosine: cos, ours_ms: [], ort_ms: [] });
    if (!(cos > 0.9999)) throw new Error(`${n} pieces: the embeddings differ (cosine ${cos})`);
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const row of result.results) {
      const n = row.pieces;
      const ours = await page.evaluate(([v, k]) => Array.from(window.ours.forward_ms(Uint32Array.from(v), k, 300)), [ids[n], reps(n)]);
      const ort = await page.evaluate(([v, k]) => window.ortTime(v, k, 300), [ids[n], reps(n)]);
      row.ours_ms.push(median(ours));
      row.ort_ms.push(median(ort));
      console.error(`round ${r + 1}, ${n} pieces: ours ${median(ours).toFixed(1)} ms, onnxruntime-web ${median(ort).toFixed(1)} ms`);
    }
  }
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  await context.close();
} finally {
  await h.close();
}
result.load_after = os.loadavg().map((x) => x.toFixed(2)).join(' ');
const f = (x) => x.toFixed(1);
const lines = [
  `| word pieces | diffattn wasm (simd128, 1 thread), ms | onnxruntime-web ${result.ort} (wasm, SIMD, 1 thread), ms | onnxruntime-web / diffattn | embeddings' cosine | diffattn per round | onnxruntime-web per round |`,
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];
for (const row of result.results) {
  const [a, b] = [median(row.ours_ms), median(row.ort_ms)];
  lines.push(`| ${row.pieces} | ${f(a)} | ${f(b)} | ${(b / a).toFixed(2)} | ${row.cosine.toFixed(7)} | ${row.ours_ms.map(f).join(', ')} | ${row.ort_ms.map(f).join(', ')} |`);
}
const table = lines.join('\n');
await mkdir(OUT, { recursive: true });
await writeFile(path.join(OUT, 'minilm-web.json'), `${JSON.stringify(result, null, 2)}\n`);
await writeFile(path.join(OUT, 'minilm-web.md'), `${table}\n`);
console.log(table);
console.log(`${result.chromium}; load before ${result.load_before}, after ${result.load_after}`);
