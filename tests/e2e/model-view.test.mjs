// End-to-end: the model view (issue 20, item 1; www/explorer/model-view.js). `view=model` draws
// every layer × head of the model as a small map of one stage, with the engine's statistics of
// each head under it (src/engine/head_stats.rs): for the real model (6 × 12 heads, labelled by
// layer and head) the previous-token head docs/MINILM.md names (layer 1, head 3) scores near 1;
// sorting by the sink mass reorders the heads, highest first; a click, or Enter on a focused
// head, opens that layer and head in the explore view, which the address keeps. The small
// trained models have one layer.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, startHarness } from './harness.mjs';
import { openExplorer, settled } from './www-helpers.mjs';

const FACTS = JSON.parse(await readFile(path.join(ROOT, 'tests/golden/minilm/forward.json'), 'utf8')).facts;

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Every head's card in page order: its layer, head, label, figures (from its title) and how many colours its map has. */
function cards(page) {
  return page.evaluate(() =>
    [...window.diffattn.root.querySelectorAll('.mv-card')].map((card) => {
      const canvas = card.querySelector('canvas');
      const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      const colours = new Set();
      for (let i = 0; i < data.length; i += 4 * 7) colours.add(`${data[i]},${data[i + 1]},${data[i + 2]},${data[i + 3]}`);
      const figure = (name) => {
        const m = card.title.match(new RegExp(`${name} (−?[0-9.]+)`));
        return m ? Number(m[1].replace('−', '-')) : null;
      };
      return {
        layer: Number(card.dataset.layer),
        head: Number(card.dataset.head),
        label: card.querySelector('.mv-label').textContent,
        entropy: figure('entropy'),
        sink: figure('sink mass'),
        previous: figure('previous token'),
        next: figure('next token'),
        shown: card.querySelector('.mv-stats').textContent,
        colours: colours.size,
      };
    }),
  );
}

const params = (page) => new URL(page.url()).searchParams;

test('view=model with the real model: 72 heads labelled by layer and head, L1 H3 a previous-token head, sorting by sink mass, a click and Enter open a head', async () => {
  const text = FACTS.sentence;
  const { page, errors } = await openExplorer(h, { weights: 'minilm', view: 'model', text }, { width_px: 1280, height_px: 800 });
  let all = await cards(page);
  assert.equal(all.length, 72, 'six layers of twelve heads');
  assert.deepEqual(
    all.map((c) => c.label),
    Array.from({ length: 72 }, (_, i) => `L${Math.floor(i / 12) + 1} H${(i % 12) + 1}`),
    'labelled by layer and head, in layer order',
  );
  for (const c of all) {
    assert.ok(c.colours > 2, `${c.label}: its map is drawn (${c.colours} colours)`);
    assert.ok(c.entropy !== null && c.sink !== null && c.previous !== null && c.next !== null, `${c.label}: its statistics (${c.shown})`);
  }
  // docs/MINILM.md: layer 1, head 3 attends to the token before (subdiagonal ≈ 1.00), on the
  // mechanism's final map (the page's default mechanism) as on A.
  const byHead = (list, layer, head) => list.find((c) => c.layer === layer && c.head === head);
  assert.ok(byHead(all, 1, 3).previous > 0.98, `L1 H3 previous ${byHead(all, 1, 3).previous}`);
  assert.equal(Math.max(...all.map((c) => c.previous)), byHead(all, 1, 3).previous, 'no other head is as much a previous-token head');
  // On A, the model's own maps: transformers' figures (tests/golden/minilm/forward.json).
  const first = await page.evaluate(() => window.diffattn.root.querySelector('#model-stage option').value);
  assert.ok(first === 'a' || first === 'a1', first);
  await page.selectOption('#model-stage', first);
  await settled(page);
  assert.equal(params(page).get('all_heads_stage'), first);
  all = await cards(page);
  assert.equal(all.length, 72);
  const l1h3 = byHead(all, 1, 3);
  assert.ok(Math.abs(l1h3.previous - FACTS.layer1_head3_subdiagonal) < 0.002, `L1 H3 previous ${l1h3.previous}`);
  assert.match(l1h3.shown, /←\s1\.00|←\s\.99/);
  // The sink mass of layer 4, head 2 is the figure docs/MINILM.md measures on [CLS] and [SEP].
  const l4h2 = byHead(all, 4, 2);
  assert.ok(Math.abs(l4h2.sink - FACTS.layer4_head2_cls_sep) < 0.002, `L4 H2 sink ${l4h2.sink}`);
  assert.equal(params(page).get('view'), 'model');
  // The exports draw the explore view's maps: off here.
  assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('export-png').disabled), true);
  // A smaller window: the maps follow.
  const side = () => page.evaluate(() => window.diffattn.root.querySelector('.mv-map').getBoundingClientRect().width);
  const wide = await side();
  await page.setViewportSize({ width: 1024, height: 768 });
  await page.waitForFunction((w) => window.diffattn.root.querySelector('.mv-map').getBoundingClientRect().width < w, wide);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForFunction((w) => window.diffattn.root.querySelector('.mv-map').getBoundingClientRect().width === w, wide);

  // Sorting by the sink mass: highest first, another order than layer and head.
  await page.selectOption('#model-sort', 'sink');
  await settled(page);
  all = await cards(page);
  const sinks = all.map((c) => c.sink);
  assert.ok(
    sinks.every((s, i) => i === 0 || s <= sinks[i - 1]),
    `highest first: ${sinks.slice(0, 8).join(', ')}…`,
  );
  assert.notEqual(all.map((c) => c.label).join(), Array.from({ length: 72 }, (_, i) => `L${Math.floor(i / 12) + 1} H${(i % 12) + 1}`).join(), 'reordered');
  assert.ok(Math.abs(sinks[0] - FACTS.cls_sep_max) < 0.002 && Math.abs(sinks[71] - FACTS.cls_sep_min) < 0.002, `${sinks[0]}, ${sinks[71]}`);
  assert.equal(params(page).get('model_sort'), 'sink');

  // A click opens the head in the explore view, every stage of it.
  await page.click('.mv-card[data-layer="1"][data-head="3"]');
  await settled(page);
  // The address leaves a default out: view=explore and layer=1 are the defaults.
  let q = params(page);
  assert.deepEqual([q.get('view') ?? 'explore', q.get('layer') ?? '1', q.get('head')], ['explore', '1', '3']);
  const s = await page.evaluate(() => ({ ...window.diffattn.state }));
  assert.deepEqual([s.view, s.layer, s.head, s.all_heads], ['explore', 1, 3, false]);
  assert.equal(await page.evaluate(() => window.diffattn.root.querySelector('.model-view').hidden), true);
  assert.ok((await page.evaluate(() => window.diffattn.root.querySelectorAll('canvas.map-canvas').length)) >= 1);

  // Back to the model view (kept sorted), and Enter on a focused head opens it.
  await page.click('#view-model');
  await settled(page);
  await page.focus('.mv-card[data-layer="4"][data-head="2"]');
  await page.keyboard.press('Enter');
  await settled(page);
  q = params(page);
  assert.deepEqual([q.get('view') ?? 'explore', q.get('layer'), q.get('head')], ['explore', '4', '2']);
  assert.deepEqual(errors, []);
  await page.close();
});

test('view=model with a small trained model: one layer of heads, its first or final map, a sink on the first token', async () => {
  const { page, errors } = await openExplorer(h, { mechanism: 'shift_diff', view: 'model', text: 'the film was not good but the actors were wonderful' }, { width_px: 1024, height_px: 768 });
  const heads = await page.evaluate(() => window.diffattn.state.heads);
  let all = await cards(page);
  assert.equal(all.length, heads, 'one layer');
  assert.ok(all.every((c) => c.layer === 1 && c.colours > 2));
  const stages = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('#model-stage option')].map((o) => o.value));
  assert.deepEqual(stages, ['a', 'fused'], 'the first and the final map');
  const finalSinks = all.map((c) => c.sink);
  // Each title also gives the first map's figures (what the mechanism changed).
  const onA = await page.evaluate(() =>
    [...window.diffattn.root.querySelectorAll('.mv-card')].map((card) => Number(card.title.match(/on A: entropy [0-9.]+, sink mass ([0-9.]+)/)?.[1])),
  );
  await page.selectOption('#model-stage', 'a');
  await settled(page);
  assert.equal(params(page).get('all_heads_stage'), 'a');
  all = await cards(page);
  assert.equal(all.length, heads);
  assert.notDeepEqual(all.map((c) => c.sink), finalSinks, "A's figures are not A′'s");
  assert.deepEqual(all.map((c) => c.sink), onA, "A's figures are those the final map's titles gave");
  // The figures are the engine's for that head's map: opened in the explore view, the
  // explorer's own handle (which computed it there) says the same.
  const first = all.find((c) => c.head === 1);
  await page.click('.mv-card[data-layer="1"][data-head="1"]');
  await settled(page);
  // Nine numbers per head (web/src/model_view.rs): entropy, sink, previous, next, …
  const engine = [...(await page.evaluate(() => window.diffattn.call((ex) => [...ex.head_statistics('a')])))];
  assert.equal(engine.length, 9 * heads);
  const [entropy, sink, previous] = engine;
  assert.ok(Math.abs(sink - first.sink) < 0.0006 && Math.abs(entropy - first.entropy) < 0.0006 && Math.abs(previous - first.previous) < 0.0006, `${engine.slice(0, 9)} vs ${JSON.stringify(first)}`);
  assert.deepEqual(errors, []);
  await page.close();
});
