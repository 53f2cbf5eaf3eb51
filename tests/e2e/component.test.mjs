// End-to-end: the explorer as a component, apart from the page: two on one page (one wasm
// instance, two handles) do not interfere, each draws its own state in its own shadow root,
// and a real Rust panic (from the benchmark build, which carries a trap for this test) throws
// the instance away: both explorers get fresh handles on a fresh instance and draw as before,
// and the old instances' memory is freed once nothing refers to it; a panic in the pretrained
// model's own module does the same to that module alone (the model read again).

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

/** Forces full garbage collections (V8's and Blink's), a task apart. */
async function collectGarbage(page, cdp) {
  for (let i = 0; i < 3; i++) {
    await cdp.send('HeapProfiler.collectGarbage');
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)));
  }
}

test('a real Rust panic in one of two explorers: a fresh instance, both draw as before on fresh handles', async () => {
  const { page, errors, context } = await h.newPage({ width_px: 1280, height_px: 1600 });
  await page.goto(h.url('/tests/e2e/fixtures/two.html?pkg=bench'));
  await waitForReady(page);
  const cdp = await context.newCDPSession(page);
  const first = await maps(page, 0);
  const second = await maps(page, 1);
  const result = await page.evaluate(async () => {
    const [a, b] = window.explorers;
    const before = [a.engine.call((ex) => ex), b.engine.call((ex) => ex)];
    window.oldMemory = new WeakRef(window.runtime.exports.memory);
    let thrown = null;
    try {
      a.engine.call((ex) => ex.trap_for_tests());
    } catch (err) {
      thrown = err.name;
    }
    // The second explorer draws again at once (the panic was not its own); the first at its
    // next change.
    await b.settled();
    const rows = b.engine.call((ex) => ex.labels().rows);
    a.changed({ notify: false });
    await a.settled();
    return {
      thrown,
      resets: window.runtime.resets,
      restarts: [a.engine.restarts, b.engine.restarts],
      fresh: [a.engine.call((ex) => ex !== before[0]), b.engine.call((ex) => ex !== before[1])],
      rows,
      stale: (() => {
        try {
          before[1].labels();
          return null;
        } catch (err) {
          return err.message;
        }
      })(),
    };
  });
  assert.equal(result.thrown, 'EngineRestarted');
  assert.equal(result.resets, 1, 'one fresh instance');
  assert.deepEqual(result.restarts, [1, 1], 'both explorers have a fresh handle');
  assert.deepEqual(result.fresh, [true, true]);
  assert.deepEqual(result.rows, ['第', '二', '个', '解', '释', '器', '画', '这', '句', '话'], 'the second sent its sentence to its fresh handle');
  assert.match(result.stale, /previous Wasm instance/, 'a handle of the old instance refuses calls');
  assert.deepEqual(await maps(page, 0), first, 'the first draws its maps again');
  assert.deepEqual(await maps(page, 1), second, 'the second drew its maps again');
  // Nothing refers to the thrown-away instance: its memory is collected.
  await collectGarbage(page, cdp);
  assert.equal(await page.evaluate(() => window.oldMemory.deref() === undefined), true, 'the old instance was freed');
  assert.ok(errors.every((e) => /unreachable|panicked|trap_for_tests/.test(e)), errors.join('\n'));
  await context.close();
});

test('a real Rust panic in the pretrained model\'s module: a fresh instance, the model read again from the bytes kept, the maps as they were', async () => {
  const { page, errors, context } = await h.newPage({ width_px: 1280, height_px: 1600 });
  await page.goto(h.url('/tests/e2e/fixtures/two.html?pkg=bench'));
  await waitForReady(page);
  const cdp = await context.newCDPSession(page);
  await page.evaluate(async () => {
    const a = window.explorers[0];
    a.setFromPerson({ weights: 'minilm', text: 'The cat sat.' });
    await a.settled();
  });
  // The maps once they stay as they are (a late relayout, the model's note shown, redraws them).
  let before = await maps(page, 0);
  for (let i = 0; i < 20; i++) {
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)).then(() => window.explorers[0].settled()));
    const again = await maps(page, 0);
    if (JSON.stringify(again) === JSON.stringify(before)) break;
    before = again;
  }
  assert.equal(before[0]?.stage, 'a', JSON.stringify(before));
  const trapped = await page.evaluate(() => {
    const a = window.explorers[0];
    const feed = a.loader.pretrained;
    const model = feed.runtime;
    window.oldModelMemory = new WeakRef(model.glue.initSync().memory);
    let thrown = null;
    try {
      feed.call((encoder) => encoder.trap_for_tests());
    } catch (err) {
      thrown = err.name;
    }
    return { thrown, resets: model.resets, pageResets: window.runtime.resets, rows: a.engine.call((ex) => ex.labels().rows) };
  });
  assert.deepEqual(trapped, { thrown: 'EngineRestarted', resets: 1, pageResets: 0, rows: ['[CLS]', 'the', 'cat', 'sat', '.', '[SEP]'] }, 'the model module alone was made afresh; the explorer kept what it had');
  assert.deepEqual(await maps(page, 0), before, 'the maps as they were (nothing drawn half)');
  // The next changes compute on the fresh instance: another layer, another text.
  const result = await page.evaluate(async () => {
    const a = window.explorers[0];
    a.setFromPerson({ layer: 2 });
    await a.settled();
    a.setFromPerson({ text: 'Cats purr.' });
    await a.settled();
    return { rows: a.engine.call((ex) => ex.labels().rows), layer: a.state.layer, feedLayers: a.loader.pretrained.modelLayers() };
  });
  assert.deepEqual(result.rows, ['[CLS]', 'cats', 'pu', '##rr', '.', '[SEP]'], 'the fresh instance read the model again and cuts the text');
  assert.equal(result.layer, 2);
  assert.ok(result.feedLayers >= 1, 'the fresh encoder ran the model');
  await collectGarbage(page, cdp);
  assert.equal(await page.evaluate(() => window.oldModelMemory.deref() === undefined), true, 'the old instance of the model\'s module was freed');
  assert.ok(errors.every((e) => /unreachable|panicked|trap_for_tests/.test(e)), errors.join('\n'));
  await context.close();
});

test('sixty real Rust panics: every one makes a fresh instance, the handles follow, and memory stays flat', async () => {
  const { page, errors, context } = await h.newPage();
  await page.goto(h.url('/tests/e2e/fixtures/pkg.html'));
  await waitForReady(page);
  const cdp = await context.newCDPSession(page);
  const result = await page.evaluate(async () => {
    const { loadRuntime } = await import('/www/explorer/runtime.js');
    const { Engine, EngineRestarted } = await import('/www/explorer/engine.js');
    const runtime = await loadRuntime({ glue: '/pkg/bench/diffattn.js', wasm: '/pkg/bench/diffattn_bg.wasm' });
    // Two engines on one runtime, as two explorers of a page; each panics in turn.
    const told = [0, 0];
    const engines = [0, 1].map((i) => new Engine(runtime, { onRestart: () => (told[i] += 1) }));
    // Fill a handle with caches (a 200-token sentence, 8 heads).
    const grow = (engine) =>
      engine.call((ex) => {
        ex.set_text(Array.from({ length: 200 }, (_, i) => `w${i}`).join(' '));
        ex.update({ heads: 8 });
        ex.work(1e9, true);
      });
    const grown = [];
    const fresh = [];
    window.oldMemories = [];
    let restarted = 0;
    for (let i = 0; i < 60; i++) {
      engines.forEach(grow);
      grown.push(runtime.exports.memory.buffer.byteLength);
      window.oldMemories.push(new WeakRef(runtime.exports.memory));
      try {
        engines[i % 2].call((ex) => ex.trap_for_tests());
      } catch (err) {
        if (err instanceof EngineRestarted) restarted += 1;
      }
      fresh.push(runtime.exports.memory.buffer.byteLength);
    }
    return { restarted, resets: runtime.resets, told, restarts: engines.map((e) => e.restarts), states: engines.map((e) => e.state), grown, fresh };
  });
  assert.equal(result.restarted, 60);
  assert.equal(result.resets, 60);
  assert.deepEqual(result.told, [60, 60], 'every engine on the runtime was told every time');
  assert.deepEqual(result.restarts, [60, 60]);
  assert.deepEqual(result.states, ['ready', 'ready']);
  // Each round's instance grew with the caches of two handles; each fresh one starts small,
  // the same every time: nothing of the last instance is in it.
  assert.ok(Math.min(...result.grown) > Math.max(...result.fresh), `grown ${Math.min(...result.grown)}, fresh ${Math.max(...result.fresh)}`);
  assert.equal(new Set(result.fresh).size, 1, `the fresh instances differ: ${[...new Set(result.fresh)]}`);
  // And the sixty thrown away are freed once nothing refers to them.
  await collectGarbage(page, cdp);
  assert.equal(await page.evaluate(() => window.oldMemories.filter((r) => r.deref() !== undefined).length), 0, 'every old instance was freed');
  assert.ok(errors.every((e) => /unreachable|panicked|trap_for_tests/.test(e)), errors.join('\n'));
  await context.close();
});
