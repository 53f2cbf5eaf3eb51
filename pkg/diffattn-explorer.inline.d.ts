// The single-file build has the element's API (diffattn-explorer.d.ts).
export * from './diffattn-explorer.js';
export { default } from './diffattn-explorer.js';
