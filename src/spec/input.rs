//! Reading a spec: JSON text to validated engine values, with errors that name the field.

use std::fmt;
use std::io::Read;

use ndarray::Array2;
use serde::Deserialize;

use super::read::{Finite, Labels, Matrix, Object, RowLimit, TokenRows, Vector, WidthRows};
use crate::engine::diff_transformer::DiffTransformerParams;
use crate::engine::shift_diff::{Gate, ShiftDiffParams, ShiftFill};
use crate::engine::{run, EngineError, Mechanism, MechanismKind, Stages, Weights};
use crate::names::{parse, Named};
use crate::text::limits::{
    grouped, map_cells, MAX_D_MODEL, MAX_INPUT_BYTES, MAX_MAP_CELLS, MAX_TOKENS,
};

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
    /// Heads (diff heads for the Differential Transformer).
    pub heads: usize,
    /// Whether the causal mask applies.
    pub causal: bool,
    /// The vectors entering the layer, `(tokens, d)`.
    pub x: Array2<f32>,
    /// The projections.
    pub weights: Weights,
    /// Labels of the tokens (the rows of `x`), if the spec names them.
    pub tokens: Option<Vec<String>>,
}

impl Spec {
    /// The cells of one of its maps, `heads × queries × keys` (keys are the steps between
    /// tokens for input-difference attention), or `None` if the product overflows.
    pub fn map_cells(&self) -> Option<usize> {
        let tokens = self.x.nrows();
        let keys = tokens.saturating_sub(self.mechanism.kind().key_offset());
        map_cells(self.heads, tokens, keys)
    }

    /// Checks the spec against [`MAX_TOKENS`], [`MAX_D_MODEL`] and [`MAX_MAP_CELLS`] before
    /// anything of that size is allocated. Parsing checks them as it reads; a spec built in code
    /// is checked here when it runs.
    pub fn check_limits(&self) -> Result<(), SpecError> {
        let tokens = self.x.nrows();
        if tokens > MAX_TOKENS {
            return Err(SpecError::new(
                "x",
                format!(
                    "{} tokens, more than the limit of {} (diffattn::text::limits::MAX_TOKENS)",
                    grouped(tokens),
                    grouped(MAX_TOKENS)
                ),
            ));
        }
        let d = self.weights.d_model();
        if d > MAX_D_MODEL {
            return Err(SpecError::new(
                "w_q",
                format!(
                    "d_model {}, more than the limit of {} (diffattn::text::limits::MAX_D_MODEL)",
                    grouped(d),
                    grouped(MAX_D_MODEL)
                ),
            ));
        }
        let keys = tokens.saturating_sub(self.mechanism.kind().key_offset());
        match self.map_cells() {
            Some(cells) if cells <= MAX_MAP_CELLS => Ok(()),
            cells => Err(SpecError::new(
                "x",
                format!(
                    "{} tokens × {} keys × {} heads = {} cells per map, over the limit of {} \
                     (diffattn::text::limits::MAX_MAP_CELLS, 128 MiB of f32 per map); use \
                     fewer tokens or fewer heads",
                    grouped(tokens),
                    grouped(keys),
                    grouped(self.heads),
                    cells.map_or_else(|| "more than 2^64".to_string(), grouped),
                    grouped(MAX_MAP_CELLS),
                ),
            )),
        }
    }

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

/// The spec as JSON has it, before validation. Numbers are read as f64 and checked finite in
/// f32 as they are read ([`Finite`]); matrices are counted against the limits as they are read.
/// It is read through [`Object`], so its field names here are exactly the known keys.
#[derive(Deserialize)]
struct RawSpec {
    mechanism: String,
    heads: i64,
    causal: bool,
    x: Matrix<TokenRows>,
    w_q: Matrix<WidthRows>,
    w_k: Matrix<WidthRows>,
    w_v: Matrix<WidthRows>,
    w_o: Matrix<WidthRows>,
    shift: Option<i64>,
    difference: Option<String>,
    renormalize: Option<String>,
    shift_fill: Option<String>,
    gate: Option<Object<RawGate>>,
    depth: Option<i64>,
    lambda_q1: Option<Vector>,
    lambda_k1: Option<Vector>,
    lambda_q2: Option<Vector>,
    lambda_k2: Option<Vector>,
    subln: Option<Vector>,
    tau: Option<Finite>,
    window: Option<i64>,
    /// Labels of the rows of `x`, for the axes.
    tokens: Option<Labels>,
    /// The stages computed from this spec (an exported file carries them, for reading); they
    /// are recomputed, never read.
    #[allow(dead_code)]
    stages: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct RawGate {
    alpha: Vector,
    beta: Vector,
    gamma: Vector,
}

/// Parses and validates a spec (DESIGN.md §6) from JSON text.
///
/// Every failure names its field: `mechanism: unknown variant ...`, `heads: 3 does not divide
/// ...`, `x[2]: row has 3 values, expected 4`, `gate.alpha: expected 2 values ...`,
/// `w_q[0][1]: 1e39 is not a finite f32`, `shiftfill: unknown field (did you mean
/// "shift_fill"?)`, `x: more than 2,048 tokens`. A leading byte-order mark is skipped; anything
/// but whitespace after the spec is an error, as is a spec that is not a JSON object.
pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    parse_from(serde_json::Deserializer::from_str(text))
}

/// [`parse_spec`] from bytes, which must be UTF-8 (RFC 8259): bytes that are not are an error
/// naming the line and column.
pub fn parse_spec_slice(bytes: &[u8]) -> Result<Spec, SpecError> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    parse_from(serde_json::Deserializer::from_slice(bytes))
}

/// [`parse_spec`] from a reader, which is read as it is parsed (the text is never held whole)
/// and at most [`MAX_INPUT_BYTES`] far.
pub fn parse_spec_reader<R: Read>(reader: R) -> Result<Spec, SpecError> {
    let reader = SkipBom::new(Limited {
        inner: reader,
        left: MAX_INPUT_BYTES,
    })
    .map_err(|e| SpecError::new("spec", format!("cannot read it: {e}")))?;
    parse_from(serde_json::Deserializer::from_reader(reader))
}

/// The UTF-8 byte-order mark, which some editors put at the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

fn parse_from<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
) -> Result<Spec, SpecError> {
    let raw: Object<RawSpec> = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." || path.is_empty() {
            "spec".to_string()
        } else {
            path
        };
        SpecError::new(field, json_message(e.into_inner()))
    })?;
    // Only whitespace may follow: two specs in one input used to run the first alone.
    de.end().map_err(|e| {
        let message = match e.classify() {
            serde_json::error::Category::Io => json_message(e),
            _ => format!("trailing data after the spec ({e}); give one spec per input"),
        };
        SpecError::new("spec", message)
    })?;
    validate(raw.0)
}

fn json_message(e: serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            format!("not valid JSON: {e}")
        }
        _ => e.to_string(),
    }
}

/// A reader that fails once it has given `left` bytes and more follow: over-long input is
/// refused, not read to its end.
struct Limited<R> {
    inner: R,
    left: usize,
}

impl<R: Read> Read for Limited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // At the limit: one more byte tells the end of the input from more of it.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::Error::other(format!(
                    "the input is longer than {} bytes (diffattn::text::limits::MAX_INPUT_BYTES)",
                    grouped(MAX_INPUT_BYTES)
                ))),
            };
        }
        let n = buf.len().min(self.left);
        let read = self.inner.read(&mut buf[..n])?;
        self.left -= read;
        Ok(read)
    }
}

/// A reader that drops a leading UTF-8 byte-order mark.
struct SkipBom<R> {
    /// The first bytes, when they were not a byte-order mark, still to be given.
    head: Vec<u8>,
    inner: R,
}

impl<R: Read> SkipBom<R> {
    fn new(mut inner: R) -> std::io::Result<SkipBom<R>> {
        let mut head = Vec::with_capacity(BOM.len());
        while head.len() < BOM.len() {
            let mut byte = [0u8; 1];
            match inner.read(&mut byte) {
                Ok(0) => break,
                Ok(_) => head.push(byte[0]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
            if !BOM.starts_with(&head) {
                break;
            }
        }
        if head == BOM {
            head.clear();
        }
        head.reverse();
        Ok(SkipBom { head, inner })
    }
}

impl<R: Read> Read for SkipBom<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match self.head.pop() {
            Some(byte) => {
                buf[0] = byte;
                Ok(1)
            }
            None => self.inner.read(buf),
        }
    }
}

fn validate(raw: RawSpec) -> Result<Spec, SpecError> {
    let heads = positive("heads", raw.heads)?;
    let w_q = matrix("w_q", raw.w_q)?;
    let d = w_q.nrows();
    let weights = Weights::new(
        w_q,
        matrix("w_k", raw.w_k)?,
        matrix("w_v", raw.w_v)?,
        matrix("w_o", raw.w_o)?,
    )?;
    let x = matrix("x", raw.x)?;
    weights.check_input(x.view())?;

    let kind: MechanismKind = name("mechanism", &raw.mechanism)?;
    let mechanism = match kind {
        MechanismKind::Standard => Mechanism::Standard,
        MechanismKind::InputDiff => Mechanism::InputDiff,
        MechanismKind::Cosine => Mechanism::Cosine {
            tau: required("tau", raw.tau)?.0,
        },
        MechanismKind::Local => {
            let window = required("window", raw.window)?;
            let window = usize::try_from(window)
                .map_err(|_| SpecError::new("window", format!("must be >= 0, found {window}")))?;
            Mechanism::Local { window }
        }
        MechanismKind::ShiftDiff => {
            let gate = required("gate", raw.gate)?.0;
            let gate = Gate {
                alpha: gate.alpha.0,
                beta: gate.beta.0,
                gamma: gate.gamma.0,
            };
            Mechanism::ShiftDiff(ShiftDiffParams {
                shift: required("shift", raw.shift)?,
                difference: name("difference", &required("difference", raw.difference)?)?,
                renormalize: name("renormalize", &required("renormalize", raw.renormalize)?)?,
                fill: match raw.shift_fill {
                    None => ShiftFill::Circular,
                    Some(fill) => name("shift_fill", &fill)?,
                },
                gate,
            })
        }
        MechanismKind::DiffTransformer => {
            let depth = required("depth", raw.depth)?;
            let depth = u32::try_from(depth).map_err(|_| {
                SpecError::new(
                    "depth",
                    format!("must be between 0 and 2^32 - 1, found {depth}"),
                )
            })?;
            Mechanism::DiffTransformer(DiffTransformerParams {
                depth,
                lambda_q1: required("lambda_q1", raw.lambda_q1)?.0,
                lambda_k1: required("lambda_k1", raw.lambda_k1)?.0,
                lambda_q2: required("lambda_q2", raw.lambda_q2)?.0,
                lambda_k2: required("lambda_k2", raw.lambda_k2)?.0,
                subln: required("subln", raw.subln)?.0,
            })
        }
    };

    // Check head counts and per-head vector lengths now, so the error names the field.
    match &mechanism {
        Mechanism::DiffTransformer(p) => {
            p.check(d, heads)?;
        }
        Mechanism::ShiftDiff(p) => {
            crate::engine::projection::head_width(d, heads, "d_model")?;
            p.gate.check(heads)?;
        }
        _ => {
            crate::engine::projection::head_width(d, heads, "d_model")?;
        }
    }

    let tokens = raw.tokens.map(|labels| labels.0);
    if let Some(tokens) = &tokens {
        if tokens.len() != x.nrows() {
            return Err(SpecError::new(
                "tokens",
                format!(
                    "{} labels for {} rows of x; give one per row",
                    tokens.len(),
                    x.nrows()
                ),
            ));
        }
    }
    let spec = Spec {
        mechanism,
        heads,
        causal: raw.causal,
        x,
        weights,
        tokens,
    };
    spec.check_limits()?;
    Ok(spec)
}

/// The value a name stands for (`crate::names`), or an error naming the field.
fn name<T: Named>(field: &str, text: &str) -> Result<T, SpecError> {
    parse::<T>(field, text).map_err(|e| {
        let message = e.to_string();
        let message = message
            .strip_prefix(&format!("{field}: "))
            .unwrap_or(&message)
            .to_string();
        SpecError::new(field, message)
    })
}

fn required<T>(field: &str, value: Option<T>) -> Result<T, SpecError> {
    value.ok_or_else(|| SpecError::new(field, "missing (this mechanism needs it)"))
}

fn positive(field: &str, value: i64) -> Result<usize, SpecError> {
    usize::try_from(value)
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| SpecError::new(field, format!("must be a positive integer, found {value}")))
}

/// The matrix as an array. The reader made it rectangular and non-empty.
fn matrix<L: RowLimit>(field: &str, m: Matrix<L>) -> Result<Array2<f32>, SpecError> {
    Array2::from_shape_vec((m.rows, m.cols), m.data)
        .map_err(|e| SpecError::new(field, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(mut reader: impl Read) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        reader.read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn the_limited_reader_gives_up_to_its_limit_and_fails_past_it() {
        let limited = |text: &'static [u8], left| Limited { inner: text, left };
        assert_eq!(read_all(limited(b"1234", 4)).unwrap(), b"1234");
        let e = read_all(limited(b"12345", 4)).unwrap_err();
        assert!(e.to_string().contains("MAX_INPUT_BYTES"), "{e}");
    }

    #[test]
    fn a_byte_order_mark_is_dropped_and_nothing_else() {
        let skip = |text: &'static [u8]| read_all(SkipBom::new(text).unwrap()).unwrap();
        assert_eq!(skip(b"\xEF\xBB\xBF{}"), b"{}");
        assert_eq!(skip(b"{}"), b"{}");
        // A prefix of the mark followed by something else is kept as it is.
        assert_eq!(skip(b"\xEF\xBB{"), b"\xEF\xBB{");
        assert_eq!(skip(b"\xEF"), b"\xEF");
        assert_eq!(skip(b""), b"");
    }
}
