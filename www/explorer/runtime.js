// The wasm runtime an explorer runs on: the wasm-bindgen module (its `Explorer` class and free
// functions), the instance's exports, and what Rust says once for the whole page: the names
// of mechanisms and choices, the default settings, the token limit and the version.
//
// wasm-bindgen's module keeps one instance per import of it, so every explorer that loads the
// same module URL shares one instance (and each has its own handle). Nothing is stored here.

/**
 * Loads the runtime. `glue` is the wasm-bindgen module, or its URL (imported here); `wasm` the
 * `.wasm` file's URL (or its bytes); `build` which of the two builds that is (`"simd128"` or
 * `"baseline"`, wasm-features.js), only reported back; `worker` the URL of the heads' Web
 * Worker bundle (heads-worker.js), or null where there is none (the single file). Resolves to
 * `{ glue, exports, build, worker, names, defaults, mechanisms, maxTokens, version }`, `worker`
 * being `{ url, module }` (the compiled module the handles run, which the worker runs too:
 * heads-offload.js) or null.
 */
export async function loadRuntime({ glue, wasm, build = null, worker = null }) {
  const module = typeof glue === 'string' || glue instanceof URL ? await import(String(glue)) : glue;
  const compiled = worker ? await compileWasm(wasm) : wasm;
  const exports = await module.default({ module_or_path: compiled });
  return {
    glue: module,
    exports,
    build,
    worker: worker && compiled instanceof WebAssembly.Module ? { url: worker, module: compiled } : null,
    names: module.names(),
    defaults: module.defaults(),
    mechanisms: module.mechanisms(),
    maxTokens: module.max_tokens(),
    version: module.version(),
    /** The canonical name of a stage written any accepted way (`"A"` → `"a"`), or undefined. */
    stageName: (name) => module.stage_name(name),
  };
}

/** The compiled module of `wasm` (a URL, bytes or a module), streamed where the server allows. */
async function compileWasm(wasm) {
  if (wasm instanceof WebAssembly.Module) return wasm;
  if (typeof wasm !== 'string' && !(wasm instanceof URL)) return WebAssembly.compile(wasm);
  const response = await fetch(wasm);
  if (!response.ok) throw new Error(`${wasm}: HTTP ${response.status}`);
  if (typeof WebAssembly.compileStreaming === 'function' && response.headers.get('Content-Type') === 'application/wasm') return WebAssembly.compileStreaming(response);
  return WebAssembly.compile(await response.arrayBuffer());
}
