//! Multi-layer files (DESIGN.md §7.11): `{"layers": [spec, spec, ...]}`, each entry a whole
//! single-layer spec. One layer is read as a spec; the others are only checked to be JSON
//! objects, so reading layer N costs what reading that layer alone costs.
//!
//! A single-layer spec and a layer of a multi-layer file go through the same reader: the
//! first key of an object is read, and when it is not `layers` it is handed back (`Replay`)
//! to the spec's own reader, which reads the object from that key on. Both ways read the spec
//! through the same map type, so the spec's reader (the largest code of the wasm module) is
//! compiled once.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, StringDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess};
use serde::de::{SeqAccess, Visitor};
use serde::Deserialize;

use super::super::read::{Object, RowLimit};
use super::validate::RawSpec;

/// A document read with its layer picked: the spec of that layer, how many layers the file
/// holds (1 for a single-layer spec) and whether it is a multi-layer file.
pub(super) struct Picked<L> {
    /// The picked layer's spec; `None` when the file has fewer layers than asked.
    pub raw: Option<RawSpec<L>>,
    /// The layers in the file.
    pub count: usize,
    /// Whether the file is `{"layers": [...]}`.
    pub multi: bool,
}

/// Reads a document (a spec or a multi-layer file), keeping layer `index` (from 0).
pub(super) struct Document<L> {
    pub index: usize,
    pub limit: PhantomData<L>,
}

impl<'de, L: RowLimit> DeserializeSeed<'de> for Document<L> {
    type Value = Picked<L>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Picked<L>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, L: RowLimit> Visitor<'de> for Document<L> {
    type Value = Picked<L>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object (a spec, or {\"layers\": [spec, ...]})")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Picked<L>, A::Error> {
        let first = map.next_key::<String>()?;
        if first.as_deref() != Some("layers") {
            let raw = spec_from(first, map)?;
            return Ok(Picked {
                raw: (self.index == 0).then_some(raw),
                count: 1,
                multi: false,
            });
        }
        let (raw, count) = map.next_value_seed(Layers::<L> {
            index: self.index,
            limit: PhantomData,
        })?;
        if let Some(key) = map.next_key::<String>()? {
            return Err(A::Error::custom(format!(
                "a multi-layer file holds `layers` only, found {key:?} beside it (each \
                 layer's spec holds its own fields)"
            )));
        }
        Ok(Picked {
            raw,
            count,
            multi: true,
        })
    }
}

/// The spec of an object whose first key (already read) is `first`.
fn spec_from<'de, L: RowLimit, A: MapAccess<'de>>(
    first: Option<String>,
    map: A,
) -> Result<RawSpec<L>, A::Error> {
    let replay = Replay { first, map };
    Ok(Object::<RawSpec<L>>::deserialize(MapAccessDeserializer::new(replay))?.0)
}

/// A map whose first key, already read, is given again.
struct Replay<A> {
    first: Option<String>,
    map: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Replay<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.first.take() {
            Some(key) => seed
                .deserialize(StringDeserializer::<A::Error>::new(key))
                .map(Some),
            None => self.map.next_key_seed(seed),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// The `layers` list: layer `index` read as a spec, every other entry checked to be an object.
struct Layers<L> {
    index: usize,
    limit: PhantomData<L>,
}

impl<'de, L: RowLimit> DeserializeSeed<'de> for Layers<L> {
    type Value = (Option<RawSpec<L>>, usize);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, L: RowLimit> Visitor<'de> for Layers<L> {
    type Value = (Option<RawSpec<L>>, usize);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of layers, each a spec (a JSON object)")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut picked = None;
        let mut count = 0;
        loop {
            let more = if count == self.index {
                let layer = seq.next_element_seed(Layer::<L>(PhantomData))?;
                let more = layer.is_some();
                picked = layer;
                more
            } else {
                seq.next_element::<AnyObject>()?.is_some()
            };
            if !more {
                break;
            }
            count += 1;
        }
        if count == 0 {
            return Err(S::Error::custom(
                "an empty list: a multi-layer file holds at least one layer",
            ));
        }
        Ok((picked, count))
    }
}

/// One layer of the list: a spec, read as a single-layer spec is (a `layers` key in it is an
/// unknown field: files do not nest).
struct Layer<L>(PhantomData<L>);

impl<'de, L: RowLimit> DeserializeSeed<'de> for Layer<L> {
    type Value = RawSpec<L>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawSpec<L>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, L: RowLimit> Visitor<'de> for Layer<L> {
    type Value = RawSpec<L>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a spec (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawSpec<L>, A::Error> {
        let first = map.next_key::<String>()?;
        spec_from(first, map)
    }
}

/// A JSON object whose content is skipped.
struct AnyObject;

impl<'de> Deserialize<'de> for AnyObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<AnyObject, D::Error> {
        deserializer.deserialize_map(AnyObject)
    }
}

impl<'de> Visitor<'de> for AnyObject {
    type Value = AnyObject;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a spec (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AnyObject, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(AnyObject)
    }
}
