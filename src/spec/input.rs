//! Reading a spec: JSON text to validated engine values, with errors that name the field.

use std::fmt;
use std::io::Read;

use ndarray::{Array1, Array2};
use serde::Deserialize;

use super::read::{
    Matrix, Object, PageTokenRows, RowLimit, TokenList, TokenRows, Vector, WidthRows,
};

use crate::engine::diff_transformer::{DiffTransformerParams, RMS_NORM_EPS};
use crate::engine::shift_diff::{Gate, ShiftDiffParams, ShiftFill};
use crate::engine::{
    run, Biases, EngineError, Frequencies, HeadShape, Layout, Mechanism, MechanismKind, Pairing,
    Rope, Stages, Weights,
};
use crate::names::{parse, Named};
use crate::text::limits::{
    grouped, map_cells, MAX_D_MODEL, MAX_INPUT_BYTES, MAX_MAP_CELLS, MAX_TOKENS, PAGE_MAX_TOKENS,
};

/// The most cells one stage of a spec the page draws may have, over all its softmax maps
/// (query heads × tokens × tokens): the library's [`MAX_MAP_CELLS`] counted in query heads, so
/// 8 query heads at [`PAGE_MAX_TOKENS`] = 2,048 tokens, 32 at 1,024 (a 1B model's layer, 16
/// diff heads of a DiffLlama), 128 at 512; 128 MiB of f32 per stage when every head is
/// computed (the page computes the shown one, and the others when asked).
pub const PAGE_MAX_STAGE_CELLS: usize = MAX_MAP_CELLS;

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
    /// The model's name.
    pub model: Option<String>,
    /// The layer's index in the model.
    pub layer: Option<u64>,
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

    /// Why the page cannot draw this spec, if it cannot: it draws every layout and mechanism
    /// the CLI runs, up to [`PAGE_MAX_TOKENS`] tokens and [`PAGE_MAX_STAGE_CELLS`] cells per
    /// stage (every softmax map of every head), so that the maps of one layer fit in a
    /// browser tab's memory and its frame budgets. `diffattn stages` runs specs up to the
    /// library's limits.
    pub fn page_support(&self) -> Result<(), SpecError> {
        let tokens = self.x.nrows();
        if tokens > PAGE_MAX_TOKENS {
            return Err(SpecError::new(
                "x",
                format!(
                    "{} tokens, more than the page draws, {} \
                     (diffattn::text::limits::PAGE_MAX_TOKENS); `diffattn stages` runs specs of \
                     up to {} tokens",
                    grouped(tokens),
                    grouped(PAGE_MAX_TOKENS),
                    grouped(MAX_TOKENS)
                ),
            ));
        }
        let kind = self.mechanism.kind();
        let query_heads = self.heads.saturating_mul(kind.query_heads_per_head());
        let cells = query_heads.saturating_mul(tokens).saturating_mul(tokens);
        if cells > PAGE_MAX_STAGE_CELLS {
            return Err(SpecError::new(
                "heads",
                format!(
                    "{query_heads} softmax maps of {tokens} × {tokens} tokens are {} cells per \
                     stage, more than the page draws, {}; `diffattn stages` runs it",
                    grouped(cells),
                    grouped(PAGE_MAX_STAGE_CELLS)
                ),
            ));
        }
        Ok(())
    }
}

/// The spec as JSON has it, before validation. Numbers are read as f64 so that values beyond
/// f32's range are caught and reported instead of silently becoming infinite; the arrays are
/// read straight into f32 ([`Finite`]) and counted against the limits as they are read. The
/// array fields may instead come as tensors of the binary form (DESIGN.md §7.8). It is read
/// through [`Object`], so its field names here are exactly the known keys. `L` bounds the
/// tokens: [`TokenRows`] (the library's limit) or [`PageTokenRows`] (the page's).
#[derive(Deserialize)]
#[serde(bound(deserialize = "L: RowLimit"))]
struct RawSpec<L = TokenRows> {
    mechanism: String,
    heads: i64,
    causal: bool,
    x: Option<Matrix<L>>,
    w_q: Option<Matrix<WidthRows>>,
    w_k: Option<Matrix<WidthRows>>,
    w_v: Option<Matrix<WidthRows>>,
    w_o: Option<Matrix<WidthRows>>,
    b_q: Option<Vector>,
    b_k: Option<Vector>,
    b_v: Option<Vector>,
    b_o: Option<Vector>,
    head_dim: Option<i64>,
    kv_heads: Option<i64>,
    rope: Option<Object<RawRope<L>>>,
    tokens: Option<TokenList<String, L>>,
    model: Option<String>,
    layer: Option<i64>,
    shift: Option<i64>,
    difference: Option<String>,
    renormalize: Option<String>,
    shift_fill: Option<String>,
    gate: Option<Object<RawGate>>,
    depth: Option<i64>,
    lambda_init: Option<f64>,
    pairing: Option<String>,
    lambda_q1: Option<Vector>,
    lambda_k1: Option<Vector>,
    lambda_q2: Option<Vector>,
    lambda_k2: Option<Vector>,
    subln: Option<Vector>,
    subln_eps: Option<f64>,
    w_lambda: Option<Matrix<WidthRows>>,
    lambda: Option<f64>,
    tau: Option<f64>,
    window: Option<i64>,
    segment: Option<i64>,
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

#[derive(Deserialize)]
#[serde(bound(deserialize = "L: RowLimit"))]
struct RawRope<L> {
    layout: String,
    theta: Option<f64>,
    inv_freq: Option<Vector>,
    rotary_dim: Option<i64>,
    positions: Option<TokenList<i64, L>>,
    attention_scaling: Option<f64>,
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
    parse_spec_within::<TokenRows>(text)
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
    parse_spec_within::<PageTokenRows>(text)
}

fn parse_spec_within<L: RowLimit>(text: &str) -> Result<Spec, SpecError> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    // Read as bytes, as every spec at hand is (text, file, a binary spec's header): one reader
    // compiled, not one per input type (in wasm the reader is the largest code there is). A
    // `&str` is UTF-8 already, so reading its bytes accepts and refuses the same specs.
    validate(
        raw_from::<L, _>(
            serde_json::Deserializer::from_slice(text.as_bytes()),
            Some(text.as_bytes()),
        )?,
        Tensors::default(),
    )
}

/// Parses a spec file's bytes: JSON (which must be UTF-8, RFC 8259), or the binary form (a
/// safetensors file, DESIGN.md §7.8).
pub fn parse_spec_bytes(bytes: &[u8]) -> Result<Spec, SpecError> {
    parse_spec_bytes_within::<TokenRows>(bytes)
}

/// [`parse_spec_bytes`] for the page: JSON rows, labels and positions past
/// [`PAGE_MAX_TOKENS`](crate::text::limits::PAGE_MAX_TOKENS) are refused as they are read, as
/// [`parse_page_spec`] does; a binary spec's `x` (whose size its header declares) is checked
/// by [`Spec::page_support`].
pub fn parse_page_spec_bytes(bytes: &[u8]) -> Result<Spec, SpecError> {
    parse_spec_bytes_within::<PageTokenRows>(bytes)
}

fn parse_spec_bytes_within<L: RowLimit>(bytes: &[u8]) -> Result<Spec, SpecError> {
    if super::binary::is_safetensors(bytes) {
        let (spec_json, tensors) = super::binary::read(bytes)?;
        return validate(
            raw_from::<L, _>(
                serde_json::Deserializer::from_slice(spec_json.as_bytes()),
                Some(spec_json.as_bytes()),
            )?,
            tensors,
        );
    }
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(_) => validate(
            raw_from::<L, _>(serde_json::Deserializer::from_slice(bytes), Some(bytes))?,
            Tensors::default(),
        ),
        Err(e) => Err(SpecError::new(
            "spec",
            format!("neither JSON (not UTF-8: {e}) nor a safetensors file"),
        )),
    }
}

/// [`parse_spec_bytes`] from a reader, at most [`MAX_INPUT_BYTES`] of it. JSON is parsed as it
/// is read, so its text is never held whole; the binary form, whose header says where its
/// tensors lie, is read whole first.
pub fn parse_spec_reader<R: Read>(mut reader: R) -> Result<Spec, SpecError> {
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
        return parse_spec_bytes(&bytes);
    }
    // serde_json checks the UTF-8 of the strings it keeps, not of what it skips (the ignored
    // `stages`); the reader checks all of it, as `parse_spec_bytes` does.
    let json = Utf8Only::new(SkipBom::new(rest).map_err(cannot)?);
    validate(
        raw_from::<TokenRows, _>(serde_json::Deserializer::from_reader(json), None)?,
        Tensors::default(),
    )
}

/// The UTF-8 byte-order mark, which some editors put at the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The raw spec of one JSON object, and nothing after it but whitespace. `source` is the
/// JSON's bytes when they are all at hand (text and bytes, not a reader), for the hint of
/// [`non_finite_literal`].
fn raw_from<'de, L: RowLimit, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    source: Option<&[u8]>,
) -> Result<RawSpec<L>, SpecError> {
    let raw: Object<RawSpec<L>> = serde_path_to_error::deserialize(&mut de).map_err(|e| {
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
    Ok(raw.0)
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

/// A reader that fails at the first byte that is not UTF-8 (RFC 8259 asks JSON to be), or at an
/// end that cuts a character short. It copies nothing: each read is checked where it lies, and
/// only the start of a character cut by the end of a read (at most 3 bytes) is kept.
struct Utf8Only<R> {
    inner: R,
    /// The start of a character the last read ended inside of.
    carry: Vec<u8>,
    /// Where `carry` starts in the input.
    carry_at: usize,
    /// Bytes given so far.
    offset: usize,
}

impl<R: Read> Utf8Only<R> {
    fn new(inner: R) -> Utf8Only<R> {
        Utf8Only {
            inner,
            carry: Vec::with_capacity(4),
            carry_at: 0,
            offset: 0,
        }
    }
}

fn not_utf8(at: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("neither JSON (not UTF-8 at byte {at}) nor a safetensors file"),
    )
}

impl<R: Read> Read for Utf8Only<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !self.carry.is_empty() {
            return Err(not_utf8(self.carry_at));
        }
        // First finish the character the last read cut, byte by byte (a character is at most
        // four bytes, so this ends within three).
        let mut i = 0;
        while !self.carry.is_empty() && i < n {
            self.carry.push(buf[i]);
            i += 1;
            match std::str::from_utf8(&self.carry) {
                Ok(_) => self.carry.clear(),
                Err(e) if e.error_len().is_some() => return Err(not_utf8(self.carry_at)),
                Err(_) => {}
            }
        }
        if self.carry.is_empty() && i < n {
            match std::str::from_utf8(&buf[i..n]) {
                Ok(_) => {}
                Err(e) if e.error_len().is_some() => {
                    return Err(not_utf8(self.offset + i + e.valid_up_to()))
                }
                Err(e) => {
                    self.carry_at = self.offset + i + e.valid_up_to();
                    self.carry.extend_from_slice(&buf[i + e.valid_up_to()..n]);
                }
            }
        }
        self.offset += n;
        Ok(n)
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

/// Array fields read from the binary form, by field name.
pub(super) type Tensors = std::collections::BTreeMap<String, Array2<f32>>;

/// A matrix field from the JSON or a tensor (never both).
fn matrix_field<L: RowLimit>(
    field: &str,
    raw: Option<Matrix<L>>,
    tensors: &mut Tensors,
) -> Result<Option<Array2<f32>>, SpecError> {
    match (raw, tensors.remove(field)) {
        (Some(_), Some(_)) => Err(both(field)),
        (Some(m), None) => matrix(field, m).map(Some),
        (None, Some(m)) => Ok(Some(m)),
        (None, None) => Ok(None),
    }
}

/// A vector field from the JSON or a tensor (a tensor of one row).
fn vector_field(
    field: &str,
    raw: Option<Vector>,
    tensors: &mut Tensors,
) -> Result<Option<Vec<f32>>, SpecError> {
    match (raw, tensors.remove(field)) {
        (Some(_), Some(_)) => Err(both(field)),
        (Some(values), None) => Ok(Some(values.0)),
        (None, Some(m)) if m.nrows() == 1 => Ok(Some(m.into_raw_vec_and_offset().0)),
        (None, Some(_)) => Err(SpecError::new(field, "expected a tensor of rank 1")),
        (None, None) => Ok(None),
    }
}

fn both(field: &str) -> SpecError {
    SpecError::new(field, "given both as a tensor and in __metadata__.spec")
}

fn validate<L: RowLimit>(raw: RawSpec<L>, mut tensors: Tensors) -> Result<Spec, SpecError> {
    let t = &mut tensors;
    let heads = positive("heads", raw.heads)?;
    let kind: MechanismKind = name("mechanism", &raw.mechanism)?;
    let w_q = required("w_q", matrix_field("w_q", raw.w_q, t)?)?;
    let w_k = required("w_k", matrix_field("w_k", raw.w_k, t)?)?;
    let w_v = required("w_v", matrix_field("w_v", raw.w_v, t)?)?;
    let w_o = required("w_o", matrix_field("w_o", raw.w_o, t)?)?;
    let w_lambda = matrix_field("w_lambda", raw.w_lambda, t)?;
    let x = required("x", matrix_field("x", raw.x, t)?)?;
    let biases = Biases {
        b_q: vector_field("b_q", raw.b_q, t)?.map(Array1::from),
        b_k: vector_field("b_k", raw.b_k, t)?.map(Array1::from),
        b_v: vector_field("b_v", raw.b_v, t)?.map(Array1::from),
        b_o: vector_field("b_o", raw.b_o, t)?.map(Array1::from),
    };
    let lambdas = [
        ("lambda_q1", vector_field("lambda_q1", raw.lambda_q1, t)?),
        ("lambda_k1", vector_field("lambda_k1", raw.lambda_k1, t)?),
        ("lambda_q2", vector_field("lambda_q2", raw.lambda_q2, t)?),
        ("lambda_k2", vector_field("lambda_k2", raw.lambda_k2, t)?),
    ];
    let subln = vector_field("subln", raw.subln, t)?;
    if let Some(name) = tensors.keys().next() {
        return Err(SpecError::new(
            name.clone(),
            "a tensor that is not an array field of the format",
        ));
    }

    let layout = Layout {
        head_dim: raw.head_dim.map(|v| positive("head_dim", v)).transpose()?,
        kv_heads: raw.kv_heads.map(|v| positive("kv_heads", v)).transpose()?,
        pairing: match raw.pairing {
            None => Pairing::Adjacent,
            Some(p) => name("pairing", &p)?,
        },
        rope: raw.rope.map(|r| rope(r.0, x.nrows())).transpose()?,
    };
    if kind == MechanismKind::InputDiff && layout.rope.is_some() {
        return Err(SpecError::new(
            "rope",
            "input_diff has no positions for its keys (steps between tokens)",
        ));
    }
    let real = layout.head_dim.is_some()
        || layout.kv_heads.is_some()
        || w_lambda.is_some()
        || kind == MechanismKind::DiffTransformerV2;
    let weights = if real {
        Weights::real(w_q, w_k, w_v, w_o, biases, w_lambda, layout)?
    } else {
        let mut w = Weights::new(w_q, w_k, w_v, w_o)?;
        w.biases = biases;
        w.layout = layout;
        w.biases.check(&w)?;
        w
    };
    weights.check_input(x.view())?;
    let shape = HeadShape::resolve(kind, &weights, heads)?;
    if let Some(rope) = &weights.layout.rope {
        check_rotary_dim(rope, shape.head_dim)?;
    }

    let mechanism = match kind {
        MechanismKind::Standard => Mechanism::Standard,
        MechanismKind::InputDiff => Mechanism::InputDiff,
        MechanismKind::DiffTransformerV2 => {
            match &weights.w_lambda {
                None => {
                    return Err(SpecError::new(
                        "w_lambda",
                        "missing (this mechanism needs it)",
                    ))
                }
                Some(w) if w.nrows() != heads => {
                    return Err(SpecError::new(
                        "w_lambda",
                        format!(
                            "expected {heads} x {} (heads, d_model), found {} x {}",
                            weights.d_model(),
                            w.nrows(),
                            w.ncols()
                        ),
                    ))
                }
                Some(_) => {}
            }
            Mechanism::DiffTransformerV2 {
                lambda: raw.lambda.map(|l| finite("lambda", l)).transpose()?,
            }
        }
        MechanismKind::Cosine => Mechanism::Cosine {
            tau: finite("tau", required("tau", raw.tau)?)?,
        },
        MechanismKind::Local => {
            let window = required("window", raw.window)?;
            let window = usize::try_from(window)
                .map_err(|_| SpecError::new("window", format!("must be >= 0, found {window}")))?;
            Mechanism::Local { window }
        }
        MechanismKind::Hierarchical => Mechanism::Hierarchical {
            segment: positive("segment", required("segment", raw.segment)?)?,
        },
        MechanismKind::ShiftDiff => {
            let gate = required("gate", raw.gate)?.0;
            let gate = Gate {
                alpha: gate.alpha.0,
                beta: gate.beta.0,
                gamma: gate.gamma.0,
            };
            gate.check(heads)?;
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
            let (depth, lambda_init) = match (raw.depth, raw.lambda_init) {
                (Some(depth), None) => (
                    u32::try_from(depth).map_err(|_| {
                        SpecError::new(
                            "depth",
                            format!("must be between 0 and 2^32 - 1, found {depth}"),
                        )
                    })?,
                    None,
                ),
                (None, Some(init)) => (0, Some(finite("lambda_init", init)?)),
                (None, None) => {
                    return Err(SpecError::new(
                        "depth",
                        "missing: give depth or lambda_init",
                    ))
                }
                (Some(_), Some(_)) => {
                    return Err(SpecError::new(
                        "depth",
                        "give exactly one of depth and lambda_init",
                    ))
                }
            };
            let [q1, k1, q2, k2] = lambdas.map(|(field, v)| required(field, v));
            let params = DiffTransformerParams {
                depth,
                lambda_q1: q1?,
                lambda_k1: k1?,
                lambda_q2: q2?,
                lambda_k2: k2?,
                // No learned weight (DiffLlama's groupnorm) is a weight of ones.
                subln: subln.unwrap_or_else(|| vec![1.0; 2 * shape.head_dim]),
                lambda_init,
                subln_eps: match raw.subln_eps {
                    None => RMS_NORM_EPS,
                    Some(eps) => positive_finite("subln_eps", eps)?,
                },
                lambda: raw.lambda.map(|l| finite("lambda", l)).transpose()?,
            };
            params.check(shape.head_dim)?;
            Mechanism::DiffTransformer(params)
        }
    };
    if raw.lambda.is_some() && kind.query_heads_per_head() != 2 {
        return Err(SpecError::new(
            "lambda",
            "only diff_transformer and diff_transformer_v2 subtract with a λ",
        ));
    }
    if kind != MechanismKind::DiffTransformer && weights.layout.pairing != Pairing::Adjacent {
        return Err(SpecError::new(
            "pairing",
            "only diff_transformer pairs heads",
        ));
    }

    let meta = Meta {
        tokens: match raw.tokens.map(|t| t.0) {
            Some(t) if t.len() != x.nrows() => {
                return Err(SpecError::new(
                    "tokens",
                    format!(
                        "expected {} labels (one per row of x), found {}",
                        x.nrows(),
                        t.len()
                    ),
                ))
            }
            t => t,
        },
        model: raw.model,
        layer: raw
            .layer
            .map(|l| {
                u64::try_from(l)
                    .map_err(|_| SpecError::new("layer", format!("must be >= 0, found {l}")))
            })
            .transpose()?,
    };
    let spec = Spec {
        mechanism,
        heads,
        causal: raw.causal,
        x,
        weights,
        meta,
    };
    spec.check_limits()?;
    Ok(spec)
}

/// The rope object (DESIGN.md §7.2) for a sequence of `tokens` tokens.
fn rope<L>(raw: RawRope<L>, tokens: usize) -> Result<Rope, SpecError> {
    let frequencies = match (raw.theta, raw.inv_freq) {
        (Some(theta), None) => {
            let theta = positive_finite("rope.theta", theta)?;
            Frequencies::Theta(theta as f64)
        }
        (None, Some(f)) => Frequencies::Explicit(f.0.into_iter().map(f64::from).collect()),
        _ => {
            return Err(SpecError::new(
                "rope",
                "give exactly one of theta and inv_freq",
            ))
        }
    };
    let positions = match raw.positions.map(|p| p.0) {
        None => (0..tokens as u64).collect(),
        Some(p) if p.len() != tokens => {
            return Err(SpecError::new(
                "rope.positions",
                format!(
                    "expected {tokens} integers (one per token), found {}",
                    p.len()
                ),
            ))
        }
        Some(p) => p
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                u64::try_from(v).map_err(|_| {
                    SpecError::new(
                        format!("rope.positions[{i}]"),
                        format!("must be >= 0, found {v}"),
                    )
                })
            })
            .collect::<Result<_, _>>()?,
    };
    Ok(Rope {
        layout: name("rope.layout", &raw.layout)?,
        frequencies,
        rotary_dim: raw
            .rotary_dim
            .map(|r| positive("rope.rotary_dim", r))
            .transpose()?,
        positions,
        attention_scaling: match raw.attention_scaling {
            None => 1.0,
            Some(c) => f64::from(finite("rope.attention_scaling", c)?),
        },
    })
}

fn check_rotary_dim(rope: &Rope, head_dim: usize) -> Result<(), SpecError> {
    let r = rope.rotary_dim.unwrap_or(head_dim);
    if r < 2 || r % 2 != 0 || r > head_dim {
        return Err(SpecError::new(
            "rope.rotary_dim",
            format!("expected an even number from 2 to head_dim {head_dim}, found {r}"),
        ));
    }
    if let Frequencies::Explicit(f) = &rope.frequencies {
        if f.len() != r / 2 {
            return Err(SpecError::new(
                "rope.inv_freq",
                format!(
                    "expected {} values (rotary_dim / 2), found {}",
                    r / 2,
                    f.len()
                ),
            ));
        }
    }
    Ok(())
}

fn positive_finite(field: &str, value: f64) -> Result<f32, SpecError> {
    let v = finite(field, value)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(SpecError::new(
            field,
            format!("must be positive, found {value}"),
        ))
    }
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

fn finite(field: &str, value: f64) -> Result<f32, SpecError> {
    let v = value as f32;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(SpecError::new(
            field,
            format!("{value} is not a finite f32 (|v| must be below 3.4e38)"),
        ))
    }
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

    /// Reads `bytes` through `Utf8Only`, `step` bytes per read, as serde_json (one at a time)
    /// or a buffered reader would.
    fn utf8_only(bytes: &'static [u8], step: usize) -> std::io::Result<Vec<u8>> {
        struct Steps(&'static [u8], usize);
        impl Read for Steps {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        read_all(Utf8Only::new(Steps(bytes, step)))
    }

    #[test]
    fn the_utf8_reader_passes_utf8_and_stops_at_the_first_byte_that_is_not() {
        // "é" is C3 A9, "世" E4 B8 96, "👍" F0 9F 91 8D: every cut of them across reads.
        let good = "a é 世 👍 z".as_bytes();
        for step in 1..=good.len() {
            assert_eq!(utf8_only("a é 世 👍 z".as_bytes(), step).unwrap(), good);
        }
        for step in [1, 2, 3, 64] {
            // A lone continuation byte at 2; a character cut short by another at 2; a
            // character cut short by the end at 2.
            for bad in [&b"ab\x80cd"[..], b"ab\xe4\xb8x", b"ab\xf0\x9f"] {
                let bad: &'static [u8] = bad;
                let e = utf8_only(bad, step).unwrap_err();
                assert!(
                    e.to_string().contains("not UTF-8 at byte 2"),
                    "{step} {bad:?}: {e}"
                );
            }
        }
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
