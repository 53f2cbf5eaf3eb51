//! The binary form of a spec (DESIGN.md §7.8): a safetensors file whose tensors are the spec's
//! array fields and whose `__metadata__` holds `"format": "diffattn.stages"`, `"version": "1"`
//! and `"spec"`, the JSON of every other field.
//!
//! safetensors: 8 bytes little-endian header length `n`, `n` bytes of JSON header
//! (`{"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}`), then
//! the tensors' bytes, little-endian, row-major, offsets relative to the end of the header.

use ndarray::Array2;
use serde_json::Value;

use super::input::{SpecError, Tensors};
use crate::text::limits::{grouped, MAX_D_MODEL, MAX_TOKENS};

const FORMAT: &str = "diffattn.stages";
const VERSION: &str = "1";

/// The fields that may be tensors.
pub const ARRAY_FIELDS: [&str; 22] = [
    "x",
    "w_q",
    "w_k",
    "w_v",
    "w_o",
    "b_q",
    "b_k",
    "b_v",
    "b_o",
    "lambda_q1",
    "lambda_k1",
    "lambda_q2",
    "lambda_k2",
    "subln",
    "w_lambda",
    "q_norm",
    "k_norm",
    "sinks",
    "relative_bias",
    "x_kv",
    "w_output_gate",
    "b_output_gate",
];

/// Whether `bytes` look like a safetensors file rather than JSON: an 8-byte header length that
/// fits the file, then a header that starts with `{`. (JSON text with eight leading spaces
/// reads as a length far beyond any file.)
pub fn is_safetensors(bytes: &[u8]) -> bool {
    let Some(len) = bytes.get(..8) else {
        return false;
    };
    let n = u64::from_le_bytes(len.try_into().unwrap_or([0xff; 8]));
    bytes.get(8) == Some(&b'{') && n <= (bytes.len() - 8) as u64
}

/// A safetensors file of the format, read as far as its header.
pub struct File<'a> {
    /// The JSON text of the non-array fields (a multi-layer file's `{"layers": [...]}`).
    pub spec: String,
    header: serde_json::Map<String, Value>,
    data: &'a [u8],
}

/// The file's header checked (format, version, `spec`); its tensors are read by
/// [`File::tensors`] once the spec says which of them a layer has.
pub fn read(bytes: &[u8]) -> Result<File<'_>, SpecError> {
    let bad = |m: String| SpecError::new("safetensors", m);
    if bytes.len() < 8 {
        return Err(bad("shorter than its 8-byte header length".into()));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[..8]);
    let n = usize::try_from(u64::from_le_bytes(len))
        .map_err(|_| bad("header length too large".into()))?;
    let data_start = 8usize.checked_add(n).filter(|&e| e <= bytes.len());
    let data_start = data_start.ok_or_else(|| {
        bad(format!(
            "a header of {n} bytes runs past the end of the file"
        ))
    })?;
    let header: serde_json::Map<String, Value> = serde_json::from_slice(&bytes[8..data_start])
        .map_err(|e| bad(format!("header is not a JSON object: {e}")))?;
    let data = &bytes[data_start..];
    let meta = header.get("__metadata__").and_then(Value::as_object);
    let text = |key: &str| meta.and_then(|m| m.get(key)).and_then(Value::as_str);
    if text("format") != Some(FORMAT) {
        return Err(SpecError::new(
            "__metadata__.format",
            format!(
                "expected {FORMAT:?}, found {:?}",
                text("format").unwrap_or("nothing")
            ),
        ));
    }
    if text("version") != Some(VERSION) {
        return Err(SpecError::new(
            "__metadata__.version",
            format!(
                "expected {VERSION:?}, found {:?}",
                text("version").unwrap_or("nothing")
            ),
        ));
    }
    let spec = text("spec").ok_or_else(|| SpecError::new("__metadata__.spec", "missing"))?;
    Ok(File {
        spec: spec.to_string(),
        header,
        data,
    })
}

impl File<'_> {
    /// The array fields of a single-layer file as f32 matrices (vectors as one row), every
    /// tensor named as its field.
    pub fn tensors(&self) -> Result<Tensors, SpecError> {
        let mut tensors = Tensors::new();
        for (name, info) in self.entries() {
            if !ARRAY_FIELDS.contains(&name.as_str()) {
                return Err(not_a_field(name));
            }
            tensors.insert(name.clone(), tensor(name, info, self.data)?);
        }
        Ok(tensors)
    }

    /// The array fields of layer `index` of a multi-layer file of `count` layers (§7.11): the
    /// tensors `layers.INDEX.FIELD` by field; every other tensor's name is checked to be
    /// `layers.I.FIELD` with I below `count`, and never read.
    pub fn layer_tensors(&self, index: usize, count: usize) -> Result<Tensors, SpecError> {
        let mut tensors = Tensors::new();
        for (name, info) in self.entries() {
            let (layer, field) = layer_field(name, count)?;
            if !ARRAY_FIELDS.contains(&field) {
                return Err(not_a_field(name));
            }
            if layer == index {
                tensors.insert(field.to_string(), tensor(name, info, self.data)?);
            }
        }
        Ok(tensors)
    }

    fn entries(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.header
            .iter()
            .filter(|(k, _)| k.as_str() != "__metadata__")
    }
}

fn not_a_field(name: &str) -> SpecError {
    SpecError::new(name, "a tensor that is not an array field of the format")
}

/// A multi-layer file's tensor name `layers.I.FIELD` as (I, FIELD), I below `count`.
fn layer_field(name: &str, count: usize) -> Result<(usize, &str), SpecError> {
    let parts = name.strip_prefix("layers.").and_then(|r| r.split_once('.'));
    // I in plain decimal: `layers.01.x` would be a second name of `layers.1.x`.
    let layer = parts.and_then(|(i, f)| {
        let n = i.parse::<usize>().ok()?;
        (n.to_string() == i).then_some((n, f))
    });
    match layer {
        Some((i, field)) if i < count => Ok((i, field)),
        _ => Err(SpecError::new(
            name.to_string(),
            format!(
                "a tensor of a multi-layer file is named layers.I.FIELD, I from 0 to {}",
                count - 1
            ),
        )),
    }
}

/// One F32 or F64 tensor of rank 1 or 2 as an f32 matrix, every value finite in f32, its shape
/// within the limits.
fn tensor(name: &str, info: &Value, data: &[u8]) -> Result<Array2<f32>, SpecError> {
    let err = |m: String| SpecError::new(name.to_string(), m);
    let size = match info.get("dtype").and_then(Value::as_str) {
        Some("F32") => 4,
        Some("F64") => 8,
        other => return Err(err(format!("dtype {other:?}: expected F32 or F64"))),
    };
    let dims = numbers(info, "shape");
    let (rows, cols) = match dims[..] {
        [n] => (1, n),
        [r, c] => (r, c),
        _ => {
            return Err(err(format!(
                "shape {:?}: expected rank 1 or 2",
                info.get("shape")
            )))
        }
    };
    // The limits of `crate::text::limits`, before anything of the tensor's size is allocated.
    let (max_rows, rows_are) = if name == "x" {
        (MAX_TOKENS, "tokens (rows), the limit MAX_TOKENS")
    } else {
        (MAX_D_MODEL, "rows, the limit MAX_D_MODEL")
    };
    if rows > max_rows {
        return Err(err(format!(
            "shape {dims:?}: more than {} {rows_are} (diffattn::text::limits)",
            grouped(max_rows)
        )));
    }
    if cols > MAX_D_MODEL {
        return Err(err(format!(
            "shape {dims:?}: more than {} columns, the limit MAX_D_MODEL \
             (diffattn::text::limits)",
            grouped(MAX_D_MODEL)
        )));
    }
    let offsets = numbers(info, "data_offsets");
    let fits = |b: usize, e: usize| {
        b <= e
            && e <= data.len()
            && rows.checked_mul(cols).and_then(|n| n.checked_mul(size)) == Some(e - b)
    };
    let (begin, end) = match offsets[..] {
        [b, e] if fits(b, e) => (b, e),
        _ => {
            return Err(err(format!(
                "data_offsets {:?} do not fit shape {dims:?}",
                info.get("data_offsets")
            )))
        }
    };
    let mut values = Vec::with_capacity(rows * cols);
    for (i, chunk) in data[begin..end].chunks_exact(size).enumerate() {
        let v = if size == 4 {
            f32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]])
        } else {
            let mut b = [0u8; 8];
            b.copy_from_slice(chunk);
            f64::from_le_bytes(b) as f32
        };
        if !v.is_finite() {
            return Err(SpecError::new(
                format!("{name}[{}][{}]", i / cols.max(1), i % cols.max(1)),
                "not a finite f32",
            ));
        }
        values.push(v);
    }
    Array2::from_shape_vec((rows, cols), values).map_err(|e| err(e.to_string()))
}

/// The non-negative integers of a header entry's list `key` (empty when it is not one).
fn numbers(info: &Value, key: &str) -> Vec<usize> {
    let list = info.get(key).and_then(Value::as_array);
    list.map(|l| {
        l.iter()
            .filter_map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
            .collect()
    })
    .unwrap_or_default()
}
