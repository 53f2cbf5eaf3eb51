// The input of the single-file build: scripts/build-pkg bundles this module (esbuild) into
// diffattn-explorer.inline.js, with both wasm builds (simd128 and baseline; only the one this
// browser runs is decoded), the default trained model, its manifest entry and the stylesheet
// inside (the virtual module `diffattn:inline-assets`, made by the build).
// It is element.js (bundled as diffattn-explorer.js) with nothing to fetch: hosts that serve
// one file, a notebook widget's `_esm`, a page opened from disk. Not shipped as it is; not imported by anything.
//
// The other mechanisms' trained models are not inside (about 250 KB gzipped each): choosing
// one shows the untrained model with a message saying so.

import * as glue from './diffattn.js';
import { defineExplorerElement } from '../www/explorer/element.js';
import { loadStyles } from '../www/explorer/mount.js';
import { loadRuntime } from '../www/explorer/runtime.js';
import { renderWidget } from '../www/explorer/widget.js';
import { InlineWeightsStore } from '../www/explorer/inline-weights.js';
import { wasmBuild } from '../www/explorer/wasm-features.js';
import { CSS, MANIFEST, MODEL_BASE64, WASM_BASE64 } from 'diffattn:inline-assets';

/** The element's tag. */
export const TAG_NAME = 'diffattn-explorer';

// The page-wide memo, as in element.js.
let shared = null;

/** The bytes of a base64 text. */
function bytesOf(base64) {
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(base64);
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function assets() {
  if (!shared) {
    const build = wasmBuild();
    const promise = Promise.all([loadRuntime({ glue, wasm: bytesOf(WASM_BASE64[build]), build }), loadStyles(CSS)]).then(([runtime, styles]) => ({
      runtime,
      styles,
      weights: new InlineWeightsStore(MANIFEST, { [MANIFEST.default]: () => bytesOf(MODEL_BASE64).buffer }),
      docsBase: null,
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

/** anywidget's entry point (`export default { render }`): this file is the Jupyter widget's `_esm`. */
export default {
  render(context) {
    return renderWidget(context, TAG_NAME);
  },
};
