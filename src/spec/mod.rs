//! The stages format (DESIGN.md §6–§7): the engine's public JSON interface, shared by the
//! `diffattn stages` command and the page's "open spec" and "export JSON"; a spec may also be
//! a safetensors file (`binary`, §7.8).
//!
//! A spec names a mechanism, its parameters, the vectors `x` and the weights; the answer holds
//! every intermediate map per head and the layer output. Parsing validates everything and
//! names the field at fault, so a bad spec is an error message, never a panic.

mod binary;
mod export;
mod input;
mod output;
mod read;

pub use export::{layers_json, spec_json, GateJson, LayersJson, SpecJson};
pub use input::{
    parse_page_spec, parse_page_spec_bytes, parse_spec, parse_spec_bytes, parse_spec_bytes_layer,
    parse_spec_reader, parse_spec_reader_layer, Meta, Spec, SpecError, PAGE_MAX_STAGE_CELLS,
};
pub use output::{stage_maps, stages_json, write_stages, HeadStagesJson, StagesJson, StagesView};

/// Parses a spec, runs it, and returns the stages as pretty JSON text.
///
/// ```
/// let spec = r#"{"mechanism": "standard", "heads": 1, "causal": true,
///   "x": [[1.0], [2.0]], "w_q": [[1.0]], "w_k": [[1.0]], "w_v": [[1.0]], "w_o": [[1.0]]}"#;
/// let json = diffattn::spec::run_spec_json(spec).unwrap();
/// // Causal: the first token sees only itself.
/// assert!(json.contains("\"a\""));
/// assert!(diffattn::spec::run_spec_json("{}").unwrap_err().to_string().contains("mechanism"));
/// ```
pub fn run_spec_json(text: &str) -> Result<String, SpecError> {
    let spec = parse_spec(text)?;
    let stages = spec.run()?;
    serde_json::to_string_pretty(&StagesView::new(&stages))
        .map_err(|e| SpecError::new("output", e.to_string()))
}
