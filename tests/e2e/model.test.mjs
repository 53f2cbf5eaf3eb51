// End-to-end: the trained model is the page's default. Its weights load at start (the
// request is seen, the badge says so), the predicted sentiment is shown and follows the
// sentence, switching the mechanism loads that mechanism's weights lazily, model=untrained
// gives the seeded model and no prediction, a failing weights request falls back to the
// untrained model with a message, and the "trained with" / "moved away" notes appear.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, screenshot, startHarness, waitForReady } from './harness.mjs';
import { canvasInfo, openDetails, openExplorer, setRange, settled } from './www-helpers.mjs';

const MANIFEST = JSON.parse(await readFile(path.join(ROOT, 'weights', 'manifest.json'), 'utf8'));
// Reviews the shipped shift_diff model gets right (checked with `diffattn predict`).
const POSITIVE = 'a wonderful , moving and beautifully acted film';
const NEGATIVE = 'a dull , boring mess of a movie';
const POSITIVE_ZH = '这部电影非常精彩，演员的表演很感人';
const NEGATIVE_ZH = '这部电影太无聊了，浪费时间';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** The percentage the readout shows for a probability. */
const percent = (p) => (p >= 0.995 ? '> 99' : String(Math.round(p * 100)));

/** The readout as the page shows it, and what the engine says. */
async function readout(page) {
  return page.evaluate(() => ({
    label: window.diffattn.root.querySelector('#prediction').dataset.label,
    probability: window.diffattn.root.querySelector('#prediction').dataset.probability,
    text: window.diffattn.root.querySelector('#prediction-value').textContent,
    reason: window.diffattn.root.querySelector('#prediction-reason').textContent,
    engine: window.diffattn.call((ex) => ex.prediction()) ?? null,
  }));
}

async function type(page, text) {
  await page.fill('#sentence', text);
  await settled(page);
}

test('the trained model is the default: weights requested, badge, a live prediction', async () => {
  const requests = [];
  const { page, errors, context } = await openExplorer(h, { text: POSITIVE }, {});
  page.on('request', (req) => requests.push(req.url()));
  const info = await page.evaluate(() => window.diffattn.call((ex) => ex.model_info()));
  assert.equal(info.trained, true);
  assert.equal(info.mechanism, MANIFEST.default);
  assert.equal(info.d_model, MANIFEST.d_model);
  assert.match(await page.textContent('#model-status'), /Weights: trained \(Shift-difference gated\), d_model = 32/);
  assert.equal(await page.inputValue('#weights'), 'trained');
  assert.equal(await page.locator('#weights-loading').isHidden(), true);
  assert.equal(await page.evaluate(() => document.body.dataset.ready), 'true');

  let r = await readout(page);
  assert.equal(r.label, 'positive');
  assert.equal(r.engine.label, 'positive');
  assert.equal(Number(r.probability), r.engine.probability);
  assert.equal(r.text, `▲ Positive · ${percent(r.engine.probability)} %`);
  assert.equal(await page.locator('#prediction-meter').isVisible(), true);

  await type(page, NEGATIVE);
  r = await readout(page);
  assert.equal(r.label, 'negative');
  assert.equal(r.engine.label, 'negative');
  assert.equal(r.text, `▼ Negative · ${percent(r.engine.probability)} %`);

  await type(page, '');
  r = await readout(page);
  // (The engine still holds the last sentence; the page shows no prediction for an empty box.)
  assert.equal(r.label, 'none');
  assert.equal(r.text, '—');
  assert.match(r.reason, /empty/);

  // The trained settings are in the controls; the learned gate is described, not in the address.
  const settings = await page.evaluate(() => window.diffattn.call((ex) => ex.settings()));
  assert.equal(settings.gate_learned, true);
  assert.equal(await page.locator('#gate-learned-note').isVisible(), true);
  const entry = MANIFEST.models.find((m) => m.mechanism === 'shift_diff');
  const pct = (a) => (a * 100).toFixed(1);
  assert.equal(
    await page.textContent('#trained-with'),
    `Trained with: Shift-difference gated, 4 heads, k = 1, no causal mask (test accuracy EN ${pct(entry.test_int8.en.accuracy)} %, ZH ${pct(entry.test_int8.zh.accuracy)} %)`,
  );
  assert.equal(await page.locator('#moved-away').isHidden(), true);
  const params = new URL(page.url()).searchParams;
  for (const key of ['alpha', 'beta', 'gamma', 'weights', 'heads', 'shift']) assert.equal(params.get(key), null, key);
  assert.deepEqual(requests, [], 'nothing fetched after start');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the first view loads only the manifest and the default model, and draws with it', async () => {
  const { page, errors, context } = await h.newPage({ width_px: 1280, height_px: 800 });
  const weightRequests = [];
  page.on('request', (req) => req.url().includes('/weights/') && weightRequests.push(new URL(req.url()).pathname));
  // How fast this happens is measured by scripts/bench-page, not asserted here.
  await page.goto(h.url('/www/'));
  await waitForReady(page);
  assert.deepEqual(weightRequests.sort(), ['/weights/manifest.json', '/weights/shift_diff.bin']);
  const maps = await canvasInfo(page);
  assert.equal(maps.length, 5);
  for (const m of maps) assert.ok(m.colours > 8, `${m.stage} is blank`);
  assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.model_info()).trained), true);
  assert.deepEqual(errors, []);
  await context.close();
});

test('switching the mechanism loads its weights lazily, with its trained heads', async () => {
  const { page, errors, context } = await openExplorer(h, { text: POSITIVE });
  const weightRequests = [];
  page.on('request', (req) => req.url().includes('/weights/') && weightRequests.push(new URL(req.url()).pathname));
  const before = await canvasInfo(page);
  await page.selectOption('#mechanism', 'diff_transformer');
  await settled(page);
  assert.deepEqual(weightRequests, ['/weights/diff_transformer.bin']);
  const info = await page.evaluate(() => window.diffattn.call((ex) => ex.model_info()));
  assert.equal(info.mechanism, 'diff_transformer');
  assert.match(await page.textContent('#model-status'), /trained \(Differential Transformer\)/);
  assert.equal(await page.evaluate(() => window.diffattn.state.heads), 2);
  assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.settings()).heads), 2);
  assert.match(await page.textContent('#heads-out'), /^2 · d_h = 8$/);
  assert.equal(await page.locator('#head option').count(), 2);
  const after = await canvasInfo(page);
  assert.deepEqual(after.map((m) => m.stage), ['a1', 'a2', 'diff']);
  assert.notEqual(after[0].hash, before[0].hash);
  let r = await readout(page);
  assert.ok(['positive', 'negative'].includes(r.label));
  assert.equal(r.engine.label, r.label);
  assert.match(await page.textContent('#trained-with'), /Differential Transformer, 2 heads, λ = 0\.\d{3}, T = 1\.0, no causal mask/);
  assert.equal(new URL(page.url()).searchParams.get('mechanism'), 'diff_transformer');

  // Back to shift_diff: the cached bytes are used, no new request.
  await page.selectOption('#mechanism', 'shift_diff');
  await settled(page);
  assert.deepEqual(weightRequests, ['/weights/diff_transformer.bin']);
  assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.model_info()).mechanism), 'shift_diff');
  assert.equal(await page.evaluate(() => window.diffattn.state.heads), 4);
  r = await readout(page);
  assert.equal(r.label, 'positive');

  // A link to the cosine model opens it directly.
  const second = await openExplorer(h, { text: POSITIVE, mechanism: 'cosine' });
  assert.equal(await second.page.evaluate(() => window.diffattn.call((ex) => ex.model_info()).mechanism), 'cosine');
  assert.match(await second.page.textContent('#trained-with'), /Cosine, 4 heads, τ = \d+\.\d, no causal mask/);
  assert.deepEqual(second.errors, []);
  await second.context.close();
  assert.deepEqual(errors, []);
  await context.close();
});

test('weights=untrained gives the seeded model and no prediction; the picker switches back and forth', async () => {
  const { page, errors, context } = await openExplorer(h, { text: POSITIVE, weights: 'untrained' });
  const requests = [];
  page.on('request', (req) => req.url().includes('.bin') && requests.push(new URL(req.url()).pathname));
  assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.model_info()).trained), false);
  assert.match(await page.textContent('#model-status'), /untrained \(seeded random\), d_model = 64/);
  assert.equal(await page.inputValue('#weights'), 'untrained');
  let r = await readout(page);
  assert.equal(r.label, 'none');
  assert.equal(r.engine, null);
  assert.match(r.reason, /untrained/);
  assert.equal(await page.locator('#trained-with').isHidden(), true);
  assert.equal(await page.locator('#gate-learned-note').isHidden(), true);
  // With the untrained model, a mechanism change fetches nothing.
  await page.selectOption('#mechanism', 'standard');
  await settled(page);
  assert.deepEqual(requests, []);
  assert.deepEqual((await canvasInfo(page)).map((m) => m.stage), ['a']);

  await page.selectOption('#weights', 'trained');
  await settled(page);
  assert.deepEqual(requests, ['/weights/standard.bin']);
  assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.model_info()).mechanism), 'standard');
  r = await readout(page);
  assert.ok(r.engine && r.label === r.engine.label);
  assert.equal(new URL(page.url()).searchParams.get('weights'), null);

  await page.selectOption('#weights', 'untrained');
  await settled(page);
  assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.model_info()).trained), false);
  assert.equal((await readout(page)).label, 'none');
  assert.equal(new URL(page.url()).searchParams.get('weights'), 'untrained');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a failing weights request shows a message and the page keeps working untrained', async () => {
  const { page, errors, context } = await openExplorer(h, { text: POSITIVE });
  await page.route('**/weights/cosine.bin', (route) => route.abort());
  await page.selectOption('#mechanism', 'cosine');
  await settled(page);
  const message = page.locator('#messages [data-key="weights"]');
  assert.equal(await message.isVisible(), true);
  assert.match(await message.textContent(), /Could not load the trained weights for Cosine .*untrained model/);
  assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.model_info()).trained), false);
  assert.match(await page.textContent('#model-status'), /untrained/);
  assert.equal(await page.inputValue('#weights'), 'untrained');
  assert.equal((await readout(page)).label, 'none');
  const maps = await canvasInfo(page);
  assert.deepEqual(maps.map((m) => m.stage), ['a']);
  assert.ok(maps[0].colours > 4);
  // The page keeps working: typing redraws.
  await type(page, NEGATIVE);
  assert.notEqual((await canvasInfo(page))[0].hash, maps[0].hash);
  // The only errors are the aborted request itself.
  assert.deepEqual(errors.filter((e) => !/cosine\.bin|Failed to load resource: net::ERR_FAILED/.test(e)), []);
  await context.close();
});

test('"trained with" and "moved away": the shift slider, the gate and the heads', async () => {
  const { page, errors, context } = await openExplorer(h, { text: POSITIVE });
  assert.equal(await page.locator('#trained-with').isVisible(), true);
  assert.equal(await page.locator('#moved-away').isHidden(), true);
  await setRange(page, '#shift', 2);
  assert.equal(await page.locator('#moved-away').isVisible(), true);
  assert.match(await page.textContent('#moved-away'), /moved away from the trained settings \(k\)/);
  const r = await readout(page);
  assert.equal(r.engine?.label, r.label, 'still a prediction under the new settings');
  // What happens to the per-head parameters: readable text on the page, not a raw file.
  await page.click('#heads-explain > summary');
  assert.match(await page.textContent('#heads-explain'), /mean of the trained heads/);
  // Moving a gate slider: the gate is no longer the learned one.
  await openDetails(page, 'more-gate');
  await setRange(page, '#alpha', 1);
  assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.settings()).gate_learned), false);
  assert.equal(await page.locator('#gate-learned-note').isHidden(), true);
  assert.match(await page.textContent('#moved-away'), /\(k, gate sliders\)/);
  assert.equal(new URL(page.url()).searchParams.get('alpha'), '1');
  await screenshot(page, 'model-moved-away');
  // A reload of that address keeps the moved settings over the trained ones. The address is
  // then the figure someone shared: its reader moved nothing, so no notice says they did (nor
  // offers a button that would undo the figure) until they move something themselves.
  const second = await openExplorer(h, new URL(page.url()).search);
  assert.equal(await second.page.evaluate(() => window.diffattn.call((ex) => ex.settings()).shift), 2);
  assert.equal(await second.page.evaluate(() => window.diffattn.call((ex) => ex.settings()).gate_learned), false);
  assert.deepEqual(await second.page.evaluate(() => window.diffattn.call((ex) => ex.view().moved_away)), ['shift', 'gate']);
  assert.equal(await second.page.locator('#moved-away').isHidden(), true);
  await setRange(second.page, '#shift', 3);
  assert.match(await second.page.textContent('#moved-away'), /moved away from the trained settings \(k\)/);
  await second.context.close();
  // Back to the trained settings.
  await page.click('#back-to-trained');
  await settled(page);
  assert.equal(await page.locator('#moved-away').isHidden(), true);
  assert.equal(await page.evaluate(() => window.diffattn.state.shift), 1);
  assert.equal(await page.evaluate(() => window.diffattn.call((ex) => ex.settings()).gate_learned), true);
  // Heads away from the trained count.
  const choices = await page.evaluate(() => window.diffattn.call((ex) => ex.view().head_choices));
  await setRange(page, '#heads', choices.indexOf(8));
  assert.match(await page.textContent('#moved-away'), /\(heads\)/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('dragging the shift slider past the trained value moves neither the slider nor the maps (the notice is under the maps), at a projector’s size and on a phone', async () => {
  for (const size of [{ width_px: 1024, height_px: 768 }, { width_px: 390, height_px: 844 }]) {
    const { page, errors, context } = await openExplorer(h, { text: POSITIVE }, size);
    // Brought into view as a person would scroll to it: below the phone's pinned maps, not under them.
    await page.locator('#shift').scrollIntoViewIfNeeded();
    const where = () =>
      page.evaluate(() => {
        const at = (id) => window.diffattn.root.getElementById(id).getBoundingClientRect();
        const [shift, maps] = [at('shift'), at('maps')];
        return { shift: [shift.x, shift.y, shift.width], maps: [maps.x, maps.y], scroll: window.scrollY };
      });
    const before = await where();
    const stage = await page.evaluate(() => window.diffattn.root.getElementById('maps-section').getBoundingClientRect().bottom);
    assert.ok(before.shift[1] >= stage || size.width_px > 760, `the slider is in sight below the pinned maps: ${before.shift[1]} vs ${stage}`);
    assert.equal(await page.locator('#moved-away').isHidden(), true);
    // A drag from the thumb (k = 1) to the right: the pointer stays down across the trained value.
    const [x, y, width] = before.shift;
    const trained = await page.evaluate(() => window.diffattn.state.shift);
    const { min, max } = await page.evaluate(() => {
      const el = window.diffattn.root.getElementById('shift');
      return { min: Number(el.min), max: Number(el.max) };
    });
    const thumb = x + ((trained - min) / (max - min)) * width;
    const box = await page.locator('#shift').boundingBox();
    await page.mouse.move(thumb, box.y + box.height / 2);
    await page.mouse.down();
    for (let i = 1; i <= 4; i++) {
      await page.mouse.move(thumb + (i * width) / 10, box.y + box.height / 2);
      await settled(page);
      assert.deepEqual(await where(), before, `step ${i}: nothing under the pointer moved`);
    }
    await page.mouse.up();
    assert.ok((await page.evaluate(() => window.diffattn.state.shift)) > trained, 'the drag moved the shift');
    assert.equal(await page.locator('#moved-away').count(), 1);
    assert.equal(await page.locator('#moved-away').isHidden(), false, 'the notice says the settings moved away');
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('Chinese: a review gives a prediction, every new string is in Chinese', async () => {
  const { page, errors, context } = await openExplorer(h, { text: POSITIVE_ZH, lang: 'zh' });
  let r = await readout(page);
  assert.equal(r.label, 'positive');
  assert.equal(r.text, `▲ 正面 · ${percent(r.engine.probability)} %`);
  assert.match(await page.textContent('#model-status'), /权重：已训练/);
  assert.match(await page.textContent('#trained-with'), /^训练设置：.*测试准确率/);
  assert.equal(await page.textContent('label[for="weights"]'), '权重');
  await type(page, NEGATIVE_ZH);
  r = await readout(page);
  assert.equal(r.label, 'negative');
  assert.equal(r.text, `▼ 负面 · ${percent(r.engine.probability)} %`);
  assert.deepEqual(errors, []);
  await context.close();
});
