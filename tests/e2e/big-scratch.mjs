// scratch (not committed): a 512-token, 2048-wide, 16-diff-head capture on the page
import { startHarness, screenshot } from './harness.mjs';
import { openExplorer, settled, setRange } from './www-helpers.mjs';
const h = await startHarness();
try {
  const { page, errors } = await openExplorer(h, '', { width_px: 1280, height_px: 800 });
  const input = await page.evaluateHandle(() => window.diffattn.root.getElementById('spec-file'));
  const t0 = Date.now();
  await input.asElement().setInputFiles('/tmp/rp/big1b.safetensors');
  const sawBar = await page.waitForFunction(() => !window.diffattn.root.getElementById('spec-loading').hidden, null, { timeout: 60000 }).then(() => Date.now() - t0);
  await page.waitForFunction(() => window.diffattn.view.specs.active !== null || window.diffattn.root.getElementById('messages').textContent !== '', null, { timeout: 120000 });
  await settled(page);
  const t1 = Date.now();
  console.log('bar after', sawBar, 'ms; drawn after', t1 - t0, 'ms', errors, await page.evaluate(() => window.diffattn.root.getElementById('messages').textContent));
  console.log(await page.evaluate(() => window.diffattn.view.view.layer));
  await screenshot(page, 'scratch-big');
  const times = [];
  for (const l of [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.15, 0.25]) {
    await setRange(page, '#lambda', l);
    times.push(await page.evaluate(() => ({ ...window.diffattn.timings })));
  }
  console.log('lambda frames', times.map((t) => `${t.frame_ms.toFixed(0)} (c ${t.compute_ms.toFixed(0)}, d ${t.draw_ms.toFixed(0)})`).join(', '));
  const heads = [];
  for (const hd of [2, 3, 4, 5, 6]) {
    await page.evaluate((x) => window.diffattn.view.setFromPerson({ head: x }), hd);
    await settled(page);
    heads.push(await page.evaluate(() => window.diffattn.timings.frame_ms.toFixed(0)));
  }
  console.log('head frames', heads.join(', '));
  const mem = await page.evaluate(() => performance.memory?.usedJSHeapSize);
  console.log('js heap', mem, 'wasm', await page.evaluate(() => window.diffattn.view.engine.memoryBytes?.() ?? null));
} finally {
  await h.close();
}
