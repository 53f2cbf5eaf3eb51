// The Jupyter widget in a real JupyterLab (from PyPI, started here on 127.0.0.1 with a token
// and a fresh config, data and runtime folder): a notebook creates `diffattn.Explorer(...)`,
// Chromium (playwright-core) runs its cells; the maps are drawn, `w.shift = 4` from Python
// redraws them, and a slider moved in the widget reaches the Python trait. Then the example
// notebook docs/examples/capture.ipynb itself (copied as it is into the server's folder), run
// whole from the Run menu: it captures a layer of a random transformers DiffLlama and the widget
// draws it, with the captured tokens, the model and layer in its banner, the heads fixed by the
// layer and λ set from Python. Run by scripts/check-jupyter, which sets DIFFATTN_JUPYTER_PYTHON
// (a venv with jupyterlab, anywidget, torch, transformers and the widget's package on its path).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, newPage, ROOT, screenshot } from '../e2e/harness.mjs';

const PYTHON = process.env.DIFFATTN_JUPYTER_PYTHON;
const START_MS = 90_000;
/** The example notebook of docs/MODELS.md, opened as it is. */
const EXAMPLE = path.join(ROOT, 'docs', 'examples', 'capture.ipynb');

let server;
let browser;
let work;
let base;
let origin;
let token;

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A notebook of code cells. */
function notebook(cells) {
  return JSON.stringify({
    cells: cells.map((source) => ({ cell_type: 'code', execution_count: null, metadata: {}, outputs: [], source })),
    metadata: { kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' }, language_info: { name: 'python' } },
    nbformat: 4,
    nbformat_minor: 5,
  });
}

before(async () => {
  assert.ok(PYTHON, 'DIFFATTN_JUPYTER_PYTHON is not set: run scripts/check-jupyter');
  work = await mkdtemp(path.join(os.tmpdir(), 'diffattn-jupyter-'));
  const notebooks = path.join(work, 'notebooks');
  await mkdir(notebooks);
  for (const dir of ['config', 'data', 'runtime', 'ipython']) await mkdir(path.join(work, dir));
  await writeFile(
    path.join(notebooks, 'explorer.ipynb'),
    notebook([
      'import diffattn\nw = diffattn.Explorer(text="The cat sat on the mat because it was tired.", shift=1, maps="A,shift,D", controls="shift,heads", weights="untrained")\nw',
      'w.shift = 4',
      'print(f"python sees shift={w.shift}")',
    ]),
  );
  await copyFile(EXAMPLE, path.join(notebooks, 'capture.ipynb'));
  const port = await freePort();
  token = randomBytes(16).toString('hex');
  base = `http://127.0.0.1:${port}`;
  origin = base;
  server = spawn(
    PYTHON,
    [
      '-m',
      'jupyter',
      'lab',
      '--no-browser',
      '--allow-root',
      `--ServerApp.ip=127.0.0.1`,
      `--ServerApp.port=${port}`,
      '--ServerApp.port_retries=0',
      `--IdentityProvider.token=${token}`,
      `--ServerApp.root_dir=${notebooks}`,
      '--LabApp.news_url=',
      '--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate',
      '--LabServerApp.extension_manager=readonly',
    ],
    {
      env: {
        ...process.env,
        JUPYTER_CONFIG_DIR: path.join(work, 'config'),
        JUPYTER_DATA_DIR: path.join(work, 'data'),
        JUPYTER_RUNTIME_DIR: path.join(work, 'runtime'),
        IPYTHONDIR: path.join(work, 'ipython'),
        JUPYTER_PLATFORM_DIRS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  const log = [];
  server.stdout.on('data', (d) => log.push(String(d)));
  server.stderr.on('data', (d) => log.push(String(d)));
  const deadline = Date.now() + START_MS;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`jupyter lab exited (${server.exitCode}):\n${log.join('')}`);
    const ok = await fetch(`${base}/api/status?token=${token}`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`jupyter lab did not answer in ${START_MS} ms:\n${log.join('')}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  base = `${base}/lab/tree/explorer.ipynb?token=${token}`;
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close().catch(() => {});
  if (server && server.exitCode === null) {
    // The server and the kernels it started: its own process group.
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    await new Promise((r) => setTimeout(r, 1500));
    try {
      process.kill(-server.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (work) await rm(work, { recursive: true, force: true });
});

/** Whether the notebook's `index`-th cell has run (its prompt holds a number). */
function hasRun(page, index) {
  return page.evaluate((i) => /\[\d+\]/.test(document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i]?.querySelector('.jp-InputPrompt')?.textContent ?? ''), index);
}

/**
 * Runs the notebook's `index`-th cell (click into it, Ctrl+Enter) and waits until it has run.
 * A key press that lands while JupyterLab is still wiring the editor is lost, so it tries again.
 */
async function runCell(page, index) {
  const cell = page.locator('.jp-Notebook .jp-CodeCell').nth(index);
  for (let attempt = 0; attempt < 4; attempt += 1) {
    await cell.locator('.jp-InputArea-editor').click();
    await page.keyboard.press('Control+Enter');
    for (let waited = 0; waited < 15_000; waited += 250) {
      if (await hasRun(page, index)) return cell;
      await page.waitForTimeout(250);
    }
  }
  throw new Error(`cell ${index} did not run`);
}

/** The widget's maps: stage and a pixel hash each, with its shift, once it has drawn. */
function widgetMaps(page) {
  return page.evaluate(async () => {
    const el = document.querySelector('diffattn-explorer');
    await el.settled();
    return {
      shift: el.shift,
      maps: [...el.shadowRoot.querySelectorAll('canvas.map-canvas')].map((c) => {
        const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
        let hash = 0;
        for (let k = 0; k < data.length; k += 4) hash = (Math.imul(hash, 31) + data[k] + data[k + 1] * 7) >>> 0;
        return { stage: c.dataset.stage, hash };
      }),
    };
  });
}

test('diffattn.Explorer in JupyterLab: draws, follows Python, and a slider reaches Python', async () => {
  const { page, errors, context } = await newPage(browser, { width_px: 1280, height_px: 1000 });
  try {
    await drive(page, errors);
  } catch (err) {
    await screenshot(page, 'jupyterlab-failure').catch(() => {});
    err.message += `\n  page errors:\n    ${errors.join('\n    ') || '(none)'}`;
    throw err;
  } finally {
    await context.close();
  }
});

/** The test's steps in the notebook page. */
async function drive(page, errors) {
  page.setDefaultTimeout(60_000);
  await page.goto(base, { timeout: 60_000 });
  await page.locator('.jp-Notebook .jp-CodeCell').first().waitFor({ timeout: 60_000 });
  // The kernel is up when the status bar says so ("Python 3 (ipykernel) | Idle").
  await page.waitForFunction(() => /\|\s*Idle/.test(document.querySelector('#jp-main-statusbar')?.textContent ?? ''), null, { timeout: 60_000 });

  await runCell(page, 0);
  await page.waitForFunction(() => document.querySelector('diffattn-explorer')?.shadowRoot?.querySelectorAll('canvas.map-canvas').length === 3, null, { timeout: 60_000 });
  const first = await widgetMaps(page);
  assert.deepEqual(first.maps.map((m) => m.stage), ['a', 'shifted', 'd']);
  assert.equal(first.shift, 1);
  await screenshot(page, 'jupyterlab-widget');

  // Python changes shift: the maps follow.
  await runCell(page, 1);
  await page.waitForFunction(() => document.querySelector('diffattn-explorer')?.shift === 4, null, { timeout: 30_000 });
  const second = await widgetMaps(page);
  assert.equal(second.maps[0].stage, 'a');
  assert.notEqual(second.maps[1].hash, first.maps[1].hash, 'shift(A) was redrawn for shift = 4');
  assert.notEqual(second.maps[2].hash, first.maps[2].hash, 'D was redrawn for shift = 4');

  // A person moves the widget's slider: Python's trait follows.
  await page.evaluate(() => {
    const input = document.querySelector('diffattn-explorer').shadowRoot.getElementById('shift');
    input.value = '-2';
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await widgetMaps(page);
  await page.waitForTimeout(500);
  const cell = await runCell(page, 2);
  await page.waitForFunction((i) => /python sees shift=/.test(document.querySelectorAll('.jp-Notebook .jp-CodeCell')[i]?.querySelector('.jp-OutputArea')?.textContent ?? ''), 2);
  assert.match(await cell.locator('.jp-OutputArea').textContent(), /python sees shift=-2/);
  await screenshot(page, 'jupyterlab-widget-after');
  const ours = errors.filter((e) => /diffattn|wasm|explorer/i.test(e));
  assert.deepEqual(ours, [], 'no error from the widget');
}

/** Waits until the kernel is up and idle (the status bar says "Python 3 (ipykernel) | Idle"). */
function kernelIdle(page, timeout = 60_000) {
  return page.waitForFunction(() => /\|\s*Idle/.test(document.querySelector('#jp-main-statusbar')?.textContent ?? ''), null, { timeout });
}

/** The first widget's shadow-DOM text of element `id`. */
function widgetText(page, id) {
  return page.evaluate((i) => document.querySelector('diffattn-explorer').shadowRoot.getElementById(i)?.textContent ?? null, id);
}

/** Hovers the widget's map `stage` at (fx, fy), shares of its canvas, and returns the tooltip's text once it shows. */
async function hoverAt(page, stage, fx, fy) {
  await page.evaluate((s) => document.querySelector('diffattn-explorer').shadowRoot.querySelector(`canvas.map-canvas[data-stage="${s}"]`).scrollIntoView({ block: 'center' }), stage);
  // The notebook may scroll smoothly: wait until the canvas stays put.
  let box = null;
  for (let i = 0; i < 40; i += 1) {
    await page.waitForTimeout(100);
    const now = await page.evaluate((s) => {
      const r = document.querySelector('diffattn-explorer').shadowRoot.querySelector(`canvas.map-canvas[data-stage="${s}"]`).getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    }, stage);
    if (box && JSON.stringify(now) === JSON.stringify(box)) break;
    box = now;
  }
  await page.mouse.move(box.x + box.width * fx - 3, box.y + box.height * fy - 3);
  await page.mouse.move(box.x + box.width * fx, box.y + box.height * fy, { steps: 3 });
  await page
    .waitForFunction(() => !document.querySelector('diffattn-explorer').shadowRoot.getElementById('tooltip').hidden, null, { timeout: 10_000 })
    .catch(async (err) => {
      const at = await page.evaluate(({ x, y }) => {
        const top = document.elementFromPoint(x, y);
        const inner = top?.shadowRoot?.elementFromPoint(x, y);
        return `${top?.tagName}.${top?.className} / ${inner?.tagName}.${inner?.className} ${inner?.dataset?.stage ?? ''}; explorers: ${document.querySelectorAll('diffattn-explorer').length}`;
      }, { x: box.x + box.width * fx, y: box.y + box.height * fy });
      err.message += ` (at ${JSON.stringify(box)} ${fx},${fy}: ${at})`;
      throw err;
    });
  return page.evaluate(() => document.querySelector('diffattn-explorer').shadowRoot.getElementById('tooltip').textContent);
}

test('docs/examples/capture.ipynb, run whole in JupyterLab: the widget draws the captured DiffLlama layer and follows λ from Python', async () => {
  const source = JSON.parse(await readFile(EXAMPLE, 'utf8'));
  const code = source.cells.filter((c) => c.cell_type === 'code');
  assert.ok(code.length >= 3, 'the example has code cells');
  assert.ok(
    code.every((c) => c.outputs.length === 0 && c.execution_count === null),
    'the example is saved without outputs',
  );
  const { page, errors, context } = await newPage(browser, { width_px: 1280, height_px: 1000 });
  try {
    await driveExample(page, errors, code.length);
  } catch (err) {
    await screenshot(page, 'jupyterlab-example-failure').catch(() => {});
    err.message += `\n  page errors:\n    ${errors.join('\n    ') || '(none)'}`;
    throw err;
  } finally {
    await context.close();
  }
});

/** The example notebook's steps: open it, Run → Run All Cells, check what the widget draws. */
async function driveExample(page, errors, codeCells) {
  page.setDefaultTimeout(60_000);
  // A workspace of its own, so the first test's notebook is not open beside it.
  await page.goto(`${origin}/lab/workspaces/example/tree/capture.ipynb?reset&token=${token}`, { timeout: 60_000 });
  await page.locator('.jp-Notebook .jp-CodeCell').first().waitFor({ timeout: 60_000 });
  await kernelIdle(page);

  // As a person runs a notebook: the Run menu, "Run All Cells".
  await page.locator('.lm-MenuBar-item', { hasText: /^Run$/ }).click();
  await page.locator('.lm-Menu-item:not(.lm-mod-hidden)', { hasText: /^Run All Cells/ }).first().click();
  await page.waitForFunction(
    (n) => {
      const cells = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')];
      return cells.length === n && cells.every((c) => /\[\d+\]/.test(c.querySelector('.jp-InputPrompt')?.textContent ?? ''));
    },
    codeCells,
    { timeout: 240_000 },
  );
  await kernelIdle(page, 120_000);
  const failed = await page.evaluate(() => [...document.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')].map((e) => e.textContent));
  assert.deepEqual(failed, [], 'no cell raised');
  const outputs = await page.evaluate(() => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')].map((c) => c.querySelector('.jp-OutputArea')?.textContent ?? ''));
  assert.match(outputs.join('\n'), /diff_transformer: 4 diff heads of 8 channels, 2 key\/value heads, 10 tokens/);

  // The widget drew the captured layer.
  await page.waitForFunction(() => document.querySelector('diffattn-explorer')?.shadowRoot?.querySelectorAll('canvas.map-canvas').length === 3, null, { timeout: 60_000 });
  await page.evaluate(() => document.querySelector('diffattn-explorer').settled());
  const stages = await page.evaluate(() => [...document.querySelector('diffattn-explorer').shadowRoot.querySelectorAll('canvas.map-canvas')].map((c) => c.dataset.stage));
  assert.deepEqual(stages, ['a1', 'a2', 'diff'], 'A1, A2 and A1 − λ·A2');
  assert.match(await widgetText(page, 'spec-banner-text'), /^Drawing layer 1 of random DiffLlama from spec: 10 tokens\./, 'the banner names the model and the layer');
  assert.match(await widgetText(page, 'spec-layout'), /4 heads of 8 channels, key\/value heads: 2, d_model = 64 · RoPE \(half, θ = 10000\)/);
  const heads = await page.evaluate(() => {
    const root = document.querySelector('diffattn-explorer').shadowRoot;
    const el = root.getElementById('heads');
    return { disabled: el.disabled, out: root.getElementById('heads-out').textContent, head: [...root.getElementById('head').options].map((o) => o.value) };
  });
  assert.deepEqual(heads, { disabled: true, out: '4 · d_h = 8 (fixed)', head: ['1', '2', '3', '4'] }, 'the heads are the layer’s: fixed at 4, any one shown');
  // The last cells set the head and λ from Python.
  const state = await page.evaluate(() => document.querySelector('diffattn-explorer').state);
  assert.equal(state.head, 2, JSON.stringify(state));
  assert.ok(Math.abs(state.lambda - 0.2) < 1e-6, `λ from Python (${state.lambda})`);
  assert.equal(state.mechanism, 'diff_transformer');
  // The axes are the captured tokens: a cell's tooltip names its query and key.
  const words = ['the', 'film', 'is', 'not', 'good', ',', 'it', 'is', 'wonderful', '.'];
  for (const [fx, fy] of [
    [0.6, 0.6],
    [0.3, 0.7],
  ]) {
    const tip = await hoverAt(page, 'diff', fx, fy);
    const m = /^Row (\d+), query (.+?) → column (\d+), key (.+?)\(A1 − λ·A2\)ᵢⱼ = [-−\d.]+ − 0\.2000 × /.exec(tip);
    assert.ok(m, `the tooltip gives the cell with λ = 0.2: ${tip}`);
    assert.deepEqual([m[2], m[4]], [words[Number(m[1]) - 1], words[Number(m[3]) - 1]], `the axes are the captured tokens: ${tip}`);
  }
  await screenshot(page, 'jupyterlab-example');
  const ours = errors.filter((e) => /diffattn|wasm|explorer/i.test(e));
  assert.deepEqual(ours, [], 'no error from the widget');
}
