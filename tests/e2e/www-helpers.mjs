// Helpers the www/ end-to-end tests share (page-level; the browser and server come from
// harness.mjs). Not a test file itself: node's runner only picks up `*.test.mjs`.

import { waitForReady } from './harness.mjs';

/** Opens /www/ with `query` (a string after `?`, or an object) and waits until it is ready and idle. */
export async function openExplorer(h, query = '', options = {}) {
  // `beforeLoad(page)` runs before the page is opened (e.g. an init script).
  const { beforeLoad, ...pageOptions } = options;
  const { page, errors, context } = await h.newPage(pageOptions);
  if (beforeLoad) await beforeLoad(page);
  const dialogs = [];
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss().catch(() => {});
  });
  await page.goto(h.url(`/www/${queryString(query)}`));
  await waitForReady(page);
  await settled(page);
  return { page, errors, context, dialogs };
}

export function queryString(query) {
  if (!query) return '';
  const q = typeof query === 'string' ? query : new URLSearchParams(query).toString();
  return q.startsWith('?') ? q : `?${q}`;
}

/** Waits until the page has rendered every pending change and written the address. */
export async function settled(page) {
  await page.evaluate(() => window.diffattn.settled());
}

/** Per map canvas: its stage id (dataset), size, a hash of its pixels and how many colours it has. */
export async function canvasInfo(page) {
  return page.evaluate(() =>
    [...window.diffattn.root.querySelectorAll('canvas.map-canvas')].map((canvas) => {
      const ctx = canvas.getContext('2d');
      const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
      let hash = 2166136261;
      const colours = new Set();
      for (let i = 0; i < data.length; i += 4) {
        const rgba = (data[i] << 24) | (data[i + 1] << 16) | (data[i + 2] << 8) | data[i + 3];
        hash = Math.imul(hash ^ rgba, 16777619) >>> 0;
        if (colours.size < 1000) colours.add(rgba);
      }
      return {
        stage: canvas.dataset.stage ?? null,
        label: canvas.getAttribute('aria-label'),
        width: canvas.width,
        height: canvas.height,
        hash,
        colours: colours.size,
      };
    }),
  );
}

/** The shown head's map `id` as a plain array, with its shape. */
export async function mapData(page, id) {
  return page.evaluate((stageId) => {
    const m = window.diffattn.call((ex) => ex.window(stageId, 0, 0, 1e9, 1e9));
    return m ? { rows: m.rows, cols: m.cols, data: Array.from(m.data) } : null;
  }, id);
}

/** Sets a range input to `value` the way a person does (fires input and change). */
export async function setRange(page, selector, value) {
  await page.$eval(
    selector,
    (input, v) => {
      input.value = String(v);
      input.dispatchEvent(new Event('input', { bubbles: true }));
      input.dispatchEvent(new Event('change', { bubbles: true }));
    },
    value,
  );
  await settled(page);
}

/** The engine's `view()`: what it draws and says now. */
export async function engineView(page) {
  return page.evaluate(() => window.diffattn.call((ex) => ex.view()));
}

/** The tokens the engine drew (the row labels of every map). */
export async function drawnTokens(page) {
  return page.evaluate(() => {
    return window.diffattn.call((ex) => ex.labels().rows);
  });
}

/** Current values of every control, for comparing two pages. */
export async function controlValues(page) {
  return page.evaluate(() =>
    Object.fromEntries(
      [...window.diffattn.root.querySelectorAll('#controls input, #controls select, #controls textarea')]
        .filter((e) => e.id && e.type !== 'file')
        .map((e) => [e.id, e.type === 'checkbox' ? e.checked : e.value]),
    ),
  );
}

/** Opens a disclosure (`<details>`) of the explorer by id, as a person clicks its summary. */
export async function openDetails(page, id) {
  const open = await page.evaluate((i) => window.diffattn.root.getElementById(i).open, id);
  if (!open) await page.click(`#${id} > summary`);
}

/** The words the long-input tests repeat to make a sentence of any length. */
export const LONG_WORDS = Object.freeze('the film was not good but the actors were wonderful and the music stayed with me long after'.split(' '));

/** A sentence of `n` tokens: `first`, then LONG_WORDS over and over. */
export const longText = (n, first = 'the') => [first, ...Array.from({ length: n - 1 }, (_, i) => LONG_WORDS[i % LONG_WORDS.length])].join(' ');
