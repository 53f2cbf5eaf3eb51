//! Reading a spec: JSON text to validated engine values, with errors that name the field.
//!
//! * `validate`: the spec as JSON has it, and its validation into engine values;
//! * `limits`: a spec checked against the limits of one request, and against what the page
//!   draws;
//! * `stream`: the readers a spec read from a stream goes through (bounded, UTF-8 only, a
//!   byte-order mark dropped).

mod layers;
mod limits;
mod scores;
mod stream;
mod validate;

use std::fmt;
use std::io::Read;
use std::marker::PhantomData;

use ndarray::Array2;

use super::read::{Object, PageTokenRows, RowLimit, TokenRows};
use crate::engine::{run, EngineError, Mechanism, Stages, Weights};
use crate::text::limits::MAX_INPUT_BYTES;
use layers::{Document, Picked};
pub use limits::PAGE_MAX_STAGE_CELLS;
use stream::{Limited, SkipBom, Utf8Only, BOM};
use validate::{validate, RawSpec};

/// A spec that was rejected, with the field at fault (`"gate.alpha[1]"`, `"x"`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    /// The JSON path of the field at fault, or `"spec"` for the whole document.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl SpecError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> SpecError {
        SpecError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SpecError {}

impl From<EngineError> for SpecError {
    fn from(e: EngineError) -> SpecError {
        // The engine's messages already start with the field name.
        let text = e.to_string();
        match text.split_once(": ") {
            Some((field, message)) => SpecError::new(field, message),
            None => SpecError::new("spec", text),
        }
    }
}

/// A validated spec: everything the engine needs for one sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The mechanism and its parameters.
    pub mechanism: Mechanism,
    /// Heads (diff heads for the Differential Transformers).
    pub heads: usize,
    /// Whether the causal mask applies.
    pub causal: bool,
    /// The vectors entering the layer, `(tokens, d)`.
    pub x: Array2<f32>,
    /// The projections, with a real layer's biases and head layout (DESIGN.md §7.1–§7.2).
    pub weights: Weights,
    /// Labels of the tokens, model name and layer index (§7.3), if given.
    pub meta: Meta,
}

/// A spec's metadata (DESIGN.md §7.3): shown, never computed with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Meta {
    /// One label per token.
    pub tokens: Option<Vec<String>>,
    /// One label per key of a cross-attention layer's second sequence (§7.10).
    pub key_tokens: Option<Vec<String>>,
    /// The model's name.
    pub model: Option<String>,
    /// The layer's index in the model.
    pub layer: Option<u64>,
}

impl Spec {
    /// Runs the engine on this spec, after [`Spec::check_limits`].
    pub fn run(&self) -> Result<Stages, SpecError> {
        self.check_limits()?;
        Ok(run(
            self.x.view(),
            &self.weights,
            self.heads,
            self.causal,
            &self.mechanism,
        )?)
    }
}

/// Parses and validates a spec (DESIGN.md §6–§7) from JSON text.
///
/// Every failure names its field: `mechanism: unknown variant ...`, `heads: 3 does not divide
/// ...`, `x[2]: row has 3 values, expected 4`, `gate.alpha: expected 2 values ...`,
/// `w_q[0][1]: 1e39 is not a finite f32`, `kv_heads: expected a divisor of heads 4, found 3`,
/// `shiftfill: unknown field (did you mean "shift_fill"?)`, `x: more than 2,048 tokens`. A
/// leading byte-order mark is skipped; anything but whitespace after the spec is an error, as
/// is a spec that is not a JSON object.
pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    parse_spec_within::<TokenRows, true>(text)
}

/// [`parse_spec`] for the page, which draws at most
/// [`PAGE_MAX_TOKENS`](crate::text::limits::PAGE_MAX_TOKENS) tokens: a longer `x`
/// (or list of labels or positions) is refused at its 2,049th row, naming the page's limit
/// (the library's, under the page's name).
///
/// ```
/// let row = "[1.0]";
/// let x = vec![row; 2049].join(",");
/// let spec = format!(r#"{{"mechanism": "standard", "heads": 1, "causal": true, "x": [{x}],
///   "w_q": [[1.0]], "w_k": [[1.0]], "w_v": [[1.0]], "w_o": [[1.0]]}}"#);
/// assert!(diffattn::spec::parse_spec(&spec).unwrap_err().to_string().contains("MAX_TOKENS"));
/// let e = diffattn::spec::parse_page_spec(&spec).unwrap_err().to_string();
/// assert!(e.starts_with("x: more than 2,048 tokens (rows)"), "{e}");
/// assert!(e.contains("PAGE_MAX_TOKENS"), "{e}");
/// ```
pub fn parse_page_spec(text: &str) -> Result<Spec, SpecError> {
    parse_spec_within::<PageTokenRows, false>(text)
}

fn parse_spec_within<L: RowLimit, const LAYERS: bool>(text: &str) -> Result<Spec, SpecError> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    // Read as bytes, as every spec at hand is (text, file, a binary spec's header): one reader
    // compiled, not one per input type (in wasm the reader is the largest code there is). A
    // `&str` is UTF-8 already, so reading its bytes accepts and refuses the same specs.
    let picked = raw_from::<L, _, LAYERS>(
        serde_json::Deserializer::from_slice(text.as_bytes()),
        Some(text.as_bytes()),
        0,
    )?;
    validate(picked_layer::<L, LAYERS>(picked, 0)?.0, Tensors::default())
}

/// Parses a spec file's bytes: JSON (which must be UTF-8, RFC 8259), or the binary form (a
/// safetensors file, DESIGN.md §7.8). A multi-layer file (§7.11) gives its first layer.
pub fn parse_spec_bytes(bytes: &[u8]) -> Result<Spec, SpecError> {
    Ok(parse_spec_bytes_within::<TokenRows, true>(bytes, 0)?.0)
}

/// [`parse_spec_bytes`] picking layer `index` (from 0) of a multi-layer file (DESIGN.md
/// §7.11), with the number of layers the file holds (1 for a single-layer spec, whose only
/// index is 0). An index past the last layer is an error on the field `layer` that names the
/// range (counted from 1, as the page and the CLI count).
pub fn parse_spec_bytes_layer(bytes: &[u8], index: usize) -> Result<(Spec, usize), SpecError> {
    parse_spec_bytes_within::<TokenRows, true>(bytes, index)
}

/// [`parse_spec_bytes`] for the page: JSON rows, labels and positions past
/// [`PAGE_MAX_TOKENS`](crate::text::limits::PAGE_MAX_TOKENS) are refused as they are read, as
/// [`parse_page_spec`] does; a binary spec's `x` (whose size its header declares) is checked
/// by [`Spec::page_support`]. A single-layer spec only, as [`parse_page_spec`]: the page's
/// JavaScript hands it one layer of a multi-layer file (DESIGN.md §7.11,
/// `www/explorer/layers.js`), so the page's module carries no reader of the list.
pub fn parse_page_spec_bytes(bytes: &[u8]) -> Result<Spec, SpecError> {
    Ok(parse_spec_bytes_within::<PageTokenRows, false>(bytes, 0)?.0)
}

/// `LAYERS`: whether a multi-layer file is read (else `layers` is an unknown field).
fn parse_spec_bytes_within<L: RowLimit, const LAYERS: bool>(
    bytes: &[u8],
    index: usize,
) -> Result<(Spec, usize), SpecError> {
    if super::binary::is_safetensors(bytes) {
        let file = super::binary::read(bytes)?;
        let picked = raw_from::<L, _, LAYERS>(
            serde_json::Deserializer::from_slice(file.spec.as_bytes()),
            Some(file.spec.as_bytes()),
            index,
        )?;
        let tensors = if LAYERS && picked.multi {
            file.layer_tensors(index, picked.count)?
        } else {
            file.tensors()?
        };
        let (raw, count) = picked_layer::<L, LAYERS>(picked, index)?;
        return Ok((validate(raw, tensors)?, count));
    }
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(_) => {
            let picked = raw_from::<L, _, LAYERS>(
                serde_json::Deserializer::from_slice(bytes),
                Some(bytes),
                index,
            )?;
            let (raw, count) = picked_layer::<L, LAYERS>(picked, index)?;
            Ok((validate(raw, Tensors::default())?, count))
        }
        Err(e) => Err(SpecError::new(
            "spec",
            format!("neither JSON (not UTF-8: {e}) nor a safetensors file"),
        )),
    }
}

/// The picked layer's spec and the file's layer count, or the error naming the range.
fn picked_layer<L, const LAYERS: bool>(
    picked: Picked<L>,
    index: usize,
) -> Result<(RawSpec<L>, usize), SpecError> {
    let count = picked.count;
    match picked.raw {
        Some(raw) => Ok((raw, count)),
        // Never: a single spec read alone is always there (and the page's module then carries
        // none of the messages below).
        None if !LAYERS => Err(SpecError::new("layer", "none")),
        None if count == 1 => Err(SpecError::new(
            "layer",
            format!(
                "{} asked of a single-layer spec: only 1 is allowed",
                index + 1
            ),
        )),
        None => Err(SpecError::new(
            "layer",
            format!(
                "{} asked of a file of {count} layers: expected 1 to {count}",
                index + 1
            ),
        )),
    }
}

/// [`parse_spec_bytes`] from a reader, at most [`MAX_INPUT_BYTES`] of it. JSON is parsed as it
/// is read, so its text is never held whole; the binary form, whose header says where its
/// tensors lie, is read whole first.
pub fn parse_spec_reader<R: Read>(reader: R) -> Result<Spec, SpecError> {
    Ok(parse_spec_reader_layer(reader, 0)?.0)
}

/// [`parse_spec_reader`] picking layer `index` (from 0) of a multi-layer file, as
/// [`parse_spec_bytes_layer`]: the other layers of a JSON file are read past, never held.
pub fn parse_spec_reader_layer<R: Read>(
    mut reader: R,
    index: usize,
) -> Result<(Spec, usize), SpecError> {
    let cannot = |e: std::io::Error| SpecError::new("spec", format!("cannot read it: {e}"));
    // The first 9 bytes tell the binary form: a header length within the limit, then `{`.
    let mut head = Vec::with_capacity(9);
    (&mut reader)
        .take(9)
        .read_to_end(&mut head)
        .map_err(cannot)?;
    let length = head
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0xff; 8])));
    let binary = head.get(8) == Some(&b'{') && length.is_some_and(|n| n <= MAX_INPUT_BYTES as u64);
    let rest = Limited {
        inner: std::io::Cursor::new(head).chain(reader),
        left: MAX_INPUT_BYTES,
    };
    if binary {
        let mut bytes = Vec::new();
        let mut rest = rest;
        rest.read_to_end(&mut bytes).map_err(cannot)?;
        return parse_spec_bytes_layer(&bytes, index);
    }
    // serde_json checks the UTF-8 of the strings it keeps, not of what it skips (the ignored
    // `stages`); the reader checks all of it, as `parse_spec_bytes` does.
    let json = Utf8Only::new(SkipBom::new(rest).map_err(cannot)?);
    let picked =
        raw_from::<TokenRows, _, true>(serde_json::Deserializer::from_reader(json), None, index)?;
    let (raw, count) = picked_layer::<TokenRows, true>(picked, index)?;
    Ok((validate(raw, Tensors::default())?, count))
}

/// The raw spec of one JSON object, and nothing after it but whitespace. `source` is the
/// JSON's bytes when they are all at hand (text and bytes, not a reader), for the hint of
/// [`non_finite_literal`].
fn raw_from<'de, L: RowLimit, R: serde_json::de::Read<'de>, const LAYERS: bool>(
    mut de: serde_json::Deserializer<R>,
    source: Option<&[u8]>,
    index: usize,
) -> Result<Picked<L>, SpecError> {
    let raw = if LAYERS {
        let mut track = serde_path_to_error::Track::new();
        let document = Document::<L> {
            index,
            limit: PhantomData,
        };
        serde::de::DeserializeSeed::deserialize(
            document,
            serde_path_to_error::Deserializer::new(&mut de, &mut track),
        )
        .map_err(|e| serde_path_to_error::Error::new(track.path(), e))
    } else {
        // One spec, read as before multi-layer files (the page's module: the smallest reader).
        serde_path_to_error::deserialize(&mut de).map(|raw: Object<RawSpec<L>>| Picked {
            raw: Some(raw.0),
            count: 1,
            multi: false,
        })
    };
    let raw = raw.map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." || path.is_empty() {
            "spec".to_string()
        } else {
            path
        };
        let inner = e.into_inner();
        let literal = source.and_then(|s| non_finite_literal(s, inner.line(), inner.column()));
        let mut message = json_message(inner);
        if let Some(literal) = literal {
            message.push_str(&format!(
                " ({literal} is not a JSON number: JSON has no NaN or infinity, and every number \
                 of a spec must be finite)"
            ));
        }
        SpecError::new(field, message)
    })?;
    // Only whitespace may follow: two specs in one input used to run the first alone.
    de.end().map_err(|e| {
        let message = match e.classify() {
            serde_json::error::Category::Io => json_message(e),
            _ => format!("trailing data after the spec ({e}); give one spec per input"),
        };
        SpecError::new("spec", message)
    })?;
    Ok(raw)
}

/// `NaN`, `Infinity` or `-Infinity` (as Python's `json.dump` and JavaScript's number printing
/// write them) where serde_json stopped at `line` and `column` (1-based) of `source`, if that is
/// what stopped it.
fn non_finite_literal(source: &[u8], line: usize, column: usize) -> Option<&'static str> {
    let start = if line <= 1 {
        0
    } else {
        source
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .nth(line - 2)?
            .0
            + 1
    };
    let at = start + column.checked_sub(1)?;
    // serde_json stops at the `N` or `I` of a value, or just after the `-` of `-Infinity`.
    ["-Infinity", "NaN", "Infinity"]
        .into_iter()
        .find(|literal| {
            let from = if literal.starts_with('-') {
                at.checked_sub(1)
            } else {
                Some(at)
            };
            from.and_then(|f| source.get(f..))
                .is_some_and(|rest| rest.starts_with(literal.as_bytes()))
        })
}

fn json_message(e: serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            format!("not valid JSON: {e}")
        }
        serde_json::error::Category::Io => format!("cannot read it: {e}"),
        _ => e.to_string(),
    }
}

/// Array fields read from the binary form, by field name.
pub(super) type Tensors = std::collections::BTreeMap<String, Array2<f32>>;
