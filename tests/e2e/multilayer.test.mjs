// End-to-end: a multi-layer file (docs/DESIGN.md §7.11, issue 20 item 2) on the page and in the
// element. Picked in #spec-file (JSON and safetensors), it draws its first layer with the layer
// control showing its layers; changing the layer draws that layer, whose map is what
// `diffattn stages --layer N FILE` prints, and the address keeps `layer`. The element's `src`
// with its `layer` attribute draws that layer.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, startHarness } from './harness.mjs';
import { mapData, openExplorer, settled } from './www-helpers.mjs';

const FILES = ['tests/e2e/fixtures/multilayer-two.json', 'tests/e2e/fixtures/multilayer-two.safetensors'];

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** What the CLI prints for layer `n` of `file`: head 1's `a`. */
function cliMap(file, n) {
  const out = execFileSync('cargo', ['run', '--quiet', '--bin', 'diffattn', '--', 'stages', '--layer', String(n), file], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out).heads[0].a;
}

async function pick(page, file) {
  const input = await page.evaluateHandle(() => window.diffattn.root.getElementById('spec-file'));
  await input.asElement().setInputFiles(path.join(ROOT, file));
  await page.waitForFunction(() => window.diffattn.view.specs.active !== null || window.diffattn.root.getElementById('messages').textContent !== '', null, { timeout: 30_000 });
  await settled(page);
}

async function chooseLayer(page, n) {
  await page.evaluate((v) => {
    const select = window.diffattn.root.getElementById('layer');
    select.value = String(v);
    select.dispatchEvent(new Event('change', { bubbles: true }));
  }, n);
  await page.waitForFunction((v) => window.diffattn.view.specs.active?.shown === v, n, { timeout: 30_000 });
  await settled(page);
}

function maxDiff(map, rows) {
  assert.deepEqual([map.rows, map.cols], [rows.length, rows[0].length]);
  return map.data.reduce((m, v, i) => Math.max(m, Math.abs(v - rows[Math.floor(i / map.cols)][i % map.cols])), 0);
}

for (const file of FILES) {
  test(`a multi-layer file (${path.extname(file)}): the layer control picks the layer, drawn as the CLI's --layer N`, async () => {
    const { page, errors, context } = await openExplorer(h, '');
    await pick(page, file);
    const active = await page.evaluate(() => ({ ...window.diffattn.view.specs.active, bytes: undefined, savedState: undefined }));
    assert.equal(active.layers, 2);
    assert.equal(active.shown, 1);
    const options = await page.evaluate(() => [...window.diffattn.root.getElementById('layer').options].map((o) => o.value));
    assert.deepEqual(options, ['1', '2']);
    const hiddenLayer = await page.evaluate(() => window.diffattn.root.getElementById('layer').closest('[hidden]') !== null);
    assert.equal(hiddenLayer, false, 'the layer control shows');
    const first = await mapData(page, 'a');
    assert.ok(maxDiff(first, cliMap(file, 1)) < 1e-6, 'layer 1 is the CLI layer 1');

    await chooseLayer(page, 2);
    assert.equal((await page.evaluate(() => window.diffattn.state.layer)), 2);
    const second = await mapData(page, 'a');
    assert.ok(maxDiff(second, cliMap(file, 2)) < 1e-6, "layer 2 is the CLI's --layer 2");
    assert.ok(second.data.some((v, i) => Math.abs(v - first.data[i]) > 1e-3), "layer 2's map differs from layer 1's");
    await page.waitForFunction(() => new URLSearchParams(location.search).get('layer') === '2', null, { timeout: 10_000 });

    await chooseLayer(page, 1);
    assert.ok(maxDiff(await mapData(page, 'a'), cliMap(file, 1)) < 1e-6, 'back to layer 1');
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test("the element: a multi-layer file's src with its layer attribute draws that layer, and a new layer attribute another", async () => {
  const { page, errors, context } = await h.newPage({ width_px: 1280, height_px: 800 });
  await page.goto(h.url('/www/examples/'));
  await page.waitForFunction(() => customElements.get('diffattn-explorer') !== undefined);
  const pixels = (id) =>
    page.evaluate(async (i) => {
      const el = document.getElementById(i);
      await el.settled();
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      return el.shadowRoot.querySelector('canvas.map-canvas').toDataURL();
    }, id);
  await page.evaluate(async (src) => {
    for (const [id, layer] of [['one', '1'], ['two', '2']]) {
      const el = document.createElement('diffattn-explorer');
      el.id = id;
      el.setAttribute('src', src);
      el.setAttribute('layer', layer);
      el.setAttribute('maps', 'A');
      document.querySelector('main').prepend(el);
    }
    await Promise.all([...document.querySelectorAll('#one, #two')].map((e) => e.settled()));
  }, `/${FILES[1]}`);
  const layers = await page.evaluate(() => ['one', 'two'].map((i) => document.getElementById(i).state.layer));
  assert.deepEqual(layers, [1, 2]);
  const [one, two] = [await pixels('one'), await pixels('two')];
  assert.notEqual(one, two, "layer 2's map differs from layer 1's");
  // A spec given as an object (the notebook widget's `spec` trait), then its layer (`layer` trait).
  await page.evaluate(async (url) => {
    const el = document.createElement('diffattn-explorer');
    el.id = 'given';
    el.setAttribute('maps', 'A');
    document.querySelector('main').prepend(el);
    await el.settled();
    await el.loadSpec(await (await fetch(url)).json(), 'spec');
    el.setAttribute('layer', '2');
    await el.settled();
  }, `/${FILES[0]}`);
  await page.waitForFunction(() => document.getElementById('given').state.layer === 2);
  assert.equal(await pixels('given'), two, 'a spec object draws the layer asked for');
  await page.evaluate(() => document.getElementById('two').setAttribute('layer', '1'));
  await page.waitForFunction(() => document.getElementById('two').state.layer === 1);
  assert.equal(await pixels('two'), one, 'layer="1" draws layer 1');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a multi-layer file the page cannot read says why, naming the field', async () => {
  const { page, errors, context } = await openExplorer(h, '');
  for (const [text, words] of [
    ['{"layers": []}', 'layers: an empty list'],
    ['{"layers": 3}', 'layers: expected a list of layers'],
    ['{"layers": [{"layers": []}]}', 'layers'],
  ]) {
    await page.evaluate(() => window.diffattn.view.messages.clear('spec'));
    const input = await page.evaluateHandle(() => window.diffattn.root.getElementById('spec-file'));
    await input.asElement().setInputFiles({ name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from(text) });
    await page.waitForFunction(() => window.diffattn.root.getElementById('messages').textContent !== '', null, { timeout: 30_000 });
    const message = await page.evaluate(() => window.diffattn.root.getElementById('messages').textContent);
    assert.ok(message.includes(words) && message.includes('bad.json'), message);
    assert.equal(await page.evaluate(() => window.diffattn.view.specs.active), null);
  }
  assert.deepEqual(errors, []);
  await context.close();
});
