//! The weights file: an 8-byte magic, a version, a JSON header and a blob of little-endian
//! tensors (docs/MODEL.md, "Format").
//!
//! ```text
//! offset 0   b"diffattn"                 magic
//!        8   u32 LE                      format version (1)
//!       12   u32 LE n                    header length in bytes
//!       16   n bytes                     JSON header: settings, vocabulary, tensor table,
//!                                        FNV-1a 64 of the blob
//!     16+n   the blob                    tensors at the header's offsets, f32 or f16 LE, or int8
//! ```
//!
//! Every tensor the header names must lie inside the blob and have the size its shape says;
//! the blob's hash catches flipped bits. Errors say which check failed.
//!
//! * `blob`: the tensors' table of contents and the blob they lie in, written and read back,
//!   each tensor checked inside the blob (shared with the retrieval models' files);
//! * `header`: the sentiment classifier's JSON header, and the whole file written and read;
//! * `checks`: a trained model's parts checked to fit together, every value finite.

mod blob;
mod checks;
mod header;

use std::fmt;

use crate::engine::EngineError;
pub(super) use blob::{check_blob, f16_finite, BlobReader, BlobWriter, TensorEntry};
pub(super) use checks::check;
pub(super) use header::{decode, encode};

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

/// What a header says it is: its top-level `"task"` (`"retrieval"` for the retrieval models;
/// none for a sentiment classifier), read before the header itself so that a file of the other
/// kind gets its own message, not its first unknown field's. The header must be a JSON object
/// (serde's derive alone would also read a struct from an array of its fields in order); every
/// other member is skipped unread.
pub(in crate::model) fn task_of(header: &[u8]) -> Result<Option<String>, ModelError> {
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
    struct Task;
    impl<'de> Visitor<'de> for Task {
        type Value = Option<String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("the header as a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<String>, A::Error> {
            let mut task = None;
            while let Some(key) = map.next_key::<String>()? {
                if key == "task" {
                    task = map.next_value::<Option<String>>()?;
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(task)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(header);
    let task = de
        .deserialize_map(Task)
        .and_then(|task| de.end().map(|()| task))
        .map_err(|e| ModelError::Header(e.to_string()))?;
    Ok(task)
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
