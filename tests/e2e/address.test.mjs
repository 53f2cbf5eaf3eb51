// End-to-end: the page address reproduces the view; Chinese and the language toggle;
// embed mode; small and large screens (with the screenshots a person looks at).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, startHarness, waitForReady } from './harness.mjs';
import { controlValues, drawnTokens, mapData, openDetails, openExplorer, setRange, settled } from './www-helpers.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

test('the address round-trips: a copied link opens the same view', async () => {
  const first = await openExplorer(h);
  const { page } = first;
  await page.fill('#sentence', 'Shift the attention & see <what> happens');
  await openDetails(page, 'more-shift');
  await openDetails(page, 'more-gate');
  await page.selectOption('#difference', 'symmetric');
  await page.selectOption('#fill', 'zero');
  await page.selectOption('#renormalize', 'softmax');
  await page.check('#causal');
  await setRange(page, '#shift', -2);
  await setRange(page, '#alpha', 2.5);
  await setRange(page, '#gamma', -1.2);
  const choices = await page.evaluate(() => window.diffattn.call((ex) => ex.view().head_choices));
  await setRange(page, '#heads', choices.indexOf(8));
  await page.selectOption('#head', '6');
  await settled(page);
  const url = page.url();
  const params = new URL(url).searchParams;
  // One name per control, the same as the state's and the element's attributes.
  assert.equal(params.get('shift'), '-2');
  assert.equal(params.get('heads'), '8');
  assert.equal(params.get('head'), '6');
  assert.equal(params.get('difference'), 'symmetric');
  assert.equal(params.get('renormalize'), 'softmax');
  for (const old of ['k', 'diff', 'renorm', 'mech', 'w', 'all', 'model']) assert.equal(params.get(old), null, old);
  const controls = await controlValues(page);
  const maps = {};
  for (const id of ['a', 'shifted', 'shifted_back', 'd', 'g', 'fused']) maps[id] = await mapData(page, id);

  const second = await openExplorer(h, new URL(url).search);
  assert.deepEqual(await controlValues(second.page), controls);
  for (const id of Object.keys(maps)) assert.deepEqual(await mapData(second.page, id), maps[id], id);
  assert.equal((await second.page.$$('canvas.map-canvas')).length, 6);
  assert.deepEqual(first.errors, []);
  assert.deepEqual(second.errors, []);
  await first.context.close();
  await second.context.close();
});

test('an old link with the earlier parameter names still opens the view it named', async () => {
  const { page, errors, context } = await openExplorer(h, 'text=a+b+c+d&mech=shift_diff&k=2&diff=symmetric&renorm=softmax&model=untrained&all=0');
  const state = await page.evaluate(() => window.diffattn.state);
  assert.equal(state.shift, 2);
  assert.equal(state.difference, 'symmetric');
  assert.equal(state.renormalize, 'softmax');
  assert.equal(state.weights, 'untrained');
  const params = new URL(page.url()).searchParams;
  assert.equal(params.get('shift'), '2');
  assert.equal(params.get('k'), null, 'the address is rewritten with the new names');
  assert.deepEqual(errors, []);
  await context.close();
});

test('Chinese: one token per character, and lang=zh switches every string', async () => {
  const { page, errors, context } = await openExplorer(h, { lang: 'zh' });
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-Hans');
  assert.equal(await page.textContent('label[for="shift"]'), '位移 k');
  assert.equal(await page.textContent('label[for="heads"]'), '头数');
  assert.equal(await page.textContent('#lang-toggle'), 'English');
  // Without a text in the address a Chinese reader starts on a Chinese sentence.
  const preset = await page.inputValue('#sentence');
  assert.match(preset, /\p{Script=Han}/u);
  await page.selectOption('#presets', 'zh:1');
  await settled(page);
  const sentence = await page.inputValue('#sentence');
  const tokens = await drawnTokens(page);
  const han = [...sentence].filter((c) => /\p{Script=Han}/u.test(c));
  assert.deepEqual(tokens.filter((t) => /\p{Script=Han}/u.test(t)), han);
  assert.ok(tokens.every((t) => [...t].length === 1), JSON.stringify(tokens));
  assert.match(await page.getAttribute('canvas.map-canvas >> nth=4', 'aria-label'), /^A′，第 1 个头/);
  await screenshot(page, 'address-zh');
  // The toggle switches to English and writes the address.
  await page.click('#lang-toggle');
  await settled(page);
  assert.equal(await page.textContent('label[for="shift"]'), 'Shift k');
  assert.equal(new URL(page.url()).searchParams.get('lang'), 'en');
  assert.deepEqual(errors, []);
  await context.close();
});

test('embed=1 shows only the maps and the sentence, shift and heads controls', async () => {
  const { page, errors, context } = await openExplorer(h, { embed: '1' }, { width_px: 900, height_px: 700 });
  for (const selector of ['#sentence', '#shift', '#heads', 'canvas.map-canvas >> nth=0']) {
    assert.equal(await page.locator(selector).isVisible(), true, `${selector} hidden`);
  }
  for (const selector of ['.site-header', '#howto', '#mechanism', '#alpha', '#difference', '#export-png', '#presets', '#lang-toggle', '.site-footer', '#readout']) {
    assert.equal(await page.locator(selector).isVisible(), false, `${selector} visible`);
  }
  await screenshot(page, 'address-embed');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a 360 px phone: the maps in at most two columns, no horizontal scroll', async () => {
  const { page, errors, context } = await openExplorer(h, '', { width_px: 360, height_px: 740, deviceScaleFactor: 2 });
  const { scrollWidth, innerWidth, lefts } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth,
    lefts: [...window.diffattn.root.querySelectorAll('.map')].map((m) => Math.round(m.getBoundingClientRect().left)),
  }));
  assert.ok(scrollWidth <= innerWidth, `page is ${scrollWidth} px wide in a ${innerWidth} px viewport`);
  // Two across where each is still 130 CSS px (layout.js MIN_SIDE_BY_SIDE_PX), else one.
  assert.ok(new Set(lefts).size <= 2, `maps in more than two columns: ${lefts}`);
  // HiDPI: canvases are drawn at twice their CSS size.
  const [w, css] = await page.$eval('canvas.map-canvas', (c) => [c.width, c.getBoundingClientRect().width]);
  assert.ok(Math.abs(w - css * 2) <= 1, `${w} device px for ${css} css px`);
  await screenshot(page, 'address-phone');
  assert.deepEqual(errors, []);
  await context.close();
});

test('touch: a tap selects a cell and shows its arithmetic', async () => {
  const context = await h.browser.newContext({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => msg.type() === 'error' && errors.push(msg.text()));
  await page.goto(h.url('/www/'));
  await waitForReady(page);
  await settled(page);
  const canvas = page.locator('canvas.map-canvas >> nth=4');
  await canvas.scrollIntoViewIfNeeded();
  const point = await page.evaluate(() => {
    const c = window.diffattn.root.querySelectorAll('canvas.map-canvas')[4];
    const rect = c.getBoundingClientRect();
    const cell = window.diffattn.call((ex) => ex.cell_rect(4, 1, 2));
    const scale = rect.width / c.width;
    return { x: rect.left + (cell.x + cell.width / 2) * scale, y: rect.top + (cell.y + cell.height / 2) * scale };
  });
  await page.touchscreen.tap(point.x, point.y);
  await settled(page);
  assert.match(await page.textContent('#readout'), /Row 2, .* column 3,/);
  assert.match(await page.textContent('#readout'), /A′ᵢⱼ = Aᵢⱼ \+ Gᵢⱼ × Dᵢⱼ/);
  // The pinned cell (its popover and readout) goes with a tap elsewhere, or with Escape.
  const pinned = async () => /Row 2, .* column 3,/.test(await page.textContent('#readout'));
  assert.equal(await pinned(), true);
  // A tap elsewhere (the sentence box) unpins it; so does Escape after another tap.
  await page.locator('#sentence').scrollIntoViewIfNeeded();
  const sentence = await page.locator('#sentence').boundingBox();
  await page.touchscreen.tap(sentence.x + 10, sentence.y + 10);
  await settled(page);
  assert.equal(await pinned(), false, 'a tap elsewhere unpinned the cell');
  await canvas.scrollIntoViewIfNeeded();
  const again = await page.evaluate(() => {
    const c = window.diffattn.root.querySelectorAll('canvas.map-canvas')[4];
    const rect = c.getBoundingClientRect();
    const cell = window.diffattn.call((ex) => ex.cell_rect(4, 1, 2));
    const scale = rect.width / c.width;
    return { x: rect.left + (cell.x + cell.width / 2) * scale, y: rect.top + (cell.y + cell.height / 2) * scale };
  });
  await page.touchscreen.tap(again.x, again.y);
  await settled(page);
  assert.equal(await pinned(), true);
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press('Escape');
  await settled(page);
  assert.equal(await pinned(), false, 'Escape unpinned the cell');
  assert.deepEqual(errors, []);
  await context.close();
});

test('wide screens: the five maps fill a 1920 px projector, large, without scrolling', async () => {
  const { page, errors, context } = await openExplorer(h, '', { width_px: 1920, height_px: 1080 });
  const boxes = await page.$$eval('.map', (ms) => ms.map((m) => m.getBoundingClientRect().toJSON()));
  assert.equal(boxes.length, 5);
  for (const b of boxes) {
    assert.ok(b.bottom <= 1080 && b.right <= 1920, `a map ends at ${b.right} × ${b.bottom}`);
    assert.ok(b.width >= 400, `maps are only ${b.width} px wide`);
  }
  await screenshot(page, 'address-projector');
  // Resizing the window re-sizes the canvases (CSS size × devicePixelRatio) and redraws them.
  await page.setViewportSize({ width: 1100, height: 900 });
  await page.waitForFunction(() =>
    [...window.diffattn.root.querySelectorAll('canvas.map-canvas')].every(
      (c) => Math.abs(c.width - c.getBoundingClientRect().width * devicePixelRatio) <= 1,
    ),
  );
  await settled(page);
  await page.setViewportSize({ width: 1920, height: 1080 });
  // Growing the window back fits the maps to it again: as large as on a fresh 1920 px page
  // (the same address draws the same picture, whatever happened before).
  await page.waitForFunction(
    (widths) =>
      [...window.diffattn.root.querySelectorAll('.map')].every((m, i) => Math.abs(m.getBoundingClientRect().width - widths[i]) <= 1) &&
      [...window.diffattn.root.querySelectorAll('canvas.map-canvas')].every(
        (c) => Math.abs(c.width - c.getBoundingClientRect().width * devicePixelRatio) <= 1,
      ),
    boxes.map((b) => b.width),
  );
  await settled(page);
  // The all-heads view: one small multiple per head; a click opens that head.
  await page.check('#all-heads');
  await settled(page);
  assert.equal(await page.locator('canvas.map-canvas').count(), 4);
  await screenshot(page, 'address-all-heads');
  // Each small multiple is laid out large (a failure says how the grid was fitted).
  const grid = await page.evaluate(() => {
    const maps = window.diffattn.root.querySelector('.maps');
    const widths = [...maps.querySelectorAll('canvas.map-canvas')].map((c) => Math.round(c.getBoundingClientRect().width));
    return { widths, room: maps.clientWidth, grid: maps.style.getPropertyValue('--grid-w') };
  });
  assert.ok(grid.widths.every((w) => w >= 260), `all-heads grid: ${JSON.stringify(grid)}`);
  await page.click('canvas.map-canvas >> nth=2');
  await settled(page);
  assert.equal(await page.inputValue('#head'), '3');
  assert.equal(await page.locator('canvas.map-canvas').count(), 5);
  assert.deepEqual(errors, []);
  await context.close();
});
