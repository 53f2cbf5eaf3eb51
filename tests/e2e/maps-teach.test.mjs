// End-to-end: maps that teach (issue 21). The maps large and every token labelled on a
// projector and a laptop, half as large again while presenting, a map in view with the shift
// slider on a phone, a three-map figure short enough for a documentation column; measured in
// the real page and the real element, from the engine's own geometry (`cell_rect`,
// `labels_drawn`) and the boxes the browser lays out.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, startHarness } from './harness.mjs';
import { openExplorer, settled } from './www-helpers.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Map `index`'s heatmap (its cells, without labels or colour bar) in CSS px, on the page. */
async function plotBox(page, index = 0) {
  return page.evaluate((i) => {
    const root = window.diffattn.root;
    const canvas = root.querySelectorAll('canvas.map-canvas')[i];
    const n = window.diffattn.view.view.tokens - 1;
    const [a, b] = window.diffattn.call((ex) => [ex.cell_rect(i, 0, 0), ex.cell_rect(i, n, n)]);
    const box = canvas.getBoundingClientRect();
    const scale = box.width / canvas.width;
    return {
      left: box.left + a.x * scale,
      top: box.top + a.y * scale,
      width: (b.x + b.width - a.x) * scale,
      height: (b.y + b.height - a.y) * scale,
    };
  }, index);
}

const SENTENCES = ['The acting is wonderful, but the plot is thin.', 'I did not expect the ending, and I loved every minute of it.'];

for (const [w, ht, least] of [
  [1280, 800, 300],
  [1024, 768, 230],
]) {
  test(`${w}×${ht}: A's heatmap is at least ${least} px, every token labelled at 10 px or more, all five maps on screen`, async () => {
    for (const text of SENTENCES) {
      const { page, errors, context } = await openExplorer(h, { text }, { width_px: w, height_px: ht });
      const a = await plotBox(page, 0);
      assert.ok(a.width >= least && a.height >= least, `A is ${a.width} × ${a.height} px for «${text}»`);
      const maps = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('.map')].map((m) => m.getBoundingClientRect().toJSON()));
      assert.equal(maps.length, 5);
      for (const m of maps) assert.ok(m.bottom <= ht && m.right <= w, `a map at ${JSON.stringify(m)}`);
      // Every token on both axes of the maps that carry labels, at 10 CSS px or more.
      const drawn = await page.evaluate(() => [0, 1, 2, 3, 4].map((i) => window.diffattn.call((ex) => ex.labels_drawn(i))));
      for (const d of drawn) {
        assert.equal(d.row_stride, 1, 'every row labelled');
        assert.equal(d.col_stride, 1, 'every column labelled');
        assert.ok(d.font_px >= 10, `labels at ${d.font_px} px`);
      }
      assert.ok(drawn.some((d) => d.row_labels) && drawn.some((d) => d.col_labels));
      // The rows line up from map to map: A's first row and the row beside it start at one y.
      const beside = await plotBox(page, 1);
      assert.equal(Math.round(beside.top), Math.round(a.top));
      assert.equal(Math.round(beside.height), Math.round(a.height), 'every map the same size');
      await screenshot(page, `maps-teach-${w}`);
      assert.deepEqual(errors, []);
      await context.close();
    }
  });
}

test('presenting: the maps half as large again as on the page, the shift slider in reach beside the last map', async () => {
  const page1 = await openExplorer(h, '', { width_px: 1280, height_px: 800 });
  const explore = await plotBox(page1.page, 0);
  await page1.context.close();
  const { page, errors, context } = await openExplorer(h, 'present=1', { width_px: 1280, height_px: 800 });
  const presented = await plotBox(page, 0);
  assert.ok(presented.width >= 1.5 * explore.width, `presenting: ${presented.width} px, on the page ${explore.width} px`);
  // The presenter scrolls to the last map: the shift slider stays at the top of the screen.
  await page.evaluate(() => {
    const root = window.diffattn.root;
    const maps = root.querySelectorAll('.map');
    maps[maps.length - 1].scrollIntoView({ block: 'end' });
  });
  const slider = await page.evaluate(() => window.diffattn.root.getElementById('shift').getBoundingClientRect().toJSON());
  assert.ok(slider.top >= 0 && slider.bottom <= 800, `the shift slider at ${JSON.stringify(slider)}`);
  await screenshot(page, 'maps-teach-present');
  assert.deepEqual(errors, []);
  await context.close();
});

test('390×844 phone: with the shift slider in view, at least 120 px of a map is in view', async () => {
  const { page, errors, context } = await openExplorer(h, '', { width_px: 390, height_px: 844, deviceScaleFactor: 2 });
  await page.evaluate(() => window.diffattn.root.getElementById('shift').scrollIntoView({ block: 'center' }));
  const seen = await page.evaluate(() => {
    const root = window.diffattn.root;
    const slider = root.getElementById('shift').getBoundingClientRect();
    // The part of each map's canvas inside both the window and the pane that holds the maps.
    const pane = root.getElementById('maps-section').getBoundingClientRect();
    const top = Math.max(0, pane.top);
    const bottom = Math.min(innerHeight, pane.bottom);
    const visible = [...root.querySelectorAll('canvas.map-canvas')].map((c) => {
      const r = c.getBoundingClientRect();
      return Math.max(0, Math.min(bottom, r.bottom) - Math.max(top, r.top));
    });
    return { slider: slider.toJSON(), visible: Math.max(...visible) };
  });
  assert.ok(seen.slider.top >= 0 && seen.slider.bottom <= 844, `the slider at ${JSON.stringify(seen.slider)}`);
  assert.ok(seen.visible >= 120, `${seen.visible} px of a map in view beside the slider`);
  await screenshot(page, 'maps-teach-phone-slider');
  // The slider moves the maps in view.
  const before = await page.evaluate(() => window.diffattn.state.shift);
  await page.focus('#shift');
  await page.keyboard.press('ArrowRight');
  await settled(page);
  assert.equal(await page.evaluate(() => window.diffattn.state.shift), before + 1);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a three-map figure with its sliders in a 720 px documentation column is at most 1,100 px tall, its maps side by side', async () => {
  const { page, errors, context } = await h.newPage({ width_px: 1100, height_px: 900 });
  await page.goto(h.url('/www/examples/'));
  await page.waitForFunction(() => customElements.get('diffattn-explorer') !== undefined);
  await page.evaluate(() => {
    const column = document.createElement('div');
    column.id = 'column';
    column.style.width = '720px';
    // As an author embeds a figure: three maps and the sliders the text talks about.
    const el = document.createElement('diffattn-explorer');
    el.setAttribute('maps', 'A,D,fused');
    el.setAttribute('controls', 'shift,heads');
    el.setAttribute('text', 'The acting is wonderful, but the plot is thin.');
    column.append(el);
    document.querySelector('main').prepend(column);
  });
  await page.waitForFunction(() => document.querySelector('#column diffattn-explorer')?.shadowRoot?.querySelectorAll('canvas.map-canvas').length === 3);
  await page.evaluate(() => document.querySelector('#column diffattn-explorer').settled());
  const figure = await page.evaluate(() => {
    const el = document.querySelector('#column diffattn-explorer');
    const maps = [...el.shadowRoot.querySelectorAll('.map')].map((m) => m.getBoundingClientRect().toJSON());
    return { height: el.getBoundingClientRect().height, maps };
  });
  assert.ok(figure.height <= 1100, `the figure is ${figure.height} px tall`);
  assert.equal(new Set(figure.maps.map((m) => Math.round(m.top))).size, 1, 'the three maps side by side');
  await screenshot(page, 'maps-teach-docs-column');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the guided walk: the step’s map large, the maps it came from small, and the cell its sentence names outlined and explained', async () => {
  const { page, errors, context } = await openExplorer(h, 'view=walk&step=d', { width_px: 1024, height_px: 768 });
  const stages = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('canvas.map-canvas')].map((c) => c.dataset.stage));
  assert.deepEqual(stages, ['a', 'shifted', 'd']);
  const [a, d] = [await plotBox(page, 0), await plotBox(page, 2)];
  assert.ok(d.width >= 1.8 * a.width, `D ${d.width} px, A ${a.width} px`);
  // Every map on the screen, below the step's text.
  const text = await page.evaluate(() => window.diffattn.root.getElementById('walk').getBoundingClientRect().bottom);
  const maps = await page.evaluate(() => [...window.diffattn.root.querySelectorAll('.map')].map((m) => m.getBoundingClientRect().toJSON()));
  for (const m of maps) assert.ok(m.top >= text && m.bottom <= 768, `a map at ${JSON.stringify(m)}`);
  // The sentence names D's darkest purple cell: it is outlined on D's overlay and on A's, and
  // the readout explains it, with nothing hovered.
  const e = await page.evaluate(() => window.diffattn.call((ex) => ex.extremes('d')));
  assert.ok((await page.textContent('#walk-text')).includes(`«${e.max.query}» → «${e.max.key}»`));
  const outlined = await page.evaluate(
    ([row, col]) =>
      [0, 2].map((i) => {
        const overlay = window.diffattn.root.querySelectorAll('canvas.map-overlay')[i];
        const r = window.diffattn.call((ex) => ex.cell_rect(i, row, col));
        // The outline is drawn just outside the cell: its top edge's row of pixels.
        const { data } = overlay.getContext('2d').getImageData(r.x, Math.max(0, r.y - 1), r.width, 1);
        return data.some((v, k) => k % 4 === 3 && v > 0);
      }),
    [e.max.row, e.max.col],
  );
  assert.deepEqual(outlined, [true, true]);
  assert.match(await page.textContent('#readout'), new RegExp(`Row ${e.max.row + 1}, `));
  assert.equal(await page.locator('#tooltip').isHidden(), true, 'no popover over the maps');
  await screenshot(page, 'maps-teach-walk');
  assert.deepEqual(errors, []);
  await context.close();
});

test('what differential attention is for: one line on the explorer, opened a card over the maps, in both languages', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, errors, context } = await openExplorer(h, { lang }, { width_px: 1024, height_px: 768 });
    const maps = () => page.evaluate(() => [...window.diffattn.root.querySelectorAll('.map')].map((m) => m.getBoundingClientRect().toJSON()));
    const before = await maps();
    await page.click('#purpose > summary');
    await settled(page);
    const after = await maps();
    assert.deepEqual(after, before, 'opening it moves no map');
    for (const m of after) assert.ok(m.bottom <= 768, `a map at ${JSON.stringify(m)}`);
    const body = await page.evaluate(() => {
      const root = window.diffattn.root;
      return {
        text: root.querySelector('.purpose-body').textContent,
        picture: root.querySelectorAll('.purpose-picture rect').length,
        link: root.getElementById('purpose-lesson').checkVisibility(),
      };
    });
    assert.match(body.text, lang === 'en' ? /noise-cancelling headphones/ : /降噪耳机/);
    assert.match(body.text, /A − shift\(A\)/);
    assert.equal(body.picture, 64, 'four rows of the real model, 16 word pieces each');
    assert.match(body.text, lang === 'en' ? /0\.68 on «animal»/ : /0\.68/);
    assert.equal(body.link, true, 'the page links its lesson');
    await screenshot(page, `maps-teach-purpose-${lang}`);
    assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('purpose-lesson').getAttribute('href')), '?lesson=noise');
    assert.deepEqual(errors, []);
    await context.close();
  }
});
