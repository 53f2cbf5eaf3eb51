//! The tensors of a weights file: their table of contents (`TensorEntry`, in the header), the
//! blob they are written into (`BlobWriter`) and read out of (`BlobReader`), every tensor
//! checked to lie inside the blob and the blob's hash checked (`check_blob`).

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use super::checks::finite;
use super::{truncated, ModelError, Quantization};
use crate::text::fnv1a_64;

/// One tensor's entry in the header.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::model) struct TensorEntry {
    name: String,
    /// `"f32"`, `"f16"` (IEEE half, little-endian) or `"i8"`.
    dtype: String,
    shape: Vec<usize>,
    /// Byte offset from the start of the blob.
    offset: usize,
}

/// The blob being written, and the table of contents that goes into the header.
#[derive(Default)]
pub(in crate::model) struct BlobWriter {
    pub(in crate::model) blob: Vec<u8>,
    pub(in crate::model) entries: Vec<TensorEntry>,
}

/// Checks that every tensor of the table lies inside the blob and that the blob hashes to
/// `hash` (`total` is the file's length, `blob_at` where the blob starts, for messages).
pub(in crate::model) fn check_blob(
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
    pub(in crate::model) fn f32(
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

    pub(in crate::model) fn i8(
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

    /// A tensor stored as IEEE half floats, each value rounded to the nearest (ties to even);
    /// returns whether every value stayed finite (one past ±65,504 becomes an infinity).
    pub(in crate::model) fn f16(
        &mut self,
        name: &str,
        shape: Vec<usize>,
        values: impl IntoIterator<Item = f32>,
    ) -> bool {
        self.f16_codes(
            name,
            shape,
            values.into_iter().map(|v| half::f16::from_f32(v).to_bits()),
        )
    }

    /// A tensor of half floats given as their bits.
    pub(in crate::model) fn f16_codes(
        &mut self,
        name: &str,
        shape: Vec<usize>,
        codes: impl IntoIterator<Item = u16>,
    ) -> bool {
        self.entries.push(TensorEntry {
            name: name.to_string(),
            dtype: "f16".to_string(),
            shape,
            offset: self.blob.len(),
        });
        let mut finite = true;
        for c in codes {
            finite &= f16_finite(c);
            self.blob.extend_from_slice(&c.to_le_bytes());
        }
        finite
    }

    pub(in crate::model) fn matrix(&mut self, name: &str, m: &Array2<f32>) {
        self.f32(name, vec![m.nrows(), m.ncols()], m.iter().copied());
    }

    pub(in crate::model) fn vector(&mut self, name: &str, v: &[f32]) {
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

/// Whether the half float with bits `c` is finite (its exponent is not all ones).
pub(in crate::model) fn f16_finite(c: u16) -> bool {
    c & 0x7C00 != 0x7C00
}

/// The bytes of a tensor as its shape and dtype declare them, with checked arithmetic. A tensor
/// must be a vector or a matrix of at least one value, and its dtype `f32`, `f16` or `i8`.
fn byte_len(e: &TensorEntry) -> Result<usize, ModelError> {
    let name = &e.name;
    let size: usize = match e.dtype.as_str() {
        "f32" => 4,
        "f16" => 2,
        "i8" => 1,
        other => {
            return Err(ModelError::Invalid(format!(
                "tensor {name:?}: dtype {other:?}; expected \"f32\", \"f16\" or \"i8\""
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

/// Reads the tensors of a parsed header out of the blob.
pub(in crate::model) struct BlobReader<'a> {
    pub(in crate::model) tensors: &'a [TensorEntry],
    pub(in crate::model) blob: &'a [u8],
}

impl BlobReader<'_> {
    fn entry(&self, name: &str) -> Result<&TensorEntry, ModelError> {
        self.tensors
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| ModelError::Invalid(format!("tensor {name:?} is missing")))
    }

    pub(in crate::model) fn has(&self, name: &str) -> bool {
        self.tensors.iter().any(|e| e.name == name)
    }

    pub(in crate::model) fn bytes(
        &self,
        name: &str,
        dtype: &str,
    ) -> Result<(&[u8], Vec<usize>), ModelError> {
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

    /// The bits of an `f16` tensor, every value checked finite, and its shape.
    pub(in crate::model) fn f16_codes(
        &self,
        name: &str,
    ) -> Result<(Vec<u16>, Vec<usize>), ModelError> {
        let (b, shape) = self.bytes(name, "f16")?;
        let codes: Vec<u16> = b
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        if let Some(i) = codes.iter().position(|&c| !f16_finite(c)) {
            let v = half::f16::from_bits(codes[i]).to_f32();
            return Err(ModelError::Invalid(format!(
                "{name}[{i}]: {v} (every parameter must be finite)"
            )));
        }
        Ok((codes, shape))
    }

    /// An `f16` matrix as `f32` (exact: every half float is an `f32`).
    pub(in crate::model) fn f16_matrix(&self, name: &str) -> Result<Array2<f32>, ModelError> {
        let (codes, shape) = self.f16_codes(name)?;
        match shape[..] {
            [r, c] => Array2::from_shape_vec(
                (r, c),
                codes
                    .iter()
                    .map(|&c| half::f16::from_bits(c).to_f32())
                    .collect(),
            )
            .map_err(|e| ModelError::Invalid(format!("tensor {name:?}: {e}"))),
            _ => Err(ModelError::Invalid(format!(
                "tensor {name:?}: expected a matrix, found shape {shape:?}"
            ))),
        }
    }

    pub(in crate::model) fn vector(&self, name: &str) -> Result<Vec<f32>, ModelError> {
        let (v, shape) = self.f32s(name)?;
        if shape.len() != 1 {
            return Err(ModelError::Invalid(format!(
                "tensor {name:?}: expected a vector, found shape {shape:?}"
            )));
        }
        Ok(v)
    }

    pub(in crate::model) fn matrix(&self, name: &str) -> Result<Array2<f32>, ModelError> {
        let (v, shape) = self.f32s(name)?;
        match shape[..] {
            [r, c] => Array2::from_shape_vec((r, c), v)
                .map_err(|e| ModelError::Invalid(format!("tensor {name:?}: {e}"))),
            _ => Err(ModelError::Invalid(format!(
                "tensor {name:?}: expected a matrix, found shape {shape:?}"
            ))),
        }
    }

    pub(super) fn table(
        &self,
        quantization: &str,
    ) -> Result<(Array2<f32>, Quantization), ModelError> {
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
