//! The JSON values a spec is made of, read strictly and within the limits of
//! [`crate::text::limits`]:
//!
//! - [`Object`] reads a derived struct from a JSON object only (serde would also take an array
//!   and read its fields by position), and rejects an unknown key with the closest known one,
//!   so a typo such as `"shiftfill"` is an error that says `did you mean "shift_fill"?` rather
//!   than a field silently left at its default;
//! - [`Matrix`] and [`Vector`] read numbers straight into `f32`, checking each one finite and
//!   counting rows and values as they arrive, so an over-long `x` is refused at its 2,049th row
//!   instead of after the whole of it is held in memory.
//!
//! Every error is raised where serde_path_to_error can name its JSON path: an unknown key's
//! error is raised while reading its value (the path ends in the key), a bad number's while
//! reading the number (`x[2][0]`), a row's while reading the row (`x[2]`), a limit's while
//! reading the matrix (`x`).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess};
use serde::de::{SeqAccess, Visitor};
use serde::{forward_to_deserialize_any, Deserialize};

use crate::names::closest;
use crate::text::limits::{grouped, MAX_D_MODEL, MAX_TOKENS, PAGE_MAX_TOKENS};

/// A derived struct read from a JSON object, with unknown keys rejected.
pub(super) struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(ObjectOnly(deserializer)).map(Object)
    }
}

/// A deserializer that hands a derived struct a JSON object only, with its keys checked. The
/// derive passes the struct's field names to `deserialize_struct`, so the known keys are always
/// exactly the struct's fields; everything else goes to the wrapped deserializer unchanged.
struct ObjectOnly<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for ObjectOnly<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        // `deserialize_map` takes `{...}` only: an array is "invalid type: sequence, expected a
        // JSON object".
        self.0.deserialize_map(KnownKeys { visitor, fields })
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The derived struct's visitor, given a map whose keys are checked.
struct KnownKeys<V> {
    visitor: V,
    fields: &'static [&'static str],
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KnownKeys<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(CheckedKeys {
            map,
            fields: self.fields,
            unknown: None,
        })
    }
}

/// A map whose unknown keys fail when their value is read.
struct CheckedKeys<A> {
    map: A,
    fields: &'static [&'static str],
    /// The unknown key just read, whose value comes next.
    unknown: Option<String>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for CheckedKeys<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let Some(key) = self.map.next_key::<String>()? else {
            return Ok(None);
        };
        if !self.fields.contains(&key.as_str()) {
            self.unknown = Some(key.clone());
        }
        seed.deserialize(de::value::StringDeserializer::<A::Error>::new(key))
            .map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match self.unknown.take() {
            // Failing inside the value makes the key the last part of the error's path.
            Some(key) => self.map.next_value_seed(Unknown {
                key,
                fields: self.fields,
                value: PhantomData::<S::Value>,
            }),
            None => self.map.next_value_seed(seed),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// The value of an unknown key: always an error, naming the closest known key.
struct Unknown<T> {
    key: String,
    fields: &'static [&'static str],
    value: PhantomData<T>,
}

impl<'de, T> DeserializeSeed<'de> for Unknown<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, _value: D) -> Result<T, D::Error> {
        Err(D::Error::custom(unknown_field(&self.key, self.fields)))
    }
}

/// `unknown field (did you mean "shift_fill"?); the known fields are ...`.
fn unknown_field(key: &str, fields: &[&str]) -> String {
    let suggestion = closest(key, fields)
        .map(|s| format!(" (did you mean {s:?}?)"))
        .unwrap_or_default();
    format!(
        "unknown field{suggestion}; the known fields are {}",
        fields.join(", ")
    )
}

/// A number that is finite in `f32`. JSON numbers are read as `f64` first, so that a value
/// beyond `f32`'s range is reported rather than silently becoming infinite.
pub(super) struct Finite(pub f32);

impl<'de> Deserialize<'de> for Finite {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = f64::deserialize(deserializer)?;
        let v = value as f32;
        if v.is_finite() {
            Ok(Finite(v))
        } else {
            Err(D::Error::custom(format!(
                "{value:e} is not a finite f32 (|v| must be below 3.4e38)"
            )))
        }
    }
}

/// How many rows a matrix may have, and what to call them in the error.
pub(super) trait RowLimit {
    /// The most rows.
    const MAX_ROWS: usize;
    /// What the rows are (`"tokens"`).
    const ROWS: &'static str;
    /// The constant that sets the limit.
    const NAME: &'static str;
    /// What to add to the error (where a larger input may go instead).
    fn hint() -> String {
        String::new()
    }
}

/// The rows of `x`: tokens, at most [`MAX_TOKENS`].
pub(super) enum TokenRows {}

impl RowLimit for TokenRows {
    const MAX_ROWS: usize = MAX_TOKENS;
    const ROWS: &'static str = "tokens (rows)";
    const NAME: &'static str = "MAX_TOKENS";
}

/// The rows of `x` of a spec the page opens: tokens, at most [`PAGE_MAX_TOKENS`], the page's
/// cap on a typed sentence too (the library's [`MAX_TOKENS`], under its own name so that the
/// page's messages name the page's limit).
pub(super) enum PageTokenRows {}

impl RowLimit for PageTokenRows {
    const MAX_ROWS: usize = PAGE_MAX_TOKENS;
    const ROWS: &'static str = "tokens (rows)";
    const NAME: &'static str = "PAGE_MAX_TOKENS";
    fn hint() -> String {
        " on the page, as in `diffattn stages`".to_string()
    }
}

/// The rows of a weight: output channels, at most [`MAX_D_MODEL`].
pub(super) enum WidthRows {}

impl RowLimit for WidthRows {
    const MAX_ROWS: usize = MAX_D_MODEL;
    const ROWS: &'static str = "rows";
    const NAME: &'static str = "MAX_D_MODEL";
}

fn over_limit<L: RowLimit>(what: &str) -> String {
    format!(
        "more than {} {what}; the limit is {} (diffattn::text::limits::{}){}",
        grouped(L::MAX_ROWS),
        grouped(L::MAX_ROWS),
        L::NAME,
        L::hint()
    )
}

/// A non-empty rectangular matrix of finite numbers, row-major, at most `L::MAX_ROWS` rows of
/// at most [`MAX_D_MODEL`] values.
pub(super) struct Matrix<L> {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<f32>,
    limit: PhantomData<L>,
}

impl<'de, L: RowLimit> Deserialize<'de> for Matrix<L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(MatrixVisitor::<L>(PhantomData))
    }
}

struct MatrixVisitor<L>(PhantomData<L>);

impl<'de, L: RowLimit> Visitor<'de> for MatrixVisitor<L> {
    type Value = Matrix<L>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a matrix (a list of rows of numbers)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Matrix<L>, A::Error> {
        let mut data = Vec::new();
        let mut width = None;
        let mut rows = 0;
        loop {
            if rows == L::MAX_ROWS {
                // One more row is skipped without being stored, to tell "at the limit" from
                // "over it".
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(A::Error::custom(over_limit::<L>(L::ROWS)));
                }
                break;
            }
            let row = Row {
                data: &mut data,
                width: &mut width,
            };
            match seq.next_element_seed(row)? {
                Some(()) => rows += 1,
                None => break,
            }
        }
        let cols = width.unwrap_or(0);
        if rows == 0 || cols == 0 {
            return Err(A::Error::custom(
                "must be a non-empty matrix (a list of non-empty rows)",
            ));
        }
        Ok(Matrix {
            rows,
            cols,
            data,
            limit: PhantomData,
        })
    }
}

/// One row of a matrix, appended to `data`; the first row sets `width`.
struct Row<'a> {
    data: &'a mut Vec<f32>,
    width: &'a mut Option<usize>,
}

impl<'de> DeserializeSeed<'de> for Row<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Row<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a row (a list of numbers)")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let n = read_values(&mut seq, self.data)?;
        match *self.width {
            None if n == 0 => {
                return Err(A::Error::custom(
                    "must be a non-empty matrix (a list of non-empty rows)",
                ))
            }
            None => *self.width = Some(n),
            Some(width) if width != n => {
                return Err(A::Error::custom(format!(
                    "row has {n} values, expected {width} like row 0"
                )))
            }
            Some(_) => {}
        }
        Ok(())
    }
}

/// Appends the numbers of a list to `out`, at most [`MAX_D_MODEL`] of them, and returns how
/// many there were.
fn read_values<'de, A: SeqAccess<'de>>(seq: &mut A, out: &mut Vec<f32>) -> Result<usize, A::Error> {
    let mut n = 0;
    loop {
        if n == MAX_D_MODEL {
            if seq.next_element::<IgnoredAny>()?.is_some() {
                return Err(A::Error::custom(over_limit::<WidthRows>("values")));
            }
            return Ok(n);
        }
        match seq.next_element::<Finite>()? {
            Some(Finite(v)) => {
                out.push(v);
                n += 1;
            }
            None => return Ok(n),
        }
    }
}

/// A list of finite numbers, at most [`MAX_D_MODEL`] of them (a gate has one per head, the
/// Differential Transformer's vectors one per channel of a head).
pub(super) struct Vector(pub Vec<f32>);

impl<'de> Deserialize<'de> for Vector {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VectorVisitor;
        impl<'de> Visitor<'de> for VectorVisitor {
            type Value = Vector;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of numbers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vector, A::Error> {
                let mut values = Vec::new();
                read_values(&mut seq, &mut values)?;
                Ok(Vector(values))
            }
        }
        deserializer.deserialize_seq(VectorVisitor)
    }
}

/// A list with one entry per token (labels, rope positions): at most `L::MAX_ROWS` entries
/// (the rows `x` may have), counted as they are read like the rows of `x`.
pub(super) struct TokenList<T, L = TokenRows>(pub Vec<T>, PhantomData<L>);

impl<'de, T: Deserialize<'de>, L: RowLimit> Deserialize<'de> for TokenList<T, L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor<T, L>(PhantomData<(T, L)>);
        impl<'de, T: Deserialize<'de>, L: RowLimit> Visitor<'de> for ListVisitor<T, L> {
            type Value = TokenList<T, L>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list with one entry per token")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TokenList<T, L>, A::Error> {
                let mut entries = Vec::new();
                loop {
                    if entries.len() == L::MAX_ROWS {
                        if seq.next_element::<IgnoredAny>()?.is_some() {
                            return Err(A::Error::custom(over_limit::<L>(
                                "entries (one per token)",
                            )));
                        }
                        return Ok(TokenList(entries, PhantomData));
                    }
                    match seq.next_element::<T>()? {
                        Some(entry) => entries.push(entry),
                        None => return Ok(TokenList(entries, PhantomData)),
                    }
                }
            }
        }
        deserializer.deserialize_seq(ListVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Pair {
        #[allow(dead_code)]
        left: i64,
        #[allow(dead_code)]
        right: Option<i64>,
    }

    fn read<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| e.to_string())
    }

    #[test]
    fn an_object_is_read_and_an_array_is_not() {
        assert!(read::<Object<Pair>>(r#"{"left": 1}"#).is_ok());
        // Plain serde reads `[1, 2]` as {left: 1, right: 2}; Object refuses it.
        assert!(read::<Pair>("[1, 2]").is_ok());
        let e = read::<Object<Pair>>("[1, 2]").err().unwrap();
        assert!(e.contains("expected a JSON object"), "{e}");
    }

    #[test]
    fn an_unknown_key_is_named_with_the_closest_known_one() {
        let e = read::<Object<Pair>>(r#"{"left": 1, "rigt": 2}"#)
            .err()
            .unwrap();
        assert!(
            e.starts_with("rigt: unknown field (did you mean \"right\"?)"),
            "{e}"
        );
        let e = read::<Object<Pair>>(r#"{"left": 1, "banana": 2}"#)
            .err()
            .unwrap();
        assert!(
            e.starts_with("banana: unknown field; the known fields are left, right"),
            "{e}"
        );
    }

    #[test]
    fn matrices_are_checked_as_they_are_read() {
        let m = read::<Matrix<WidthRows>>("[[1, 2], [3, 4.5]]").unwrap();
        assert_eq!((m.rows, m.cols, m.data), (2, 2, vec![1.0, 2.0, 3.0, 4.5]));
        let e = read::<Matrix<WidthRows>>("[[1, 2], [3]]").err().unwrap();
        assert!(
            e.starts_with("[1]: row has 1 values, expected 2 like row 0"),
            "{e}"
        );
        let e = read::<Matrix<WidthRows>>("[[1, 1e39]]").err().unwrap();
        assert!(e.starts_with("[0][1]: 1e39 is not a finite f32"), "{e}");
        for empty in ["[]", "[[]]"] {
            let e = read::<Matrix<WidthRows>>(empty).err().unwrap();
            assert!(e.contains("non-empty matrix"), "{empty}: {e}");
        }
    }

    #[test]
    fn a_matrix_at_its_row_limit_is_read_and_one_row_more_is_not() {
        let rows = |n: usize| format!("[{}]", vec!["[0]"; n].join(","));
        assert_eq!(
            read::<Matrix<TokenRows>>(&rows(MAX_TOKENS)).unwrap().rows,
            MAX_TOKENS
        );
        let e = read::<Matrix<TokenRows>>(&rows(MAX_TOKENS + 1))
            .err()
            .unwrap();
        assert!(
            e.contains("more than 2,048 tokens (rows); the limit is 2,048"),
            "{e}"
        );
    }

    #[test]
    fn the_page_reads_at_most_page_max_tokens_rows_and_says_so() {
        let rows = |n: usize| format!("[{}]", vec!["[0]"; n].join(","));
        let page = read::<Matrix<PageTokenRows>>(&rows(PAGE_MAX_TOKENS)).unwrap();
        assert_eq!(page.rows, PAGE_MAX_TOKENS);
        let e = read::<Matrix<PageTokenRows>>(&rows(PAGE_MAX_TOKENS + 1))
            .err()
            .unwrap();
        assert!(
            e.contains(
                "more than 2,048 tokens (rows); the limit is 2,048 \
                 (diffattn::text::limits::PAGE_MAX_TOKENS) on the page, as in `diffattn stages`"
            ),
            "{e}"
        );
        let labels = |n: usize| format!("[{}]", vec!["\"a\""; n].join(","));
        let list = read::<TokenList<String, PageTokenRows>>(&labels(PAGE_MAX_TOKENS)).unwrap();
        assert_eq!(list.0.len(), PAGE_MAX_TOKENS);
        let e = read::<TokenList<String, PageTokenRows>>(&labels(PAGE_MAX_TOKENS + 1))
            .err()
            .unwrap();
        assert!(
            e.starts_with("more than 2,048 entries (one per token)"),
            "{e}"
        );
    }

    #[test]
    fn lists_of_one_entry_per_token_are_counted_against_the_token_limit() {
        let labels = |n: usize| format!("[{}]", vec!["\"a\""; n].join(","));
        let list = read::<TokenList<String>>(&labels(MAX_TOKENS)).unwrap();
        assert_eq!(list.0.len(), MAX_TOKENS);
        let e = read::<TokenList<String>>(&labels(MAX_TOKENS + 1))
            .err()
            .unwrap();
        assert!(
            e.starts_with("more than 2,048 entries (one per token)"),
            "{e}"
        );
        let e = read::<TokenList<i64>>("[1, \"two\"]").err().unwrap();
        assert!(e.starts_with("[1]: invalid type: string"), "{e}");
    }

    #[test]
    fn a_row_at_the_width_limit_is_read_and_one_value_more_is_not() {
        let row = |n: usize| format!("[[{}]]", vec!["0"; n].join(","));
        assert_eq!(
            read::<Matrix<WidthRows>>(&row(MAX_D_MODEL)).unwrap().cols,
            MAX_D_MODEL
        );
        let e = read::<Matrix<WidthRows>>(&row(MAX_D_MODEL + 1))
            .err()
            .unwrap();
        assert!(e.starts_with("[0]: more than 2,048 values"), "{e}");
    }
}
