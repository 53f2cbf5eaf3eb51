// scratch (not committed): screenshots for a look
import { startHarness, screenshot } from './harness.mjs';
import { openExplorer, settled } from './www-helpers.mjs';
const h = await startHarness();
try {
  const sizes = [[1280, 800], [1024, 768], [390, 844]];
  const which = process.argv[2] ?? 'all';
  for (const [w, hh] of sizes) {
    if (which === 'v2' || which === 'all') {
      const { page, errors } = await openExplorer(h, 'mechanism=diff_transformer_v2&weights=untrained', { width_px: w, height_px: hh });
      await screenshot(page, `scratch-v2-${w}`);
      console.log('v2', w, errors);
      await page.close();
    }
    if (which === 'hier' || which === 'all') {
      const { page, errors } = await openExplorer(h, 'mechanism=hierarchical&weights=untrained&segment=3', { width_px: w, height_px: hh });
      await screenshot(page, `scratch-hier-${w}`);
      console.log('hier', w, errors);
      await page.close();
    }
    if (which === 'cap' || which === 'all') {
      const { page, errors } = await openExplorer(h, '', { width_px: w, height_px: hh });
      await page.evaluate(() => window.diffattn.root.getElementById('spec-file'));
      const input = await page.evaluateHandle(() => window.diffattn.root.getElementById('spec-file'));
      await input.asElement().setInputFiles('tests/e2e/fixtures/captured-diffllama.safetensors');
      await page.waitForFunction(() => window.diffattn.view.specs.active !== null, null, { timeout: 15000 });
      await settled(page);
      await screenshot(page, `scratch-cap-${w}`);
      console.log('cap', w, errors, await page.evaluate(() => window.diffattn.view.view.layer));
      await page.close();
    }
  }
} finally {
  await h.close();
}
