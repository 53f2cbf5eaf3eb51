// temporary: screenshots for looking (not committed)
import { startHarness, waitForReady } from './harness.mjs';
const h = await startHarness();
const shots = JSON.parse(process.argv[2]);
try {
  for (const s of shots) {
    const { page } = await h.newPage({ width_px: s.w, height_px: s.h, deviceScaleFactor: s.dpr ?? 1 });
    await page.goto(h.url(s.url));
    await waitForReady(page);
    await page.evaluate(() => window.diffattn?.settled?.());
    await page.waitForTimeout(s.wait ?? 300);
    if (s.eval) await page.evaluate(s.eval);
    if (s.wait2) await page.waitForTimeout(s.wait2);
    await page.screenshot({ path: `/tmp/shots/${s.name}.png`, fullPage: !!s.full });
    if (s.measure) console.log(s.name, JSON.stringify(await page.evaluate(s.measure)));
    await page.context().close();
  }
} finally { await h.close(); }
