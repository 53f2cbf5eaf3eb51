//! `pkg/diffattn-explorer.d.ts` (the element's types: the state and the attributes, each
//! property typed from its schema entry; choices as unions of their names) and
//! `pkg/diffattn-explorer.inline.d.ts` (the single-file build has the same API).

use std::fmt::Write;

use super::{choice_names, doc_line, generated_line, quoted};
use crate::schema::value::Type;
use crate::schema::{self, Key, Kind};

/// A key's TypeScript type.
fn type_of(key: &Key) -> String {
    if let Some(names) = choice_names(key) {
        let names: Vec<String> = names.iter().map(|n| quoted(n)).collect();
        return names.join(" | ");
    }
    if let Some(access) = key.access {
        return match access.ty {
            Type::Integer | Type::Number => "number",
            Type::Boolean => "boolean",
            Type::Name { .. } => "string",
        }
        .to_string();
    }
    match key.kind {
        Kind::Slider { .. } | Kind::Int { .. } => "number",
        Kind::Bool => "boolean",
        Kind::Gate | Kind::List | Kind::Url => "string | null",
        _ => "string",
    }
    .to_string()
}

/// The element's types.
pub fn element() -> String {
    let mut state = String::new();
    let mut properties = String::new();
    for key in schema::KEYS {
        let doc = doc_line(key);
        if key.surfaces.state {
            writeln!(state, "  /** {doc} */\n  {}: {};", key.name, type_of(key)).ok();
            writeln!(properties, "  {}: ExplorerState['{}'];", key.name, key.name).ok();
        } else if key.surfaces.attribute {
            writeln!(
                properties,
                "  /** {doc} */\n  {}: {};",
                key.name,
                type_of(key)
            )
            .ok();
        }
    }
    let mut out = generated_line("//");
    write!(
        out,
        "// Types of the <diffattn-explorer> element (diffattn-explorer.js; the single-file build
// diffattn-explorer.inline.js has the same). The wasm API is in diffattn.d.ts (written by
// wasm-bindgen), exported as \"diffattn/wasm\".

/** Everything a person can set, under one name each (the attributes, the `change` detail). */
export interface ExplorerState {{
{state}}}

/** The element's `change` event: a person changed a control; `detail` is the full state. */
export type ExplorerChangeEvent = CustomEvent<ExplorerState>;

/** A stages spec (docs/DESIGN.md §6–§7), as an object, its JSON text, or a file's bytes (JSON or safetensors). */
export type StagesSpec = Record<string, unknown> | string | ArrayBuffer | Uint8Array;

/**
 * `<diffattn-explorer>`. Every attribute is a property of the same name: reading gives what the
 * explorer shows now (numbers and booleans typed), writing sets the attribute, which re-renders;
 * `null` removes it. An invalid value is ignored with one console warning.
 */
export declare class DiffattnExplorerElement extends HTMLElement {{
  static readonly observedAttributes: readonly string[];
{properties}  /** A copy of the full state. */
  readonly state: ExplorerState;
  /** Resolves once the first maps (and the `src` spec, if any) are drawn. */
  readonly ready: Promise<void>;
  /** Resolves once every pending change is drawn. */
  settled(): Promise<void>;
  /** Draws a stages spec in place of the sentence; `null` goes back to the sentence. */
  loadSpec(spec: StagesSpec | null, name?: string): Promise<void>;
  addEventListener<K extends keyof DiffattnExplorerEventMap>(type: K, listener: (this: DiffattnExplorerElement, ev: DiffattnExplorerEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
}}

export interface DiffattnExplorerEventMap extends HTMLElementEventMap {{
  change: ExplorerChangeEvent;
}}

/** The element's tag, `\"diffattn-explorer\"`. */
export declare const TAG_NAME: 'diffattn-explorer';

/** anywidget's model, as far as `render` uses it. */
export interface WidgetModel {{
  get(name: string): unknown;
  set(name: string, value: unknown): void;
  on(event: string, callback: () => void): void;
  off(event: string, callback: () => void): void;
  save_changes(): void;
}}

/** anywidget's entry point: `render` draws an explorer in `el`, synced with `model`, and returns its cleanup. */
declare const widget: {{ render(context: {{ model: WidgetModel; el: HTMLElement }}): () => void }};
export default widget;

declare global {{
  interface HTMLElementTagNameMap {{
    'diffattn-explorer': DiffattnExplorerElement;
  }}
}}
"
    )
    .ok();
    out
}

/// The single-file build's types: the element's.
pub fn inline() -> String {
    let mut out = generated_line("//");
    out.push_str(
        "// The single-file build has the element's API (diffattn-explorer.d.ts).
export * from './diffattn-explorer.js';
export { default } from './diffattn-explorer.js';
",
    );
    out
}
