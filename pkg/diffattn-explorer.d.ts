// Types of the <diffattn-explorer> element (diffattn-explorer.js; the single-file build
// diffattn-explorer.inline.js has the same). The wasm API is in diffattn.d.ts (written by
// wasm-bindgen), exported as "diffattn/wasm".

/** Everything a person can set, under one name each (the attributes, the `change` detail). */
export interface ExplorerState {
  text: string;
  /** A mechanism of the engine: `names().mechanisms` of the wasm API. */
  mechanism: string;
  heads: number;
  /** The head shown, from 1. */
  head: number;
  causal: boolean;
  shift: number;
  difference: 'single' | 'symmetric';
  fill: 'circular' | 'zero';
  renormalize: 'none' | 'softmax';
  alpha: number;
  beta: number;
  gamma: number;
  tau: number;
  window: number;
  /** Hierarchical attention's segment size. */
  segment: number;
  /** λ of both Differential Transformers: the learned one until a person moves the slider. */
  lambda: number;
  all_heads: boolean;
  weights: 'trained' | 'untrained';
  lang: 'en' | 'zh';
  theme: 'auto' | 'light' | 'dark';
}

/** The element's `change` event: a person changed a control; `detail` is the full state. */
export type ExplorerChangeEvent = CustomEvent<ExplorerState>;

/** A stages spec (docs/DESIGN.md §6–§7), as an object, its JSON text, or a file's bytes (JSON or safetensors). */
export type StagesSpec = Record<string, unknown> | string | ArrayBuffer | Uint8Array;

/**
 * `<diffattn-explorer>`. Every attribute is a property of the same name: reading gives what the
 * explorer shows now (numbers and booleans typed), writing sets the attribute, which re-renders;
 * `null` removes it. An invalid value is ignored with one console warning.
 */
export declare class DiffattnExplorerElement extends HTMLElement {
  static readonly observedAttributes: readonly string[];
  text: string;
  mechanism: string;
  heads: number;
  head: number;
  causal: boolean;
  shift: number;
  difference: ExplorerState['difference'];
  fill: ExplorerState['fill'];
  renormalize: ExplorerState['renormalize'];
  alpha: number;
  beta: number;
  gamma: number;
  tau: number;
  window: number;
  segment: number;
  lambda: number;
  all_heads: boolean;
  weights: ExplorerState['weights'];
  lang: ExplorerState['lang'];
  theme: ExplorerState['theme'];
  /** α, β and γ as `"1.5,3,-0.5"`; set it from that text, an array or `{ alpha, beta, gamma }`. */
  gate: string | null;
  /** The stages drawn: a comma list (`"A,D,fused"`), `"all"` (the default) or `"none"`; also an array. */
  maps: string | null;
  /** The controls shown: a comma list (`"shift,heads"`), `"all"` (the default) or `"none"`; also an array. */
  controls: string | null;
  /** URL of a stages spec (JSON or safetensors) to draw in place of the sentence, relative to the document. */
  src: string | null;
  /** A copy of the full state. */
  readonly state: ExplorerState;
  /** Resolves once the first maps (and the `src` spec, if any) are drawn. */
  readonly ready: Promise<void>;
  /** Resolves once every pending change is drawn. */
  settled(): Promise<void>;
  /** Draws a stages spec in place of the sentence; `null` goes back to the sentence. */
  loadSpec(spec: StagesSpec | null, name?: string): Promise<void>;
  addEventListener<K extends keyof DiffattnExplorerEventMap>(type: K, listener: (this: DiffattnExplorerElement, ev: DiffattnExplorerEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}

export interface DiffattnExplorerEventMap extends HTMLElementEventMap {
  change: ExplorerChangeEvent;
}

/** The element's tag, `"diffattn-explorer"`. */
export declare const TAG_NAME: 'diffattn-explorer';

/** anywidget's model, as far as `render` uses it. */
export interface WidgetModel {
  get(name: string): unknown;
  set(name: string, value: unknown): void;
  on(event: string, callback: () => void): void;
  off(event: string, callback: () => void): void;
  save_changes(): void;
}

/** anywidget's entry point: `render` draws an explorer in `el`, synced with `model`, and returns its cleanup. */
declare const widget: { render(context: { model: WidgetModel; el: HTMLElement }): () => void };
export default widget;

declare global {
  interface HTMLElementTagNameMap {
    'diffattn-explorer': DiffattnExplorerElement;
  }
}
