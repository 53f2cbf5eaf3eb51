// "Every layer and head" of the retrieval lesson (docs/LESSON.md): the explorer's element,
// `<diffattn-explorer>`, registered on the lesson's page with what every element of a page
// shares (pkg/element.js's assets: the page's wasm module, the explorer's stylesheet, the
// weights store), found from the repository root's URL the page computed. This module is a
// chunk behind `import()` (lesson-page.js), imported on the first press of the button: the
// lesson's first view loads neither the element nor the page's wasm module, and the module is
// instantiated only when the element starts.

import * as glue from '../pkg/diffattn.js';
import { defineExplorerElement } from './explorer/element.js';
import { loadStyles } from './explorer/mount.js';
import { loadRuntime } from './explorer/runtime.js';
import { wasmBuild, wasmUrl } from './explorer/wasm-features.js';
import { WeightsStore } from './explorer/weights.js';

/** The element's tag, the package's (pkg/element.js). */
export const EXPLORER_TAG = 'diffattn-explorer';

/**
 * Registers `<diffattn-explorer>` (once per page: a later call keeps the first registration)
 * with assets found from `base`, the repository root's URL; returns the tag.
 */
export function defineLessonExplorer(base) {
  // The page-wide memo of pkg/element.js, per registration (there is one): a failed load is
  // forgotten, so the next element tries again.
  let shared = null;
  const assets = () => {
    if (!shared) {
      const build = wasmBuild();
      const pkg = new URL('pkg/', base);
      const promise = Promise.all([loadRuntime({ glue, wasm: wasmUrl(pkg, build), build }), loadStyles(new URL('www/explorer/explorer.css', base))]).then(([runtime, styles]) => ({
        runtime,
        styles,
        weights: new WeightsStore(new URL('weights/', base), {
          pretrained: { glue: () => import('../pkg/diffattn_pretrained.js'), wasm: wasmUrl(pkg, build, 'diffattn_pretrained'), build },
        }),
        docsBase: new URL('docs/', base),
      }));
      promise.catch(() => {
        if (shared === promise) shared = null;
      });
      shared = promise;
    }
    return shared;
  };
  defineExplorerElement(EXPLORER_TAG, assets);
  return EXPLORER_TAG;
}
