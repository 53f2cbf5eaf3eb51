// End-to-end: zooming and panning a long map (issue 13, item 3). The buttons, Ctrl + wheel
// about the pointer, dragging, the keys and the overview change one `viewport` (the state key,
// the address's `viewport=`); the maps draw that window with legible labels; hovering a cell
// of the zoomed map reads exactly that cell of the whole map; a short sentence has no zoom.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, startHarness } from './harness.mjs';
import { LONG_WORDS as WORDS, openExplorer, settled } from './www-helpers.mjs';

const LONG = Array.from({ length: 120 }, (_, i) => WORDS[i % WORDS.length]).join(' ');

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const viewport = (page) => page.evaluate(() => window.diffattn.call((ex) => ex.viewport()));
const click = (page, id) => page.evaluate((id) => window.diffattn.root.getElementById(id).click(), id);
const isHidden = (page, id) => page.evaluate((id) => window.diffattn.root.getElementById(id).closest('[hidden]') !== null, id);

/** The client point at the centre of whole-map cell (row, col) of map `index`, or null. */
async function cellCentre(page, index, row, col) {
  return page.evaluate(
    ([i, r, c]) => {
      const canvas = window.diffattn.root.querySelectorAll('canvas.map-canvas')[i];
      const rect = canvas.getBoundingClientRect();
      const cell = window.diffattn.call((ex) => ex.cell_rect(i, r, c));
      if (!cell) return null;
      const scale = rect.width / canvas.width;
      return { x: rect.left + (cell.x + cell.width / 2) * scale, y: rect.top + (cell.y + cell.height / 2) * scale };
    },
    [index, row, col],
  );
}

test('a short sentence offers no zoom; a long one does, and the buttons zoom in, out and back', async () => {
  const { page, errors, context } = await openExplorer(h, { text: 'the cat sat on the mat' });
  assert.equal(await isHidden(page, 'zoom'), true);
  await page.fill('#sentence', LONG);
  await settled(page);
  assert.equal(await isHidden(page, 'zoom'), false);
  const whole = await viewport(page);
  assert.deepEqual(whole, { row: 0, col: 0, rows: 120, cols: 120, total_rows: 120, total_cols: 120 });

  await click(page, 'zoom-in');
  await settled(page);
  const zoomed = await viewport(page);
  assert.equal(zoomed.rows, 80, '120 / 1.5');
  assert.equal(zoomed.total_rows, 120);
  // The labels stay the whole map's (indices are the whole map's everywhere); the window is
  // a part of them.
  const labels = await page.evaluate(() => window.diffattn.call((ex) => ex.labels().rows));
  assert.deepEqual(labels, LONG.split(' '));
  assert.match(await page.evaluate(() => location.search), new RegExp(`viewport=${zoomed.row}%2C${zoomed.col}%2C80`));
  assert.match(await page.evaluate(() => window.diffattn.root.getElementById('zoom-status').textContent), /Showing rows \d+–\d+ and keys \d+–\d+ of 120 tokens/);

  for (let i = 0; i < 10; i++) await click(page, 'zoom-in');
  await settled(page);
  assert.equal((await viewport(page)).rows, 8, 'never closer than eight tokens');
  await screenshot(page, 'zoom-closest');
  await click(page, 'zoom-out');
  await settled(page);
  assert.equal((await viewport(page)).rows, 12);
  await click(page, 'zoom-whole');
  await settled(page);
  assert.deepEqual(await viewport(page), whole);
  assert.doesNotMatch(await page.evaluate(() => location.search), /viewport=/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('three clicks before the next frame zoom three times (each starts from the viewport asked for, not the one drawn)', async () => {
  const { page, errors, context } = await openExplorer(h, { text: LONG });
  await page.evaluate(() => {
    const button = window.diffattn.root.getElementById('zoom-in');
    for (let i = 0; i < 3; i++) button.click();
  });
  await settled(page);
  // 120 / 1.5 = 80, 80 / 1.5 → 53, 53 / 1.5 → 35 (zoomAt rounds each step); without it, 80.
  assert.equal((await viewport(page)).rows, 35);
  assert.deepEqual(errors, []);
  await context.close();
});

test('an address with viewport= opens zoomed; hovering a zoomed cell reads that cell of the whole map', async () => {
  const { page, errors, context } = await openExplorer(h, { text: LONG, viewport: '40,60,16' });
  assert.deepEqual(await viewport(page), { row: 40, col: 60, rows: 16, cols: 16, total_rows: 120, total_cols: 120 });
  // Cells outside the window have no rectangle; inside they do.
  assert.equal(await cellCentre(page, 0, 10, 10), null);
  const [row, col] = [47, 66];
  await page.locator('canvas.map-canvas >> nth=4').scrollIntoViewIfNeeded();
  const at = await cellCentre(page, 4, row, col);
  assert.ok(at);
  await page.mouse.move(at.x, at.y);
  await page.waitForSelector('#tooltip:not([hidden])');
  const expected = await page.evaluate(([r, c]) => window.diffattn.call((ex) => ex.cell(r, c)), [row, col]);
  const tip = await page.textContent('#tooltip');
  assert.match(tip, new RegExp(`Row ${row + 1}, `));
  assert.ok(tip.includes(expected.query) && tip.includes(expected.key), tip);
  const fused = await page.$eval('#tooltip [data-term="fused"]', (s) => Number(s.textContent.replace('\u2212', '-')));
  assert.ok(Math.abs(fused - expected.values.fused) <= 5e-5, `${fused} vs ${expected.values.fused}`);
  await screenshot(page, 'zoom-hover');
  assert.deepEqual(errors, []);
  await context.close();
});

test('Ctrl + wheel zooms about the pointer, a drag pans, the keys zoom and the overview moves the window', async () => {
  const { page, errors, context } = await openExplorer(h, { text: LONG });
  await page.locator('canvas.map-canvas >> nth=0').scrollIntoViewIfNeeded();
  const [row, col] = [90, 30];
  const at = await cellCentre(page, 0, row, col);
  await page.mouse.move(at.x, at.y);
  await page.keyboard.down('Control');
  await page.mouse.wheel(0, -300);
  await page.keyboard.up('Control');
  await settled(page);
  const zoomed = await viewport(page);
  assert.ok(zoomed.rows < 120, `zoomed in: ${JSON.stringify(zoomed)}`);
  // The cell under the pointer is still under it (within a cell of rounding).
  const hit = await page.evaluate(([x, y]) => {
    const canvas = window.diffattn.root.querySelectorAll('canvas.map-canvas')[0];
    const rect = canvas.getBoundingClientRect();
    const scale = canvas.width / rect.width;
    return window.diffattn.call((ex) => ex.hit(0, (x - rect.left) * scale, (y - rect.top) * scale));
  }, [at.x, at.y]);
  assert.ok(hit && Math.abs(hit[0] - row) <= 1 && Math.abs(hit[1] - col) <= 1, `under the pointer: ${JSON.stringify(hit)}`);

  // A drag to the left and up shows later keys and rows.
  const from = await cellCentre(page, 0, zoomed.row + 5, zoomed.col + 5);
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  await page.mouse.move(from.x - 60, from.y - 60, { steps: 6 });
  await page.mouse.up();
  await settled(page);
  const dragged = await viewport(page);
  assert.ok(dragged.col > zoomed.col || dragged.row > zoomed.row, `dragged: ${JSON.stringify(zoomed)} -> ${JSON.stringify(dragged)}`);
  // The drag selected no cell.
  assert.equal(await page.evaluate(() => window.diffattn.root.querySelector('#readout').dataset.pinned ?? null), null);

  // Keys on a focused map: + zooms in, − out, 0 back to the whole map.
  await page.evaluate(() => window.diffattn.root.querySelectorAll('canvas.map-canvas')[0].focus());
  const before = (await viewport(page)).rows;
  await page.keyboard.press('+');
  await settled(page);
  assert.ok((await viewport(page)).rows < before);
  await page.keyboard.press('-');
  await settled(page);
  assert.ok((await viewport(page)).rows >= before - 1);

  // A click on the overview centres the window there.
  const box = await page.evaluate(() => {
    const r = window.diffattn.root.getElementById('zoom-overview').getBoundingClientRect();
    return { x: r.left, y: r.top, w: r.width, h: r.height };
  });
  await page.mouse.click(box.x + box.w * 0.9, box.y + box.h * 0.1);
  await settled(page);
  const moved = await viewport(page);
  assert.ok(moved.col + moved.cols / 2 > 80 && moved.row + moved.rows / 2 < 40, `overview: ${JSON.stringify(moved)}`);
  await page.keyboard.press('0');
  await settled(page);
  await page.evaluate(() => window.diffattn.root.querySelectorAll('canvas.map-canvas')[0].focus());
  await page.keyboard.press('0');
  await settled(page);
  assert.equal((await viewport(page)).rows, 120);
  await screenshot(page, 'zoom-whole');
  assert.deepEqual(errors, []);
  await context.close();
});
