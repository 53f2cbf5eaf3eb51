// End-to-end: the real pretrained model in the page (issue 19, item 4). `weights=minilm` fetches
// weights/minilm/minilm.bin (built by the set-up) with a progress bar, reads it once for the
// page, and draws the typed sentence's word pieces at the layer of `layer`; the screen-reader
// table holds the model's value (transformers' figure from tests/golden/minilm/forward.json);
// every mechanism but V2 draws its final map on the real layer; a download that fails says so,
// offers to try again, and never draws half a map.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, screenshot, startHarness } from './harness.mjs';
import { canvasInfo, openExplorer, settled } from './www-helpers.mjs';

const FACTS = JSON.parse(await readFile(path.join(ROOT, 'tests/golden/minilm/forward.json'), 'utf8')).facts;

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const state = (page) => page.evaluate(() => ({ ...window.diffattn.state }));
const labels = (page) => page.evaluate(() => window.diffattn.call((ex) => ex.labels()).rows ?? window.diffattn.call((ex) => ex.labels()));
const byId = (page, id) => page.evaluate((i) => {
  const el = window.diffattn.root.getElementById(i);
  return { text: el.textContent, hidden: el.hidden || el.closest('[hidden]') !== null };
}, id);

/** The screen-reader table's value at row `row` and column `col` (their labels), once it describes `stage`. */
async function tableValue(page, row, col) {
  return page.evaluate(
    ({ row, col }) => {
      const table = window.diffattn.root.querySelector('#table-fallback table');
      if (!table) return null;
      const cols = [...table.querySelectorAll('thead th')].map((th) => th.textContent);
      const tr = [...table.querySelectorAll('tbody tr')].find((r) => r.querySelector('th').textContent === row);
      const j = cols.indexOf(col);
      return tr && j > 0 ? Number(tr.children[j].textContent) : null;
    },
    { row, col },
  );
}

test('weights=minilm&layer=4&head=2 draws the real head, labelled with its word pieces; its table holds the model value', async () => {
  const text = FACTS.sentence;
  const { page, errors, context } = await openExplorer(h, { weights: 'minilm', layer: '4', head: '2', mechanism: 'standard', text }, { width_px: 1024, height_px: 768 });
  const s = await state(page);
  assert.deepEqual([s.weights, s.layer, s.head, s.heads], ['minilm', 4, 2, 12]);
  const pieces = await page.evaluate(() => window.diffattn.call((ex) => ex.labels()));
  const rows = pieces.rows ?? pieces;
  assert.deepEqual(rows.slice(0, 5), ['[CLS]', 'the', 'animal', 'didn', "'"]);
  assert.equal(rows[rows.length - 1], '[SEP]');
  assert.match((await byId(page, 'model-status')).text, /all-MiniLM-L6-v2.*layer 4 of 6/);
  assert.equal((await byId(page, 'token-count')).text, '16 word pieces');
  assert.equal((await byId(page, 'pretrained-note')).hidden, false);
  assert.equal((await byId(page, 'layer-field')).hidden, false);
  assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('layer').options.length), 6);
  // The screen-reader table of A: «it» on «animal», as transformers computes it.
  await page.focus('canvas.map-canvas >> nth=0');
  await page.keyboard.press('ArrowDown');
  await settled(page);
  await page.waitForFunction(() => window.diffattn.root.querySelector('#table-fallback table') !== null);
  const value = await tableValue(page, 'it', 'animal');
  assert.ok(value !== null, 'the table lists «it» and «animal»');
  assert.ok(Math.abs(value - FACTS.layer4_head2_it_animal) <= 0.005, `${value} vs transformers ${FACTS.layer4_head2_it_animal}`);
  await screenshot(page, 'pretrained-layer4-head2-1024');
  // Shift-difference and the Differential Transformer draw their final maps on the real layer.
  for (const [mechanism, final] of [['shift_diff', 'fused'], ['diff_transformer', 'diff']]) {
    await page.selectOption('#mechanism', mechanism);
    await settled(page);
    const drawn = await canvasInfo(page);
    const map = drawn.find((c) => c.stage === final);
    assert.ok(map && map.colours > 4, `${mechanism}: ${final} drawn (${JSON.stringify(drawn.map((c) => c.stage))})`);
    assert.equal((await state(page)).weights, 'minilm');
    // The Differential Transformer pairs each of the model's 12 heads with a partner: A2 is
    // the next head, or the head the person picks.
    assert.equal((await state(page)).heads, 12);
    assert.equal((await byId(page, 'partner-field')).hidden, mechanism !== 'diff_transformer');
    if (mechanism === 'diff_transformer') {
      assert.match((await byId(page, 'lambda-note')).text, /λ_init/);
      assert.equal(await page.evaluate(() => window.diffattn.view.view.partner), 3, 'head 2 with head 3');
      assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('heads').disabled), true, 'the pairing fixes the heads');
      const a2 = await page.evaluate(() => Array.from(window.diffattn.call((ex) => ex.window('a2', 0, 0, 4, 4)).data));
      await page.selectOption('#partner', '8');
      await settled(page);
      assert.equal((await state(page)).partner, 8);
      assert.equal(await page.evaluate(() => window.diffattn.view.view.partner), 8);
      const a2of8 = await page.evaluate(() => Array.from(window.diffattn.call((ex) => ex.window('a2', 0, 0, 4, 4)).data));
      assert.notDeepEqual(a2of8, a2, 'A2 is head 8 now');
      await page.waitForFunction(() => new URL(location.href).searchParams.get('partner') === '8');
    }
    await screenshot(page, `pretrained-${mechanism}-1024`);
  }
  const offered = await page.evaluate(() => [...window.diffattn.root.getElementById('mechanism').options].filter((o) => !o.disabled).map((o) => o.value));
  assert.equal(offered.includes('diff_transformer_v2'), false, 'V2 needs W_λ, which a standard layer has not');
  assert.ok(offered.includes('cosine') && offered.includes('hierarchical'), JSON.stringify(offered));
  // Another layer from its menu: the address keeps it.
  await page.selectOption('#mechanism', 'standard');
  await page.selectOption('#layer', '3');
  await settled(page);
  assert.equal((await state(page)).layer, 3);
  await page.waitForFunction(() => new URL(location.href).searchParams.get('layer') === '3');
  assert.match((await byId(page, 'model-status')).text, /layer 3 of 6/);
  // A text past the model's 512 positions is cut, and the page says so.
  await page.fill('#sentence', 'word '.repeat(600));
  await settled(page);
  assert.match((await byId(page, 'truncated-notice')).text, /602 word pieces; the model reads at most 512/);
  // Typing keeps the model; back to the untrained model, the word tokens again.
  await page.fill('#sentence', 'Cats purr.');
  await settled(page);
  const typed = await page.evaluate(() => window.diffattn.call((ex) => ex.labels()));
  assert.deepEqual(typed.rows ?? typed, ['[CLS]', 'cats', 'pu', '##rr', '.', '[SEP]']);
  await page.selectOption('#weights', 'untrained');
  await settled(page);
  const words = await page.evaluate(() => window.diffattn.call((ex) => ex.labels()));
  assert.equal((words.rows ?? words).includes('[CLS]'), false);
  assert.equal((await byId(page, 'layer-field')).hidden, true, 'one layer: no layer menu');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a second sentence: how close the model puts it, and how far the mechanism at the layer moves it', async () => {
  const { page, errors, context } = await openExplorer(h, { weights: 'minilm', layer: '4', mechanism: 'standard', text: 'A man is eating food.' }, { width_px: 1280, height_px: 800 });
  assert.equal((await byId(page, 'other-field')).hidden, false);
  assert.match((await byId(page, 'prediction')).text, /Similarity.*type a second sentence/s);
  await page.fill('#other', 'A man is eating a piece of bread.');
  await settled(page);
  const sim = await page.evaluate(() => window.diffattn.call((ex) => ex.similarity()));
  assert.ok(Math.abs(sim.model - FACTS.cosine_food_bread) <= 0.005, `${sim.model} vs transformers ${FACTS.cosine_food_bread}`);
  assert.ok(Math.abs(sim.mechanism - sim.model) < 1e-4, 'the standard mechanism is the model’s own attention');
  const shown = (await byId(page, 'prediction')).text;
  assert.match(shown, new RegExp(`${sim.model.toFixed(3)} \\(cosine`));
  assert.match(shown, /with Standard softmax at layer 4/);
  await page.selectOption('#mechanism', 'shift_diff');
  await settled(page);
  const moved = await page.evaluate(() => window.diffattn.call((ex) => ex.similarity()));
  assert.ok(Math.abs(moved.model - sim.model) < 1e-6 && Math.abs(moved.mechanism - sim.model) > 1e-3, JSON.stringify(moved));
  await page.waitForFunction(() => new URL(location.href).searchParams.get('other') === 'A man is eating a piece of bread.');
  await screenshot(page, 'pretrained-similarity-1280');
  assert.deepEqual(errors, []);
  await context.close();
});

test('Compare draws each mechanism on the same pretrained layer (its panels use the model the explorer read)', async () => {
  const { page, errors, context } = await openExplorer(h, { weights: 'minilm', layer: '4', view: 'compare', text: 'The cat sat.' }, { width_px: 1280, height_px: 800 });
  const panels = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('#compare canvas.map-canvas')].map((c) => c.width > 0));
  assert.ok(panels.length >= 3 && panels.every(Boolean), JSON.stringify(panels));
  assert.equal((await byId(page, 'token-count')).text, '6 word pieces');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a download of the model that fails says so and offers to try again; the retry draws the model', async () => {
  const { page, errors, context } = await openExplorer(h, { text: 'The cat sat.' });
  const before = await canvasInfo(page);
  let fail = true;
  await page.route('**/weights/minilm/minilm.bin', (route) => (fail ? route.abort('connectionreset') : route.continue()));
  await page.selectOption('#weights', 'minilm');
  await settled(page);
  const message = await byId(page, 'messages');
  assert.match(message.text, /Could not load the pretrained model/);
  assert.equal((await state(page)).weights, 'untrained', 'the page says which model draws');
  assert.deepEqual((await canvasInfo(page)).map((c) => c.stage), before.map((c) => c.stage), 'the maps as they were, not half a map');
  fail = false;
  await page.evaluate(() => [...window.diffattn.root.querySelectorAll('#messages button')].find((b) => /Try again/.test(b.textContent)).click());
  await settled(page);
  assert.equal((await state(page)).weights, 'minilm');
  const pieces = await page.evaluate(() => window.diffattn.call((ex) => ex.labels()));
  assert.deepEqual(pieces.rows ?? pieces, ['[CLS]', 'the', 'cat', 'sat', '.', '[SEP]']);
  assert.doesNotMatch((await byId(page, 'messages')).text, /Could not load/);
  // The failed request is the only console error.
  assert.ok(errors.every((e) => /minilm\.bin|Failed to load resource/.test(e)), JSON.stringify(errors));
  await context.close();
});
