//! `www/explorer/settings.generated.js`: the schema as the page reads it (state.js, controls.js,
//! template.js, attributes.js, compare.js, …). Choices of the engine are named by their list
//! of the wasm module's `names()` (`'differences'`), never spelled out, so the page never names
//! a mechanism; the engine's defaults stay the wasm module's `defaults()`.

use std::fmt::Write;

use super::{generated_line, number, quoted};
use crate::names::name_of;
use crate::schema::value::Type;
use crate::schema::{self, Choices, Compare, Key, Kind, Layer, PageDefault};

/// The module's text.
pub fn module() -> String {
    let mut out = generated_line("//");
    out.push_str(
        "// The schema of every key the address, the element's attributes, the engine's patch and the
// widget's traits name, one entry each (src/schema/table.rs), and the page's controls. The page
// derives its tables from it (state.js: the state's keys, kinds, ranges and defaults;
// controls.js and template.js: the sliders and the control names), so no page module writes a
// list of setting names.

/**
 * Every key, by its one name: `kind` (how its text is read: `slider`, `int`, `bool`, `choice`,
 * `lang`, `text`, `stage`, `step`, `viewport`, `list`, `gate`, `url`, `spec`), `type` (an engine
 * setting's value: `integer`, `number`, `boolean`, `name`), `min`/`max`/`step`/`digits`
 * (sliders and whole numbers), `choices` (a list of the wasm module's `names()`, or the page's
 * own names), `engine` (the engine holds it: a setting of `Explorer.update`), `layer` (`maps`,
 * `shift`, `head`, `page`: what a change recomputes), `symbol`, `control` (the control that
 * shows it) and `slider` (the group of a slider the page builds), `parameter` (the registry's
 * parameter: only mechanisms whose `view().parameters` name it use it), `compare` (`every`,
 * `shown`, `no`: which compare panels follow it), `learned` (the frame's flag saying the value
 * is the learned one), `unset` (shown when unset and nothing learned it), `wraps` (taken modulo
 * the keys: its slider says the residue), `aliases` (older
 * address names), where it is named (`address`, `attribute`, `widget`, `state`), and a page
 * key's `default`.
 */
export const KEYS = Object.freeze({
",
    );
    for key in schema::KEYS {
        writeln!(
            out,
            "  {}: Object.freeze({{ {} }}),",
            key.name,
            fields(key).join(", ")
        )
        .ok();
    }
    out.push_str("});\n\n");
    out.push_str(
        "/** Every control, as the `controls` option names them, in order: `embed` (shown on an
 * embedded page that names none), `present` (shown while presenting). */
export const CONTROLS = Object.freeze([
",
    );
    for c in schema::controls() {
        writeln!(
            out,
            "  Object.freeze({{ name: {}, embed: {}, present: {} }}),",
            quoted(c.name),
            c.embed,
            c.present
        )
        .ok();
    }
    out.push_str("]);\n");
    out
}

fn fields(key: &Key) -> Vec<String> {
    let mut f = Vec::new();
    let (kind, range) = match key.kind {
        Kind::Slider {
            min,
            max,
            step,
            digits,
        } => (
            "slider",
            vec![
                format!("min: {}", number(min)),
                format!("max: {}", number(max)),
                format!("step: {}", number(step)),
                format!("digits: {digits}"),
            ],
        ),
        Kind::Int { min, max } => (
            "int",
            vec![
                format!("min: {}", number(min as f64)),
                format!("max: {}", number(max as f64)),
            ],
        ),
        Kind::Bool => ("bool", vec![]),
        Kind::Choice(Choices::Engine(list)) => {
            ("choice", vec![format!("choices: {}", quoted(list))])
        }
        Kind::Choice(Choices::Page(names)) => ("choice", vec![format!("choices: {}", list(names))]),
        Kind::Lang(names) => ("lang", vec![format!("choices: {}", list(names))]),
        Kind::Text => ("text", vec![]),
        Kind::Stage => ("stage", vec![]),
        Kind::Step => ("step", vec![]),
        Kind::Viewport => ("viewport", vec![]),
        Kind::List => ("list", vec![]),
        Kind::Gate => ("gate", vec![]),
        Kind::Url => ("url", vec![]),
        Kind::Spec => ("spec", vec![]),
    };
    f.push(format!("kind: {}", quoted(kind)));
    if let Some(access) = key.access {
        let ty = match access.ty {
            Type::Integer => "integer",
            Type::Number => "number",
            Type::Boolean => "boolean",
            Type::Name { .. } => "name",
        };
        f.push(format!("type: {}", quoted(ty)));
    }
    f.extend(range);
    f.push(format!("engine: {}", key.is_engine()));
    let layer = match key.layer {
        Layer::Maps => "maps",
        Layer::Shift => "shift",
        Layer::Head => "head",
        Layer::Page => "page",
    };
    f.push(format!("layer: {}", quoted(layer)));
    if !key.symbol.is_empty() {
        f.push(format!("symbol: {}", quoted(key.symbol)));
    }
    if let Some(c) = key.control {
        f.push(format!("control: {}", quoted(c.name)));
        if let Some(group) = c.slider_group {
            f.push(format!("slider: {}", quoted(group)));
        }
    }
    if let Some(p) = key.parameter {
        f.push(format!("parameter: {}", quoted(name_of(p))));
    }
    let compare = match key.compare {
        Compare::Every => "every",
        Compare::Shown => "shown",
        Compare::No => "no",
    };
    if key.compare != Compare::No {
        f.push(format!("compare: {}", quoted(compare)));
    }
    if let Some(l) = key.learned_flag {
        f.push(format!("learned: {}", quoted(l.flag())));
    }
    if let Some(u) = key.unset {
        f.push(format!("unset: {}", number(f64::from(u))));
    }
    if key.wraps {
        f.push("wraps: true".to_string());
    }
    if !key.aliases.is_empty() {
        f.push(format!("aliases: {}", list(key.aliases)));
    }
    let s = key.surfaces;
    f.push(format!(
        "address: {}, attribute: {}, widget: {}, state: {}",
        s.address, s.attribute, s.widget, s.state
    ));
    match key.default {
        PageDefault::None => {}
        PageDefault::Bool(b) => f.push(format!("default: {b}")),
        PageDefault::Int(n) => f.push(format!("default: {n}")),
        PageDefault::Text(t) => f.push(format!("default: {}", quoted(t))),
    }
    f
}

fn list(names: &[&str]) -> String {
    let items: Vec<String> = names.iter().map(|n| quoted(n)).collect();
    format!("Object.freeze([{}])", items.join(", "))
}
