//! The weights file: an 8-byte magic, a version, a JSON header and a blob of little-endian
//! tensors (docs/MODEL.md, "Format").
//!
//! ```text
//! offset 0   b"diffattn"                 magic
//!        8   u32 LE                      format version (1)
//!       12   u32 LE n                    header length in bytes
//!       16   n bytes                     JSON header: settings, vocabulary, tensor table,
//!                                        FNV-1a 64 of the blob
//!     16+n   the blob                    tensors at the header's offsets, f32 LE or int8
//! ```
//!
//! Every tensor the header names must lie inside the blob and have the size its shape says;
//! the blob's hash catches flipped bits. Errors say which check failed.

use std::fmt;

use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

use super::{Pooling, TokenTable, Trained};
use crate::engine::bilstm::{BiLstm, LstmWeights};
use crate::engine::diff_transformer::{DiffTransformerParams, RMS_NORM_EPS};
use crate::engine::shift_diff::{Gate, ShiftDiffParams};
use crate::engine::{EngineError, Mechanism, MechanismKind, Weights};
use crate::names::{name_of, parse, Named};
use crate::text::fnv1a_64;
use crate::text::limits::MAX_D_MODEL;

/// The first eight bytes of every weights file.
pub const MAGIC: &[u8; 8] = b"diffattn";

/// The version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// How the token table is stored; every other tensor is always `f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantization {
    /// Plain little-endian `f32`.
    F32,
    /// One signed byte per value plus one `f32` scale per row: `v = q · scale`, with
    /// `scale = max |row| / 127` and `q = round(v / scale)`.
    Int8Rows,
}

/// Why a weights file could not be used.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelError {
    /// The bytes do not start with [`MAGIC`].
    NotWeights,
    /// The file ends before what it announces.
    Truncated {
        /// What was being read.
        what: String,
        /// Bytes needed.
        needed: usize,
        /// Bytes there.
        found: usize,
    },
    /// A version this build cannot read.
    UnsupportedVersion(u32),
    /// The header is not the JSON this version expects.
    Header(String),
    /// The blob's hash differs from the header's: the file is corrupt.
    Corrupt {
        /// The hash in the header.
        expected: String,
        /// The hash of the blob.
        found: String,
    },
    /// Sizes or values that do not fit together.
    Invalid(String),
    /// The engine refused the model (a shape or head count).
    Engine(EngineError),
    /// The untrained model has no classifier.
    Untrained,
    /// More tokens than the model's maps may hold ([`crate::text::limits`]).
    TooLong {
        /// The tokens given.
        tokens: usize,
        /// The most this model takes, [`super::Model::max_tokens`].
        max: usize,
    },
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::NotWeights => write!(
                f,
                "not a diffattn weights file (it does not start with {:?})",
                String::from_utf8_lossy(MAGIC)
            ),
            ModelError::Truncated {
                what,
                needed,
                found,
            } => write!(
                f,
                "truncated weights file: {what} needs {needed} bytes, found {found}"
            ),
            ModelError::UnsupportedVersion(v) => write!(
                f,
                "weights format version {v}; this build reads version {FORMAT_VERSION}"
            ),
            ModelError::Header(e) => write!(f, "bad weights header: {e}"),
            ModelError::Corrupt { expected, found } => write!(
                f,
                "corrupt weights file: the tensors hash to {found}, the header says {expected}"
            ),
            ModelError::Invalid(e) => write!(f, "inconsistent weights: {e}"),
            ModelError::Engine(e) => write!(f, "weights the engine cannot use: {e}"),
            ModelError::Untrained => write!(f, "the untrained model has no classifier"),
            ModelError::TooLong { tokens, max } => write!(
                f,
                "{tokens} tokens; this model reads at most {max} at once (heads × tokens² \
                 within diffattn::text::limits::MAX_MAP_CELLS, and at most MAX_TOKENS)"
            ),
        }
    }
}

impl std::error::Error for ModelError {}

impl From<EngineError> for ModelError {
    fn from(e: EngineError) -> Self {
        ModelError::Engine(e)
    }
}

/// One tensor's entry in the header.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TensorEntry {
    name: String,
    /// `"f32"` or `"i8"`.
    dtype: String,
    shape: Vec<usize>,
    /// Byte offset from the start of the blob.
    offset: usize,
}

/// The JSON header.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    mechanism: String,
    d_model: usize,
    heads: usize,
    /// Always `"sinusoidal"` (Vaswani et al. 2017, §3.5), added to the token vectors.
    positions: String,
    pooling: String,
    labels: Vec<String>,
    /// `"f32"` or `"int8_rows"`: how `embedding` is stored.
    quantization: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shift: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    difference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fill: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    renormalize: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    depth: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    window: Option<usize>,
    /// Hierarchical attention's segment size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    segment: Option<usize>,
    vocab: Vec<String>,
    tensors: Vec<TensorEntry>,
    /// FNV-1a 64 of the blob, 16 lower-case hex digits.
    blob_fnv1a64: String,
    #[serde(default)]
    info: serde_json::Value,
}

/// Checks that the parts of a trained model fit together and that the engine accepts them.
pub(super) fn check(weights: &Weights, t: &Trained) -> Result<(), ModelError> {
    let d = weights.d_model();
    let invalid = |s: String| Err(ModelError::Invalid(s));
    if t.table.vectors.ncols() != d {
        return invalid(format!(
            "embedding: width {} but d_model is {d}",
            t.table.vectors.ncols()
        ));
    }
    let features = t.pooling.features(d);
    if t.classifier.dim() != (2, features) {
        return invalid(format!(
            "classifier.weight: expected 2 x {features}, found {:?}",
            t.classifier.dim()
        ));
    }
    if t.classifier_bias.len() != 2 {
        return invalid("classifier.bias: expected 2 values".to_string());
    }
    match (&t.mechanism, &t.encoder) {
        (Mechanism::InputDiff, Some(e)) if e.input_width() != d || e.output_width() != d => {
            return invalid(format!(
                "bilstm: input {} and output {} must both be d_model {d}",
                e.input_width(),
                e.output_width()
            ));
        }
        (Mechanism::InputDiff, Some(_)) => {}
        (_, Some(_)) => return invalid("bilstm: only input_diff has an encoder".to_string()),
        _ => {}
    }
    check_finite(weights, t)?;
    // One token through the engine proves the head count and the mechanism's parameters fit.
    let x = Array2::<f32>::zeros((2, d));
    crate::engine::run(x.view(), weights, t.heads, false, &t.mechanism)?;
    Ok(())
}

/// Checks every learned value of a model finite, naming the tensor and the index of the first
/// that is not (`gate.beta[1]: NaN`).
fn check_finite(weights: &Weights, t: &Trained) -> Result<(), ModelError> {
    finite("embedding", &t.table.vectors)?;
    finite("w_q", &weights.w_q)?;
    finite("w_k", &weights.w_k)?;
    finite("w_v", &weights.w_v)?;
    finite("w_o", &weights.w_o)?;
    finite("classifier.weight", &t.classifier)?;
    finite("classifier.bias", &t.classifier_bias)?;
    match &t.mechanism {
        Mechanism::ShiftDiff(p) => {
            finite("gate.alpha", &p.gate.alpha)?;
            finite("gate.beta", &p.gate.beta)?;
            finite("gate.gamma", &p.gate.gamma)?;
        }
        Mechanism::DiffTransformer(p) => {
            finite("lambda_q1", &p.lambda_q1)?;
            finite("lambda_k1", &p.lambda_k1)?;
            finite("lambda_q2", &p.lambda_q2)?;
            finite("lambda_k2", &p.lambda_k2)?;
            finite("subln", &p.subln)?;
            finite("lambda_init", &p.lambda_init)?;
            finite("subln_eps", [&p.subln_eps])?;
            finite("lambda", &p.lambda)?;
        }
        Mechanism::Cosine { tau } => finite("tau", [tau])?,
        Mechanism::DiffTransformerV2 { lambda } => finite("lambda", lambda)?,
        Mechanism::Standard
        | Mechanism::InputDiff
        | Mechanism::Local { .. }
        | Mechanism::Hierarchical { .. } => {}
    }
    if let Some(w_lambda) = &weights.w_lambda {
        finite("w_lambda", w_lambda)?;
    }
    if let Some(e) = &t.encoder {
        for (dir, l) in [("forward", &e.forward), ("backward", &e.backward)] {
            finite(&format!("bilstm.{dir}.w_ih"), &l.w_ih)?;
            finite(&format!("bilstm.{dir}.w_hh"), &l.w_hh)?;
            finite(&format!("bilstm.{dir}.b_ih"), &l.b_ih)?;
            finite(&format!("bilstm.{dir}.b_hh"), &l.b_hh)?;
        }
    }
    Ok(())
}

/// The blob being written, and the table of contents that goes into the header.
#[derive(Default)]
pub(super) struct BlobWriter {
    pub(super) blob: Vec<u8>,
    pub(super) entries: Vec<TensorEntry>,
}

/// The file: magic, version, the header's length, the header, the blob.
pub(super) fn container(json: &[u8], blob: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + json.len() + blob.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(json);
    out.extend_from_slice(blob);
    out
}

/// The header's bytes and the blob of a file, after the magic and the version are checked.
pub(super) fn open(bytes: &[u8]) -> Result<(&[u8], &[u8]), ModelError> {
    let magic = bytes.get(..MAGIC.len());
    match magic {
        Some(m) if m == MAGIC => {}
        Some(_) => return Err(ModelError::NotWeights),
        None if MAGIC.starts_with(bytes) => {
            return Err(truncated("the magic", MAGIC.len(), bytes.len()))
        }
        None => return Err(ModelError::NotWeights),
    }
    let version = read_u32(bytes, 8, "the version")?;
    if version != FORMAT_VERSION {
        return Err(ModelError::UnsupportedVersion(version));
    }
    let header_len = read_u32(bytes, 12, "the header length")? as usize;
    let header_end = 16usize.saturating_add(header_len);
    let header_bytes = bytes
        .get(16..header_end)
        .ok_or_else(|| truncated("the header", header_end, bytes.len()))?;
    Ok((header_bytes, &bytes[header_end..]))
}

/// Checks that every tensor of the table lies inside the blob and that the blob hashes to
/// `hash` (`total` is the file's length, `blob_at` where the blob starts, for messages).
pub(super) fn check_blob(
    tensors: &[TensorEntry],
    blob: &[u8],
    hash: &str,
    blob_at: usize,
    total: usize,
) -> Result<(), ModelError> {
    let mut needed = 0usize;
    for e in tensors {
        needed = needed.max(byte_len(e)?.saturating_add(e.offset));
    }
    if blob.len() < needed {
        return Err(truncated(
            "the tensors",
            blob_at.saturating_add(needed),
            total,
        ));
    }
    let found = format!("{:016x}", fnv1a_64(blob));
    // Under a fuzzer the hash is not checked, so that mutated tensors reach the checks after
    // it instead of all stopping here (cargo-fuzz builds with `--cfg fuzzing`).
    if found != hash && !cfg!(fuzzing) {
        return Err(ModelError::Corrupt {
            expected: hash.to_string(),
            found,
        });
    }
    Ok(())
}

impl BlobWriter {
    pub(super) fn f32(
        &mut self,
        name: &str,
        shape: Vec<usize>,
        values: impl IntoIterator<Item = f32>,
    ) {
        self.entries.push(TensorEntry {
            name: name.to_string(),
            dtype: "f32".to_string(),
            shape,
            offset: self.blob.len(),
        });
        for v in values {
            self.blob.extend_from_slice(&v.to_le_bytes());
        }
    }

    pub(super) fn i8(
        &mut self,
        name: &str,
        shape: Vec<usize>,
        values: impl IntoIterator<Item = i8>,
    ) {
        self.entries.push(TensorEntry {
            name: name.to_string(),
            dtype: "i8".to_string(),
            shape,
            offset: self.blob.len(),
        });
        self.blob.extend(values.into_iter().map(|v| v as u8));
    }

    pub(super) fn matrix(&mut self, name: &str, m: &Array2<f32>) {
        self.f32(name, vec![m.nrows(), m.ncols()], m.iter().copied());
    }

    pub(super) fn vector(&mut self, name: &str, v: &[f32]) {
        self.f32(name, vec![v.len()], v.iter().copied());
    }
}

/// The int8 codes and per-row scales of a matrix (see [`Quantization::Int8Rows`]).
pub fn quantize_rows(m: &Array2<f32>) -> (Vec<i8>, Vec<f32>) {
    let mut codes = Vec::with_capacity(m.len());
    let mut scales = Vec::with_capacity(m.nrows());
    for row in m.rows() {
        let max = row.iter().fold(0.0f32, |a, v| a.max(v.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        scales.push(scale);
        codes.extend(
            row.iter()
                .map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8),
        );
    }
    (codes, scales)
}

fn names(m: &Mechanism) -> (&'static str, &'static str, &'static str) {
    match m {
        Mechanism::ShiftDiff(p) => (
            name_of(p.difference),
            name_of(p.fill),
            name_of(p.renormalize),
        ),
        _ => ("", "", ""),
    }
}

/// Writes a weights file.
pub(super) fn encode(weights: &Weights, t: &Trained, quantization: Quantization) -> Vec<u8> {
    let mut w = BlobWriter {
        blob: Vec::new(),
        entries: Vec::new(),
    };
    let table = &t.table.vectors;
    match quantization {
        Quantization::F32 => w.matrix("embedding", table),
        Quantization::Int8Rows => {
            let (codes, scales) = quantize_rows(table);
            w.i8("embedding", vec![table.nrows(), table.ncols()], codes);
            w.vector("embedding.scale", &scales);
        }
    }
    w.matrix("w_q", &weights.w_q);
    w.matrix("w_k", &weights.w_k);
    w.matrix("w_v", &weights.w_v);
    w.matrix("w_o", &weights.w_o);
    w.matrix("classifier.weight", &t.classifier);
    w.vector(
        "classifier.bias",
        t.classifier_bias.as_slice().unwrap_or(&[]),
    );
    let (mut shift, mut depth, mut window, mut segment) = (None, None, None, None);
    let (difference, fill, renormalize) = names(&t.mechanism);
    match &t.mechanism {
        Mechanism::ShiftDiff(p) => {
            shift = Some(p.shift);
            w.vector("gate.alpha", &p.gate.alpha);
            w.vector("gate.beta", &p.gate.beta);
            w.vector("gate.gamma", &p.gate.gamma);
        }
        Mechanism::DiffTransformer(p) => {
            depth = Some(p.depth);
            w.vector("lambda_q1", &p.lambda_q1);
            w.vector("lambda_k1", &p.lambda_k1);
            w.vector("lambda_q2", &p.lambda_q2);
            w.vector("lambda_k2", &p.lambda_k2);
            w.vector("subln", &p.subln);
        }
        Mechanism::Cosine { tau } => w.vector("tau", &[*tau]),
        Mechanism::Local { window: r } => window = Some(*r),
        // V2's W_λ (its W_q has 2d rows, written above).
        Mechanism::DiffTransformerV2 { .. } => {
            if let Some(w_lambda) = &weights.w_lambda {
                w.matrix("w_lambda", w_lambda);
            }
        }
        Mechanism::Hierarchical { segment: s } => segment = Some(*s),
        Mechanism::Standard | Mechanism::InputDiff => {}
    }
    if let Some(e) = &t.encoder {
        for (dir, l) in [("forward", &e.forward), ("backward", &e.backward)] {
            w.matrix(&format!("bilstm.{dir}.w_ih"), &l.w_ih);
            w.matrix(&format!("bilstm.{dir}.w_hh"), &l.w_hh);
            w.vector(&format!("bilstm.{dir}.b_ih"), &l.b_ih.to_vec());
            w.vector(&format!("bilstm.{dir}.b_hh"), &l.b_hh.to_vec());
        }
    }
    let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
    let header = Header {
        mechanism: t.mechanism.name().to_string(),
        d_model: weights.d_model(),
        heads: t.heads,
        positions: "sinusoidal".to_string(),
        pooling: t.pooling.name().to_string(),
        labels: vec!["negative".to_string(), "positive".to_string()],
        quantization: match quantization {
            Quantization::F32 => "f32",
            Quantization::Int8Rows => "int8_rows",
        }
        .to_string(),
        shift,
        difference: some(difference),
        fill: some(fill),
        renormalize: some(renormalize),
        depth,
        window,
        segment,
        vocab: t.table.tokens().to_vec(),
        tensors: w.entries,
        blob_fnv1a64: format!("{:016x}", fnv1a_64(&w.blob)),
        info: t.info.clone(),
    };
    let json = serde_json::to_vec(&header).expect("a header of strings and numbers serialises");
    container(&json, &w.blob)
}

/// The bytes of a tensor as its shape and dtype declare them, with checked arithmetic. A tensor
/// must be a vector or a matrix of at least one value, and its dtype `f32` or `i8`.
fn byte_len(e: &TensorEntry) -> Result<usize, ModelError> {
    let name = &e.name;
    let size: usize = match e.dtype.as_str() {
        "f32" => 4,
        "i8" => 1,
        other => {
            return Err(ModelError::Invalid(format!(
                "tensor {name:?}: dtype {other:?}; expected \"f32\" or \"i8\""
            )))
        }
    };
    if e.shape.is_empty() || e.shape.len() > 2 || e.shape.contains(&0) {
        return Err(ModelError::Invalid(format!(
            "tensor {name:?}: shape {:?}; a tensor is a vector or a matrix of at least one value",
            e.shape
        )));
    }
    e.shape
        .iter()
        .try_fold(size, |a, &n| a.checked_mul(n))
        .filter(|&len| len <= isize::MAX as usize)
        .ok_or_else(|| {
            ModelError::Invalid(format!(
                "tensor {name:?}: shape {:?} overflows the address space",
                e.shape
            ))
        })
}

/// Checks every value of a parameter finite, naming the first that is not by its index in
/// row-major order.
fn finite<'a>(name: &str, values: impl IntoIterator<Item = &'a f32>) -> Result<(), ModelError> {
    match values.into_iter().enumerate().find(|(_, v)| !v.is_finite()) {
        None => Ok(()),
        Some((i, v)) => Err(ModelError::Invalid(format!(
            "{name}[{i}]: {v} (every parameter must be finite)"
        ))),
    }
}

fn truncated(what: &str, needed: usize, found: usize) -> ModelError {
    ModelError::Truncated {
        what: what.to_string(),
        needed,
        found,
    }
}

fn read_u32(bytes: &[u8], at: usize, what: &str) -> Result<u32, ModelError> {
    let b = bytes
        .get(at..at + 4)
        .ok_or_else(|| truncated(what, at + 4, bytes.len()))?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Reads the tensors of a parsed header out of the blob.
pub(super) struct BlobReader<'a> {
    pub(super) tensors: &'a [TensorEntry],
    pub(super) blob: &'a [u8],
}

impl BlobReader<'_> {
    fn entry(&self, name: &str) -> Result<&TensorEntry, ModelError> {
        self.tensors
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| ModelError::Invalid(format!("tensor {name:?} is missing")))
    }

    pub(super) fn has(&self, name: &str) -> bool {
        self.tensors.iter().any(|e| e.name == name)
    }

    pub(super) fn bytes(&self, name: &str, dtype: &str) -> Result<(&[u8], Vec<usize>), ModelError> {
        let e = self.entry(name)?;
        if e.dtype != dtype {
            return Err(ModelError::Invalid(format!(
                "tensor {name:?}: dtype {:?}, expected {dtype:?}",
                e.dtype
            )));
        }
        let len = byte_len(e)?;
        // `byte_len` refuses empty tensors, so every dimension is at most the byte length,
        // which the blob holds: no shape read here can overflow an array's size.
        let end = e
            .offset
            .checked_add(len)
            .ok_or_else(|| ModelError::Invalid(format!("tensor {name:?}: offset overflows")))?;
        let b = self
            .blob
            .get(e.offset..end)
            .ok_or_else(|| truncated(&format!("tensor {name:?}"), end, self.blob.len()))?;
        Ok((b, e.shape.clone()))
    }

    /// The values of an `f32` tensor, every one checked finite: a NaN or an infinity in any
    /// parameter would reach the prediction.
    fn f32s(&self, name: &str) -> Result<(Vec<f32>, Vec<usize>), ModelError> {
        let (b, shape) = self.bytes(name, "f32")?;
        let values: Vec<f32> = b
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        finite(name, &values)?;
        Ok((values, shape))
    }

    pub(super) fn vector(&self, name: &str) -> Result<Vec<f32>, ModelError> {
        let (v, shape) = self.f32s(name)?;
        if shape.len() != 1 {
            return Err(ModelError::Invalid(format!(
                "tensor {name:?}: expected a vector, found shape {shape:?}"
            )));
        }
        Ok(v)
    }

    pub(super) fn matrix(&self, name: &str) -> Result<Array2<f32>, ModelError> {
        let (v, shape) = self.f32s(name)?;
        match shape[..] {
            [r, c] => Array2::from_shape_vec((r, c), v)
                .map_err(|e| ModelError::Invalid(format!("tensor {name:?}: {e}"))),
            _ => Err(ModelError::Invalid(format!(
                "tensor {name:?}: expected a matrix, found shape {shape:?}"
            ))),
        }
    }

    fn table(&self, quantization: &str) -> Result<(Array2<f32>, Quantization), ModelError> {
        match quantization {
            "f32" => Ok((self.matrix("embedding")?, Quantization::F32)),
            "int8_rows" => {
                let (codes, shape) = self.bytes("embedding", "i8")?;
                let [rows, cols] = shape[..] else {
                    return Err(ModelError::Invalid(format!(
                        "tensor \"embedding\": expected a matrix, found shape {shape:?}"
                    )));
                };
                let scales = self.vector("embedding.scale")?;
                if scales.len() != rows {
                    return Err(ModelError::Invalid(format!(
                        "embedding.scale: {} scales for {rows} rows",
                        scales.len()
                    )));
                }
                // A code is at most 127 in magnitude, so a scale up to f32::MAX / 127 gives
                // finite values; the writer's scales are max|row| / 127, always within.
                if let Some((row, scale)) = scales
                    .iter()
                    .enumerate()
                    .find(|(_, s)| s.abs() > f32::MAX / 127.0)
                {
                    return Err(ModelError::Invalid(format!(
                        "embedding.scale[{row}]: {scale:e} times a code of 127 overflows f32 \
                         (a scale is at most {:e})",
                        f32::MAX / 127.0
                    )));
                }
                let m = Array2::from_shape_fn((rows, cols), |(r, c)| {
                    f32::from(codes[r * cols + c] as i8) * scales[r]
                });
                Ok((m, Quantization::Int8Rows))
            }
            other => Err(ModelError::Header(format!(
                "quantization {other:?}; expected \"f32\" or \"int8_rows\""
            ))),
        }
    }
}

/// The value a header field names (`crate::names`), or an error naming the field.
fn header_name<T: Named>(field: &str, value: Option<&str>) -> Result<T, ModelError> {
    let value = value.ok_or_else(|| ModelError::Header(format!("{field} is missing")))?;
    parse::<T>(field, value).map_err(|e| ModelError::Header(e.to_string()))
}

/// Reads a weights file into its parts (unchecked: [`check`] follows).
pub(super) fn decode(bytes: &[u8]) -> Result<(Weights, Trained), ModelError> {
    let (header_bytes, blob) = open(bytes)?;
    let probe: serde_json::Value =
        serde_json::from_slice(header_bytes).map_err(|e| ModelError::Header(e.to_string()))?;
    if probe.get("task").and_then(|t| t.as_str()) == Some("retrieval") {
        return Err(ModelError::Header(
            "a retrieval model (`diffattn retrieve` reads it), not a sentiment classifier"
                .to_string(),
        ));
    }
    let header: Header =
        serde_json::from_slice(header_bytes).map_err(|e| ModelError::Header(e.to_string()))?;
    if header.d_model > MAX_D_MODEL {
        return Err(ModelError::Invalid(format!(
            "d_model {} is over the limit of {MAX_D_MODEL} (diffattn::text::limits::MAX_D_MODEL)",
            header.d_model
        )));
    }
    let header_end = 16 + header_bytes.len();
    check_blob(
        &header.tensors,
        blob,
        &header.blob_fnv1a64,
        header_end,
        bytes.len(),
    )?;
    if header.positions != "sinusoidal" {
        return Err(ModelError::Header(format!(
            "positions {:?}; only \"sinusoidal\" is known",
            header.positions
        )));
    }
    if header.labels != ["negative", "positive"] {
        return Err(ModelError::Header(format!(
            "labels {:?}; expected [\"negative\", \"positive\"]",
            header.labels
        )));
    }
    let r = BlobReader {
        tensors: &header.tensors,
        blob,
    };
    let (w_q, w_k, w_v, w_o) = (
        r.matrix("w_q")?,
        r.matrix("w_k")?,
        r.matrix("w_v")?,
        r.matrix("w_o")?,
    );
    // V2's W_q has two query heads per head (2d rows) and comes with W_λ (DESIGN.md §7.5);
    // every other model's projections are d x d.
    let weights = if header.mechanism == MechanismKind::DiffTransformerV2.key() {
        let w_lambda = r.matrix("w_lambda")?;
        Weights::real(
            w_q,
            w_k,
            w_v,
            w_o,
            Default::default(),
            Some(w_lambda),
            Default::default(),
        )?
    } else {
        Weights::new(w_q, w_k, w_v, w_o)?
    };
    if weights.d_model() != header.d_model {
        return Err(ModelError::Invalid(format!(
            "d_model {} but w_q is {} wide",
            header.d_model,
            weights.d_model()
        )));
    }
    let kind = parse::<MechanismKind>("mechanism", &header.mechanism)
        .map_err(|e| ModelError::Header(e.to_string()))?;
    let mechanism = match kind {
        MechanismKind::Standard => Mechanism::Standard,
        MechanismKind::InputDiff => Mechanism::InputDiff,
        MechanismKind::ShiftDiff => Mechanism::ShiftDiff(ShiftDiffParams {
            shift: header
                .shift
                .ok_or_else(|| ModelError::Header("shift is missing".to_string()))?,
            difference: header_name("difference", header.difference.as_deref())?,
            fill: header_name("fill", header.fill.as_deref())?,
            renormalize: header_name("renormalize", header.renormalize.as_deref())?,
            gate: Gate {
                alpha: r.vector("gate.alpha")?,
                beta: r.vector("gate.beta")?,
                gamma: r.vector("gate.gamma")?,
            },
        }),
        MechanismKind::DiffTransformer => Mechanism::DiffTransformer(DiffTransformerParams {
            depth: header
                .depth
                .ok_or_else(|| ModelError::Header("depth is missing".to_string()))?,
            lambda_q1: r.vector("lambda_q1")?,
            lambda_k1: r.vector("lambda_k1")?,
            lambda_q2: r.vector("lambda_q2")?,
            lambda_k2: r.vector("lambda_k2")?,
            subln: r.vector("subln")?,
            lambda_init: None,
            subln_eps: crate::engine::diff_transformer::RMS_NORM_EPS,
            lambda: None,
        }),
        MechanismKind::Cosine => Mechanism::Cosine {
            tau: *r
                .vector("tau")?
                .first()
                .ok_or_else(|| ModelError::Invalid("tau is empty".to_string()))?,
        },
        MechanismKind::Local => Mechanism::Local {
            window: header
                .window
                .ok_or_else(|| ModelError::Header("window is missing".to_string()))?,
        },
        MechanismKind::DiffTransformerV2 => Mechanism::DiffTransformerV2 { lambda: None },
        MechanismKind::Hierarchical => Mechanism::Hierarchical {
            segment: header
                .segment
                .ok_or_else(|| ModelError::Header("segment is missing".to_string()))?,
        },
    };
    let encoder = if r.has("bilstm.forward.w_ih") {
        let dir = |d: &str| -> Result<LstmWeights, ModelError> {
            Ok(LstmWeights {
                w_ih: r.matrix(&format!("bilstm.{d}.w_ih"))?,
                w_hh: r.matrix(&format!("bilstm.{d}.w_hh"))?,
                b_ih: Array1::from(r.vector(&format!("bilstm.{d}.b_ih"))?),
                b_hh: Array1::from(r.vector(&format!("bilstm.{d}.b_hh"))?),
            })
        };
        Some(BiLstm::new(dir("forward")?, dir("backward")?)?)
    } else {
        None
    };
    let pooling = Pooling::from_name(&header.pooling)
        .ok_or_else(|| ModelError::Header(format!("unknown pooling {:?}", header.pooling)))?;
    let (vectors, quantization) = r.table(&header.quantization)?;
    let trained = Trained {
        mechanism,
        heads: header.heads,
        table: TokenTable::new(header.vocab.clone(), vectors)?,
        encoder,
        pooling,
        classifier: r.matrix("classifier.weight")?,
        classifier_bias: Array1::from(r.vector("classifier.bias")?),
        quantization,
        info: header.info.clone(),
    };
    Ok((weights, trained))
}

// RMSNorm's epsilon is part of the format: a file trained with another would not match.
const _: () = assert!(RMS_NORM_EPS == 1e-5);
