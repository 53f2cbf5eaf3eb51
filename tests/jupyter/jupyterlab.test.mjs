// The Jupyter widget in a real JupyterLab (from PyPI, started here on 127.0.0.1 with a token
// and a fresh config, data and runtime folder): a notebook creates `diffattn.Explorer(...)`,
// Chromium (playwright-core) runs its cells; the maps are drawn, `w.shift = 4` from Python
// redraws them, and a slider moved in the widget reaches the Python trait. Run by
// scripts/check-jupyter, which sets DIFFATTN_JUPYTER_PYTHON (a venv with jupyterlab, anywidget
// and the widget's package on its path).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { launchBrowser, newPage, screenshot } from '../e2e/harness.mjs';

const PYTHON = process.env.DIFFATTN_JUPYTER_PYTHON;
const START_MS = 90_000;

let server;
let browser;
let work;
let base;

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
  const port = await freePort();
  const token = randomBytes(16).toString('hex');
  base = `http://127.0.0.1:${port}`;
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
