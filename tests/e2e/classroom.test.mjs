// End-to-end: the page for the classroom (issue 12). Maps and the shift slider on one screen
// at projector, laptop and wide sizes (the maps right after the sentence on a phone); the
// guided walk by button, key and address, with its slide honouring reduced motion; the row
// view and the compare view following the sliders; one colour scale for A and A′; exports
// for slides (2× and 1920 px PNGs, a JSON that opens again with the same maps bit for bit);
// and the things a new user tripped over.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { screenshot, startHarness } from './harness.mjs';
import { canvasInfo, mapData, openDetails, openExplorer, setRange, settled } from './www-helpers.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Bounding boxes (CSS px) of an element and of every map, at the page's scroll position 0. */
async function boxes(page, selector) {
  return page.evaluate((sel) => {
    const root = window.diffattn.root;
    const box = (el) => el.getBoundingClientRect().toJSON();
    return {
      control: box(root.querySelector(sel)),
      sentence: box(root.getElementById('sentence')),
      maps: [...root.querySelectorAll('.map')].map(box),
      scrollY,
    };
  }, selector);
}

/** The PNG's width and height from its IHDR chunk. */
function pngSize(bytes) {
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

async function grab(page, button) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  return { name: download.suggestedFilename(), bytes: await readFile(await download.path()) };
}

for (const [w, ht, name] of [
  [1024, 768, 'projector'],
  [1280, 800, 'laptop'],
  [1920, 1080, 'wide'],
]) {
  test(`${w}×${ht}: the sentence, the shift slider and all five maps are on screen without scrolling`, async () => {
    const { page, errors, context } = await openExplorer(h, '', { width_px: w, height_px: ht });
    const b = await boxes(page, '#shift');
    assert.equal(b.scrollY, 0);
    assert.equal(b.maps.length, 5);
    const inside = (r) => r.top >= 0 && r.left >= 0 && r.bottom <= ht && r.right <= w && r.width > 0;
    assert.ok(inside(b.control), `the shift slider is at ${JSON.stringify(b.control)}`);
    assert.ok(inside(b.sentence), 'the sentence is on screen');
    for (const [i, m] of b.maps.entries()) assert.ok(inside(m), `map ${i} is at ${JSON.stringify(m)} in a ${w}×${ht} window`);
    await screenshot(page, `classroom-${name}`);
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('390×844 phone: the maps come right after the sentence', async () => {
  const { page, errors, context } = await openExplorer(h, '', { width_px: 390, height_px: 844, deviceScaleFactor: 2 });
  const b = await boxes(page, '#mechanism');
  const first = b.maps[0];
  assert.ok(first.top - b.sentence.bottom < 160, `the first map starts ${first.top - b.sentence.bottom} px below the sentence`);
  assert.ok(first.top < 844, 'the first map starts on the first screen');
  assert.ok(b.control.top > first.top, 'the other tools come after the maps');
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }));
  assert.ok(scrollWidth <= innerWidth, 'no horizontal scroll');
  // Every view button is whole on the screen (they wrap; none is cut at the edge).
  const cut = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('.status-line .views .button')]
    .filter((b) => { const r = b.getBoundingClientRect(); return r.left < 0 || r.right > innerWidth || r.width === 0; })
    .map((b) => b.textContent));
  assert.deepEqual(cut, [], 'view buttons cut at the edge');
  await screenshot(page, 'classroom-phone');
  assert.deepEqual(errors, []);
  await context.close();
});

test('presenting: the address opens it, P toggles it, large type and only the chosen controls', async () => {
  const { page, errors, context } = await openExplorer(h, 'present=1', { width_px: 1280, height_px: 800 });
  assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('explorer').classList.contains('presenting')), true);
  assert.equal(await page.locator('#shift').isVisible(), true);
  assert.equal(await page.locator('#export-tools').isVisible(), false, 'exports are not a presenter control');
  assert.equal(await page.locator('#howto').isVisible(), false);
  const b = await boxes(page, '#shift');
  // The maps are half as large again as on the page (tests/e2e/maps-teach.test.mjs): the first
  // is on the screen, the rest follow below it.
  assert.ok(b.maps[0].top < 800 && b.maps[0].top >= b.control.bottom, `the first map at ${JSON.stringify(b.maps[0])}`);
  await screenshot(page, 'classroom-presenting');
  await page.locator('body').press('p');
  await settled(page);
  assert.equal(await page.evaluate(() => window.diffattn.state.present), false);
  assert.equal(new URL(page.url()).searchParams.get('present'), null);
  await page.locator('body').press('p');
  await settled(page);
  assert.equal(new URL(page.url()).searchParams.get('present'), '1');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the guided walk: Next, Back and the arrow keys; every step has an address; one scale', async () => {
  const { page, errors, context } = await openExplorer(h, 'view=walk', { width_px: 1280, height_px: 800 });
  const title = () => page.textContent('#walk-title');
  assert.match(await title(), /^Step 1 of 6: A$/);
  assert.deepEqual((await canvasInfo(page)).map((m) => m.stage), ['a']);
  assert.equal(await page.evaluate(() => window.diffattn.state.shared_scale), true, 'the walk shares one colour scale');
  await page.click('#walk-next');
  await settled(page);
  assert.match(await title(), /^Step 2 of 6: shift\(A\)$/);
  assert.match(await page.textContent('#walk-text'), /moved 1 column\(s\) to the right/);
  assert.equal(new URL(page.url()).searchParams.get('step'), 'shifted');
  await page.locator('#walk-text').click();
  await page.keyboard.press('ArrowRight');
  await settled(page);
  assert.match(await title(), /^Step 3 of 6: D$/);
  // The sentence names the cell the engine finds darkest in D, with its value.
  const e = await page.evaluate(() => window.diffattn.call((ex) => ex.extremes('d')));
  assert.ok((await page.textContent('#walk-text')).includes(`«${e.max.query}» → «${e.max.key}»`));
  assert.deepEqual((await canvasInfo(page)).map((m) => m.stage), ['a', 'shifted', 'd']);
  await page.keyboard.press('ArrowLeft');
  await settled(page);
  assert.match(await title(), /^Step 2 of 6/);
  await page.click('#walk-back');
  await settled(page);
  assert.equal(await page.isDisabled('#walk-back'), true, 'no step before the first');
  // Each step's address reopens it.
  const second = await openExplorer(h, 'view=walk&step=output', { width_px: 1280, height_px: 800 });
  assert.match(await second.page.textContent('#walk-title'), /^Step 6 of 6: the output$/);
  assert.deepEqual((await canvasInfo(second.page)).map((m) => m.stage), ['a', 'shifted', 'd', 'g', 'fused', 'output']);
  assert.equal(await second.page.isDisabled('#walk-next'), true);
  await screenshot(second.page, 'classroom-walk-output');
  await second.context.close();
  assert.deepEqual(errors, []);
  await context.close();
});

test('the walk slides the rows of A into shift(A), unless the reader prefers reduced motion', async () => {
  for (const reducedMotion of ['no-preference', 'reduce']) {
    const { page, errors, context } = await openExplorer(h, 'view=walk&step=a');
    await page.emulateMedia({ reducedMotion });
    await page.click('#walk-next');
    await page.waitForFunction(() => window.diffattn.view.view && window.diffattn.state.step === 'shifted');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const sliding = await page.evaluate(() => window.diffattn.view.walk.animating);
    assert.equal(sliding, reducedMotion === 'no-preference', `reducedMotion ${reducedMotion}`);
    await settled(page);
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('the row view opens from a cell and follows the shift slider', async () => {
  const { page, errors, context } = await openExplorer(h, 'weights=untrained&row=2');
  assert.equal(await page.locator('#row-view').isVisible(), true);
  assert.match(await page.textContent('#row-view-title'), /^Row 2: /);
  const hash = () =>
    page.evaluate(() => {
      const c = window.diffattn.root.getElementById('row-canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let x = 0;
      for (let i = 0; i < d.length; i += 16) x = (x * 31 + d[i]) >>> 0;
      return x;
    });
  const before = await hash();
  await setRange(page, '#shift', 3);
  assert.notEqual(await hash(), before, 'the lines moved with the shift');
  await screenshot(page, 'classroom-row-view');
  await page.click('#row-close');
  await settled(page);
  assert.equal(await page.locator('#row-view').isVisible(), false);
  assert.equal(new URL(page.url()).searchParams.get('row'), null);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the compare view: three mechanisms side by side, each trained; the shift moves only its own', async () => {
  const { page, errors, context } = await openExplorer(h, 'view=compare', { width_px: 1280, height_px: 800 });
  const panels = async () =>
    page.evaluate(() =>
      [...window.diffattn.root.querySelectorAll('.compare-panel')].map((p) => {
        const c = p.querySelector('canvas.map-canvas');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let x = 0;
        for (let i = 0; i < d.length; i += 16) x = (x * 31 + d[i]) >>> 0;
        return { mechanism: p.dataset.mechanism, hash: x };
      }),
    );
  const before = await panels();
  assert.deepEqual(before.map((p) => p.mechanism).sort(), ['diff_transformer', 'shift_diff', 'standard']);
  await setRange(page, '#shift', 2);
  const after = await panels();
  for (const [i, p] of after.entries()) {
    if (p.mechanism === 'shift_diff') assert.notEqual(p.hash, before[i].hash, 'the shift-difference panel follows the slider');
    else assert.equal(p.hash, before[i].hash, `${p.mechanism} does not shift`);
  }
  // Hovering a cell in one panel shows the same cell's value in every panel.
  const canvas = page.locator('.compare-panel canvas.map-canvas').first();
  const box = await canvas.boundingBox();
  await page.mouse.move(box.x + box.width * 0.45, box.y + box.height * 0.4);
  await settled(page);
  const values = await page.$$eval('.compare-value', (ps) => ps.map((p) => p.textContent));
  assert.equal(values.length, 3);
  assert.ok(values.every((v) => / → .*: /.test(v)), JSON.stringify(values));
  assert.equal(new Set(values.map((v) => v.split(':')[0])).size, 1, 'the same cell in every panel');
  // The other models are shown at their head whose first map is closest to the explorer's
  // shown head's A (their head numbers mean nothing across models); the panel says so.
  const notes = await page.$$eval('.compare-panel', (ps) => ps.map((p) => ({ mechanism: p.dataset.mechanism, title: p.querySelector('.compare-title').textContent, note: p.querySelector('.compare-note').textContent })));
  for (const n of notes) {
    if (n.mechanism === 'shift_diff') assert.match(n.note, /the explorer shows/);
    else assert.match(n.note, /closest to the shown A \(cosine 0\.\d\d\)/, JSON.stringify(n));
  }
  // Another head in the explorer: the shown panel follows it.
  await page.selectOption('#head', '3');
  await settled(page);
  const shown = await page.$eval('.compare-panel[data-mechanism="shift_diff"] .compare-title', (t) => t.textContent);
  assert.match(shown, /head 3 of 4/);
  await screenshot(page, 'classroom-compare');
  assert.deepEqual(errors, []);
  await context.close();
});

test('one colour scale: with shift 0, A and A′ hold the same values and get the same colours', async () => {
  const { page, errors, context } = await openExplorer(h, 'weights=untrained&shift=0');
  const plots = () =>
    page.evaluate(() => {
      const canvases = [...window.diffattn.root.querySelectorAll('canvas.map-canvas')];
      const rect = (i) => {
        const a = window.diffattn.call((ex) => ex.cell_rect(i, 0, 0));
        const n = window.diffattn.view.view.tokens - 1;
        const b = window.diffattn.call((ex) => ex.cell_rect(i, n, n));
        return [a.x, a.y, b.x + b.width - a.x, b.y + b.height - a.y];
      };
      return [0, 4].map((i) => Array.from(canvases[i].getContext('2d').getImageData(...rect(i)).data));
    });
  // A′ = A exactly when the shift changes nothing (D = 0).
  assert.deepEqual(await mapData(page, 'fused'), await mapData(page, 'a'));
  await openDetails(page, 'more-shift');
  // One scale is the default: the same values are the same colours, pixel for pixel.
  assert.equal(await page.isChecked('#shared-scale'), true);
  let [a, fused] = await plots();
  assert.deepEqual(a, fused, 'on one scale the same values are the same colours, pixel for pixel');
  await page.uncheck('#shared-scale');
  await settled(page);
  [a, fused] = await plots();
  assert.notDeepEqual(a, fused, 'each on its own scale, A′ (diverging) looks different');
  // D is all zeros: its colorbar says "constant" instead of stretching rounding noise.
  const svg = await page.evaluate(() => window.diffattn.call((ex) => ex.export_svg('d')));
  assert.match(svg, /constant/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('exports for slides: a 2× PNG, a 1920 px PNG, and a JSON that opens again with the same maps', async () => {
  const { page, errors, context } = await openExplorer(h, 'weights=untrained&shift=2&heads=8&head=3');
  await openDetails(page, 'export-tools');
  await page.selectOption('#export-target', 'fused');
  await page.selectOption('#export-size', '2');
  const canvasWidth = await page.$eval('canvas.map-canvas', (c) => c.width);
  const two = await grab(page, '#export-png');
  assert.equal(two.name, 'shift_diff-k2-head3-fused.png');
  const size = pngSize(two.bytes);
  assert.equal(size.width, 2 * canvasWidth + 2 * 32, 'twice the map, with the margins');
  await page.selectOption('#export-size', '1920');
  await page.selectOption('#export-target', 'panel');
  const slide = await grab(page, '#export-png');
  assert.equal(pngSize(slide.bytes).width, 1920);
  // The JSON is a spec: opening it draws the same maps, bit for bit, labelled with the tokens.
  const maps = {};
  for (const id of ['a', 'shifted', 'd', 'g', 'fused']) maps[id] = await mapData(page, id);
  const json = await grab(page, '#export-json');
  assert.equal(json.name, 'shift_diff-k2-head3-stages.json');
  await page.setInputFiles('#spec-file', { name: json.name, mimeType: 'application/json', buffer: json.bytes });
  await page.locator('#spec-banner').waitFor();
  await settled(page);
  await page.selectOption('#head', '3');
  await settled(page);
  for (const id of Object.keys(maps)) assert.deepEqual(await mapData(page, id), maps[id], id);
  const rows = await page.evaluate(() => window.diffattn.call((ex) => ex.labels().rows));
  assert.deepEqual(rows, ['the', 'acting', 'is', 'wonderful', ',', 'but', 'the', 'plot', 'is', 'thin', '.']);
  // Spec mode says the values are the file's.
  assert.equal(await page.inputValue('#weights'), 'spec');
  assert.equal(await page.isDisabled('#weights'), true);
  assert.equal(await page.evaluate(() => window.diffattn.state.shift), 2);
  assert.deepEqual(errors, []);
  await context.close();
});

test('what a new user tripped over: unknown words, "1 token", old errors, captions, the header', async () => {
  const { page, errors, context } = await openExplorer(h, '', { width_px: 1280, height_px: 800 });
  // Nonsense input: the prediction says how many tokens are unknown and hedges.
  await page.fill('#sentence', 'مرحبا بالعالم 🙂🙂 שלום עולם');
  await settled(page);
  const note = await page.textContent('#unknown-note');
  assert.match(note, /^Most tokens \(\d+ of \d+\) are unknown to this model/);
  assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('prediction').classList.contains('hedged')), true);
  assert.match(note, /Unknown: “/, 'the note names the unknown words');
  // A few unknown words: the note names which (the model's vocabulary has neither "cat" nor
  // "mat"), each once, as the axes show them.
  await page.fill('#sentence', 'The cat sat on the mat, the cat.');
  await settled(page);
  const some = await page.textContent('#unknown-note');
  const { unknown_at: at } = await page.evaluate(() => window.diffattn.call((ex) => ex.prediction()));
  const tokens = await page.evaluate(() => window.diffattn.call((ex) => ex.labels().rows));
  const named = [...new Set(at.map((i) => tokens[i]))];
  assert.ok(named.length > 0, `some token is unknown: ${tokens.join(' ')}`);
  assert.equal(some, `${at.length} of ${tokens.length} tokens are unknown to this model (it reads them as <unk>; marked † on the axes): ${named.map((t) => `“${t}”`).join(', ')}.`);
  // The axes mark them: the SVG export of A labels each unknown word with a †, and no other.
  const svg = await page.evaluate(() => window.diffattn.call((ex) => ex.export_svg('a')));
  for (const word of named) assert.ok(svg.includes(`${word}†`), `«${word}» is marked`);
  assert.ok(!svg.includes('sat†') || named.includes('sat'), 'a known word is not marked');
  await page.fill('#sentence', 'good');
  await settled(page);
  assert.equal(await page.textContent('#token-count'), '1 token');
  assert.equal(await page.locator('#unknown-note').isHidden(), true);
  // Developer timings are not shown to learners.
  assert.equal(await page.locator('#timing').isHidden(), true);
  // An error from a refused setting goes away with the next input.
  await page.evaluate(() => window.diffattn.view.messages.show('settings', 'heads: 3 does not divide 32'));
  await page.fill('#sentence', 'a new sentence');
  await settled(page);
  assert.equal(await page.locator('#messages [data-key="settings"]').count(), 0);
  // Input difference has its own formula; the header describes the mechanism shown.
  await page.selectOption('#weights', 'untrained');
  await page.selectOption('#mechanism', 'input_diff');
  await settled(page);
  assert.match(await page.textContent('figcaption.map-title'), /Δ/);
  await page.selectOption('#mechanism', 'diff_transformer');
  await settled(page);
  assert.match(await page.textContent('.lede'), /A1 − λ·A2/);
  // Menus are wide enough for their text at 1280 px.
  const cut = await page.evaluate(() =>
    [...window.diffattn.root.querySelectorAll('.tools select')].filter((s) => s.scrollWidth > s.clientWidth + 1).map((s) => s.id),
  );
  assert.deepEqual(cut, []);
  // The all-heads view: a stage of one's choice, maps wide enough for their labels.
  await page.selectOption('#mechanism', 'shift_diff');
  await page.check('#all-heads');
  await settled(page);
  await page.selectOption('#all-heads-stage', 'd');
  await settled(page);
  const info = await canvasInfo(page);
  assert.ok(info.length >= 4);
  assert.ok(info.every((m) => m.stage === 'd'), JSON.stringify(info.map((m) => m.stage)));
  const widths = await page.$$eval('.map', (ms) => ms.map((m) => m.getBoundingClientRect().width));
  assert.ok(widths.every((x) => x >= 200), `all-heads maps are ${widths}`);
  await screenshot(page, 'classroom-all-heads');
  assert.deepEqual(errors, []);
  await context.close();
});
