// End-to-end: the model view (issue 20, item 1; www/explorer/model-view.js). `view=model` draws
// every layer × head of the model as a small map of one stage, with the engine's statistics of
// each head under it (src/engine/head_stats.rs): for the real model (6 × 12 heads, labelled by
// layer and head) the previous-token head docs/MINILM.md names (layer 1, head 3) scores near 1;
// sorting by the sink mass reorders the heads, highest first; a click, or Enter on a focused
// head, opens that layer and head in the explore view, which the address keeps. The small
// trained models have one layer. A multi-layer spec file shows every layer, each head's figures
// those of the CLI's map; 32 heads a layer make the maps compact, a row per layer.
// The PNG and SVG exports are the view as on screen (www/explorer/model-export.js): every
// head's map, label and figures in the order shown.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ROOT, startHarness } from './harness.mjs';
import { openDetails, openExplorer, settled } from './www-helpers.mjs';

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
        label: card.querySelector('.mv-label')?.textContent ?? null,
        entropy: figure('entropy'),
        sink: figure('sink mass'),
        previous: figure('previous token'),
        next: figure('next token'),
        shown: card.querySelector('.mv-stats')?.textContent ?? null,
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
  // The PNG and SVG export this view (the last test); the JSON, one layer's spec, is off here and says why.
  const buttons = await page.evaluate(() => ['export-png', 'export-svg', 'export-json'].map((id) => window.diffattn.root.getElementById(id)).map((b) => [b.disabled, b.title]));
  assert.deepEqual(buttons.map(([off]) => off), [false, false, true]);
  assert.match(buttons[2][1], /one layer/);
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

  // The exports of six layers sorted: the PNG has the 72 maps row by row in this order, the
  // SVG a group per head in this order, each map a rect per cell.
  const sortedLabels = all.map((c) => c.label);
  await openDetails(page, 'export-tools');
  const png = await findMaps(page, (await grab(page, '#export-png')).bytes);
  assert.ok(png.found.every((at) => at.length === 1), 'each map once in the PNG');
  const rowMajor = png.found.map(([[x, y]], i) => [y, x, i]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , i]) => i);
  assert.deepEqual(rowMajor, sortedLabels.map((_, i) => i));
  assert.equal(new Set(png.found.map(([[, y]]) => y)).size, 6, 'six rows of twelve');
  let svg = await readSvg(page, (await grab(page, '#export-svg')).bytes.toString('utf8'));
  assert.ok(svg.parsed);
  assert.deepEqual(svg.heads.map((g) => g.label), sortedLabels);
  const pieces = await page.evaluate(() => window.diffattn.view.view.tokens);
  assert.equal(svg.maps, 'vector');
  assert.ok(svg.heads.every((g) => g.rects === pieces * pieces), `${pieces}² rects per head`);

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

  // More cells than the SVG draws as vectors (200,000: model-export.js VECTOR_CELLS), each
  // with pixels enough: every map an embedded PNG of its canvas.
  await page.click('#view-model');
  await page.fill('#sentence', Array.from({ length: 5 }, () => text).join(' '));
  await settled(page);
  const n = await page.evaluate(() => window.diffattn.view.view.tokens);
  const mapSide = await page.evaluate(() => window.diffattn.root.querySelector('.mv-map').height);
  assert.ok(72 * n * n > 200_000 && n <= mapSide, `${n} tokens, maps of ${mapSide} px`);
  svg = await readSvg(page, (await grab(page, '#export-svg')).bytes.toString('utf8'));
  assert.equal(svg.maps, 'image');
  assert.equal(svg.heads.length, 72);
  assert.ok(svg.heads.every((g) => g.rects === 0 && g.image?.startsWith('data:image/png;base64,')));
  assert.deepEqual(svg.heads.map((g) => g.label), (await cards(page)).map((c) => c.label));
  assert.ok((await imagesMatch(page, svg.heads.map((g) => g.image))).every(Boolean), 'each image is its canvas');
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

/** What the CLI prints for layer `n` of `file`: every head's `a`. */
function cliHeads(file, n) {
  const out = execFileSync('cargo', ['run', '--quiet', '--bin', 'diffattn', '--', 'stages', '--layer', String(n), file], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out).heads.map((head) => head.a);
}

/** docs/DESIGN.md §8 on a softmax map (rows sum to 1, the first key the sink), by hand. */
function figuresOf(a) {
  const rows = a.filter((row) => row.some((v) => v !== 0));
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    entropy: mean(rows.map((row) => -row.reduce((s, p) => (p > 0 ? s + p * Math.log(p) : s), 0))),
    sink: mean(rows.map((row) => row[0])),
    previous: mean(a.slice(1).map((row, i) => row[i])),
  };
}

async function pickSpec(page, file) {
  const input = await page.evaluateHandle(() => window.diffattn.root.getElementById('spec-file'));
  await input.asElement().setInputFiles(file);
  await page.waitForFunction(() => window.diffattn.view.specs.active !== null || window.diffattn.root.getElementById('messages').textContent !== '', null, { timeout: 30_000 });
  assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('messages').textContent), '');
  await settled(page);
}

for (const name of ['multilayer-two.json', 'multilayer-two.safetensors']) {
  test(`view=model with a multi-layer file (${path.extname(name)}): every layer's heads, each with the figures of the CLI's maps; a click opens that layer of the file`, async () => {
    const file = path.join(ROOT, 'tests/e2e/fixtures', name);
    const { page, errors } = await openExplorer(h, '', { width_px: 1280, height_px: 800 });
    await pickSpec(page, file);
    await page.click('#view-model');
    await settled(page);
    const all = await cards(page);
    assert.deepEqual(
      all.map((c) => c.label),
      ['L1 H1', 'L1 H2', 'L1 H3', 'L1 H4', 'L2 H1', 'L2 H2', 'L2 H3', 'L2 H4'],
      'two layers of four heads, in layer order',
    );
    for (const layer of [1, 2]) {
      cliHeads(file, layer).forEach((a, i) => {
        const card = all.find((c) => c.layer === layer && c.head === i + 1);
        const want = figuresOf(a);
        assert.ok(card.colours > 2, `${card.label}: drawn`);
        for (const key of ['entropy', 'sink', 'previous']) assert.ok(Math.abs(card[key] - want[key]) < 0.0006, `${card.label} ${key}: ${card[key]} on the page, ${want[key]} from the CLI's map`);
      });
    }
    // The two layers differ: the view did not draw the first layer twice.
    assert.notDeepEqual(all.slice(0, 4).map((c) => c.entropy), all.slice(4).map((c) => c.entropy));
    await page.click('.mv-card[data-layer="2"][data-head="3"]');
    await page.waitForFunction(() => window.diffattn.view.specs.active?.shown === 2, null, { timeout: 30_000 });
    await settled(page);
    const s = await page.evaluate(() => ({ ...window.diffattn.state }));
    assert.deepEqual([s.view, s.layer, s.head], ['explore', 2, 3]);
    // Back to the sentence: the model view draws the sentence's model again.
    await page.click('#view-model');
    await settled(page);
    await page.click('#spec-back');
    await settled(page);
    const heads = await page.evaluate(() => window.diffattn.state.heads);
    assert.equal((await cards(page)).length, heads, "the sentence's model: one layer");
    assert.deepEqual(errors, []);
    await page.close();
  });
}

/** A two-layer spec of 32 heads of one channel each over six tokens, seeded (docs/DESIGN.md §7.11). */
function wideSpec() {
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648 - 0.5;
  };
  const matrix = (rows, cols, scale) => Array.from({ length: rows }, () => Array.from({ length: cols }, () => random() * scale));
  const tokens = ['the', 'cat', 'sat', 'on', 'a', 'mat'];
  const layer = (n) => ({ mechanism: 'standard', heads: 32, causal: false, x: matrix(6, 32, 2), w_q: matrix(32, 32, 3), w_k: matrix(32, 32, 3), w_v: matrix(32, 32, 1), w_o: matrix(32, 32, 1), layer: n, model: 'wide fixture', tokens });
  return JSON.stringify({ layers: [layer(0), layer(1)] });
}

test('view=model with 32 heads a layer: compact maps, a row per layer after its name, the figures in each title; sorted, one list', async () => {
  const { page, errors } = await openExplorer(h, '', { width_px: 1280, height_px: 800 });
  await page.evaluate((json) => window.diffattn.view.specs.load(json, 'wide.json'), wideSpec());
  await settled(page);
  await page.click('#view-model');
  await settled(page);
  let all = await cards(page);
  assert.equal(all.length, 64);
  assert.ok(all.every((c) => c.colours > 1 && c.entropy !== null), 'every map drawn, every title with its figures');
  const grid = () =>
    page.evaluate(() => {
      const g = window.diffattn.root.querySelector('.mv-grid');
      const rows = [...g.querySelectorAll('.mv-row')].filter((r) => r.getBoundingClientRect().width > 0);
      const tops = new Set([...g.querySelectorAll('.mv-card')].map((c) => Math.round(c.getBoundingClientRect().top)));
      const label = g.querySelectorAll('.mv-label, .mv-stats').length;
      return { className: g.className, rows: rows.map((r) => r.textContent), lines: tops.size, label, right: Math.max(...[...g.querySelectorAll('.mv-card')].map((c) => c.getBoundingClientRect().right)) - g.getBoundingClientRect().left, width: g.getBoundingClientRect().width };
    });
  let g = await grid();
  assert.match(g.className, /mv-compact/);
  assert.deepEqual(g.rows, ['L1', 'L2'], "each layer's name at its row's start");
  assert.equal(g.lines, 2, 'a row per layer');
  assert.equal(g.label, 0, 'no label or figures under a compact map: its title has them');
  assert.ok(g.right <= g.width + 1, 'the rows fit the view');
  assert.match(await page.evaluate(() => window.diffattn.root.querySelector('.mv-note').textContent), /a row per layer\. Point at a head/);
  await page.selectOption('#model-sort', 'entropy');
  await settled(page);
  all = await cards(page);
  const entropies = all.map((c) => c.entropy);
  assert.ok(entropies.every((e, i) => i === 0 || e <= entropies[i - 1]), 'highest first');
  g = await grid();
  assert.deepEqual(g.rows, [], 'sorted: no row names');
  assert.deepEqual(errors, []);
  await page.close();
});

/** Clicks `button` and reads the download: its name and bytes. */
async function grab(page, button) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  return { name: download.suggestedFilename(), bytes: await readFile(await download.path()) };
}

/**
 * Where each head's map is in the PNG `bytes` (decoded in the page), found by its pixels: per
 * card in page order, the top-left corners at which the image holds that card's canvas's
 * pixels exactly, each pixel a `scale` × `scale` block (and the image's size).
 */
function findMaps(page, bytes, scale = 1) {
  return page.evaluate(
    async ({ b64, scale }) => {
      // Decoded from its bytes (the page's content security policy allows no data: image).
      const image = await createImageBitmap(new Blob([Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0))], { type: 'image/png' }));
      const out = Object.assign(document.createElement('canvas'), { width: image.width, height: image.height });
      const ctx = out.getContext('2d', { willReadFrequently: true });
      ctx.drawImage(image, 0, 0);
      const all = ctx.getImageData(0, 0, out.width, out.height).data;
      const cards = [...window.diffattn.root.querySelectorAll('.mv-card canvas')];
      const found = cards.map((canvas) => {
        const { width, height } = canvas;
        const px = canvas.getContext('2d').getImageData(0, 0, width, height).data;
        const same = (x0, y0) => {
          for (let y = 0; y < height * scale; y += 1) {
            for (let x = 0; x < width * scale; x += 1) {
              const i = ((y0 + y) * out.width + x0 + x) * 4;
              const j = (Math.floor(y / scale) * width + Math.floor(x / scale)) * 4;
              if (all[i] !== px[j] || all[i + 1] !== px[j + 1] || all[i + 2] !== px[j + 2] || all[i + 3] !== px[j + 3]) return false;
            }
          }
          return true;
        };
        const at = [];
        for (let y0 = 0; y0 + height * scale <= out.height; y0 += 1) {
          for (let x0 = 0; x0 + width * scale <= out.width; x0 += 1) {
            const i = (y0 * out.width + x0) * 4;
            if (all[i] === px[0] && all[i + 1] === px[1] && all[i + 2] === px[2] && same(x0, y0)) at.push([x0, y0]);
          }
        }
        return at;
      });
      return { width: out.width, height: out.height, side: cards[0].width, found };
    },
    { b64: bytes.toString('base64'), scale },
  );
}

/** The SVG `text` parsed in the page: whether it parses, its maps' form, and per head group its label, layer, head, figures, rect count and image. */
function readSvg(page, text) {
  return page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    if (doc.querySelector('parsererror')) return { parsed: false };
    const svg = doc.documentElement;
    return {
      parsed: svg.localName === 'svg' && svg.namespaceURI === 'http://www.w3.org/2000/svg',
      maps: svg.dataset.maps,
      width: Number(svg.getAttribute('width')),
      header: [...svg.querySelectorAll('g.header text')].map((t) => t.textContent),
      heads: [...svg.querySelectorAll('g.head')].map((g) => ({
        layer: Number(g.dataset.layer),
        head: Number(g.dataset.head),
        label: g.querySelector('text.label')?.textContent,
        figures: [...g.querySelectorAll('text.figure')].map((t) => t.textContent),
        rects: g.querySelectorAll('g.map rect').length,
        fills: [...g.querySelectorAll('g.map rect')].slice(0, 40).map((r) => [Number(r.getAttribute('x')), Number(r.getAttribute('y')), r.getAttribute('fill')]),
        image: g.querySelector('image.map')?.getAttribute('href') ?? null,
      })),
    };
  }, text);
}

/** Whether each head's colours in `fills` (`[x, y, fill]` of its first cells) are its card's canvas's pixels there, per card in page order. */
function fillsMatch(page, heads) {
  return page.evaluate((heads) => {
    const cards = [...window.diffattn.root.querySelectorAll('.mv-card')];
    return heads.map((h) => {
      const card = cards.find((c) => Number(c.dataset.layer) === h.layer && Number(c.dataset.head) === h.head);
      const canvas = card.querySelector('canvas');
      const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      return h.fills.every(([x, y, fill]) => {
        const i = (y * canvas.width + x) * 4;
        return fill === `#${[data[i], data[i + 1], data[i + 2]].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
      });
    });
  }, heads);
}

/** Whether each data: URL in `hrefs` decodes to exactly the pixels of the card's canvas at the same place in page order. */
function imagesMatch(page, hrefs) {
  return page.evaluate(async (hrefs) => {
    const canvases = [...window.diffattn.root.querySelectorAll('.mv-card canvas')];
    return Promise.all(
      hrefs.map(async (href, i) => {
        const bytes = Uint8Array.from(atob(href.slice(href.indexOf(',') + 1)), (ch) => ch.charCodeAt(0));
        const image = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
        const c = canvases[i];
        if (image.width !== c.width || image.height !== c.height) return false;
        const out = Object.assign(document.createElement('canvas'), { width: c.width, height: c.height });
        out.getContext('2d').drawImage(image, 0, 0);
        const a = out.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        const b = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        return a.every((v, j) => v === b[j]);
      }),
    );
  }, hrefs);
}

test('view=model exports: the PNG (at each size) and the SVG are the view as on screen, every head in the order shown; a long sentence embeds the maps', async () => {
  const text = 'the film was not good but the actors were wonderful';
  const { page, errors } = await openExplorer(h, { mechanism: 'shift_diff', view: 'model', text }, { width_px: 1280, height_px: 800 });
  await openDetails(page, 'export-tools');
  const state = await page.evaluate(() => ({ ...window.diffattn.state }));
  const layerOrder = (await cards(page)).map((c) => c.label);
  assert.equal(layerOrder.length, state.heads);
  // No map to choose: the whole view is exported.
  assert.equal(await page.locator('#export-target').isVisible(), false);
  const stage = await page.evaluate(() => window.diffattn.root.querySelector('#model-stage').value);
  const mech = await page.evaluate(() => window.diffattn.root.querySelector('#mechanism').selectedOptions[0].textContent);

  // PNG, as on screen: every card's canvas in it pixel for pixel, once, in the order shown
  // (row by row), under the header.
  const png = await grab(page, '#export-png');
  assert.equal(png.name, `shift_diff-k${state.shift}-model-${stage}.png`);
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const one = await findMaps(page, png.bytes);
  assert.ok(one.found.every((at) => at.length === 1), `each map once: ${JSON.stringify(one.found)}`);
  const corners = one.found.map(([at]) => at);
  assert.ok(corners.every(([x, y], i) => i === 0 || (y === corners[0][1] && x > corners[i - 1][0])), `one layer in a row, in order: ${JSON.stringify(corners)}`);
  assert.ok(corners[0][1] > 40, 'a header above the maps');
  assert.ok(one.width >= state.heads * one.side && one.width < state.heads * one.side * 2 + 800, `width ${one.width}`);
  assert.ok(one.height > one.side + 60 && one.height < one.side * 3 + 400, `height ${one.height}`);

  // Twice as large: each pixel a 2 × 2 block; for slides: 1920 px wide.
  await page.selectOption('#export-size', '2');
  const two = await findMaps(page, (await grab(page, '#export-png')).bytes, 2);
  assert.ok(two.found.every((at) => at.length === 1), `each map once, doubled: ${JSON.stringify(two.found)}`);
  assert.ok(Math.abs(two.width - 2 * one.width) <= 8 && Math.abs(two.height - 2 * one.height) <= 8, `${two.width} × ${two.height} vs ${one.width} × ${one.height}`);
  await page.selectOption('#export-size', '1920');
  const slide = await grab(page, '#export-png');
  const wide = await page.evaluate(async (b64) => (await createImageBitmap(new Blob([Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0))]))).width, slide.bytes.toString('base64'));
  assert.equal(wide, 1920);
  await page.selectOption('#export-size', '1');

  // SVG: valid XML, the header in words, one group per head with its label and figures, and
  // each map as vector cells (rows × keys), in the canvas's colours.
  const svg = await grab(page, '#export-svg');
  assert.equal(svg.name, `shift_diff-k${state.shift}-model-${stage}.svg`);
  let doc = await readSvg(page, svg.bytes.toString('utf8'));
  assert.ok(doc.parsed, 'the SVG parses');
  assert.equal(doc.maps, 'vector');
  const header = doc.header.join('\n');
  for (const part of [mech, text, 'layer and head']) assert.ok(header.includes(part), `the header names ${part}: ${header}`);
  assert.deepEqual(doc.heads.map((g) => g.label), layerOrder);
  const tokens = await page.evaluate(() => window.diffattn.view.view.tokens);
  const shown = await cards(page);
  doc.heads.forEach((g, i) => {
    assert.equal(g.rects, tokens * tokens, `${g.label}: a rect per cell`);
    assert.equal(g.figures.length, 4, `${g.label}: H, S, ←, →`);
    assert.equal(g.figures.join('').replace(/\s/g, ''), shown[i].shown.replace(/\s/g, ''), `${g.label}: the figures shown`);
  });
  assert.deepEqual(await fillsMatch(page, doc.heads), doc.heads.map(() => true), 'the cells have the canvas colours');

  // Sorted: the exports follow the order on screen.
  let by = null;
  for (const stat of ['sink', 'entropy', 'previous', 'next']) {
    await page.selectOption('#model-sort', stat);
    await settled(page);
    if ((await cards(page)).map((c) => c.label).join() !== layerOrder.join()) {
      by = stat;
      break;
    }
  }
  assert.ok(by, 'some figure reorders the heads');
  const sorted = (await cards(page)).map((c) => c.label);
  doc = await readSvg(page, (await grab(page, '#export-svg')).bytes.toString('utf8'));
  assert.deepEqual(doc.heads.map((g) => g.label), sorted);
  assert.notDeepEqual(doc.heads.map((g) => g.label), layerOrder);
  const resorted = await findMaps(page, (await grab(page, '#export-png')).bytes);
  assert.ok(resorted.found.every((at) => at.length === 1));
  const order = resorted.found.map(([[x, y]], i) => [y, x, i]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , i]) => i);
  assert.deepEqual(order, sorted.map((_, i) => i), 'the PNG has the maps in the sorted order');

  // A sentence with more tokens than a map has pixels: each map an embedded PNG of its canvas.
  const long = Array.from({ length: 130 }, (_, i) => `word${i % 37}`).join(' ');
  await page.fill('#sentence', long);
  await settled(page);
  doc = await readSvg(page, (await grab(page, '#export-svg')).bytes.toString('utf8'));
  assert.equal(doc.maps, 'image');
  assert.equal(doc.heads.length, state.heads);
  assert.ok(doc.heads.every((g) => g.rects === 0 && g.image?.startsWith('data:image/png;base64,')));
  assert.deepEqual(doc.heads.map((g) => g.label), (await cards(page)).map((c) => c.label));
  assert.deepEqual(await imagesMatch(page, doc.heads.map((g) => g.image)), doc.heads.map(() => true), 'each image is its canvas');
  assert.deepEqual(errors, []);
  await page.close();
});
