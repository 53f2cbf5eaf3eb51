// The side-by-side tables of scripts/bench-peer (docs/PERFORMANCE.md): one full
// shift-difference layer (H = 8, d = 64) natively (`diffattn bench --json`,
// test-results/bench/native.json), in both wasm builds in headless Chromium (`bench_engine`,
// engine-wasm.json) and in PyTorch on one thread and on all threads (peer-torch-*.json); the
// stages split as projections + A (a new sentence) and the shift stages (a shift tick); the
// cost per map cell against L²; and the budgets of issue 13. Writes test-results/bench/peer.md
// and peer.json and prints the tables.

import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from '../tests/e2e/harness.mjs';

const OUT = path.join(ROOT, 'test-results', 'bench');
const read = async (f) => JSON.parse(await readFile(path.join(OUT, f), 'utf8'));

const native = await read('native.json');
const wasm = await read('engine-wasm.json');
const torchFiles = (await read('peer-torch-files.json')).files;
const torch = await Promise.all(torchFiles.map(read));
const loads = (await readFile(path.join(OUT, 'peer-load.txt'), 'utf8')).trim().split('\n');

const fmt = (v) => (v === undefined || !Number.isFinite(v) ? '–' : v < 0.1 ? v.toFixed(3) : v < 10 ? v.toFixed(2) : v.toFixed(1));
const ratio = (a, b) => (a > 0 && b > 0 ? `${(a / b).toFixed(2)}×` : '–');

const tokens = native.map((n) => n.tokens);
const heads = native[0]?.heads;
const find = (rows, l) => rows?.find((r) => r.tokens === l);
const torchOf = (t, l) => find(t.results, l);
const rows = tokens.map((l) => {
  const n = find(native, l);
  const s = find(wasm.builds.simd128, l);
  const b = find(wasm.builds.baseline, l);
  const row = { tokens: l, heads };
  const put = (name, src, get) => {
    row[name] = src ? { layer: get(src, 'layer_ms'), maps: get(src, 'projection_ms') + get(src, 'maps_ms'), shift: get(src, 'shift_ms'), output: get(src, 'output_ms') } : undefined;
  };
  put('native', n, (x, k) => x[k]);
  put('wasm_simd128', s, (x, k) => x[k]);
  put('wasm_baseline', b, (x, k) => x[k]);
  for (const t of torch) put(`torch_${t.threads}`, torchOf(t, l), (x, k) => x[k].median);
  return row;
});
const torchKeys = torch.map((t) => `torch_${t.threads}`);
const torch1 = torchKeys.find((k) => k === 'torch_1');

const lines = [];
const say = (s = '') => lines.push(s);
say(`Native: \`diffattn bench\` (${native[0]?.kernels} kernels). wasm: \`bench_engine\` in ${wasm.chromium}, simd128 and baseline builds. PyTorch ${torch[0]?.torch}, eager, float32, ${torch.map((t) => `${t.threads} thread${t.threads > 1 ? 's' : ''}`).join(' and ')}. H = ${heads}, d = 64, one full shift-difference layer, no mask; medians in ms.`);
say(`Load average (1, 5, 15 min): ${loads.join('; ')}.`);
say();
say('### One full layer');
say();
say(`| L | native | wasm SIMD | wasm baseline | ${torchKeys.map((k) => `PyTorch ${k.slice(6)} thr.`).join(' | ')} | SIMD / native | baseline / native | native / PyTorch 1 thr. |`);
say(`| ---: | ---: | ---: | ---: | ${torchKeys.map(() => '---:').join(' | ')} | ---: | ---: | ---: |`);
for (const r of rows) {
  const g = (k) => r[k]?.layer;
  say(`| ${r.tokens} | ${fmt(g('native'))} | ${fmt(g('wasm_simd128'))} | ${fmt(g('wasm_baseline'))} | ${torchKeys.map((k) => fmt(g(k))).join(' | ')} | ${ratio(g('wasm_simd128'), g('native'))} | ${ratio(g('wasm_baseline'), g('native'))} | ${ratio(g('native'), torch1 && g(torch1))} |`);
}
say();
say('### The stages: projections + A (a new sentence), shift stages (a shift tick), output');
say();
say(`| L | stage | native | wasm SIMD | wasm baseline | ${torchKeys.map((k) => `PyTorch ${k.slice(6)} thr.`).join(' | ')} | SIMD / native | native / PyTorch 1 thr. |`);
say(`| ---: | --- | ---: | ---: | ---: | ${torchKeys.map(() => '---:').join(' | ')} | ---: | ---: |`);
for (const r of rows) {
  for (const [stage, key] of [['projections + A', 'maps'], ['shift stages', 'shift'], ['output', 'output']]) {
    const g = (k) => r[k]?.[key];
    say(`| ${r.tokens} | ${stage} | ${fmt(g('native'))} | ${fmt(g('wasm_simd128'))} | ${fmt(g('wasm_baseline'))} | ${torchKeys.map((k) => fmt(g(k))).join(' | ')} | ${ratio(g('wasm_simd128'), g('native'))} | ${ratio(g('native'), torch1 && g(torch1))} |`);
  }
}
say();
say('### Cost against L²: ns per map cell (layer_ms / (H·L²))');
say();
say(`| L | H·L² | native | wasm SIMD | wasm baseline | ${torchKeys.map((k) => `PyTorch ${k.slice(6)} thr.`).join(' | ')} |`);
say(`| ---: | ---: | ---: | ---: | ---: | ${torchKeys.map(() => '---:').join(' | ')} |`);
for (const r of rows) {
  const cells = r.heads * r.tokens * r.tokens;
  const g = (k) => (r[k]?.layer ? ((r[k].layer * 1e6) / cells).toFixed(2) : '–');
  say(`| ${r.tokens} | ${cells.toLocaleString('en')} | ${g('native')} | ${g('wasm_simd128')} | ${g('wasm_baseline')} | ${torchKeys.map(g).join(' | ')} |`);
}
say();
say('### Budgets (issue 13)');
say();
for (const l of [64, 256, 1024]) {
  const r = rows.find((x) => x.tokens === l);
  if (!r || !torch1) continue;
  const ok = r.native.layer <= r[torch1].layer;
  say(`- native at least as fast as PyTorch on one thread at ${l} tokens: ${fmt(r.native.layer)} against ${fmt(r[torch1].layer)} ms: ${ok ? 'met' : '**not met**'}`);
}
const simdRows = rows.filter((r) => r.tokens >= 64 && r.wasm_simd128 && r.native);
const worst = simdRows.reduce((w, r) => Math.max(w, r.wasm_simd128.layer / r.native.layer), 0);
say(`- wasm (SIMD) within 2× of native from 64 tokens up: at most ${worst.toFixed(2)}× (${simdRows.map((r) => `${r.tokens}: ${ratio(r.wasm_simd128.layer, r.native.layer)}`).join(', ')}): ${worst <= 2 ? 'met' : '**not met**'}`);

await writeFile(path.join(OUT, 'peer.json'), JSON.stringify(rows, null, 2));
await writeFile(path.join(OUT, 'peer.md'), `${lines.join('\n')}\n`);
console.log(lines.join('\n'));
