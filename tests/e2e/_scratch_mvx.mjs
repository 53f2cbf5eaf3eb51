import { readFile, writeFile } from 'node:fs/promises';
import { startHarness } from './harness.mjs';
import { openExplorer, settled, openDetails } from './www-helpers.mjs';
const h = await startHarness();
try {
  const q = JSON.parse(process.argv[2] ?? '{}');
  const { page, errors } = await openExplorer(h, { mechanism: 'shift_diff', view: 'model', text: 'the film was not good but the actors were wonderful', ...q }, { width_px: 1280, height_px: 800 });
  await openDetails(page, 'export-tools');
  const grab = async (button) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
    return { name: download.suggestedFilename(), bytes: await readFile(await download.path()) };
  };
  console.log(await page.evaluate(() => ({ heads: window.diffattn.state.heads, cards: window.diffattn.root.querySelectorAll('.mv-card').length })));
  await page.screenshot({ path: '/tmp/mvx/page.png' });
  for (const size of ['1', '2', '1920']) {
    await page.selectOption('#export-size', size);
    const png = await grab('#export-png');
    console.log(png.name, png.bytes.length);
    await writeFile(`/tmp/mvx/export-${size}.png`, png.bytes);
  }
  const svg = await grab('#export-svg');
  console.log(svg.name, svg.bytes.length);
  await writeFile('/tmp/mvx/export.svg', svg.bytes);
  console.log(errors);
  const view = await h.newPage({ width_px: 1280, height_px: 800 });
  for (const f of ['export-1.png', 'export.svg']) {
    await view.page.goto('about:blank');
    const b64 = (await readFile(`/tmp/mvx/${f}`)).toString('base64');
    await view.page.setContent(`<body style="margin:0;background:#888"><img src="data:${f.endsWith('svg') ? 'image/svg+xml' : 'image/png'};base64,${b64}"></body>`);
    await view.page.waitForTimeout(500);
    await view.page.screenshot({ path: `/tmp/mvx/shot-${f}.png` });
  }
} finally {
  await h.close();
}
