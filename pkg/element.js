// The package's entry, as written: scripts/bundle.mjs bundles and minifies it (with the
// explorer's modules from www/explorer/ and the glue) into pkg/diffattn-explorer.js, the module
// the package ships and authors import; this file is not shipped. Importing the bundle
// registers `<diffattn-explorer>` (see README.md beside it, and docs/EMBED.md). Everything it
// loads is found relative to the bundle's own URL (it sits beside this file, in pkg/), so the
// folder works wherever it is served: one of the two `.wasm` builds (simd128 where the browser
// runs WebAssembly SIMD, else the baseline), the stylesheet (`explorer/explorer.css`, copied
// from www/explorer/ by scripts/build-pkg), the trained weights (`weights/`), and, for
// `weights="minilm"` only, the pretrained model's own module (`diffattn_pretrained.js` and its
// `.wasm`) with `weights/minilm/minilm.bin` when the host serves it.
//
// One thing is shared by every element of a page, and it lives here, in the one memo below:
// the wasm runtime (one module instance; each element has its own handle), the stylesheet
// (one constructable CSSStyleSheet adopted by every shadow root) and the weights store (each
// model fetched once). The single-file build (inline.js) is the same with its assets inside.

import * as glue from './diffattn.js';
import { defineExplorerElement } from '../www/explorer/element.js';
import { loadStyles } from '../www/explorer/mount.js';
import { loadRuntime } from '../www/explorer/runtime.js';
import { wasmBuild, wasmUrl } from '../www/explorer/wasm-features.js';
import { renderWidget } from '../www/explorer/widget.js';
import { WeightsStore } from '../www/explorer/weights.js';

/** The element's tag. */
export const TAG_NAME = 'diffattn-explorer';

// The page-wide memo: a promise of the shared assets, made by the first element; a failed load
// is forgotten, so an element created later tries again.
let shared = null;

/** What every element of the page shares: one runtime (a spec or not, the same build). */
function assets() {
  if (!shared) {
    const build = wasmBuild();
    const promise = Promise.all([
      loadRuntime({ glue, wasm: wasmUrl(new URL('./', import.meta.url), build), build }),
      loadStyles(new URL('./explorer/explorer.css', import.meta.url)),
    ]).then(([runtime, styles]) => ({
      runtime,
      styles,
      // The pretrained model's own wasm module, beside this bundle: fetched with the model's
      // weights on first use, never by the first view (its glue is a chunk behind import()).
      weights: new WeightsStore(new URL('./weights/', import.meta.url), {
        pretrained: { glue: () => import('./diffattn_pretrained.js'), wasm: wasmUrl(new URL('./', import.meta.url), build, 'diffattn_pretrained'), build },
      }),
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
