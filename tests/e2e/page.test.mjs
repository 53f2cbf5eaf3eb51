// End-to-end: what a person does with the explorer at /www/: the five maps draw, the
// shift and heads controls change the right maps, typing changes the tokens, hovering
// shows the right arithmetic, the keyboard works, exports download real files, and a
// spec file (broken or valid, picked or dropped) is handled. One browser for the file.

import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, screenshot, startHarness } from './harness.mjs';
import { canvasInfo, mapData, openDetails, openExplorer, setRange, settled, drawnTokens } from './www-helpers.mjs';

const FIXTURES = path.join(ROOT, 'tests', 'fixtures', 'stages');
const STAGE_NAMES = ['A', 'shift(A)', 'D', 'G', 'A′'];

let h;
let shared; // one page reused by the tests that do not need a fresh one
before(async () => {
  h = await startHarness();
  // These tests look at the untrained seeded model's maps (d_model = 64, a scalar gate from
  // the sliders); tests/e2e/model.test.mjs covers the trained default.
  shared = await openExplorer(h, 'weights=untrained');
});
after(async () => {
  await h?.close();
});

/** The centre of cell (`row`, `col`) of map `index`, in the page's coordinates (for the mouse). */
function cellCentre(page, index, row, col) {
  return page.evaluate(
    ([i, r, c]) => {
      const canvas = window.diffattn.root.querySelectorAll('canvas.map-canvas')[i];
      const rect = canvas.getBoundingClientRect();
      const cell = window.diffattn.call((ex) => ex.cell_rect(i, r, c));
      const scale = rect.width / canvas.width;
      return { x: rect.left + (cell.x + cell.width / 2) * scale, y: rect.top + (cell.y + cell.height / 2) * scale };
    },
    [index, row, col],
  );
}

test('the page loads without errors and draws the five maps', async () => {
  const { page, errors } = shared;
  const maps = await canvasInfo(page);
  assert.deepEqual(
    maps.map((m) => m.stage),
    ['a', 'shifted', 'd', 'g', 'fused'],
  );
  for (const [i, m] of maps.entries()) {
    assert.ok(m.width > 100 && m.height > 100, `canvas ${i} is ${m.width}x${m.height}`);
    assert.ok(m.colours > 8, `canvas ${i} looks blank (${m.colours} colours)`);
    assert.ok(m.label.startsWith(`${STAGE_NAMES[i]},`), `aria-label "${m.label}"`);
    assert.match(m.label, /head 1 of 4/);
    assert.match(m.label, /of \d+ tokens$/);
  }
  // Canvases are drawn at device resolution.
  const sizes = await page.$$eval('canvas.map-canvas', (cs) =>
    cs.map((c) => [c.width, Math.round(c.getBoundingClientRect().width * devicePixelRatio)]),
  );
  for (const [w, css] of sizes) assert.ok(Math.abs(w - css) <= 1, `canvas ${w} px for ${css} device px`);
  assert.match(await page.textContent('#model-status'), /untrained/);
  assert.equal(await page.locator('#loading').isHidden(), true);
  assert.deepEqual(errors, []);
  await screenshot(page, 'page-loaded');
});

test('the shift slider changes shift(A), D and A′ but not A', async () => {
  const { page, errors } = shared;
  // Each map on its own scale, so A's pixels are A's alone (on the shared scale, the default,
  // A's colours follow the range of every map that shares it: tests/e2e/classroom.test.mjs).
  await page.evaluate(() => window.diffattn.view.set({ shared_scale: false }));
  await settled(page);
  const before = await canvasInfo(page);
  const data = {};
  for (const id of ['a', 'shifted', 'd', 'fused']) data[id] = await mapData(page, id);
  await setRange(page, '#shift', 3);
  assert.equal(await page.evaluate(() => window.diffattn.state.shift), 3);
  assert.match(await page.textContent('#shift-out'), /k = 3/);
  const afterShift = await canvasInfo(page);
  assert.equal(afterShift[0].hash, before[0].hash, 'A was redrawn differently');
  for (const i of [1, 2, 4]) assert.notEqual(afterShift[i].hash, before[i].hash, `${STAGE_NAMES[i]} did not change`);
  assert.deepEqual(await mapData(page, 'a'), data.a);
  for (const id of ['shifted', 'd', 'fused']) assert.notDeepEqual(await mapData(page, id), data[id], `${id} did not change`);
  await setRange(page, '#shift', 1);
  await page.evaluate(() => window.diffattn.view.set({ shared_scale: true }));
  await settled(page);
  assert.deepEqual(errors, []);
});

test('a shift tick puts the maps’ cells on and draws no label, border or colour bar again', async () => {
  const { page, errors } = shared;
  const counts = () => page.evaluate(() => window.diffattn.call((ex) => ex.draw_counts()));
  const before = await counts();
  // Small moves of the shift keep every shared scale's round ends (D's, A′'s): only cells change.
  await setRange(page, '#shift', 2);
  await setRange(page, '#shift', 1);
  const after = await counts();
  assert.ok(after.cells - before.cells >= 10, `two renders put the cells of five maps on: ${JSON.stringify([before, after])}`);
  assert.ok(after.frames - before.frames <= 2, `frames drawn again: ${after.frames - before.frames}`);
  // A new sentence draws every frame again (new labels).
  const text = await page.inputValue('#sentence');
  await page.fill('#sentence', 'the labels are new here');
  await settled(page);
  const typed = await counts();
  assert.ok(typed.frames - after.frames >= 5, 'new labels: every map drawn whole');
  await page.fill('#sentence', text);
  await settled(page);
  assert.deepEqual(errors, []);
});

test('changing the number of heads changes A; the slider offers divisors of d only', async () => {
  const { page, errors } = shared;
  const a4 = await mapData(page, 'a');
  const choices = await page.evaluate(() => window.diffattn.call((ex) => ex.view().head_choices));
  const d = await page.evaluate(() => window.diffattn.call((ex) => ex.model_info()).d_model);
  for (const c of choices) assert.equal(d % c, 0);
  assert.equal(await page.getAttribute('#heads', 'max'), String(choices.length - 1));
  await setRange(page, '#heads', choices.indexOf(2));
  assert.equal(await page.evaluate(() => window.diffattn.state.heads), 2);
  assert.notDeepEqual(await mapData(page, 'a'), a4);
  assert.match((await canvasInfo(page))[0].label, /head 1 of 2/);
  assert.equal(await page.locator('#head option').count(), 2);
  await page.selectOption('#head', '2');
  await settled(page);
  assert.match((await canvasInfo(page))[4].label, /^A′, head 2 of 2/);
  await page.selectOption('#head', '1');
  await setRange(page, '#heads', choices.indexOf(4));
  assert.deepEqual(await mapData(page, 'a'), a4);
  assert.deepEqual(errors, []);
});

test('showing another (computed) head or hovering sends no setting that invalidates the maps', async () => {
  const { page, errors } = shared;
  await page.evaluate(() => {
    const ex = window.diffattn.call((handle) => handle);
    window.__patches = [];
    const original = ex.update;
    ex.update = function (patch) {
      window.__patches.push(patch);
      return original.call(this, patch);
    };
  });
  // Every head computed (as the prediction and the all-heads view do between frames): a head
  // once computed is never computed again for being shown.
  await page.evaluate(() => window.diffattn.call((ex) => ex.work(1e9, true)));
  const before = await page.evaluate(() => window.diffattn.call((ex) => ex.recomputations()));
  await page.selectOption('#head', '3');
  await settled(page);
  const box = await page.locator('canvas.map-canvas').first().boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await settled(page);
  await page.mouse.move(box.x + box.width / 2 + 7, box.y + box.height / 2 + 7);
  await settled(page);
  await page.mouse.move(1, 1);
  await page.selectOption('#head', '1');
  await settled(page);
  assert.deepEqual(await page.evaluate(() => window.__patches), [{ head: 3 }, { head: 1 }]);
  assert.deepEqual(await page.evaluate(() => window.diffattn.call((ex) => ex.recomputations())), before);
  await page.evaluate(() => {
    delete window.diffattn.call((handle) => handle).update;
  });
  assert.deepEqual(errors, []);
});

test('the temperature, one line of the schema: its slider redraws A1 and A2, and it is in the address and the state', async () => {
  const { page, errors } = await openExplorer(h, 'weights=untrained&mechanism=diff_transformer');
  const [a1, a2] = [await mapData(page, 'a1'), await mapData(page, 'a2')];
  assert.equal(await page.locator('#temperature').isVisible(), true);
  assert.equal(await page.textContent('#temperature-out'), '1.0');
  await setRange(page, '#temperature', 2);
  await settled(page);
  assert.equal(await page.evaluate(() => window.diffattn.state.temperature), 2);
  assert.equal(await page.textContent('#temperature-out'), '2.0');
  assert.equal(new URL(page.url()).searchParams.get('temperature'), '2');
  assert.notDeepEqual((await mapData(page, 'a1')).data, a1.data);
  assert.notDeepEqual((await mapData(page, 'a2')).data, a2.data);
  // The link opens the same maps.
  const copied = await openExplorer(h, new URL(page.url()).search.slice(1));
  assert.deepEqual(await mapData(copied.page, 'a1'), await mapData(page, 'a1'));
  // Back to 1: the paper's maps, bit for bit, and the address names it no more.
  await setRange(page, '#temperature', 1);
  await settled(page);
  assert.deepEqual(await mapData(page, 'a1'), a1);
  assert.equal(new URL(page.url()).searchParams.get('temperature'), null);
  assert.deepEqual(errors, []);
  assert.deepEqual(copied.errors, []);
});

test('other mechanisms show their own maps and only the controls that apply', async () => {
  const { page, errors } = await openExplorer(h, 'weights=untrained');
  const visible = (id) => page.locator(`#${id}`).isVisible();
  const expected = {
    standard: { stages: ['a'], shown: [], hidden: ['shift', 'alpha', 'tau', 'window', 'temperature'] },
    diff_transformer: { stages: ['a1', 'a2', 'diff'], shown: ['temperature'], hidden: ['shift', 'alpha', 'tau', 'window'] },
    input_diff: { stages: ['a'], shown: [], hidden: ['shift', 'tau', 'window', 'temperature'] },
    cosine: { stages: ['a'], shown: ['tau'], hidden: ['shift', 'alpha', 'window', 'temperature'] },
    local: { stages: ['a'], shown: ['window'], hidden: ['shift', 'alpha', 'tau', 'temperature'] },
    shift_diff: { stages: ['a', 'shifted', 'd', 'g', 'fused'], shown: ['shift', 'alpha', 'difference'], hidden: ['tau', 'window', 'temperature'] },
  };
  await openDetails(page, 'more-shift');
  await openDetails(page, 'more-gate');
  for (const [mechanism, want] of Object.entries(expected)) {
    await page.selectOption('#mechanism', mechanism);
    await settled(page);
    const maps = await canvasInfo(page);
    assert.deepEqual(maps.map((m) => m.stage), want.stages, mechanism);
    for (const m of maps) assert.ok(m.colours > 4, `${mechanism}: ${m.stage} is blank`);
    for (const id of want.shown) assert.equal(await visible(id), true, `${mechanism}: #${id} hidden`);
    for (const id of want.hidden) assert.equal(await visible(id), false, `${mechanism}: #${id} shown`);
    const choices = await page.evaluate(() => window.diffattn.call((ex) => ex.view().head_choices));
    assert.equal(await page.getAttribute('#heads', 'max'), String(choices.length - 1), mechanism);
    if (mechanism === 'diff_transformer') {
      const readout = await page.evaluate(() => window.diffattn.call((ex) => ex.view().readout));
      assert.match(readout, /^λ = −?\d\.\d{4}$/);
      assert.equal(await page.textContent('#param-readout'), readout);
      assert.ok(maps[2].label.startsWith('A1 − λ·A2,'), maps[2].label);
      await screenshot(page, 'page-diff-transformer');
    }
    if (mechanism === 'input_diff') {
      const map = await mapData(page, 'a');
      assert.equal(map.cols, map.rows - 1);
    }
    if (mechanism === 'cosine') assert.equal(await page.textContent('#param-readout'), 'τ = 10.0');
    if (mechanism === 'local') {
      await setRange(page, '#window', 0);
      assert.equal(await page.textContent('#param-readout'), 'w = 0');
      const map = await mapData(page, 'a');
      // Radius 0: every token attends only to itself.
      for (let i = 0; i < map.rows; i++) assert.ok(Math.abs(map.data[i * map.cols + i] - 1) < 1e-6);
    }
  }
  assert.equal(await page.locator('#param-readout').isHidden(), true);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('typing changes the tokens on the axes', async () => {
  const { page, errors } = shared;
  const before = await canvasInfo(page);
  // The maps' canvases stay the same elements: a new sentence draws on them (building the
  // figures again cost a typed word a third of its time, docs/PERFORMANCE.md "2026-12-04, afternoon").
  await page.evaluate(() => window.diffattn.root.querySelectorAll('canvas.map-canvas').forEach((c) => (c.dataset.kept = '1')));
  await page.fill('#sentence', 'Dogs chase cats');
  await settled(page);
  assert.deepEqual(await drawnTokens(page), ['dogs', 'chase', 'cats']);
  assert.equal(await page.textContent('#token-count'), '3 tokens');
  const after = await canvasInfo(page);
  assert.notEqual(after[0].hash, before[0].hash);
  assert.match(after[0].label, /of 3 tokens$/);
  assert.equal(new URL(page.url()).searchParams.get('text'), 'Dogs chase cats');
  const kept = await page.$$eval('canvas.map-canvas', (cs) => cs.map((c) => c.dataset.kept ?? null));
  assert.deepEqual(kept, ['1', '1', '1', '1', '1']);
  assert.deepEqual(errors, []);
});

test('a new sentence under a resting pointer: the readout follows the maps as they are drawn now', async () => {
  const { page, errors } = shared;
  await page.fill('#sentence', 'The cat sat on the mat because it was tired.');
  await settled(page);
  await page.locator('canvas.map-canvas >> nth=4').scrollIntoViewIfNeeded();
  const at = await cellCentre(page, 4, 8, 8);
  await page.mouse.move(at.x, at.y);
  await page.waitForSelector('#tooltip:not([hidden])');
  assert.match(await page.textContent('#readout'), /Row 9, /);
  // Three tokens now; the pointer has not moved. Row 9 is gone: the readout names a cell of
  // the new maps under the pointer, or none.
  await page.fill('#sentence', 'Dogs chase cats');
  await settled(page);
  const readout = await page.textContent('#readout');
  const row = readout.match(/Row (\d+), /);
  assert.ok(!row || Number(row[1]) <= 3, readout);
  await page.mouse.move(1, 1);
  assert.deepEqual(errors, []);
});

test('hovering a cell shows its arithmetic, A′ = A + G × D, and highlights it in every map', async () => {
  const { page, errors } = shared;
  await page.fill('#sentence', 'The cat sat on the mat because it was tired.');
  await settled(page);
  const [row, col] = [2, 4];
  await page.locator('canvas.map-canvas >> nth=4').scrollIntoViewIfNeeded();
  const target = await cellCentre(page, 4, row, col);
  await page.mouse.move(target.x, target.y);
  await page.waitForSelector('#tooltip:not([hidden])');
  const expected = await page.evaluate(([r, c]) => window.diffattn.call((ex) => ex.cell(r, c)), [row, col]);
  const terms = await page.$$eval('#tooltip [data-term]', (spans) =>
    Object.fromEntries(spans.map((s) => [s.dataset.term, Number(s.textContent.replace('\u2212', '-'))])),
  );
  const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 5e-5, `${what}: ${a} vs ${b}`);
  close(terms.a, expected.values.a, 'A');
  close(terms.g, expected.values.g, 'G');
  close(terms.d, expected.values.d, 'D');
  close(terms.fused, expected.values.fused, 'A′');
  close(expected.values.a + expected.values.g * expected.values.d, expected.values.fused, 'A + G×D');
  close(terms.alpha, expected.gate.alpha, 'alpha');
  const tip = await page.textContent('#tooltip');
  assert.ok(tip.includes(expected.query) && tip.includes(expected.key), tip);
  assert.match(tip, /Σ A = 1\.0000/);
  assert.match(tip, new RegExp(`Row ${row + 1}, `), 'rows are counted from 1, as heads are');
  // Every overlay has a highlight drawn, and the maps were not re-rendered for it.
  const renders = await page.evaluate(() => window.diffattn.timings.renders);
  const painted = await page.$$eval('canvas.map-overlay', (cs) =>
    cs.map((c) => c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some((v, i) => i % 4 === 3 && v > 0)),
  );
  assert.deepEqual(painted, [true, true, true, true, true]);
  await page.mouse.move(target.x + 3, target.y + 1);
  await settled(page);
  assert.equal(await page.evaluate(() => window.diffattn.timings.renders), renders);
  await screenshot(page, 'page-hover');
  // A click pins the cell: the readout keeps it after the pointer leaves; a second click unpins.
  await page.mouse.click(target.x, target.y);
  await page.mouse.move(1, 1);
  await settled(page);
  assert.match(await page.textContent('#readout'), new RegExp(`Row ${row + 1}, .* column ${col + 1},`));
  await page.mouse.click(target.x, target.y);
  await page.mouse.move(1, 1);
  await settled(page);
  assert.match(await page.textContent('#readout'), /Hover over a map/);
  await page.mouse.move(1, 1);
  await page.waitForSelector('#tooltip', { state: 'hidden' });
  assert.deepEqual(errors, []);
});

test('keyboard: Tab reaches the shift slider, ArrowRight changes k, arrows move the selected cell', async () => {
  const { page, errors } = await openExplorer(h);
  let found = false;
  for (let i = 0; i < 40 && !found; i++) {
    await page.keyboard.press('Tab');
    found = await page.evaluate(() => window.diffattn.root.activeElement?.id === 'shift');
  }
  assert.ok(found, 'Tab never reached the shift slider');
  // The sliders' accessible names contain the words "shift" and "heads".
  assert.equal(await page.getByRole('slider', { name: /\bshift\b/i }).count(), 1);
  assert.equal(await page.getByRole('slider', { name: /\bheads\b/i }).count(), 1);
  assert.equal(await page.evaluate(() => window.diffattn.root.activeElement === window.diffattn.root.getElementById('shift')), true);
  const name = await page.evaluate(() => window.diffattn.root.activeElement.labels[0].textContent);
  assert.match(name, /\bshift\b/i);
  const k = await page.evaluate(() => window.diffattn.state.shift);
  await page.keyboard.press('ArrowRight');
  await settled(page);
  assert.equal(await page.evaluate(() => window.diffattn.state.shift), k + 1);
  assert.match(await page.textContent('#shift-out'), new RegExp(`k = ${k + 1}\\b`));
  // A focused map: the first arrow selects cell (0, 0), the next ones move it.
  await page.focus('canvas.map-canvas >> nth=4');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  await settled(page);
  const readout = await page.textContent('#readout');
  assert.match(readout, /Row 2, query .* column 2, key/);
  // The table fallback describes the focused map, with a caption and header cells.
  await page.waitForFunction(() => window.diffattn.root.querySelector('#table-fallback caption')?.textContent.startsWith('A′'));
  assert.ok((await page.locator('#table-fallback th[scope="col"]').count()) > 3);
  assert.ok((await page.locator('#table-fallback th[scope="row"]').count()) > 3);
  await page.keyboard.press('Escape');
  await settled(page);
  assert.match(await page.textContent('#readout'), /Hover over a map/);
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('exports download a PNG, an SVG and the stages JSON', async () => {
  const { page, errors } = shared;
  const grab = async (button) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
    const file = await download.path();
    return { name: download.suggestedFilename(), bytes: await readFile(file) };
  };
  await openDetails(page, 'export-tools');
  await page.selectOption('#export-target', 'fused');
  const png = await grab('#export-png');
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(png.name, 'shift_diff-k1-head1-fused.png');
  await page.selectOption('#export-target', 'panel');
  const panel = await grab('#export-png');
  assert.deepEqual([...panel.bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  assert.ok(panel.bytes.length > png.bytes.length, 'the panel is not bigger than one map');
  const svg = await grab('#export-svg');
  const svgText = svg.bytes.toString('utf8');
  assert.match(svgText, /<svg[\s>]/);
  const parsed = await page.evaluate(
    (text) => new DOMParser().parseFromString(text, 'image/svg+xml').querySelector('parsererror') === null,
    svgText,
  );
  assert.ok(parsed, 'the SVG does not parse');
  await page.selectOption('#export-target', 'a');
  const one = await grab('#export-svg');
  assert.equal(one.name, 'shift_diff-k1-head1-a.svg');
  assert.match(one.bytes.toString('utf8'), /<svg[\s>]/);
  const json = await grab('#export-json');
  assert.equal(json.name, 'shift_diff-k1-head1-stages.json');
  const spec = JSON.parse(json.bytes.toString('utf8'));
  // A spec that opens again (tests/e2e/classroom.test.mjs opens it), with the stages for reading.
  assert.equal(spec.mechanism, 'shift_diff');
  assert.ok(Array.isArray(spec.x) && Array.isArray(spec.tokens));
  assert.ok(Array.isArray(spec.stages.heads) && spec.stages.heads.length === 4);
  assert.ok(Array.isArray(spec.stages.heads[0].fused));
  assert.deepEqual(errors, []);
});

test('a broken spec file shows a message naming the field; the page keeps working', async () => {
  const { page, errors } = shared;
  const broken = JSON.stringify({ mechanism: 'standard', heads: 3, causal: false, x: [[1, 2, 3, 4]], w_q: [], w_k: [], w_v: [], w_o: [] });
  await page.setInputFiles('#spec-file', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from(broken) });
  const message = page.locator('#messages .message');
  await message.waitFor();
  const text = await message.textContent();
  assert.match(text, /broken\.json/);
  assert.match(text, /\b(heads|w_q|x)\b/, `the message names no field: ${text}`);
  assert.equal(await page.getAttribute('#messages', 'role'), 'alert');
  await page.click('#messages .message [data-role="dismiss"]');
  assert.equal(await message.count(), 0);
  const garbage = 'this is { not json';
  await page.setInputFiles('#spec-file', { name: 'garbage.json', mimeType: 'application/json', buffer: Buffer.from(garbage) });
  await message.waitFor();
  assert.match(await message.textContent(), /garbage\.json/);
  await page.click('#messages .message [data-role="dismiss"]');
  // Still the sentence, still drawing.
  await setRange(page, '#shift', 2);
  assert.equal((await canvasInfo(page)).length, 5);
  assert.equal(await page.locator('#spec-banner').isHidden(), true);
  assert.deepEqual(errors, []);
});

test(
  'a valid spec file draws its stages, picked or dropped; the button returns to the sentence',
  async () => {
    const { page, errors } = await openExplorer(h);
    const name = (await readdir(FIXTURES)).find((f) => /^shiftdiff_L5_H2_.*_k1_single_none\.spec\.json$/.test(f));
    assert.ok(name, 'no shiftdiff L5 fixture');
    const specText = await readFile(path.join(FIXTURES, name), 'utf8');
    const expected = JSON.parse(await readFile(path.join(FIXTURES, name.replace('.spec.', '.expected.')), 'utf8'));
    await page.setInputFiles('#spec-file', { name, mimeType: 'application/json', buffer: Buffer.from(specText) });
    await page.locator('#spec-banner').waitFor();
    await settled(page);
    assert.match(await page.textContent('#spec-banner'), new RegExp(name.replace(/\./g, '\\.')));
    assert.deepEqual(await drawnTokens(page), ['t0', 't1', 't2', 't3', 't4']);
    const fused = await mapData(page, 'fused');
    const want = expected.heads[0].fused.flat();
    assert.equal(fused.data.length, want.length);
    fused.data.forEach((v, i) => assert.ok(Math.abs(v - want[i]) < 1e-4, `fused[${i}] ${v} vs ${want[i]}`));
    assert.equal(await page.inputValue('#mechanism'), 'shift_diff');
    assert.equal(await page.locator('#head option').count(), 2);
    assert.equal(await page.locator('#gate-spec-note').isVisible(), true);
    assert.match(await page.textContent('#heads-out'), /d_h = 8/);
    assert.match(await page.textContent('#model-status'), /from shiftdiff_/);
    const maps = await canvasInfo(page);
    assert.equal(maps.length, 5);
    for (const m of maps) assert.ok(m.colours > 4 && m.label.endsWith('of 5 tokens'), m.label);
    await screenshot(page, 'page-spec');
    // The address still describes the sentence, not the file.
    assert.equal(new URL(page.url()).searchParams.get('heads'), null);

    await page.click('#spec-back');
    await settled(page);
    assert.equal(await page.locator('#spec-banner').isHidden(), true);
    const tokens = await drawnTokens(page);
    assert.equal(tokens[0], 'the');
    // The trained default model is back (the spec does not replace it).
    assert.match(await page.textContent('#model-status'), /Weights: trained/);

    // Drag and drop onto the page.
    await page.evaluate(
      ({ text, fileName }) => {
        const transfer = new DataTransfer();
        transfer.items.add(new File([text], fileName, { type: 'application/json' }));
        for (const type of ['dragenter', 'dragover', 'drop']) {
          document.body.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
        }
      },
      { text: specText, fileName: name },
    );
    await page.locator('#spec-banner').waitFor();
    await settled(page);
    assert.deepEqual(await drawnTokens(page), ['t0', 't1', 't2', 't3', 't4']);
    assert.equal(await page.locator('#drop-overlay').isHidden(), true);
    assert.deepEqual(errors, []);
    await page.context().close();
  },
);

test('dark mode: the page and the maps follow prefers-color-scheme', async () => {
  const { page, errors } = await openExplorer(h);
  const corner = () =>
    page.$eval('canvas.map-canvas', (c) => Array.from(c.getContext('2d').getImageData(2, 2, 1, 1).data.slice(0, 3)));
  const light = await corner();
  assert.ok(light.every((v) => v > 200), `light background ${light}`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForFunction(() => window.diffattn.root.getElementById('explorer').dataset.theme === 'dark');
  await settled(page);
  const dark = await corner();
  assert.ok(dark.every((v) => v < 80), `dark background ${dark}`);
  await screenshot(page, 'page-dark');
  assert.deepEqual(errors, []);
  await page.context().close();
});
