// End-to-end test harness: a static server for the repository root, Debian's
// Chromium driven by playwright-core, pages that record every error, a ready
// signal and screenshots. Used by the `*.test.mjs` files beside it, which
// `scripts/check` runs with node's built-in test runner after scripts/build-wasm.
//
// Typical use:
//
//   import { after, before, test } from 'node:test';
//   import assert from 'node:assert/strict';
//   import { startHarness, waitForReady, screenshot } from './harness.mjs';
//
//   let h;
//   before(async () => { h = await startHarness(); });
//   after(async () => { await h?.close(); });
//
//   test('the page draws', async () => {
//     const { page, errors } = await h.newPage();
//     await page.goto(h.url('/www/'));
//     await waitForReady(page);
//     await screenshot(page, 'page-draws');
//     assert.deepEqual(errors, []);
//   });
//
// Everything has a timeout, and `close()` (called from `after`, which runs even
// when a test fails) closes the browser and the server; a watchdog ends the
// process if something still hangs.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

/** The repository root, which the test server serves (so `/www/` and `/pkg/` both resolve). */
export const ROOT = path.resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Where `screenshot()` writes its PNGs. */
export const SCREENSHOT_DIR = path.join(ROOT, 'test-results', 'screenshots');
/** Debian's Chromium; playwright-core downloads no browser of its own. */
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/** Flags headless Chromium wants as root on these machines (see docs/TOOLCHAIN.md).
 * playwright adds `--headless` itself and gives every launch a fresh temporary
 * user-data-dir (it refuses a `--user-data-dir` flag in `launch()`). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** Time limits, in milliseconds. */
export const TIMEOUTS = {
  launch_ms: 60_000,
  action_ms: 15_000,
  navigation_ms: 30_000,
  ready_ms: 30_000,
  close_ms: 10_000,
  // The whole test file: past this the process exits, whatever is still running.
  watchdog_ms: 10 * 60_000,
};

const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/**
 * Serves `root` read-only on a free port of 127.0.0.1, with no caching.
 * Resolves to `{ origin, url(pathname), close() }`.
 */
export async function startServer({ root = ROOT } = {}) {
  const server = http.createServer(async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { Allow: 'GET, HEAD' }).end();
        return;
      }
      const pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
      let file = path.join(root, pathname);
      if (file !== root && !file.startsWith(root + path.sep)) {
        res.writeHead(403).end();
        return;
      }
      let info = await stat(file).catch(() => null);
      if (info?.isDirectory()) {
        if (!pathname.endsWith('/')) {
          res.writeHead(301, { Location: `${pathname}/` }).end();
          return;
        }
        file = path.join(file, 'index.html');
        info = await stat(file).catch(() => null);
      }
      if (!info?.isFile()) {
        // Chromium asks for a favicon on its own; a page without one is not an error.
        res.writeHead(pathname === '/favicon.ico' ? 204 : 404).end();
        return;
      }
      const body = await readFile(file);
      res.writeHead(200, {
        'Content-Type': MIME_TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream',
        'Content-Length': body.length,
        'Cache-Control': 'no-store',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    url: (pathname = '/') => new URL(pathname, origin).href,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Launches Debian's headless Chromium with the flags above. */
export async function launchBrowser() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: run scripts/setup`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: TIMEOUTS.launch_ms,
  });
}

// What each page recorded, so waitForReady can say why a page never became ready:
// `errors` (every error, as strings) and `uncaught` (the uncaught exceptions alone).
const recordOf = new WeakMap();

/**
 * Opens a page in a fresh browser context and records, as strings, its console
 * errors, uncaught exceptions, failed requests and HTTP error responses.
 * Resolves to `{ context, page, errors }`; `errors` fills as the page runs.
 */
export async function newPage(browser, { width_px = 1280, height_px = 800, deviceScaleFactor = 1 } = {}) {
  const context = await browser.newContext({
    viewport: { width: width_px, height: height_px },
    deviceScaleFactor,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUTS.action_ms);
  page.setDefaultNavigationTimeout(TIMEOUTS.navigation_ms);
  const errors = [];
  const uncaught = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => {
    errors.push(`pageerror: ${err.message}`);
    uncaught.push(err);
  });
  page.on('requestfailed', (req) => errors.push(`request failed: ${req.url()} (${req.failure()?.errorText})`));
  page.on('response', (res) => {
    if (res.status() >= 400) errors.push(`HTTP ${res.status()}: ${res.url()}`);
  });
  recordOf.set(page, { errors, uncaught });
  return { context, page, errors };
}

/**
 * Waits until the page sets `document.body.dataset.ready = "true"` (it does so after
 * wasm init and its first paint). Fails at once on an uncaught exception (a Rust
 * panic ends in one), and on timeout; either way the message lists the page's errors.
 */
export async function waitForReady(page, { timeout_ms = TIMEOUTS.ready_ms } = {}) {
  const { errors, uncaught } = recordOf.get(page) ?? { errors: [], uncaught: [] };
  let onError;
  const failed = new Promise((_, reject) => {
    onError = (err) => reject(new Error(`page threw before it was ready: ${err.message}`));
    page.on('pageerror', onError);
  });
  failed.catch(() => {});
  try {
    // An exception thrown while the page was still loading (during goto) counts too.
    if (uncaught.length > 0) throw new Error(`page threw before it was ready: ${uncaught[0].message}`);
    await Promise.race([
      page.waitForFunction(() => document.body?.dataset.ready === 'true', null, { timeout: timeout_ms }),
      failed,
    ]);
  } catch (err) {
    const state = await page
      .evaluate(() => document.body?.dataset.ready ?? '(unset)')
      .catch(() => '(page gone)');
    err.message += `\n  data-ready: ${state}\n  page errors:\n    ${errors.join('\n    ') || '(none)'}`;
    throw err;
  } finally {
    page.off('pageerror', onError);
  }
}

/** Saves a full-page PNG as test-results/screenshots/NAME.png and returns its path. */
export async function screenshot(page, name) {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true, timeout: TIMEOUTS.action_ms });
  return file;
}

/** Runs `promise` but gives up after `ms` (so cleanup never hangs). */
function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The page and the element run as bundles (scripts/bundle.mjs: www/dist/app.js,
 * pkg/diffattn-explorer.js), so the tests test what users load; this stops a run against a
 * bundle file older than a module it is made of (the sources its source map lists), which
 * would test yesterday's code.
 */
async function assertBundlesFresh() {
  const mtime = async (file) => (await stat(file).catch(() => null))?.mtimeMs ?? null;
  const dist = path.join(ROOT, 'www', 'dist');
  const bundles = [
    { entry: path.join(dist, 'app.js'), maps: existsSync(dist) ? (await readdir(dist)).filter((f) => f.endsWith('.js.map')).map((f) => path.join(dist, f)) : [] },
    { entry: path.join(ROOT, 'pkg', 'diffattn-explorer.js'), maps: [path.join(ROOT, 'pkg', 'diffattn-explorer.js.map')] },
  ];
  const rebuild = 'run scripts/build-pkg (or node scripts/bundle.mjs, or keep scripts/serve running, which rebuilds on save)';
  for (const { entry, maps } of bundles) {
    if (!existsSync(entry)) throw new Error(`${path.relative(ROOT, entry)} not found: ${rebuild}`);
    for (const map of maps) {
      const js = map.slice(0, -'.map'.length);
      const built = await mtime(js);
      if (built === null) continue;
      const { sources = [] } = JSON.parse(await readFile(map, 'utf8'));
      for (const source of sources) {
        const at = await mtime(path.resolve(path.dirname(map), source));
        if (at !== null && at > built) throw new Error(`${path.relative(ROOT, js)} is older than ${path.relative(ROOT, path.resolve(path.dirname(map), source))}, a module it bundles: ${rebuild}`);
      }
    }
  }
}

/**
 * Starts the server and the browser. Resolves to `{ server, browser, origin, url(),
 * newPage(options), close() }`. Call `close()` from an `after` hook.
 */
export async function startHarness({ root = ROOT } = {}) {
  if (root === ROOT && !existsSync(path.join(ROOT, 'pkg', 'diffattn.js'))) {
    throw new Error('pkg/diffattn.js not found: run scripts/build-wasm first');
  }
  if (root === ROOT) await assertBundlesFresh();
  const watchdog = setTimeout(() => {
    console.error(`e2e harness: still running after ${TIMEOUTS.watchdog_ms} ms; exiting`);
    process.exit(1);
  }, TIMEOUTS.watchdog_ms);
  watchdog.unref();

  const server = await startServer({ root });
  let browser;
  try {
    browser = await launchBrowser();
  } catch (err) {
    await server.close();
    throw err;
  }
  return {
    server,
    browser,
    origin: server.origin,
    url: server.url,
    newPage: (options) => newPage(browser, options),
    async close() {
      clearTimeout(watchdog);
      try {
        await withTimeout(browser.close(), TIMEOUTS.close_ms, 'closing the browser');
      } catch (err) {
        // A browser that does not close in time is killed with the process group.
        browser.process?.()?.kill('SIGKILL');
        console.error(`e2e harness: ${err.message}`);
      } finally {
        await withTimeout(server.close(), TIMEOUTS.close_ms, 'closing the server').catch(() => {});
      }
    },
  };
}

/** The crate version from Cargo.toml, which the wasm `version()` export must return. */
export async function crateVersion() {
  const toml = await readFile(path.join(ROOT, 'Cargo.toml'), 'utf8');
  const match = /^\[package\][^[]*?^version\s*=\s*"([^"]+)"/m.exec(toml);
  if (!match) throw new Error('no [package] version in Cargo.toml');
  return match[1];
}

/**
 * The Python of the Python side with torch and transformers (scripts/setup-python's venv, or
 * DIFFATTN_VENV, or DIFFATTN_PYTHON, or python3): `{ py }`, or `{ why }` naming what was tried.
 */
export function torchPython() {
  const venv = process.env.DIFFATTN_VENV || path.join(ROOT, '.tools', 'venv');
  const candidates = [process.env.DIFFATTN_PYTHON, path.join(venv, 'bin', 'python'), 'python3'].filter(Boolean);
  for (const py of candidates) {
    if (py.includes('/') && !existsSync(py)) continue;
    if (spawnSync(py, ['-c', 'import torch, transformers'], { encoding: 'utf8' }).status === 0) return { py };
  }
  return { why: `torch and transformers are not installed (tried ${candidates.join(', ')}): run scripts/setup-python` };
}
