// The custom element `<diffattn-explorer>`: an ExplorerView in the element's open shadow root,
// configured by attributes (each reflected as a property of the same name; attributes.js reads
// them), reporting a person's changes as a `change` event. This module defines the class but
// registers nothing and loads nothing: the package's entry modules (pkg/diffattn-explorer.js,
// and pkg/inline.js for the single-file build) call `defineExplorerElement` with `assets`, a
// function that resolves to what every element of the page shares (one wasm runtime, one
// stylesheet, one weights store). That memo is the entry module's, the one page-wide cache;
// nothing here outlives an element.

import { ATTRIBUTES, formatGate, GATE_KEYS, readAttribute, readAttributes } from './attributes.js';
import { loadStyles, mountExplorer } from './mount.js';
import { messageOf } from './messages.js';
import { formatValue, parseValue, STATE_KEYS } from './state.js';

/** The stylesheet of the message shown when the engine could not load at all (no explorer). */
const FAILED_CSS = ':host { display: block; } p { margin: 0; padding: 0.75em 1em; border: 1px solid #c2413b; border-radius: 8px; }';

/**
 * The element's class for `assets()`, which resolves to `{ runtime, styles, weights, docsBase }`
 * (runtime.js, mount.js `loadStyles`, a WeightsStore, the docs folder's URL).
 */
export function explorerElementClass(assets) {
  return class DiffattnExplorerElement extends HTMLElement {
    static observedAttributes = ATTRIBUTES;

    static {
      // Every attribute is a property of the same name: reading gives what the explorer shows
      // now (typed: numbers, booleans), writing sets the attribute (which re-renders).
      for (const name of ATTRIBUTES) {
        Object.defineProperty(this.prototype, name, {
          configurable: true,
          enumerable: true,
          get() {
            return this.#property(name);
          },
          set(value) {
            this.#setProperty(name, value);
          },
        });
      }
    }

    /** The ExplorerView while connected and started, else null. */
    #view = null;
    /** The current start (a fresh object each time, null when torn down): a start that finished late does nothing. */
    #token = null;
    #srcLoad = 0;
    #warned = new Set();
    #resolveReady;
    /** Resolves once the first maps (and the `src` spec, if any) are drawn. */
    ready = new Promise((resolve) => {
      this.#resolveReady = resolve;
    });

    connectedCallback() {
      // A property set on the element before its class was defined (a script ran before the
      // module) sits on the instance and hides the accessor: move it to the attribute.
      for (const name of ATTRIBUTES) {
        if (Object.hasOwn(this, name)) {
          const value = this[name];
          delete this[name];
          this[name] = value;
        }
      }
      if (this.#token) return;
      this.#token = {};
      this.#start(this.#token);
    }

    disconnectedCallback() {
      // Moving an element (disconnect, then connect in the same task) keeps its explorer.
      queueMicrotask(() => {
        if (!this.isConnected) this.#teardown();
      });
    }

    attributeChangedCallback(name, old, raw) {
      if (old === raw || !this.#view) return;
      const read = this.#read(name, raw);
      const view = this.#view;
      if (read.state && Object.keys(read.state).length) view.set(read.state);
      if ('maps' in read) view.setMaps(read.maps);
      if ('controls' in read) view.setControls(read.controls);
      if ('src' in read) this.#loadSrc(read.src);
    }

    /** A copy of the explorer's full state (the names of the `change` event's detail). */
    get state() {
      if (this.#view) return this.#view.getState();
      const entries = Object.keys(STATE_KEYS).map((key) => [key, this.#attributeValue(key)]);
      return Object.fromEntries(entries.filter(([, value]) => value !== undefined));
    }

    /** Resolves once every pending change is drawn. */
    async settled() {
      await this.ready;
      await this.#view?.settled();
    }

    /**
     * Draws a stages spec (an object, its JSON text, or a file's bytes: JSON or safetensors) in
     * place of the sentence; null goes back to the sentence.
     */
    async loadSpec(spec, name = 'spec.json') {
      await this.ready;
      this.#srcLoad += 1;
      const view = this.#view;
      if (!view) return;
      if (spec === null || spec === undefined) view.specs.leave({ restore: true });
      else if (typeof spec === 'string' || spec instanceof ArrayBuffer || ArrayBuffer.isView(spec)) await view.specs.load(ArrayBuffer.isView(spec) ? new Uint8Array(spec.buffer, spec.byteOffset, spec.byteLength) : spec, name);
      else await view.specs.load(JSON.stringify(spec), name);
      await view.settled();
    }

    async #start(token) {
      let shared;
      try {
        shared = await assets();
      } catch (err) {
        if (token === this.#token) this.#failed(err);
        return;
      }
      if (token !== this.#token || !this.isConnected) return;
      const { runtime, styles, weights, docsBase } = shared;
      const read = readAttributes((n) => this.getAttribute(n), runtime.names, runtime.stageName);
      for (const sentence of read.invalid) this.#warn(sentence);
      const inherited = parseValue('lang', this.closest('[lang]')?.getAttribute('lang'), runtime.names);
      // A figure of a spec (`src`) draws that spec, or says why it cannot: never the default
      // sentence in its place.
      const blank = read.src && !('text' in read.state) ? { text: '' } : {};
      const view = mountExplorer(this, styles, {
        runtime,
        weights,
        state: { lang: inherited ?? 'en', ...blank, ...read.state },
        controls: read.controls,
        maps: read.maps,
        docsBase,
        onChange: (state) => this.dispatchEvent(new CustomEvent('change', { detail: state, bubbles: true, composed: true })),
      });
      this.#view = view;
      view.specs.expected = !!read.src;
      await view.start({ keep: read.named });
      if (read.src && view === this.#view) await this.#loadSrc(read.src);
      if (view === this.#view) await view.settled();
      this.#resolveReady();
    }

    #teardown() {
      this.#token = null;
      this.#view?.destroy();
      this.#view = null;
      this.shadowRoot?.replaceChildren();
    }

    /** The engine did not load: say so in the element (there is no explorer to show it). */
    #failed(err) {
      const root = this.shadowRoot ?? this.attachShadow({ mode: 'open' });
      loadStyles(FAILED_CSS).then((sheet) => {
        root.adoptedStyleSheets = [sheet];
      });
      const p = document.createElement('p');
      p.setAttribute('part', 'messages');
      p.setAttribute('role', 'alert');
      p.textContent = `diffattn: the engine could not load (${messageOf(err)}).`;
      root.replaceChildren(p);
      this.#resolveReady();
    }

    /** readAttribute, warning once per element about what it ignored. */
    #read(name, raw) {
      const { runtime } = this.#view;
      const read = readAttribute(name, raw, runtime.names, runtime.stageName);
      if (read.invalid) this.#warn(read.invalid);
      return read;
    }

    #warn(sentence) {
      if (this.#warned.has(sentence)) return;
      this.#warned.add(sentence);
      console.warn(sentence);
    }

    /** Fetches the stages spec at `src` (relative to the document) and draws it. */
    async #loadSrc(src) {
      const view = this.#view;
      const load = ++this.#srcLoad;
      view.specs.expected = src !== null;
      if (src === null) {
        view.specs.leave({ restore: true });
        return;
      }
      const url = new URL(src, document.baseURI);
      const name = decodeURIComponent(url.pathname.split('/').pop() || url.href);
      let bytes;
      try {
        const res = await fetch(url);
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        bytes = new Uint8Array(await res.arrayBuffer());
      } catch (err) {
        if (load === this.#srcLoad && view === this.#view) view.messages.show('spec', view.t('spec_error', { name, msg: messageOf(err) }));
        return;
      }
      if (load !== this.#srcLoad || view !== this.#view) return;
      await view.specs.load(bytes, name);
      await view.settled();
    }

    #property(name) {
      const view = this.#view;
      if (name in STATE_KEYS) return view ? view.state[name] : this.#attributeValue(name);
      if (name === 'gate') return view ? formatGate(view.state) : this.getAttribute('gate');
      return this.getAttribute(name);
    }

    /** Before the explorer started: what the attribute says (typed), or undefined. */
    #attributeValue(name) {
      const raw = this.getAttribute(name);
      if (raw === null) return undefined;
      // Names of mechanisms and choices need the engine's list; until then the text stands.
      const spec = STATE_KEYS[name];
      return spec.kind === 'text' || typeof spec.choices === 'string' ? raw : parseValue(name, raw, null);
    }

    #setProperty(name, value) {
      if (value === null || value === undefined) {
        this.removeAttribute(name);
        return;
      }
      let text;
      if (name in STATE_KEYS) text = formatValue(name, value);
      else if (name === 'gate' && typeof value === 'object') text = Array.isArray(value) ? value.join(',') : GATE_KEYS.map((k) => value[k]).join(',');
      else if ((name === 'maps' || name === 'controls') && typeof value === 'object') text = [...value].join(',');
      else text = String(value);
      const old = this.getAttribute(name);
      this.setAttribute(name, text);
      // The same attribute is no change to the browser, but the explorer may show something
      // else since (a person moved the control, a spec brought its own settings): apply it.
      if (old === text && this.#view) this.attributeChangedCallback(name, null, text);
    }
  };
}

/**
 * Registers `tagName` (once per page: a second call returns the class already registered)
 * with the class of `explorerElementClass(assets)`. Returns the registered class.
 */
export function defineExplorerElement(tagName, assets) {
  const existing = customElements.get(tagName);
  if (existing) return existing;
  const cls = explorerElementClass(assets);
  customElements.define(tagName, cls);
  return cls;
}
