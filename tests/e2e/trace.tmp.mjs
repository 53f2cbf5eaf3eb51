// temporary: trace a few shift ticks (not committed)
import { writeFile } from 'node:fs/promises';
import { startHarness, waitForReady } from './harness.mjs';
import { longText } from './www-helpers.mjs';
const tokens = Number(process.argv[2] ?? 128);
const h = await startHarness();
try {
  const { page, context } = await h.newPage({ width_px: 1280, height_px: 800 });
  await page.goto(h.url(`/www/?${new URLSearchParams({ text: longText(tokens), heads: '8' })}`));
  await waitForReady(page);
  await page.evaluate(() => window.diffattn.settled());
  await page.waitForTimeout(500);
  await page.focus('#shift');
  const cdp = await context.newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
  const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
  await cdp.send('Tracing.start', { categories: 'devtools.timeline,disabled-by-default-devtools.timeline,disabled-by-default-devtools.timeline.frame,blink.user_timing,input,latencyInfo,benchmark', transferMode: 'ReportEvents' });
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press(i % 2 ? 'ArrowLeft' : 'ArrowRight');
    await page.waitForTimeout(150);
  }
  await cdp.send('Tracing.end');
  await done;
  await writeFile('/tmp/trace/trace.json', JSON.stringify(events));
  console.log('events', events.length);
  await context.close();
} finally {
  await h.close();
}
