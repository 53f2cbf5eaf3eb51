// The wasm runtime an explorer runs on: the wasm-bindgen module (its `Explorer` class and free
// functions), the instance's exports, and what Rust says once for the whole page: the names
// of mechanisms and choices, the default settings, the token limit and the version.
//
// There are two builds of the module (scripts/build-wasm, docs/PERFORMANCE.md "Size of each
// build"): the first view's (pkg/diffattn*.wasm), without the cargo feature `files` (the spec
// reader, the JSON and SVG exports), and the full build (pkg/full/), with it. A runtime of the
// first view's build knows how to load the full one (`full()`, once per runtime, so once per
// page); the engine wrapper (engine.js, `Engine#useFull`) moves its handle there when a spec is
// opened or a file exported. `files` says whether a runtime's build has them.
//
// wasm-bindgen's module keeps one instance per import of it, so every explorer that loads the
// same module URL shares one instance (and each has its own handle). Nothing is stored at
// module level: the full build's promise lives in the runtime object.

/** The wasm-bindgen module: itself, imported from its URL, or from a function's `import()`. */
async function moduleOf(glue) {
  if (typeof glue === 'function') return glue();
  if (typeof glue === 'string' || glue instanceof URL) return import(String(glue));
  return glue;
}

/**
 * Loads the runtime. `glue` is the wasm-bindgen module, its URL (imported here) or a function
 * that imports it; `wasm` the `.wasm` file's URL (or its bytes); `build` which of the two
 * builds that is (`"simd128"` or `"baseline"`, wasm-features.js), only reported back. `full`:
 * where the full build is, `{ glue, wasm }` the same way, for a runtime of the first view's
 * build; null (the default) when this build is the full one. Resolves to `{ glue, exports,
 * build, files, source, full(), names, defaults, mechanisms, maxTokens, version }`: `source` is
 * `{ glue, wasm }` as given (what another instance of the same build would load), `full()` a
 * promise of the full build's runtime (this one when it is the full build; a failed load is
 * tried again on the next call).
 */
export async function loadRuntime({ glue, wasm, build = null, full = null }) {
  const module = await moduleOf(glue);
  const exports = await module.default({ module_or_path: wasm });
  let fullRuntime = null;
  const runtime = {
    glue: module,
    exports,
    build,
    files: full === null,
    source: Object.freeze({ glue, wasm }),
    full() {
      if (full === null) return Promise.resolve(runtime);
      if (!fullRuntime) {
        const promise = loadRuntime({ glue: full.glue, wasm: full.wasm, build });
        promise.catch(() => {
          if (fullRuntime === promise) fullRuntime = null;
        });
        fullRuntime = promise;
      }
      return fullRuntime;
    },
    names: module.names(),
    defaults: module.defaults(),
    mechanisms: module.mechanisms(),
    maxTokens: module.max_tokens(),
    version: module.version(),
    /** The canonical name of a stage written any accepted way (`"A"` → `"a"`), or undefined. */
    stageName: (name) => module.stage_name(name),
  };
  return runtime;
}
