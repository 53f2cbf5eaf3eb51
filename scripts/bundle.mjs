// The JavaScript users load, bundled and minified by esbuild (ARCHITECTURE.md, "What the browser
// loads is bundled"): one ES module per entry, plus lazily loaded chunks for what the first
// view does not need, each with a source map.
//
//   www/app.js        → www/dist/app.js      the page (www/index.html loads it); the retrieval
//                                             lesson (www/lesson-page.js and its modules) is a
//                                             chunk in www/dist/ that only ?lesson= loads
//   pkg/element.js    → pkg/diffattn-explorer.js   the package's entry (<diffattn-explorer>)
//
// The glue (pkg/diffattn.js, from scripts/build-wasm) is inside both bundles. Every URL an
// entry computes from `import.meta.url` is computed in the entry module itself, so it holds for
// the bundle's location (www/dist/ for the page, pkg/ for the element). The single-file build
// (pkg/inline.js → diffattn-explorer.inline.js) is bundled by scripts/build-pkg.mjs.
//
// Usage: node scripts/bundle.mjs [--watch]   (scripts/build-pkg runs it once; scripts/serve
// with --watch, so a saved module is in the page at the next reload)

import { readdir, readFile, rm, utimes } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

export const ROOT = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const at = (...parts) => path.join(ROOT, ...parts);

/** What the browser runs (the page's <meta> policy allows no eval; esbuild emits none). */
const TARGET = 'es2022';

/** The two bundles: esbuild options of each, and the output the first view loads. */
export const BUNDLES = Object.freeze({
  page: Object.freeze({
    entryPoints: { app: at('www', 'app.js') },
    outdir: at('www', 'dist'),
    entry: at('www', 'dist', 'app.js'),
  }),
  element: Object.freeze({
    entryPoints: { 'diffattn-explorer': at('pkg', 'element.js') },
    outdir: at('pkg'),
    entry: at('pkg', 'diffattn-explorer.js'),
    chunkNames: 'chunks/[name]-[hash]',
  }),
});

/**
 * esbuild leaves an output it would write unchanged alone (a comment edited, a rebuild), so its
 * time would stay older than the module just saved; the e2e harness refuses a bundle older than
 * its modules. So every build marks its outputs as new.
 */
const markNew = {
  name: 'diffattn-mark-new',
  setup(build) {
    build.onEnd(async (result) => {
      if (result.errors.length || !result.metafile) return;
      const now = new Date();
      await Promise.all(Object.keys(result.metafile.outputs).map((f) => utimes(path.resolve(ROOT, f), now, now)));
    });
  },
};

function options(name) {
  const { entryPoints, outdir, chunkNames = '[name]-[hash]', splitting = true } = BUNDLES[name];
  return {
    entryPoints,
    outdir,
    chunkNames,
    bundle: true,
    splitting,
    format: 'esm',
    target: TARGET,
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    plugins: [markNew],
  };
}

/**
 * The files the first view of bundle `name` loads: its entry and, recursively, every chunk it
 * imports statically (not the chunks behind `import()`), from esbuild's metafile. Absolute paths.
 */
export function firstViewFiles(metafile, entry) {
  const out = [];
  const seen = new Set();
  const visit = (file) => {
    const key = path.relative(ROOT, file);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(path.resolve(ROOT, key));
    for (const imp of metafile.outputs[key]?.imports ?? []) {
      if (imp.kind === 'import-statement' && !imp.external) visit(path.resolve(ROOT, imp.path));
    }
  };
  visit(entry);
  return out;
}

/** Every JavaScript output of a bundle (entry and chunks, no maps). */
export function outputFiles(metafile) {
  return Object.keys(metafile.outputs)
    .filter((f) => f.endsWith('.js'))
    .map((f) => path.resolve(ROOT, f));
}

/** Builds both bundles once. Resolves to `{ page, element }`, each `{ metafile, firstView, outputs }`. */
export async function bundleAll() {
  if (!(await readFile(at('pkg', 'diffattn.js')).catch(() => null))) throw new Error('pkg/diffattn.js not found: run scripts/build-wasm first');
  // Chunks are named by their hash: no stale one may stay behind.
  await rm(at('www', 'dist'), { recursive: true, force: true });
  await rm(at('pkg', 'chunks'), { recursive: true, force: true });
  const out = {};
  for (const name of Object.keys(BUNDLES)) {
    const result = await esbuild.build(options(name));
    if (result.errors.length) throw new Error(`esbuild failed (${name})`);
    out[name] = { metafile: result.metafile, firstView: firstViewFiles(result.metafile, BUNDLES[name].entry), outputs: outputFiles(result.metafile) };
  }
  return out;
}

/** The folders only chunks of a bundle live in (its hashed names change with its content). */
const CHUNK_DIRS = Object.freeze({ page: at('www', 'dist'), element: at('pkg', 'chunks') });

/** Rebuilds both bundles on every change of a module they import (scripts/serve). */
async function watch() {
  for (const name of Object.keys(BUNDLES)) {
    const log = {
      name: 'diffattn-log',
      setup(build) {
        build.onEnd(async (r) => {
          // A chunk whose hash changed leaves its old file behind: remove what this build did not write.
          if (!r.errors.length && r.metafile) {
            const written = new Set(Object.keys(r.metafile.outputs).map((f) => path.resolve(ROOT, f)));
            const dir = CHUNK_DIRS[name];
            const files = dir ? await readdir(dir).catch(() => []) : [];
            for (const file of files) if (!written.has(path.join(dir, file))) await rm(path.join(dir, file), { force: true });
          }
          console.log(`bundle: ${name} ${r.errors.length ? `failed (${r.errors.length} errors)` : 'rebuilt'}`);
        });
      },
    };
    const context = await esbuild.context({ ...options(name), plugins: [markNew, log] });
    await context.watch();
  }
  console.log('bundle: watching www/ and pkg/ (Ctrl-C stops)');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const run = process.argv.includes('--watch') ? watch() : bundleAll().then(() => console.log('bundle: www/dist/app.js, pkg/diffattn-explorer.js'));
  run.catch((err) => {
    console.error(`bundle: ${err.message}`);
    process.exit(1);
  });
}
