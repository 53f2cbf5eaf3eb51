// The wasm runtime an explorer runs on: the wasm-bindgen module (its `Explorer` class and free
// functions), the instance's exports, and what Rust says once for the whole page: the names
// of mechanisms and choices, the default settings, the token limit and the version.
//
// wasm-bindgen's module keeps one instance per import of it, so every explorer that loads the
// same module URL shares one instance (and each has its own handle). Nothing is stored here.

/**
 * Loads the runtime. `glue` is the wasm-bindgen module, or its URL (imported here); `wasm` the
 * `.wasm` file's URL (or its bytes); `build` which of the two builds that is (`"simd128"` or
 * `"baseline"`, wasm-features.js), only reported back. Resolves to `{ glue, exports, build,
 * names, defaults, mechanisms, maxTokens, version }`.
 */
export async function loadRuntime({ glue, wasm, build = null }) {
  const module = typeof glue === 'string' || glue instanceof URL ? await import(String(glue)) : glue;
  const exports = await module.default({ module_or_path: wasm });
  return {
    glue: module,
    exports,
    build,
    names: module.names(),
    defaults: module.defaults(),
    mechanisms: module.mechanisms(),
    maxTokens: module.max_tokens(),
    version: module.version(),
    /** The canonical name of a stage written any accepted way (`"A"` → `"a"`), or undefined. */
    stageName: (name) => module.stage_name(name),
  };
}
