// End-to-end: the learned sink's strip (issue 23; DESIGN.md §7.9 and "The page"). A captured
// gpt-oss layer (tests/golden) draws beside A a narrow strip labelled "sink" whose cell in row i
// is the sink's share of that row, 1 − Σⱼ Aᵢⱼ, on A's colour scale; hovering a strip cell says
// what it is; the SVG export has it; in Chinese its label is translated. A layer without sinks,
// and the sentence, draw no strip.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, screenshot, startHarness } from './harness.mjs';
import { mapData, openExplorer, settled } from './www-helpers.mjs';

const GPT_OSS = 'tests/golden/gpt_oss_L16_H4_kv2_d32_hd8_layer1_sinks.spec.safetensors';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Picks `file` (a path under the repository) in the explorer's spec file input and waits for it to draw. */
async function pick(page, file) {
  const input = await page.evaluateHandle(() => window.diffattn.root.getElementById('spec-file'));
  await input.asElement().setInputFiles(path.join(ROOT, file));
  await page.waitForFunction(() => window.diffattn.view.specs.active !== null || window.diffattn.root.getElementById('messages').textContent !== '', null, { timeout: 30_000 });
  await settled(page);
}

/** The rows' sink shares from the map itself: 1 − Σⱼ Aᵢⱼ. */
function sharesOf(map) {
  return Array.from({ length: map.rows }, (_, i) => 1 - map.data.slice(i * map.cols, (i + 1) * map.cols).reduce((x, y) => x + y, 0));
}

/**
 * For map canvas `index`, row by row: the strip cell's rectangle (device pixels, from the
 * engine's `cell_rect` at the key past the last), the colour at its centre, and its centre in
 * client pixels. `null` rectangles where the map has no strip.
 */
async function stripCells(page, index, rows) {
  return page.evaluate(
    ({ index, rows }) => {
      const canvas = window.diffattn.root.querySelectorAll('canvas.map-canvas')[index];
      const keys = window.diffattn.view.view.keys;
      const box = canvas.getBoundingClientRect();
      const ctx = canvas.getContext('2d');
      return Array.from({ length: rows }, (_, row) => {
        const r = window.diffattn.call((ex) => ex.cell_rect(index, row, keys));
        if (!r) return null;
        const [x, y] = [r.x + Math.floor(r.width / 2), r.y + Math.floor(r.height / 2)];
        const [red, green, blue] = ctx.getImageData(x, y, 1, 1).data;
        return {
          rect: r,
          rgb: [red, green, blue],
          client: { x: box.left + ((x + 0.5) * box.width) / canvas.width, y: box.top + ((y + 0.5) * box.height) / canvas.height },
        };
      });
    },
    { index, rows },
  );
}

/** The colour of A's cell (row, col) at its centre, on canvas `index`. */
async function cellColour(page, index, row, col) {
  return page.evaluate(
    ({ index, row, col }) => {
      const canvas = window.diffattn.root.querySelectorAll('canvas.map-canvas')[index];
      const r = window.diffattn.call((ex) => ex.cell_rect(index, row, col));
      const [red, green, blue] = canvas.getContext('2d').getImageData(r.x + Math.floor(r.width / 2), r.y + Math.floor(r.height / 2), 1, 1).data;
      return [red, green, blue];
    },
    { index, row, col },
  );
}

const text = (page, id) => page.evaluate((i) => window.diffattn.root.getElementById(i).textContent, id);

test('a captured gpt-oss layer draws the sink strip beside A: each row’s share, on A’s scale, and a hover says what it is', async () => {
  const { page, errors, context } = await openExplorer(h);
  await pick(page, GPT_OSS);
  const a = await mapData(page, 'a');
  const shares = sharesOf(a);
  assert.ok(Math.max(...shares) > 0.5 && Math.min(...shares) < Math.max(...shares) - 0.2, `the sink takes more of some rows than of others: ${shares.map((s) => s.toFixed(3))}`);
  const cells = await stripCells(page, 0, a.rows);
  assert.ok(cells.every((c) => c !== null), 'every row has a strip cell');

  // The strip is one column right of the plot, its cells as tall as A's rows.
  const last = await page.evaluate(() => window.diffattn.call((ex) => ex.cell_rect(0, 0, window.diffattn.view.view.keys - 1)));
  assert.ok(cells[0].rect.x > last.x + last.width, 'right of the last key, a gap apart');
  assert.equal(cells[0].rect.height, last.height);

  // On A's scale: the strip cell of a row has the colour A's cell has where A holds (about)
  // the same value, and a larger share is a brighter colour (viridis grows lighter).
  const bright = ([r, g, b]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const order = shares.map((s, i) => i).sort((i, j) => shares[i] - shares[j]);
  for (let k = 1; k < order.length; k++) {
    const [lo, hi] = [order[k - 1], order[k]];
    if (shares[hi] - shares[lo] > 0.02) assert.ok(bright(cells[hi].rgb) > bright(cells[lo].rgb), `row ${hi + 1} (${shares[hi].toFixed(3)}) brighter than row ${lo + 1} (${shares[lo].toFixed(3)})`);
  }
  let matched = 0;
  for (let i = 0; i < a.rows; i++) {
    for (let j = 0; j < a.cols; j++) {
      const v = a.data[i * a.cols + j];
      const near = shares.findIndex((s) => Math.abs(s - v) < 0.002);
      if (near < 0 || v < 0.05) continue;
      const [c, s] = [await cellColour(page, 0, i, j), cells[near].rgb];
      assert.ok(c.every((x, n) => Math.abs(x - s[n]) <= 6), `A(${i + 1}, ${j + 1}) = ${v.toFixed(4)} is ${c}, the strip's ${shares[near].toFixed(4)} is ${s}`);
      matched++;
    }
  }
  assert.ok(matched > 0, 'some cell of A holds a value the strip shows');

  // The screen-reader table has the strip as one more column after the keys.
  await page.waitForFunction(() => [...window.diffattn.root.querySelectorAll('#table-fallback th[scope="col"]')].at(-1)?.textContent === 'sink');
  const lastColumn = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('#table-fallback tbody tr')].map((tr) => tr.lastElementChild.textContent));
  assert.equal(lastColumn.length, a.rows);
  lastColumn.forEach((v, i) => assert.ok(Math.abs(Number(v.replace('\u2212', '-')) - shares[i]) < 1e-4, `table row ${i + 1}: ${v} vs ${shares[i]}`));

  // Hovering the strip cell of the row the sink takes most of: the readout says it is the
  // sink's share, with the number.
  const top = order[order.length - 1];
  await page.mouse.move(cells[top].client.x, cells[top].client.y);
  await settled(page);
  const readout = await text(page, 'readout');
  assert.match(readout, new RegExp(`Row ${top + 1}, query .* → the learned sink`));
  const shown = Number(readout.match(/sink\(A\)ᵢ = 1 − Σⱼ Aᵢⱼ = ([0-9.]+)/)[1]);
  assert.ok(Math.abs(shown - shares[top]) < 1e-4, `${shown} vs ${shares[top]}`);
  assert.match(readout, /The learned sink takes/);
  const { rect } = cells[top];
  const hit = await page.evaluate((r) => window.diffattn.call((ex) => ex.hit(0, r.x + 1, r.y + 1)), rect);
  assert.deepEqual(Array.from(hit), [top, a.cols], 'the strip is the column past the keys');
  await screenshot(page, 'sink-strip-hover');

  // The SVG export draws it, labelled; a map without a strip (none here) would not.
  const svg = await page.evaluate(() => window.diffattn.call((ex) => ex.export_svg('a')));
  assert.ok(svg.split('\n').some((l) => l.trim() === 'sink'), 'the SVG labels the strip');

  // In Chinese the label is translated (the engine draws the word it is given).
  await page.evaluate(() => window.diffattn.view.set({ lang: 'zh' }));
  await settled(page);
  const zh = await page.evaluate(() => window.diffattn.call((ex) => ex.export_svg('a')));
  assert.ok(zh.split('\n').some((l) => l.trim() === '汇聚项'), 'the label in Chinese');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a map without sinks, and every map after A, draws no strip', async () => {
  // The sentence: standard attention without sinks.
  const { page, errors, context } = await openExplorer(h, 'mechanism=shift_diff');
  const plain = await stripCells(page, 0, 3);
  assert.deepEqual(plain, [null, null, null], 'no strip beside A without sinks');
  await page.waitForFunction(() => window.diffattn.root.querySelectorAll('#table-fallback th[scope="col"]').length > 1);
  const headers = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('#table-fallback th[scope="col"]')].map((th) => th.textContent));
  assert.ok(headers.length > 1 && !headers.includes('sink'), 'no sink column in the table');
  const svg = await page.evaluate(() => window.diffattn.call((ex) => ex.export_svg('a')));
  assert.ok(!svg.split('\n').some((l) => l.trim() === 'sink'));
  // Hovering right of the plot hits no cell.
  const beside = await page.evaluate(() => {
    const canvas = window.diffattn.root.querySelectorAll('canvas.map-canvas')[0];
    const keys = window.diffattn.view.view.keys;
    const r = window.diffattn.call((ex) => ex.cell_rect(0, 0, keys - 1));
    return window.diffattn.call((ex) => ex.hit(0, r.x + r.width + 6, r.y + 2)) ?? null;
  });
  assert.equal(beside, null);

  // gpt-oss as the shift-difference mechanism: A lost mass to the sink and has the strip;
  // shift(A), D, G and A′ are not softmax rows and have none.
  await pick(page, GPT_OSS);
  await page.selectOption('#mechanism', 'shift_diff');
  await settled(page);
  const stages = await page.evaluate(() => window.diffattn.view.view.stages.map((s) => s.id));
  assert.ok(stages.length > 2 && stages[0] === 'a', stages.join());
  for (let i = 0; i < stages.length; i++) {
    const cells = await stripCells(page, i, 2);
    assert.equal(cells[0] !== null, stages[i] === 'a', `${stages[i]}: a strip only beside A`);
  }
  const flags = await page.evaluate(() => window.diffattn.view.view.stages.map((s) => [s.id, s.sink]));
  assert.deepEqual(flags, stages.map((id) => [id, id === 'a']), 'the view says which maps have a strip');
  // The guided walk's first step says A's rows sum to less than 1 and points at the strip; the
  // next, shift(A), has no strip and says nothing of it.
  await page.click('#view-walk');
  await settled(page);
  assert.match(await text(page, 'walk-text'), /sums to less than 1, and the strip right of the map, labelled sink/);
  await page.click('#walk-next');
  await settled(page);
  assert.doesNotMatch(await text(page, 'walk-text'), /sink/);
  await page.click('#view-explore');
  await settled(page);
  await screenshot(page, 'sink-strip-shift-diff');
  assert.deepEqual(errors, []);
  await context.close();
});
