//! `python/diffattn/_settings.py`: the notebook widget's traits (every attribute of the element
//! but `src`, plus `spec`) with the kind of trait each is and its description, which
//! `diffattn/widget.py` turns into synced traits and the class's docstring.

use std::fmt::Write;

use super::{choice_names, doc_line, generated_line, quoted};
use crate::schema::value::Type;
use crate::schema::{self, Key, Kind};

/// The trait kind of `widget.py` for a key.
fn trait_of(key: &Key) -> &'static str {
    if let Some(access) = key.access {
        return match access.ty {
            Type::Integer => "int",
            Type::Number => "float",
            Type::Boolean => "bool",
            Type::Name { .. } => "text",
        };
    }
    match key.kind {
        Kind::Int { .. } => "int",
        Kind::Slider { .. } => "float",
        Kind::Bool => "bool",
        Kind::Gate | Kind::List => "list",
        Kind::Spec => "spec",
        _ => "text",
    }
}

/// The module's text.
pub fn module() -> String {
    let mut out = generated_line("#");
    out.push_str(
        "\"\"\"The widget's traits, from the Rust schema (src/schema/table.rs): every attribute of the
custom element but ``src``, plus ``spec``, under the element's names.\"\"\"

#: ``(name, kind, description)`` of every synced trait, in the schema's order. ``kind`` is the
#: trait: ``text``, ``int``, ``float``, ``bool``, ``list`` (a comma list; a list, tuple or set of
#: names is joined) or ``spec`` (a stages spec dict).
TRAITS = (
",
    );
    for key in schema::KEYS.iter().filter(|k| k.surfaces.widget) {
        let mut doc = doc_line(key);
        if let Some(names) = choice_names(key) {
            let names: Vec<String> = names.iter().map(|n| format!("``{n}``")).collect();
            write!(doc, " One of {}.", names.join(", ")).ok();
        }
        let doc = doc.replace('`', "``").replace("````", "``");
        writeln!(
            out,
            "    ({}, {}, {}),",
            quoted(key.name),
            quoted(trait_of(key)),
            quoted(&doc)
        )
        .ok();
    }
    out.push_str(")\n");
    out
}
