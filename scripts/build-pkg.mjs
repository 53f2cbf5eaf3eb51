// Makes pkg/ the npm package `diffattn` around what scripts/build-wasm left there
// (diffattn.js, the two wasm builds diffattn_bg.wasm and diffattn_simd_bg.wasm, their .d.ts;
// the pretrained model's module diffattn_pretrained.js with its two builds, shipped beside):
// bundles and minifies the page (www/app.js → www/dist/app.js) and the package's entry
// (pkg/element.js → pkg/diffattn-explorer.js) with scripts/bundle.mjs, copies the component's
// modules and stylesheets as written (www/explorer/ → pkg/explorer/, for authors who compose the
// element themselves; the bundle loads none of them), the trained weights (weights/ → pkg/weights/, weights/retrieval/ → pkg/weights/retrieval/) and
// docs/MODEL.md (the explorer links to it), then bundles pkg/inline.js with esbuild into the
// single-file build pkg/diffattn-explorer.inline.js (both wasm builds, the default model and
// the CSS inside, base64) and the same as a classic script, pkg/diffattn-explorer.classic.js
// (for pages opened from disk), and copies the first into python/diffattn/static/ (the
// Jupyter widget's front end).
//
// Prints and writes to pkg/sizes.json (not shipped), raw and gzipped (each file on its own at
// level 9, as a server sends it): the size budget of each wasm build (wasm + JavaScript ≤ 350 KB
// gzipped: the wasm and the JavaScript the page's, or a page with one element's, first view
// loads before its first heatmap: its bundle's entry and the chunks it imports statically, the
// glue inside), the bundles' first view and lazy chunks, what a page with one element
// downloads, the single files, and the pretrained model's own module (`pretrained`: its wasm
// and the chunks that load it, fetched with the model, never in the first view). Run by scripts/build-pkg after scripts/build-wasm.

import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { bundleAll, firstViewFiles } from './bundle.mjs';

const ROOT = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const PKG = path.join(ROOT, 'pkg');
const at = (...parts) => path.join(ROOT, ...parts);

async function exists(file) {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** Copies the files of `from` whose names end with one of `suffixes` into `to` (made afresh). */
async function copyFolder(from, to, suffixes) {
  await rm(to, { recursive: true, force: true });
  await mkdir(to, { recursive: true });
  const names = (await readdir(from)).filter((n) => suffixes.some((s) => n.endsWith(s))).sort();
  for (const name of names) await copyFile(path.join(from, name), path.join(to, name));
  return names;
}

const gzipped = (bytes) => gzipSync(bytes, { level: 9 }).length;
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const kb = (bytes) => `${(bytes / 1000).toFixed(1)} KB`;

/** The two wasm builds (scripts/build-wasm; www/explorer/wasm-features.js picks one). */
const BUILDS = Object.freeze({ simd128: 'diffattn_simd_bg.wasm', baseline: 'diffattn_bg.wasm' });

/** The pretrained model's own module (scripts/build-wasm, crate web-pretrained/): fetched with the model, never in the first view. */
const PRETRAINED_BUILDS = Object.freeze({ simd128: 'diffattn_pretrained_simd_bg.wasm', baseline: 'diffattn_pretrained_bg.wasm' });

/**
 * The JavaScript a bundle loads for the pretrained model, beyond its first view: the chunks
 * behind `import()` of the model's glue (pkg/diffattn_pretrained.js) and of
 * www/explorer/pretrained.js, with what they import statically. Absolute paths.
 */
function pretrainedFiles(bundle) {
  const out = new Set();
  for (const [file, output] of Object.entries(bundle.metafile.outputs)) {
    if (!/(diffattn_pretrained|explorer\/pretrained)\.js$/.test(output.entryPoint ?? '')) continue;
    for (const f of firstViewFiles(bundle.metafile, path.resolve(ROOT, file))) if (!bundle.firstView.includes(f)) out.add(f);
  }
  if (!out.size) throw new Error('no chunk of the pretrained model in the bundle (it should be behind import())');
  return [...out];
}

/** The size budget of each build: its wasm and the JavaScript that loads it, gzipped (issue 18). */
const BUDGET_BYTES = 350_000;

/** `{ files, bytes, gzip_bytes }` of a list of files. */
async function measure(files) {
  let bytes = 0;
  let gzipBytes = 0;
  for (const file of files) {
    const body = await readFile(file);
    bytes += body.length;
    gzipBytes += gzipped(body);
  }
  return { files: files.length, bytes, gzip_bytes: gzipBytes };
}

/** What each build costs against the budget: the wasm, the JavaScript beside it, the sum. */
async function budget(jsFiles) {
  const js = await measure(jsFiles);
  const out = { javascript: js };
  for (const [build, file] of Object.entries(BUILDS)) {
    const wasm = await measure([path.join(PKG, file)]);
    const total = js.gzip_bytes + wasm.gzip_bytes;
    out[build] = { wasm_file: file, wasm, total_gzip_bytes: total, budget_gzip_bytes: BUDGET_BYTES, within: total <= BUDGET_BYTES };
  }
  return out;
}

async function main() {
  for (const file of ['diffattn.js', ...Object.values(BUILDS), 'diffattn_pretrained.js', ...Object.values(PRETRAINED_BUILDS)]) {
    if (!(await exists(path.join(PKG, file)))) throw new Error(`pkg/${file} not found: run scripts/build-wasm first`);
  }
  // The stylesheet the element fetches, and the component's modules as written for authors who
  // compose the element themselves (docs/EMBED.md: `diffattn/explorer/element.js`); the bundle
  // has its own copy of them inside and loads none of these.
  const explorerFiles = await copyFolder(at('www', 'explorer'), path.join(PKG, 'explorer'), ['.js', '.css']);
  const bundles = await bundleAll();
  await copyFolder(at('weights'), path.join(PKG, 'weights'), ['.bin', 'manifest.json']);
  // The retrieval lesson's models (explorer/lesson.js fetches weights/retrieval/).
  await copyFolder(at('weights', 'retrieval'), path.join(PKG, 'weights', 'retrieval'), ['.bin', 'manifest.json']);
  await rm(path.join(PKG, 'docs'), { recursive: true, force: true });
  await mkdir(path.join(PKG, 'docs'), { recursive: true });
  await copyFile(at('docs', 'MODEL.md'), path.join(PKG, 'docs', 'MODEL.md'));

  // The single file: the default model and only its manifest entry.
  const manifest = JSON.parse(await readFile(at('weights', 'manifest.json'), 'utf8'));
  const entry = manifest.models.find((m) => m.mechanism === manifest.default);
  if (!entry) throw new Error(`weights/manifest.json: no model for its default ${manifest.default}`);
  // Both wasm builds, so the single file runs the simd128 build where the browser can, and
  // still runs everywhere else; only the one picked is decoded.
  const wasmBase64 = {};
  for (const [build, file] of Object.entries(BUILDS)) wasmBase64[build] = (await readFile(path.join(PKG, file))).toString('base64');
  const model = await readFile(at('weights', entry.file));
  const css = await readFile(at('www', 'explorer', 'explorer.css'), 'utf8');
  const assets = [
    `export const WASM_BASE64 = Object.freeze(${JSON.stringify(wasmBase64)});`,
    `export const MODEL_BASE64 = ${JSON.stringify(model.toString('base64'))};`,
    `export const MANIFEST = Object.freeze(${JSON.stringify({ ...manifest, models: [entry] })});`,
    `export const CSS = ${JSON.stringify(css)};`,
  ].join('\n');
  const inlineOut = path.join(PKG, 'diffattn-explorer.inline.js');
  const classicOut = path.join(PKG, 'diffattn-explorer.classic.js');
  const plugin = {
    name: 'diffattn-inline-assets',
    setup(build) {
      build.onResolve({ filter: /^diffattn:inline-assets$/ }, () => ({ path: 'inline-assets', namespace: 'diffattn' }));
      build.onLoad({ filter: /.*/, namespace: 'diffattn' }, () => ({ contents: assets, loader: 'js' }));
    },
  };
  // Nothing of the single file is fetched, so nothing needs its own URL; and a module imported
  // from a blob: URL (as anywidget imports `_esm`) has an import.meta.url that is no base for
  // `new URL(..., base)`. So import.meta.url (mount.js's default stylesheet URL, wasm-bindgen's
  // default .wasm URL, neither used here) becomes the document's URL, in both builds.
  const common = {
    entryPoints: [path.join(PKG, 'inline.js')],
    define: { 'import.meta.url': 'document.baseURI' },
    bundle: true,
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [plugin],
  };
  const banner = (what) => `// diffattn explorer, ${what}: the wasm, the ${manifest.default} model and the stylesheet inside. MIT OR Apache-2.0.`;
  // The ES module (import it, or give it to anywidget as `_esm`).
  const result = await esbuild.build({ ...common, format: 'esm', outfile: inlineOut, banner: { js: banner('single-file build (ES module)') } });
  // The same as a classic script, for a page opened from disk: browsers load no module from a
  // file:// URL, but they do run `<script src>`. It has no exports.
  const classic = await esbuild.build({
    ...common,
    format: 'iife',
    outfile: classicOut,
    banner: { js: banner('single-file build (classic script)') },
  });
  if (classic.errors.length) throw new Error('esbuild failed (classic)');
  if (result.errors.length) throw new Error('esbuild failed');

  // What a page with one element downloads: the bundle (the glue inside) and the chunks it
  // imports statically, the stylesheet, one wasm build, the manifest and the default model,
  // each gzipped on its own, as a server sends them.
  const elementModules = bundles.element.firstView;
  const rest = [path.join(PKG, 'explorer', 'explorer.css'), path.join(PKG, 'weights', 'manifest.json'), path.join(PKG, 'weights', entry.file)];
  const onePage = {};
  for (const [build, file] of Object.entries(BUILDS)) onePage[build] = await measure([...elementModules, path.join(PKG, file), ...rest]);
  // The page (www/index.html) loads the bundle www/dist/app.js (the glue inside) and the chunks
  // it imports statically; the lesson's chunk only with ?lesson=.
  const pageModules = bundles.page.firstView;
  // The notebook widget's front end, as package data of the pip package (python/, git-ignored).
  await mkdir(at('python', 'diffattn', 'static'), { recursive: true });
  await copyFile(inlineOut, at('python', 'diffattn', 'static', 'diffattn-explorer.inline.js'));

  const inline = await readFile(inlineOut);
  const classicBytes = await readFile(classicOut);
  const sizes = {
    budget: {
      page: await budget(pageModules),
      element: await budget(elementModules),
    },
    // The bundles: what the first view loads, and the lazily loaded chunks (the lesson's).
    bundles: Object.fromEntries(
      await Promise.all(
        Object.entries(bundles).map(async ([name, b]) => [name, { first_view: await measure(b.firstView), lazy: await measure(b.outputs.filter((f) => !b.firstView.includes(f))) }]),
      ),
    ),
    one_element_page: onePage,
    inline: { bytes: inline.length, gzip_bytes: gzipped(inline) },
    classic: { bytes: classicBytes.length, gzip_bytes: gzipped(classicBytes) },
    wasm: Object.fromEntries(await Promise.all(Object.entries(BUILDS).map(async ([build, file]) => [build, { file, ...(await measure([path.join(PKG, file)])) }]))),
    // The pretrained model's own module, fetched with its weights on first use of
    // weights=minilm (never in `budget`): its wasm per flavour, and the JavaScript chunks the page
    // and the element load for it.
    pretrained: {
      wasm: Object.fromEntries(await Promise.all(Object.entries(PRETRAINED_BUILDS).map(async ([build, file]) => [build, { file, ...(await measure([path.join(PKG, file)])) }]))),
      javascript: { page: await measure(pretrainedFiles(bundles.page)), element: await measure(pretrainedFiles(bundles.element)) },
    },
    default_model: { file: entry.file, bytes: model.length, gzip_bytes: gzipped(model) },
  };
  await writeFile(path.join(PKG, 'sizes.json'), `${JSON.stringify(sizes, null, 2)}\n`);
  console.log(`build-pkg: www/dist/ (${bundles.page.outputs.length} files) and pkg/diffattn-explorer.js bundled; pkg/explorer/ (${explorerFiles.length} files from www/explorer/), pkg/weights/, pkg/docs/MODEL.md copied`);
  for (const [who, what] of [['the page (www/)', sizes.budget.page], ['the element (pkg/)', sizes.budget.element]]) {
    for (const build of Object.keys(BUILDS)) {
      const b = what[build];
      console.log(
        `build-pkg: budget, ${who}, ${build}: wasm ${kb(b.wasm.gzip_bytes)} + JavaScript ${kb(what.javascript.gzip_bytes)} (${what.javascript.files} files) = ${kb(b.total_gzip_bytes)} gzipped: ${b.within ? 'within' : `OVER by ${kb(b.total_gzip_bytes - BUDGET_BYTES)}`} the ${kb(BUDGET_BYTES)} budget`,
      );
    }
  }
  for (const [build, m] of Object.entries(sizes.pretrained.wasm)) {
    console.log(`build-pkg: the pretrained model's module (${build}), fetched with the model, not in the first view: wasm ${kb(m.gzip_bytes)} + JavaScript ${kb(sizes.pretrained.javascript.page.gzip_bytes)} (the page's chunks) gzipped`);
  }
  for (const [build, m] of Object.entries(onePage)) console.log(`build-pkg: a page with one element (${build}) downloads ${m.files} files, ${kib(m.bytes)}, ${kib(m.gzip_bytes)} gzipped`);
  console.log(`build-pkg: pkg/diffattn-explorer.inline.js: ${kib(inline.length)}, ${kib(sizes.inline.gzip_bytes)} gzipped`);
  console.log(`build-pkg: pkg/diffattn-explorer.classic.js: ${kib(classicBytes.length)}, ${kib(sizes.classic.gzip_bytes)} gzipped`);
}

main().catch((err) => {
  console.error(`build-pkg: ${err.message}`);
  process.exit(1);
});
