// End-to-end: whatever is typed or pasted is shown as text, never interpreted, and never
// breaks the page; errors land in the visible, dismissable message area.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, startHarness } from './harness.mjs';
import { canvasInfo, drawnTokens, openExplorer, settled } from './www-helpers.mjs';

let h;
let shared;
before(async () => {
  h = await startHarness();
  shared = await openExplorer(h);
});
after(async () => {
  await h?.close();
});

const HOSTILE = {
  img: '<img src=x onerror=alert(1)>',
  script: '<script>alert("x")</script><b>bold</b> &amp; &lt;',
  emoji: 'family 👨‍👩‍👧‍👦 flag 🇺🇳 skin 👋🏽 keycap 1️⃣ done',
  rtl: 'مرحبا بالعالم שלום עולם mixed with English',
  zeroWidth: 'zero\u200bwidth\u200c joiner\u200d and \u2066isolate\u2069 \ufeffbom',
  controls: 'tab\there\u0000nul\u202eevil',
};

async function typeAndCheck(page, text) {
  await page.fill('#sentence', text);
  await settled(page);
  assert.equal(await page.inputValue('#sentence'), text);
}

test('an empty box shows a friendly hint, no maps and no error', async () => {
  const { page, errors } = shared;
  for (const text of ['', '   \n  ']) {
    await typeAndCheck(page, text);
    assert.equal(await page.locator('#empty-hint').isVisible(), true);
    assert.equal(await page.locator('canvas.map-canvas').count(), 0);
    assert.equal(await page.locator('#messages .message').count(), 0);
  }
  await screenshot(page, 'hostile-empty');
  await typeAndCheck(page, 'back again');
  assert.equal(await page.locator('#empty-hint').isHidden(), true);
  assert.equal((await canvasInfo(page)).length, 5);
  assert.deepEqual(errors, []);
});

test('HTML and script tags are drawn as text and never run', async () => {
  const { page, errors, dialogs } = shared;
  for (const text of [HOSTILE.img, HOSTILE.script]) {
    await typeAndCheck(page, text);
    const tokens = await drawnTokens(page);
    assert.ok(tokens.length > 0);
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await page.locator('b').count(), 0);
    assert.equal(await page.locator('body script:not([type="module"])').count(), 0);
    // Hovering shows the tokens as text in the tooltip.
    await page.locator('canvas.map-canvas').first().scrollIntoViewIfNeeded();
    const box = await page.locator('canvas.map-canvas').first().boundingBox();
    const rect = await page.evaluate(() => window.diffattn.call((ex) => ex.cell_rect(0, 0, 0)));
    const scale = box.width / (await page.$eval('canvas.map-canvas', (c) => c.width));
    await page.mouse.move(box.x + (rect.x + rect.width / 2) * scale, box.y + (rect.y + rect.height / 2) * scale);
    await page.waitForSelector('#tooltip:not([hidden])');
    assert.ok((await page.textContent('#tooltip')).includes(tokens[0]));
    assert.equal(await page.locator('#tooltip *:not(p):not(span):not(bdi)').count(), 0);
    await page.mouse.move(0, 0);
  }
  await settled(page);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(errors, []);
});

test('emoji sequences, right-to-left text, zero-width and control characters', async () => {
  const { page, errors, dialogs } = shared;
  for (const [name, text] of Object.entries({ emoji: HOSTILE.emoji, rtl: HOSTILE.rtl, zeroWidth: HOSTILE.zeroWidth, controls: HOSTILE.controls })) {
    await typeAndCheck(page, text);
    const tokens = await drawnTokens(page);
    assert.ok(tokens.length > 0, `${name}: no tokens`);
    const maps = await canvasInfo(page);
    assert.equal(maps.length, 5, name);
    for (const m of maps) assert.ok(m.colours > 4, `${name}: a blank map`);
    if (name === 'emoji') assert.ok(tokens.includes('👨‍👩‍👧‍👦'), `the family emoji was split: ${JSON.stringify(tokens)}`);
  }
  await typeAndCheck(page, '\u200b\u200b');
  assert.equal(await page.locator('#messages .message').count(), 0);
  await screenshot(page, 'hostile-zero-width');
  assert.deepEqual(dialogs, []);
  assert.deepEqual(errors, []);
});

test('10,000 characters: drawn up to 2,048 tokens with a visible notice', async () => {
  const { page, errors } = shared;
  const words = [];
  while (words.join(' ').length < 10_000) words.push(`w${words.length % 97}`);
  const text = words.join(' ').slice(0, 10_000);
  await page.fill('#sentence', text);
  await settled(page);
  const notice = page.locator('#truncated-notice');
  assert.equal(await notice.isVisible(), true);
  assert.match(await notice.textContent(), /only the first 2048/);
  assert.match(await page.textContent('#token-count'), /^2048 tokens$/);
  assert.match((await canvasInfo(page))[0].label, /of 2048 tokens$/);
  // The screen-reader table is capped, and says so.
  await page.waitForFunction(() => /first 32 rows and 32 columns of 2048 × 2048/.test(window.diffattn.root.querySelector('#table-fallback caption')?.textContent ?? ''));
  assert.equal(await page.locator('#table-fallback tbody tr').count(), 32);
  const timings = await page.evaluate(() => ({ ...window.diffattn.timings }));
  assert.ok(timings.renders > 0);
  await screenshot(page, 'hostile-long');
  await page.fill('#sentence', 'short again');
  await settled(page);
  assert.equal(await notice.isHidden(), true);
  assert.deepEqual(errors, []);
});

test('a Rust panic restarts the engine and the next input redraws', async () => {
  const { page, errors } = await openExplorer(h);
  // A panic traps the wasm call with a RuntimeError and leaves that handle unusable; stand in
  // for one by making the current handle's render trap once.
  await page.evaluate(() => {
    const old = window.diffattn.call((ex) => ex);
    window.__oldExplorer = old;
    old.render = () => {
      throw new WebAssembly.RuntimeError('unreachable');
    };
  });
  await page.fill('#sentence', 'this input traps');
  const message = page.locator('#messages .message[data-key="crash"]');
  await message.waitFor();
  assert.match(await message.textContent(), /restarted/);
  assert.ok(await page.evaluate(() => window.diffattn.call((ex) => ex) !== window.__oldExplorer), 'a fresh handle');
  // The instance was thrown away for a fresh one; the old handle belongs to it and refuses calls.
  assert.equal(await page.evaluate(() => window.diffattn.view.runtime.resets), 1, 'a fresh instance');
  const stale = await page.evaluate(() => {
    try {
      window.__oldExplorer.labels();
      return null;
    } catch (err) {
      return err.message;
    }
  });
  assert.match(stale, /previous Wasm instance/, 'the old handle is of the thrown-away instance');
  assert.equal(await page.evaluate(() => window.diffattn.view.engine.restarts), 1);
  await page.fill('#sentence', 'and this one draws');
  await settled(page);
  assert.deepEqual(await drawnTokens(page), ['and', 'this', 'one', 'draws']);
  assert.equal(errors.filter((e) => !/unreachable/.test(e)).length, 0, errors.join('\n'));
  await page.context().close();
});

test('errors go to the visible, dismissable message area and the page keeps working', async () => {
  const { page, errors } = await openExplorer(h);
  // An error the engine throws (an out-of-range head, set from outside the page's controls).
  await page.evaluate(() => {
    setTimeout(() => window.diffattn.call((ex) => ex.update({ heads: 3 })));
  });
  const message = page.locator('#messages .message');
  await message.waitFor();
  assert.match(await message.textContent(), /3/);
  await page.click('#messages [data-role="dismiss"]');
  assert.equal(await message.count(), 0);
  // An unhandled rejection.
  await page.evaluate(() => {
    Promise.reject(new Error('a rejected promise'));
  });
  await message.waitFor();
  assert.match(await message.textContent(), /a rejected promise/);
  await page.click('#messages [data-role="dismiss"]');
  await page.fill('#sentence', 'still working');
  await settled(page);
  assert.deepEqual(await drawnTokens(page), ['still', 'working']);
  // Both were reported by the browser as uncaught; nothing else went wrong.
  assert.equal(errors.filter((e) => !/heads|3|a rejected promise/.test(e)).length, 0, errors.join('\n'));
  await page.context().close();
});
