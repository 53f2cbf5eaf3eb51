// Which of the two wasm builds this browser runs (scripts/build-wasm, docs/PERFORMANCE.md
// "Two wasm builds"): the simd128 build where WebAssembly SIMD is supported (Chrome 91, Firefox
// 89, Safari 16.4 and later), the baseline build everywhere else. Both builds of a module share
// one JavaScript glue file (diffattn.js for the page's module, diffattn_pretrained.js for the
// pretrained model's) and give the same bits in every map; only speed differs.
// The page (www/app.js), the element's entry (pkg/diffattn-explorer.js), the single-file build
// (pkg/inline.js) and the benchmark page decide here, before anything is downloaded. Pure: no
// side effects on import, nothing fetched.
//
//   import init from '../pkg/diffattn.js';
//   import { wasmUrl } from './explorer/wasm-features.js';
//   await init({ module_or_path: wasmUrl(new URL('../pkg/', import.meta.url)) });

/** The wasm file names, by build, in the folder beside the glue (pkg/). */
export const WASM_FILES = Object.freeze({
  simd128: 'diffattn_simd_bg.wasm',
  baseline: 'diffattn_bg.wasm',
});

// The smallest module that uses a SIMD instruction (as in wasm-feature-detect): one function
// `(func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)`. A browser without SIMD
// rejects it; validating does not compile or run anything.
const SIMD_PROBE = Object.freeze([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, //       type section: () -> v128
  0x03, 0x02, 0x01, 0x00, //                         function section: one function of type 0
  0x0a, 0x0a, 0x01, 0x08, 0x00, //                   code section: one body, no locals
  0x41, 0x00, //                                     i32.const 0
  0xfd, 0x0f, //                                     i8x16.splat
  0xfd, 0x62, //                                     i8x16.popcnt
  0x0b, //                                           end
]);

/** Whether this browser runs WebAssembly SIMD (simd128). Validating 30 bytes takes
 * microseconds, so nothing is remembered (the module keeps no state). */
export function simdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(new Uint8Array(SIMD_PROBE));
  } catch {
    return false;
  }
}

/** Which build to load here: `"simd128"` or `"baseline"`. */
export function wasmBuild() {
  return simdSupported() ? 'simd128' : 'baseline';
}

/** The wasm file name of `build` (by default the one to load here) of the module `module`
 * (`"diffattn"`, the page's; `"diffattn_pretrained"`, the pretrained model's). */
export function wasmFile(build = wasmBuild(), module = 'diffattn') {
  const file = WASM_FILES[build];
  if (!file) throw new Error(`unknown wasm build ${JSON.stringify(build)}: one of ${Object.keys(WASM_FILES).join(', ')}`);
  return module === 'diffattn' ? file : `${module}${file.slice('diffattn'.length)}`;
}

/** The URL of `build`'s wasm file (by default the one to load here) of `module` in the folder `base`. */
export function wasmUrl(base, build = wasmBuild(), module = 'diffattn') {
  return new URL(wasmFile(build, module), base);
}
