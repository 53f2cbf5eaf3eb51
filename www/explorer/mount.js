// Putting an explorer on a page: an open shadow root on a host element, the explorer's
// stylesheet adopted into it (one CSSStyleSheet shared by every explorer of a runtime, so no
// `<style>` element and nothing inline: it works under a strict Content-Security-Policy), and
// an ExplorerView inside. The page (www/app.js) and the custom element both use this.

import { ExplorerView } from './view.js';

/**
 * The explorer's stylesheet from `url` (or CSS text), as a constructable stylesheet. Resolves
 * to a CSSStyleSheet.
 */
export async function loadStyles(source) {
  const text = source instanceof URL ? await fetch(source).then((r) => (r.ok ? r.text() : Promise.reject(new Error(`${source}: HTTP ${r.status}`)))) : String(source);
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(text);
  return sheet;
}

/** The URL of the explorer's stylesheet beside this module. */
export const STYLES_URL = new URL('explorer.css', import.meta.url);

/**
 * Mounts an explorer on `host` (which gets an open shadow root, or keeps the one it has) with
 * `styles` (from loadStyles) and ExplorerView's `options`. Returns the ExplorerView.
 */
export function mountExplorer(host, styles, options) {
  const root = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
  root.adoptedStyleSheets = [styles];
  root.replaceChildren();
  return new ExplorerView(root, options);
}
