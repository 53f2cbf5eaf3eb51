// The side-by-side table of scripts/bench-peer: the engine natively (criterion's medians of
// `page_engine/*`), in wasm (test-results/bench/engine-wasm.json) and PyTorch on the CPU
// (test-results/bench/peer-torch.json), and the ratios wasm / native and native / PyTorch.
// Writes test-results/bench/peer.md and peer.json and prints the table.

import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from '../tests/e2e/harness.mjs';

const OUT = path.join(ROOT, 'test-results', 'bench');
const CRITERION = process.env.CRITERION_DIR || path.join(ROOT, 'target', 'criterion');

/** criterion's median per benchmark, in ms: { "page_engine/maps": { "L128_H8": ms } }. */
async function criterionMedians() {
  const out = {};
  for (const group of await readdir(CRITERION, { withFileTypes: true }).catch(() => [])) {
    if (!group.isDirectory() || !group.name.startsWith('page_engine')) continue;
    for (const bench of await readdir(path.join(CRITERION, group.name), { withFileTypes: true })) {
      const dir = path.join(CRITERION, group.name, bench.name, 'new');
      try {
        const meta = JSON.parse(await readFile(path.join(dir, 'benchmark.json'), 'utf8'));
        const est = JSON.parse(await readFile(path.join(dir, 'estimates.json'), 'utf8'));
        (out[meta.group_id] ??= {})[meta.value_str] = est.median.point_estimate / 1e6;
      } catch {
        // Not a benchmark folder (criterion's report/ folder).
      }
    }
  }
  return out;
}

const fmt = (v) => (v === undefined || !Number.isFinite(v) ? '–' : v < 0.1 ? v.toFixed(3) : v < 10 ? v.toFixed(2) : v.toFixed(1));
const ratio = (a, b) => (a > 0 && b > 0 ? `${(a / b).toFixed(1)}×` : '–');

const native = await criterionMedians();
const wasm = JSON.parse(await readFile(path.join(OUT, 'engine-wasm.json'), 'utf8'));
const torch = JSON.parse(await readFile(path.join(OUT, 'peer-torch.json'), 'utf8'));
const rows = [];
for (const e of wasm.engine) {
  const id = `L${e.tokens}_H${e.heads}`;
  const t = torch.results.find((r) => r.tokens === e.tokens && r.heads === e.heads);
  for (const [stage, key, group] of [['projections + A', 'maps_ms', 'page_engine/maps'], ['shift stages', 'shift_ms', 'page_engine/shift']]) {
    rows.push({
      tokens: e.tokens,
      heads: e.heads,
      stage,
      native_ms: native[group]?.[id],
      wasm_ms: e[key].median,
      torch_ms: t?.[key].median,
    });
  }
}
const lines = [
  `PyTorch ${torch.torch}, ${torch.threads} thread(s); wasm in ${wasm.machine.chromium}. Medians in ms.`,
  '',
  '| L | H | stage | native (criterion) | wasm | wasm / native | PyTorch CPU | native / PyTorch |',
  '| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map((r) => `| ${r.tokens} | ${r.heads} | ${r.stage} | ${fmt(r.native_ms)} | ${fmt(r.wasm_ms)} | ${ratio(r.wasm_ms, r.native_ms)} | ${fmt(r.torch_ms)} | ${ratio(r.native_ms, r.torch_ms)} |`),
];
await writeFile(path.join(OUT, 'peer.json'), JSON.stringify(rows, null, 2));
await writeFile(path.join(OUT, 'peer.md'), `${lines.join('\n')}\n`);
console.log(lines.join('\n'));
