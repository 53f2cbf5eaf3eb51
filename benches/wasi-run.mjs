// Runs a wasm32-wasip1 program under node's WASI (V8, as in Chromium): scripts/bench-gemm.
// Usage: node benches/wasi-run.mjs FILE.wasm [args...]
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';

const [file, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: [file, ...args], env: {}, returnOnExit: true });
const module = await WebAssembly.compile(await readFile(file));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
process.exitCode = wasi.start(instance);
