// End-to-end: the package as a host gets it. The single-file build alone in an empty folder
// (served, under the strict Content-Security-Policy, asking for nothing else; and its classic
// twin opened from disk); the npm tarball (`npm pack` in pkg/) installed offline into an empty
// folder and served, with what a page with one element downloads, gzipped, within the
// first-view budget (the pretrained model's module not among it), and an element with
// weights="minilm" finding that module beside the bundle; the iframe path (`www/?embed=1` posting its height); and the Jupyter
// widget's front end (`render({ model, el })`) against a stand-in of anywidget's model.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { ROOT, screenshot, startHarness, startServer } from './harness.mjs';

const run = promisify(execFile);

/** The first-view budget: what a page with one element may download, gzipped. */
const FIRST_VIEW_BUDGET_BYTES = 1.5 * 1024 * 1024;

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";

let h;
const temps = [];
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
  for (const dir of temps) await rm(dir, { recursive: true, force: true });
});

async function tempDir(name) {
  const dir = await mkdtemp(path.join(os.tmpdir(), `diffattn-${name}-`));
  temps.push(dir);
  return dir;
}

/** A host page: the strict policy, `script` loaded the way `scriptTag` says, one element. */
function hostPage(scriptTag, element) {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta http-equiv="Content-Security-Policy" content="${CSP}">
  <title>host</title>
  ${scriptTag}
</head>
<body>
  ${element}
</body>
</html>
`;
}

/** Records CSP violations in `window.violations`, before any script of the page runs. */
async function recordViolations(page) {
  await page.addInitScript(() => {
    window.violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
}

/** The element's stages drawn, its model and its prediction, once it has drawn. */
async function drawn(page, selector = 'diffattn-explorer') {
  await page.waitForFunction(() => customElements.get('diffattn-explorer') !== undefined);
  return page.evaluate(async (sel) => {
    const el = document.querySelector(sel);
    await el.settled();
    const root = el.shadowRoot;
    return {
      stages: [...root.querySelectorAll('canvas.map-canvas')].map((c) => c.dataset.stage),
      painted: [...root.querySelectorAll('canvas.map-canvas')].every((c) => c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some((v) => v !== 0)),
      weights: el.state.weights,
      prediction: root.querySelector('#prediction-value').textContent.trim(),
      messages: root.querySelector('#messages').textContent.trim(),
    };
  }, selector);
}

test('the single-file build works alone in an empty folder: served, and opened from disk', async () => {
  const dir = await tempDir('inline');
  await copyFile(path.join(ROOT, 'pkg', 'diffattn-explorer.inline.js'), path.join(dir, 'diffattn-explorer.inline.js'));
  await writeFile(path.join(dir, 'index.html'), hostPage('<script type="module" src="diffattn-explorer.inline.js"></script>', '<diffattn-explorer text="A wonderful, moving film." controls="shift,heads" maps="A,D,fused"></diffattn-explorer>'));
  const server = await startServer({ root: dir });
  try {
    const { page, errors, context } = await h.newPage();
    await recordViolations(page);
    const requests = [];
    page.on('request', (req) => requests.push(new URL(req.url()).pathname));
    const warnings = [];
    page.on('console', (msg) => msg.type() === 'warning' && warnings.push(msg.text()));
    await page.goto(server.url('/'));
    const result = await drawn(page);
    assert.deepEqual(result.stages, ['a', 'd', 'fused']);
    assert.ok(result.painted, 'every map has pixels');
    // The default trained model is inside: it predicts, with nothing fetched.
    assert.equal(result.weights, 'trained');
    assert.match(result.prediction, /Positive|Negative/);
    assert.deepEqual(requests.filter((p) => p !== '/favicon.ico'), ['/', '/diffattn-explorer.inline.js']);
    // Another mechanism's model is not inside: the untrained model, which its badge names; the
    // page's author is told in the console, the reader sees no message addressed to the author.
    await page.evaluate(() => {
      const el = document.querySelector('diffattn-explorer');
      el.mechanism = el.shadowRoot.querySelector('#mechanism option:not(:checked)').value;
    });
    const other = await drawn(page);
    assert.equal(other.weights, 'untrained');
    assert.equal(other.messages, '', 'nothing in the reader\'s view');
    assert.ok(warnings.some((w) => /single-file build carries only the/.test(w)), warnings.join('\n'));
    await screenshot(page, 'package-inline-alone');
    assert.deepEqual(await page.evaluate(() => window.violations), []);
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    await server.close();
  }

  // From disk: browsers refuse module scripts from file:// URLs, so a page opened from disk
  // uses the classic twin, diffattn-explorer.classic.js.
  await copyFile(path.join(ROOT, 'pkg', 'diffattn-explorer.classic.js'), path.join(dir, 'diffattn-explorer.classic.js'));
  await writeFile(path.join(dir, 'disk.html'), hostPage('<script src="diffattn-explorer.classic.js"></script>', '<diffattn-explorer text="Opened from disk." maps="A,shift"></diffattn-explorer>'));
  const { page, errors, context } = await h.newPage();
  await page.goto(`file://${path.join(dir, 'disk.html')}`);
  const result = await drawn(page);
  assert.deepEqual(result.stages, ['a', 'shifted']);
  assert.ok(result.painted);
  assert.equal(result.weights, 'trained');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the npm tarball installs offline into an empty folder and works there, within the first-view budget', async () => {
  const packDir = await tempDir('pack');
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: path.join(ROOT, 'pkg') });
  const [packed] = JSON.parse(stdout);
  const files = packed.files.map((f) => f.path).sort();
  for (const want of ['package.json', 'README.md', 'diffattn-explorer.js', 'diffattn-explorer.d.ts', 'diffattn-explorer.inline.js', 'diffattn-explorer.classic.js', 'diffattn.js', 'diffattn.d.ts', 'diffattn_bg.wasm', 'diffattn_pretrained.js', 'diffattn_pretrained_bg.wasm', 'diffattn_pretrained_simd_bg.wasm', 'diffattn-explorer.js.map', 'explorer/element.js', 'explorer/explorer.css', 'weights/manifest.json', 'weights/shift_diff.bin']) {
    assert.ok(files.includes(want), `the tarball has ${want}`);
  }
  for (const unwanted of ['inline.js', 'element.js', 'heads-worker.js', 'diffattn-heads-worker.js', 'sizes.json']) assert.ok(!files.includes(unwanted), `the tarball leaves out ${unwanted}`);
  // The package's explorer/ is www/explorer/, file for file (for authors who compose the
  // element themselves); the entry is one minified module (scripts/bundle.mjs) with the
  // explorer's modules and the glue inside, and imports none of them.
  for (const name of (await readdir(path.join(ROOT, 'www', 'explorer'))).filter((n) => /\.(js|css)$/.test(n))) {
    assert.equal(await readFile(path.join(ROOT, 'pkg', 'explorer', name), 'utf8'), await readFile(path.join(ROOT, 'www', 'explorer', name), 'utf8'), `pkg/explorer/${name} is www/explorer/${name}`);
  }
  const entry = await readFile(path.join(ROOT, 'pkg', 'diffattn-explorer.js'), 'utf8');
  assert.ok(!/\bfrom\s*["'][^"']*(explorer\/|diffattn\.js)/.test(entry), 'the entry imports neither explorer/ nor the glue: both are inside');
  assert.ok(!/^\s*\/\/ /m.test(entry.split('//# sourceMappingURL=')[0]), 'the entry is minified: no comment left');
  assert.ok(entry.includes('//# sourceMappingURL=diffattn-explorer.js.map'), 'the entry names its source map');
  const site = await tempDir('site');
  await writeFile(path.join(site, 'package.json'), '{ "name": "host-site", "private": true }\n');
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--loglevel=error', path.join(packDir, packed.filename)], { cwd: site });
  await writeFile(path.join(site, 'index.html'), hostPage('<script type="module" src="node_modules/diffattn/diffattn-explorer.js"></script>', '<diffattn-explorer text="The acting is wonderful, but the plot is thin." controls="shift,heads"></diffattn-explorer>'));
  const server = await startServer({ root: site });
  try {
    const { page, errors, context } = await h.newPage();
    await recordViolations(page);
    const bodies = [];
    page.on('response', async (res) => {
      bodies.push(
        res.body().then(
          (body) => ({ path: new URL(res.url()).pathname, bytes: body.length, gzip: gzipSync(body, { level: 9 }).length }),
          () => ({ path: new URL(res.url()).pathname, bytes: 0, gzip: 0 }),
        ),
      );
    });
    await page.goto(server.url('/'));
    const result = await drawn(page);
    assert.deepEqual(result.stages, ['a', 'shifted', 'd', 'g', 'fused']);
    assert.ok(result.painted);
    assert.equal(result.weights, 'trained');
    assert.match(result.prediction, /Positive|Negative/);
    const downloads = await Promise.all(bodies);
    const gzip = downloads.reduce((sum, d) => sum + d.gzip, 0);
    const raw = downloads.reduce((sum, d) => sum + d.bytes, 0);
    console.log(`a page with one element: ${downloads.length} responses, ${(raw / 1024).toFixed(1)} KiB, ${(gzip / 1024).toFixed(1)} KiB gzipped`);
    assert.ok(gzip < FIRST_VIEW_BUDGET_BYTES, `a page with one element downloads ${gzip} bytes gzipped`);
    assert.ok(downloads.some((d) => d.path.endsWith('/weights/shift_diff.bin')), 'the trained model came from the package');
    assert.ok(!downloads.some((d) => d.path.endsWith('.inline.js')), 'the page does not fetch the single-file build');
    assert.ok(!downloads.some((d) => d.path.includes('diffattn_pretrained')), 'the first view does not fetch the pretrained model\'s module');
    await screenshot(page, 'package-npm-installed');
    assert.deepEqual(await page.evaluate(() => window.violations), []);
    assert.deepEqual(errors, []);
    await context.close();
    // weights="minilm": the element finds the model's own module beside its bundle (from
    // import.meta.url) and the model's file in its weights/, where the host put it (the
    // package does not ship the 45.5 MB file).
    const model = path.join(ROOT, 'weights', 'minilm', 'minilm.bin');
    const into = path.join(site, 'node_modules', 'diffattn', 'weights', 'minilm');
    await mkdir(into, { recursive: true });
    await copyFile(model, path.join(into, 'minilm.bin'));
    await writeFile(path.join(site, 'minilm.html'), hostPage('<script type="module" src="node_modules/diffattn/diffattn-explorer.js"></script>', '<diffattn-explorer weights="minilm" text="The cat sat."></diffattn-explorer>'));
    const second = await h.newPage();
    await recordViolations(second.page);
    const paths = [];
    second.page.on('response', (res) => paths.push(new URL(res.url()).pathname));
    await second.page.goto(server.url('/minilm.html'));
    const pretrained = await drawn(second.page);
    assert.equal(pretrained.weights, 'minilm', pretrained.messages);
    assert.ok(pretrained.painted);
    const pieces = await second.page.evaluate(() => document.querySelector('diffattn-explorer').shadowRoot.getElementById('token-count').textContent);
    assert.equal(pieces, '6 word pieces');
    assert.ok(paths.some((p) => /^\/node_modules\/diffattn\/diffattn_pretrained(_simd)?_bg\.wasm$/.test(p)), `the model's module from the package: ${paths.join(', ')}`);
    assert.ok(paths.includes('/node_modules/diffattn/weights/minilm/minilm.bin'));
    assert.deepEqual(await second.page.evaluate(() => window.violations), []);
    assert.deepEqual(second.errors, []);
    await second.context.close();
  } finally {
    await server.close();
  }
});

test('the iframe path: www/?embed=1 posts its height to the parent on every change of it', async () => {
  const { page, errors, context } = await h.newPage({ width_px: 1100, height_px: 800 });
  await recordViolations(page);
  await page.goto(h.url('/tests/e2e/fixtures/frame.html'));
  await page.waitForFunction(() => window.heights.length > 0 && document.querySelector('iframe').contentDocument?.body?.dataset.ready === 'true');
  await page.waitForTimeout(300);
  const fit = () =>
    page.evaluate(() => {
      const frame = document.querySelector('iframe');
      const doc = frame.contentDocument.documentElement;
      return { last: window.heights.at(-1), frame: frame.getBoundingClientRect().height, inner: doc.scrollHeight, view: doc.clientHeight, count: window.heights.length };
    });
  const wide = await fit();
  assert.ok(wide.last > 300, `a height of ${wide.last} px`);
  assert.equal(wide.frame, wide.last, 'the host sized the frame to the message');
  assert.ok(wide.inner <= wide.view + 1, `nothing scrolls inside the frame (${wide.inner} > ${wide.view})`);
  // A narrower frame stacks the maps: the page grows, and says so.
  await page.evaluate(() => document.querySelector('iframe').classList.add('narrow'));
  await page.waitForFunction((h0) => window.heights.at(-1) > h0 + 100, wide.last);
  await page.waitForTimeout(300);
  const narrow = await fit();
  assert.ok(narrow.count > wide.count);
  assert.equal(narrow.frame, narrow.last);
  assert.ok(narrow.inner <= narrow.view + 1);
  // Messages name their type; a host can tell them apart from other frames' messages.
  assert.ok(await page.evaluate(() => window.messages.every((m) => m.type === 'diffattn:height' && Number.isInteger(m.height))));
  await screenshot(page, 'package-iframe');
  assert.deepEqual(await page.evaluate(() => window.violations), []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the widget front end: render({ model, el }) syncs traits both ways (stand-in anywidget model)', async () => {
  const { page, errors, context } = await h.newPage();
  await recordViolations(page);
  await page.goto(h.url('/tests/e2e/fixtures/widget.html'));
  await page.waitForFunction(() => window.widget !== undefined);
  const maps = () =>
    page.evaluate(async () => {
      const el = document.querySelector('diffattn-explorer');
      await el.settled();
      return [...el.shadowRoot.querySelectorAll('canvas.map-canvas')].map((c) => {
        const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
        let hash = 0;
        for (let k = 0; k < data.length; k += 4) hash = (Math.imul(hash, 31) + data[k] + data[k + 1] * 7) >>> 0;
        return { stage: c.dataset.stage, hash };
      });
    });
  const first = await maps();
  assert.deepEqual(first.map((m) => m.stage), ['a', 'shifted', 'd']);
  assert.equal(await page.evaluate(() => document.querySelector('diffattn-explorer').shift), 2, 'the model’s shift');
  // "Python" sets shift: the maps follow.
  await page.evaluate(() => window.widget.model.pythonSets({ shift: 5 }));
  const second = await maps();
  assert.equal(await page.evaluate(() => document.querySelector('diffattn-explorer').shift), 5);
  assert.notEqual(second[1].hash, first[1].hash);
  // A person moves the slider: the model's trait takes the value and is saved.
  await page.evaluate(() => {
    const input = document.querySelector('diffattn-explorer').shadowRoot.getElementById('shift');
    input.value = '-3';
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await maps();
  assert.deepEqual(await page.evaluate(() => [window.widget.model.get('shift'), window.widget.model.saved]), [-3, 1]);
  // A spec dict from "Python" draws in place of the sentence; None goes back.
  await page.evaluate(async () => {
    const spec = await fetch(window.widget.specUrl).then((r) => r.json());
    window.widget.model.pythonSets({ spec });
  });
  await page.waitForFunction(() => !document.querySelector('diffattn-explorer').shadowRoot.querySelector('#spec-banner').hidden);
  await page.evaluate(() => window.widget.model.pythonSets({ spec: null }));
  await page.waitForFunction(() => document.querySelector('diffattn-explorer').shadowRoot.querySelector('#spec-banner').hidden);
  // The cleanup anywidget calls takes the element away and stops listening.
  await page.evaluate(() => window.widget.cleanup());
  assert.deepEqual(await page.evaluate(() => [document.querySelector('diffattn-explorer'), window.widget.model.listeners()]), [null, 0]);
  assert.deepEqual(await page.evaluate(() => window.violations), []);
  assert.deepEqual(errors, []);
  await context.close();
});
