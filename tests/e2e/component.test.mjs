// End-to-end: the explorer as a component, apart from the page: two on one page (one wasm
// instance, two handles) do not interfere, each draws its own state in its own shadow root,
// and a real Rust panic (from the benchmark build, which carries a trap for this test)
// restarts a handle and gives its memory back.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { screenshot, startHarness, waitForReady } from './harness.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** Per explorer: the stage of each map and a hash of its pixels. */
async function maps(page, index) {
  return page.evaluate((i) => {
    const root = window.explorers[i].root;
    return [...root.querySelectorAll('canvas.map-canvas')].map((canvas) => {
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let hash = 2166136261;
      for (let k = 0; k < data.length; k += 4) hash = Math.imul(hash ^ data[k] ^ (data[k + 1] << 8) ^ (data[k + 2] << 16), 16777619) >>> 0;
      return { stage: canvas.dataset.stage, hash };
    });
  }, index);
}

test('two explorers on one page: own state, own handle, one wasm instance, no interference', async () => {
  const { page, errors } = await h.newPage({ width_px: 1280, height_px: 1600 });
  await page.goto(h.url('/tests/e2e/fixtures/two.html'));
  await waitForReady(page);
  const first = await maps(page, 0);
  const second = await maps(page, 1);
  assert.deepEqual(first.map((m) => m.stage), ['a', 'shifted', 'd', 'g', 'fused']);
  assert.deepEqual(second.map((m) => m.stage), ['a']);
  // Each has its own handle; both on the same wasm instance.
  assert.equal(await page.evaluate(() => window.explorers[0].engine.call((a) => window.explorers[1].engine.call((b) => a !== b))), true);
  assert.equal(await page.evaluate(() => window.explorers[0].runtime.exports === window.explorers[1].runtime.exports), true);
  // Ids are per shadow root: both have a #shift.
  assert.equal(await page.evaluate(() => window.explorers.every((e) => e.root.getElementById('shift') !== null)), true);
  // The second speaks Chinese, the first English.
  assert.equal(await page.evaluate(() => window.explorers[1].root.querySelector('label[for="heads"]').textContent), '头数');
  assert.equal(await page.evaluate(() => window.explorers[0].root.querySelector('label[for="heads"]').textContent), 'Number of heads');
  await screenshot(page, 'component-two');

  // Moving the first one's shift slider changes its maps and state only.
  await page.evaluate(() => {
    const input = window.explorers[0].root.getElementById('shift');
    input.value = '3';
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.evaluate(() => Promise.all(window.explorers.map((e) => e.settled())));
  assert.equal(await page.evaluate(() => window.explorers[0].state.shift), 3);
  assert.equal(await page.evaluate(() => window.explorers[1].state.shift), 1);
  assert.deepEqual(await page.evaluate(() => window.changes), [['first', 3]]);
  const first2 = await maps(page, 0);
  assert.equal(first2[0].hash, first[0].hash, 'A is unchanged');
  assert.notEqual(first2[1].hash, first[1].hash, 'shift(A) moved');
  assert.deepEqual(await maps(page, 1), second, 'the second explorer was not touched');

  // Setting from outside (as an attribute would): re-renders that one, no change event.
  await page.evaluate(() => window.explorers[1].set({ heads: 2, head: 2 }));
  await page.evaluate(() => Promise.all(window.explorers.map((e) => e.settled())));
  assert.equal(await page.evaluate(() => window.explorers[1].engine.call((ex) => ex.settings()).head), 2);
  assert.deepEqual(await page.evaluate(() => window.changes), [['first', 3]]);
  assert.notDeepEqual(await maps(page, 1), second);
  assert.deepEqual((await maps(page, 0)).map((m) => m.hash), first2.map((m) => m.hash));

  // Destroying one frees its handle; the other keeps working.
  await page.evaluate(() => window.explorers[0].destroy());
  assert.equal(await page.evaluate(() => window.explorers[0].engine.state), 'stopped');
  await page.evaluate(() => window.explorers[1].set({ text: '还在工作' }));
  await page.evaluate(() => window.explorers[1].settled());
  assert.deepEqual(await page.evaluate(() => window.explorers[1].engine.call((ex) => ex.labels().rows)), ['还', '在', '工', '作']);
  assert.deepEqual(await page.evaluate(() => window.violations), [], 'no Content-Security-Policy violation');
  assert.deepEqual(errors, []);
  await page.context().close();
});

test('a real Rust panic: the wrapper restarts the handle and frees it, memory stays flat', async () => {
  const { page, errors } = await h.newPage();
  await page.goto(h.url('/tests/e2e/fixtures/pkg.html'));
  await waitForReady(page);
  const result = await page.evaluate(async () => {
    const glue = await import('/pkg/bench/diffattn.js');
    const exports = await glue.default({ module_or_path: '/pkg/bench/diffattn_bg.wasm' });
    const { Engine, EngineRestarted } = await import('/www/explorer/engine.js');
    const engine = new Engine({ glue, exports });
    // Fill the handle with caches (a 200-token sentence, 8 heads), then make it panic.
    const grow = () =>
      engine.call((ex) => {
        ex.set_text(Array.from({ length: 200 }, (_, i) => `w${i}`).join(' '));
        ex.update({ heads: 8 });
        ex.work(1e9, true);
      });
    const sizes = [];
    let restarted = 0;
    for (let i = 0; i < 60; i++) {
      grow();
      try {
        engine.call((ex) => ex.trap_for_tests());
      } catch (err) {
        if (err instanceof EngineRestarted) restarted += 1;
      }
      sizes.push(exports.memory.buffer.byteLength);
    }
    return { restarted, restarts: engine.restarts, state: engine.state, first: sizes[4], last: sizes[sizes.length - 1] };
  });
  assert.equal(result.restarted, 60);
  assert.equal(result.restarts, 60);
  assert.equal(result.state, 'ready');
  // Each handle held about 2.5 MB of maps; leaking 60 of them would grow the memory by
  // about 150 MB. Freed, the allocator reuses the same pages.
  assert.ok(result.last - result.first < 8 * 1024 * 1024, `memory grew from ${result.first} to ${result.last} bytes`);
  assert.ok(errors.every((e) => /unreachable|panicked|trap_for_tests/.test(e)), errors.join('\n'));
  await page.context().close();
});
