// End-to-end: long inputs (issue 13, items 3–4). A render the page predicts over 100 ms is
// announced before it runs (a progress line painted first), and while a person types such a
// render waits for a pause, so the text box keeps every key. The CPU is slowed down through
// the DevTools protocol so that an ordinary length is "long" on any machine: the test is about
// what the page does when work is slow, not about how fast this machine is.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, startHarness } from './harness.mjs';
import { drawnTokens, openExplorer, settled } from './www-helpers.mjs';

const WORDS = 'the film was not good but the actors were wonderful and the music stayed with me long after'.split(' ');
const text = (n, first = 'the') => [first, ...Array.from({ length: n - 1 }, (_, i) => WORDS[i % WORDS.length])].join(' ');

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

test('a slow render is announced before it runs, and typing waits for a pause instead of freezing', async (t) => {
  const { page, errors, context } = await openExplorer(h, { text: text(500), heads: 8 });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  try {
    // One slowed render measures the time per cell; the page keeps it.
    await page.fill('#sentence', text(500, 'a'));
    await settled(page);
    const measured = await page.evaluate(() => window.diffattn.timings.compute_ms);
    assert.ok(measured > 100, `throttled compute should exceed 100 ms: ${measured}`);

    // The busy line, watched from inside the page as each frame paints.
    await page.evaluate(() => {
      const busy = window.diffattn.root.getElementById('busy');
      window.__busySeen = [];
      new MutationObserver(() => window.__busySeen.push({ hidden: busy.hidden, text: busy.textContent.trim() })).observe(busy, {
        attributes: true,
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
    // Typing: each key lands in the box at once; the maps follow after the pause.
    const box = page.locator('#sentence');
    await box.focus();
    await page.keyboard.press('End');
    const rendersBefore = await page.evaluate(() => window.diffattn.timings.renders);
    await page.evaluate(() => {
      window.__log = [];
      let last = window.diffattn.timings.renders;
      const poll = () => {
        const t = window.diffattn.timings;
        if (t.renders !== last) { last = t.renders; window.__log.push({ at: Math.round(performance.now()), compute: t.compute_ms, busy: window.diffattn.root.getElementById('busy').hidden }); }
        requestAnimationFrame(poll);
      };
      poll();
    });
    const started = Date.now();
    await page.keyboard.type(' wonderful', { delay: 30 });
    const typingMs = Date.now() - started;
    assert.equal((await box.inputValue()).endsWith(' wonderful'), true);
    await settled(page);
    const renders = (await page.evaluate(() => window.diffattn.timings.renders)) - rendersBefore;
    t.diagnostic(`typing: ${typingMs} ms for 10 keys; renders ${JSON.stringify(await page.evaluate(() => window.__log))}`);
    assert.ok(renders <= 2, `ten keys made ${renders} renders, not one per key`);
    const seen = await page.evaluate(() => window.__busySeen);
    assert.ok(seen.some((s) => !s.hidden && /pause typing/.test(s.text)), JSON.stringify(seen));
    assert.ok(seen.some((s) => !s.hidden && /^Computing 500 tokens × 8 heads/.test(s.text)), JSON.stringify(seen));
    assert.equal(await page.evaluate(() => window.diffattn.root.getElementById('busy').hidden), true, 'hidden once drawn');
    const tokens = await drawnTokens(page);
    assert.equal(tokens.length, 501);
    assert.equal(tokens[tokens.length - 1], 'wonderful');
    // Had every key waited for its render, ten keys would take ten renders.
    assert.ok(typingMs < 5 * measured, `typing took ${typingMs} ms, a render ${measured} ms`);

    // Showing another head computes nothing, so it is never announced.
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
