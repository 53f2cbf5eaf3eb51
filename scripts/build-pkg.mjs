// Makes pkg/ the npm package `diffattn` around what scripts/build-wasm left there
// (diffattn.js, diffattn_bg.wasm and their .d.ts): copies the page's component modules and
// stylesheet (www/explorer/ → pkg/explorer/: the same files, not a second version), the
// trained weights (weights/ → pkg/weights/) and docs/MODEL.md (the explorer links to it), then
// bundles pkg/inline.js with esbuild into the single-file build
// pkg/diffattn-explorer.inline.js (wasm, default model and CSS inside, base64) and the same as
// a classic script, pkg/diffattn-explorer.classic.js (for pages opened from disk), and copies
// the first into python/diffattn/static/ (the Jupyter widget's front end). Prints what a
// page with one element downloads and the single file's size, raw and gzipped, and writes them
// to pkg/sizes.json (not shipped). Run by scripts/build-pkg after scripts/build-wasm.

import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';

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

async function main() {
  for (const file of ['diffattn.js', 'diffattn_bg.wasm']) {
    if (!(await exists(path.join(PKG, file)))) throw new Error(`pkg/${file} not found: run scripts/build-wasm first`);
  }
  const explorerFiles = await copyFolder(at('www', 'explorer'), path.join(PKG, 'explorer'), ['.js', '.css']);
  await copyFolder(at('weights'), path.join(PKG, 'weights'), ['.bin', 'manifest.json']);
  await rm(path.join(PKG, 'docs'), { recursive: true, force: true });
  await mkdir(path.join(PKG, 'docs'), { recursive: true });
  await copyFile(at('docs', 'MODEL.md'), path.join(PKG, 'docs', 'MODEL.md'));

  // The single file: the default model and only its manifest entry.
  const manifest = JSON.parse(await readFile(at('weights', 'manifest.json'), 'utf8'));
  const entry = manifest.models.find((m) => m.mechanism === manifest.default);
  if (!entry) throw new Error(`weights/manifest.json: no model for its default ${manifest.default}`);
  const wasm = await readFile(path.join(PKG, 'diffattn_bg.wasm'));
  const model = await readFile(at('weights', entry.file));
  const css = await readFile(at('www', 'explorer', 'explorer.css'), 'utf8');
  const assets = [
    `export const WASM_BASE64 = ${JSON.stringify(wasm.toString('base64'))};`,
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

  // What a page with one element downloads: the entry, every module it imports (esbuild's
  // module graph of the entry), the stylesheet, the wasm, the manifest and the default model,
  // each gzipped on its own, as a server sends them.
  const graph = await esbuild.build({
    entryPoints: [path.join(PKG, 'diffattn-explorer.js')],
    bundle: true,
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const modules = Object.keys(graph.metafile.inputs).map((p) => path.resolve(ROOT, p));
  const onePage = [...modules, path.join(PKG, 'explorer', 'explorer.css'), path.join(PKG, 'diffattn_bg.wasm'), path.join(PKG, 'weights', 'manifest.json'), path.join(PKG, 'weights', entry.file)];
  let pageRaw = 0;
  let pageGz = 0;
  for (const file of onePage) {
    const bytes = await readFile(file);
    pageRaw += bytes.length;
    pageGz += gzipped(bytes);
  }
  // The notebook widget's front end, as package data of the pip package (python/, git-ignored).
  await mkdir(at('python', 'diffattn', 'static'), { recursive: true });
  await copyFile(inlineOut, at('python', 'diffattn', 'static', 'diffattn-explorer.inline.js'));

  const inline = await readFile(inlineOut);
  const classicBytes = await readFile(classicOut);
  const sizes = {
    classic: { bytes: classicBytes.length, gzip_bytes: gzipped(classicBytes) },
    one_element_page: { files: onePage.length, bytes: pageRaw, gzip_bytes: pageGz },
    inline: { bytes: inline.length, gzip_bytes: gzipped(inline) },
    wasm: { bytes: wasm.length, gzip_bytes: gzipped(wasm) },
    default_model: { file: entry.file, bytes: model.length, gzip_bytes: gzipped(model) },
  };
  await writeFile(path.join(PKG, 'sizes.json'), `${JSON.stringify(sizes, null, 2)}\n`);
  console.log(`build-pkg: pkg/explorer/ (${explorerFiles.length} files from www/explorer/), pkg/weights/, pkg/docs/MODEL.md copied`);
  console.log(`build-pkg: a page with one element downloads ${onePage.length} files, ${kib(pageRaw)}, ${kib(pageGz)} gzipped`);
  console.log(`build-pkg: pkg/diffattn-explorer.inline.js: ${kib(inline.length)}, ${kib(sizes.inline.gzip_bytes)} gzipped`);
  console.log(`build-pkg: pkg/diffattn-explorer.classic.js: ${kib(classicBytes.length)}, ${kib(sizes.classic.gzip_bytes)} gzipped`);
}

main().catch((err) => {
  console.error(`build-pkg: ${err.message}`);
  process.exit(1);
});
