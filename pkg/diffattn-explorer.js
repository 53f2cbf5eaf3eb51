// The package's entry: importing this module registers `<diffattn-explorer>` (see README.md
// beside it, and docs/EMBED.md). Everything it loads is found relative to this module's own
// URL, so the folder works wherever it is served: the wasm-bindgen module and one of its two
// `.wasm` builds (simd128 where the browser runs WebAssembly SIMD, else the baseline), the
// explorer's modules and stylesheet (`explorer/`, copied from www/explorer/ by
// scripts/build-pkg) and the trained weights (`weights/`).
//
// One thing is shared by every element of a page, and it lives here, in the one memo below:
// the wasm runtime (one module instance; each element has its own handle), the stylesheet
// (one constructable CSSStyleSheet adopted by every shadow root) and the weights store (each
// model fetched once). The single-file build (inline.js) is the same with its assets inside.

import * as glue from './diffattn.js';
import { defineExplorerElement } from './explorer/element.js';
import { loadStyles } from './explorer/mount.js';
import { loadRuntime } from './explorer/runtime.js';
import { wasmBuild, wasmUrl } from './explorer/wasm-features.js';
import { renderWidget } from './explorer/widget.js';
import { WeightsStore } from './explorer/weights.js';

/** The element's tag. */
export const TAG_NAME = 'diffattn-explorer';

// The page-wide memo: a promise of the shared assets, made by the first element; a failed load
// is forgotten, so an element created later tries again.
let shared = null;

function assets() {
  if (!shared) {
    const build = wasmBuild();
    const promise = Promise.all([
      loadRuntime({ glue, wasm: wasmUrl(new URL('./', import.meta.url), build), build }),
      loadStyles(new URL('./explorer/explorer.css', import.meta.url)),
    ]).then(([runtime, styles]) => ({
      runtime,
      styles,
      weights: new WeightsStore(new URL('./weights/', import.meta.url)),
      docsBase: new URL('./docs/', import.meta.url),
    }));
    promise.catch(() => {
      if (shared === promise) shared = null;
    });
    shared = promise;
  }
  return shared;
}

/** The element's class (registered on import). */
export const DiffattnExplorerElement = defineExplorerElement(TAG_NAME, assets);

/** anywidget's entry point (`export default { render }`), so this module can also be a widget's `_esm`. */
export default {
  render(context) {
    return renderWidget(context, TAG_NAME);
  },
};
