// End-to-end: long inputs. The page draws up to 2,048 tokens: the engine works in pieces
// (www/explorer/work.js), the shown head first and what needs every head (the prediction, the
// all-heads view) after it, between frames, with the busy line's progress ("head 3 of 8"), so
// the page never freezes. While a person types, long work waits for a pause, so the text box
// keeps every key and only the last text's maps are computed. For that part the CPU is slowed
// down through the DevTools protocol so that the length is "long" on any machine: the test is
// about what the page does when work is slow, not about how fast this machine is; the page runs
// its baseline wasm build there (as in a browser without wasm SIMD). No figure here is a time:
// the times are the benchmarks' (benches/feel.mjs).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, startHarness } from './harness.mjs';
import { drawnTokens, LONG_WORDS as WORDS, longText as text, openExplorer, setRange, settled } from './www-helpers.mjs';


let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Records, from inside the page, every state of the busy line and the longest gap between frames. */
function watch(page) {
  return page.evaluate(() => {
    const busy = window.diffattn.root.getElementById('busy');
    window.__busySeen = [];
    new MutationObserver(() => window.__busySeen.push({ hidden: busy.hidden, text: busy.textContent.trim() })).observe(busy, {
      attributes: true,
      childList: true,
      subtree: true,
      characterData: true,
    });
    window.__gap = 0;
    let last = performance.now();
    const frame = (now) => {
      window.__gap = Math.max(window.__gap, now - last);
      last = now;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  });
}

const recomputations = (page) => page.evaluate(() => window.diffattn.call((ex) => ex.recomputations()));

test('2,048 tokens: the shown head first, the other heads between frames with progress, then the prediction', async (t) => {
  const started = Date.now();
  const { page, errors, context } = await openExplorer(h, { text: text(2100), heads: 8 }, { width_px: 1024, height_px: 768 });
  t.diagnostic(`opened and settled (every head for the prediction) in ${Date.now() - started} ms`);
  assert.match(await page.textContent('#token-count'), /^2048 tokens$/);
  assert.match(await page.textContent('#truncated-notice'), /The text has 2100 tokens; only the first 2048 are drawn/);
  assert.equal((await drawnTokens(page)).length, 2048);
  // The trained model's prediction needs every head: each was computed once, in pieces.
  const heads = await page.evaluate(() => window.diffattn.state.heads);
  let r = await recomputations(page);
  assert.equal(r.maps, heads, JSON.stringify(r));
  assert.match(await page.textContent('#prediction-value'), /Positive|Negative/);
  await screenshot(page, 'long-2048-1024x768');

  // A shift tick: the render recomputes the shown head's shift stages; the other heads follow
  // in steps for the prediction, with progress, and no frame waits for all of them. The CPU is
  // slowed 4× so the steps surely last longer than BUSY_MS and a frame (unslowed on a quiet
  // machine they can finish in just over 100 ms, before a frame shows the busy line).
  await watch(page);
  const before = await recomputations(page);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  try {
    await page.$eval('#shift', (input) => {
      input.value = '3';
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    // Meanwhile the last prediction stays, marked as being recomputed (nothing above the maps
    // changes size, which would redraw every map).
    await page.waitForFunction(() => window.diffattn.root.querySelector('#prediction')?.hasAttribute('data-computing'));
    await settled(page);
  } finally {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
  }
  r = await recomputations(page);
  assert.deepEqual([r.projections - before.projections, r.maps - before.maps, r.shift_stages - before.shift_stages], [0, 0, heads]);
  const seen = await page.evaluate(() => window.__busySeen);
  t.diagnostic(`busy line: ${JSON.stringify(seen.filter((s) => !s.hidden).map((s) => s.text))}; longest frame gap ${await page.evaluate(() => Math.round(window.__gap))} ms`);
  assert.ok(seen.some((s) => !s.hidden && /^Computing head [2-8] of 8 \(2048 tokens\)/.test(s.text)), JSON.stringify(seen));
  assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('busy').hidden), true, 'hidden once every head is in');
  assert.match(await page.textContent('#prediction-value'), /Positive|Negative/);
  assert.equal(await page.evaluate(() => window.diffattn.root.querySelector('#prediction').hasAttribute('data-computing')), false);

  // Every head is cached now: showing another one, or all of them, recomputes nothing.
  const cached = await recomputations(page);
  await page.selectOption('#head', '5');
  await settled(page);
  await page.check('#all-heads');
  await settled(page);
  assert.deepEqual(await recomputations(page), cached);
  assert.equal(await page.evaluate(() => window.diffattn.root.querySelectorAll('canvas.map-canvas').length), heads);
  await page.uncheck('#all-heads');
  await settled(page);
  assert.deepEqual(errors, []);
  await context.close();

  // A phone at 2,048 tokens.
  const phone = await openExplorer(h, { text: text(2048), heads: 8 }, { width_px: 390, height_px: 844, deviceScaleFactor: 2 });
  assert.match(await phone.page.textContent('#token-count'), /^2048 tokens$/);
  await screenshot(phone.page, 'long-2048-phone');
  assert.deepEqual(phone.errors, []);
  await phone.context.close();
});

test('long work is announced with its progress, and typing waits for a pause instead of freezing', async (t) => {
  const { page, errors, context } = await openExplorer(h, { text: text(2047), heads: 8 }, { beforeLoad: (p) => p.addInitScript(() => (WebAssembly.validate = () => false)) });
  assert.equal(await page.evaluate(() => window.diffattn.view.runtime.build), 'baseline');
  const cdp = await context.newCDPSession(page);
  try {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 8 });
    // The busy line, watched from inside the page as each frame paints.
    await watch(page);
    // A new word: the shown head's pieces take longer than BUSY_MS, and the line says so.
    await page.fill('#sentence', text(2047, 'a'));
    await settled(page);
    let seen = await page.evaluate(() => window.__busySeen);
    assert.ok(seen.some((s) => !s.hidden && /^Computing the shown head over 2047 tokens/.test(s.text)), JSON.stringify(seen));
    // Typing: each key lands in the box at once; the maps follow after the pause, computed for
    // the last text only (each key changes the tokens, so a render per key would project and
    // compute the shown head's maps once per key).
    const box = page.locator('#sentence');
    await box.focus();
    await page.keyboard.press('End');
    const before = await recomputations(page);
    await page.evaluate(() => (window.__busySeen = []));
    await page.keyboard.type(' wonderful', { delay: 30 });
    assert.equal((await box.inputValue()).endsWith(' wonderful'), true);
    await settled(page);
    const after = await recomputations(page);
    t.diagnostic(`ten keys: ${JSON.stringify({ projections: after.projections - before.projections, maps: after.maps - before.maps })}`);
    // A pause of TYPING_IDLE_MS between two keys lets the work run (the slowed page may take
    // that long for a key), so not once; but far from once per key.
    assert.ok(after.projections - before.projections <= 5, `ten keys projected ${after.projections - before.projections} times, about once per key`);
    seen = await page.evaluate(() => window.__busySeen);
    assert.ok(seen.some((s) => !s.hidden && /pause typing/.test(s.text)), JSON.stringify(seen));
    assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('busy').hidden), true, 'hidden once drawn');
    const tokens = await drawnTokens(page);
    assert.equal(tokens.length, 2048);
    assert.equal(tokens[tokens.length - 1], 'wonderful');

    // Showing another head computes nothing (every head is in, for the prediction), so it is
    // never announced.
    await page.evaluate(() => (window.__busySeen = []));
    await page.selectOption('#head', '3');
    await settled(page);
    assert.deepEqual(await page.evaluate(() => window.__busySeen.filter((s) => !s.hidden)), []);
    await screenshot(page, 'long-after-typing');
  } finally {
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 1 });
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('a key is drawn in its own task, the other heads after the next frame; a second key before that frame waits for it', async () => {
  const { page, errors, context } = await openExplorer(h, { text: text(2048), heads: 8 });
  const r = await page.evaluate(async () => {
    const { view, root } = window.diffattn;
    const shift = root.getElementById('shift');
    let frames = 0;
    const counting = () => {
      frames += 1;
      requestAnimationFrame(counting);
    };
    requestAnimationFrame(counting);
    const tick = () => {
      shift.value = String(Number(shift.value) === 1 ? 2 : 1);
      shift.dispatchEvent(new Event('input', { bubbles: true }));
    };
    const seen = [];
    const note = () => seen.push({ renders: view.timings.renders, frames, pending: view.work.pending });
    note();
    // The key's own task draws it (at the end of the task, in a microtask), before any frame.
    // The other heads (the prediction) are left to tasks after the frame.
    tick();
    await Promise.resolve();
    note();
    // A second key before that frame: its render waits for the frame (one render a frame).
    tick();
    await Promise.resolve();
    note();
    await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
    note();
    return seen;
  });
  const [start, first, second, framed] = r;
  assert.equal(start.pending, false, JSON.stringify(r));
  assert.deepEqual([first.renders - start.renders, first.frames - start.frames], [1, 0], `drawn in the key's task: ${JSON.stringify(r)}`);
  assert.equal(first.pending, true, `the other heads follow in tasks: ${JSON.stringify(r)}`);
  assert.equal(second.renders, first.renders, `the second key waits for the frame: ${JSON.stringify(r)}`);
  assert.ok(framed.renders === second.renders + 1 && framed.frames > second.frames, JSON.stringify(r));
  await settled(page);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a short sentence is never announced', async () => {
  const { page, errors, context } = await openExplorer(h, { text: 'the cat sat on the mat' });
  await page.evaluate(() => {
    const busy = window.diffattn.root.getElementById('busy');
    window.__busyShown = false;
    new MutationObserver(() => {
      if (!busy.hidden) window.__busyShown = true;
    }).observe(busy, { attributes: true });
  });
  for (const t of ['the cat sat', 'the cat sat on the mat because it was tired', 'a dog']) {
    await page.fill('#sentence', t);
    await settled(page);
  }
  assert.equal(await page.evaluate(() => window.__busyShown), false);
  assert.deepEqual(errors, []);
  await context.close();
});
