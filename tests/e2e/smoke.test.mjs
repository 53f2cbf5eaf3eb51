// Smoke test: the optimised wasm loads in Chromium, its `version()` export answers,
// and the page at /www/ becomes ready without a single error.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { crateVersion, screenshot, startHarness, waitForReady } from './harness.mjs';

let h;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

test('pkg/ serves the wasm as application/wasm', async () => {
  const res = await fetch(h.url('/pkg/diffattn_bg.wasm'));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/wasm');
  // "\0asm": a WebAssembly module, not an error page.
  assert.deepEqual([...new Uint8Array(await res.arrayBuffer()).slice(0, 4)], [0, 0x61, 0x73, 0x6d]);
});

test('the wasm module instantiates in a bare page and version() answers', async () => {
  const { page, errors } = await h.newPage();
  await page.goto(h.url('/tests/e2e/fixtures/pkg.html'));
  await waitForReady(page);
  const version = await page.evaluate(async () => (await import('/pkg/diffattn.js')).version());
  assert.equal(version, await crateVersion());
  assert.equal(await page.textContent('#out'), `diffattn ${version}`);
  assert.deepEqual(errors, []);
});

test(
  'www/ becomes ready without errors',
  async () => {
    const { page, errors } = await h.newPage();
    await page.goto(h.url('/www/'));
    await waitForReady(page);
    await screenshot(page, 'smoke-www');
    // The page (its bundle, the glue inside) has called init() and asked the wasm its version.
    const version = await page.evaluate(() => window.diffattn.version);
    assert.equal(version, await crateVersion());
    assert.ok((await page.textContent('#footer-text')).includes(`diffattn ${version}`), 'the footer names the version');
    assert.deepEqual(errors, []);
  },
);
