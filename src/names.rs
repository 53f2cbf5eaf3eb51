//! One name per thing: the strings that stand for the engine's enums in the stages format, the
//! weights format, the wasm boundary, the page and its address.
//!
//! Every consumer parses names here, so they all accept the same strings and fail with the same
//! message: the field, what was found, what is allowed, and the closest allowed name. This
//! module has no serde: the spec and the weights format read a string and ask here.

use std::fmt;

use crate::engine::shift_diff::{Difference, Renormalize, ShiftFill};
use crate::engine::{MechanismKind, Pairing, Parameter, RopeLayout, ScaleKind, StageId};

/// An enum whose values have names.
pub trait Named: Copy + PartialEq + 'static {
    /// What a value is, for messages (`"mechanism"`).
    const WHAT: &'static str;
    /// Every value, in the order the names are listed.
    const ALL: &'static [Self];
    /// Other accepted spellings (the page's `maps` attribute writes `A`, `shift`, `D`).
    const ALIASES: &'static [(&'static str, Self)] = &[];
    /// The canonical name.
    fn name(self) -> &'static str;
}

/// A name that is not one of the allowed ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameError {
    /// The field the name was given for (`"mechanism"`, `"difference"`).
    pub field: String,
    /// What was given.
    pub found: String,
    /// The allowed names.
    pub expected: Vec<&'static str>,
    /// The allowed name closest to `found`, if one is close.
    pub suggestion: Option<&'static str>,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: unknown {:?}; expected {}",
            self.field,
            self.found,
            one_of(&self.expected)
        )?;
        if let Some(s) = self.suggestion {
            write!(f, " (did you mean {s:?}?)")?;
        }
        Ok(())
    }
}

impl std::error::Error for NameError {}

/// `"a"`, `"a or b"`, `"one of a, b, c"`.
fn one_of(names: &[&str]) -> String {
    match names {
        [] => "nothing".to_string(),
        [one] => format!("{one:?}"),
        [a, b] => format!("{a:?} or {b:?}"),
        _ => {
            let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
            format!("one of {}", quoted.join(", "))
        }
    }
}

/// The canonical name of a value.
pub fn name_of<T: Named>(value: T) -> &'static str {
    value.name()
}

/// Every canonical name of `T`, in order.
pub fn names<T: Named>() -> Vec<&'static str> {
    T::ALL.iter().map(|v| v.name()).collect()
}

/// The value named `text` (a canonical name or an alias), or an error about `field`.
///
/// ```
/// use diffattn::engine::MechanismKind;
/// use diffattn::names::parse;
/// assert_eq!(parse::<MechanismKind>("mechanism", "cosine"), Ok(MechanismKind::Cosine));
/// let e = parse::<MechanismKind>("mechanism", "shiftdiff").unwrap_err();
/// assert_eq!(e.suggestion, Some("shift_diff"));
/// ```
pub fn parse<T: Named>(field: &str, text: &str) -> Result<T, NameError> {
    if let Some(v) = T::ALL.iter().find(|v| v.name() == text) {
        return Ok(*v);
    }
    if let Some((_, v)) = T::ALIASES.iter().find(|(alias, _)| *alias == text) {
        return Ok(*v);
    }
    Err(unknown(field, text, names::<T>()))
}

/// The error of [`parse`], built once for every `T` (not once per instance of `parse`).
fn unknown(field: &str, text: &str, expected: Vec<&'static str>) -> NameError {
    NameError {
        field: field.to_string(),
        found: text.to_string(),
        suggestion: closest(text, &expected),
        expected,
    }
}

/// The candidate closest to `word` by edit distance (ignoring case, `-` against `_`), if it is
/// close enough to be a likely typo: at most a third of the longer word's length, and at least
/// one edit allowed.
///
/// ```
/// use diffattn::names::closest;
/// assert_eq!(closest("shiftfill", &["shift_fill", "shift"]), Some("shift_fill"));
/// assert_eq!(closest("banana", &["shift_fill", "shift"]), None);
/// ```
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let norm = |s: &str| s.to_lowercase().replace('-', "_");
    let w = norm(word);
    candidates
        .iter()
        .map(|&c| (edit_distance(&w, &norm(c)), c))
        .filter(|(d, c)| {
            let longer = w.chars().count().max(c.chars().count());
            *d <= (longer / 3).max(1)
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

impl Named for MechanismKind {
    const WHAT: &'static str = "mechanism";
    const ALL: &'static [Self] = &MechanismKind::ALL;
    fn name(self) -> &'static str {
        self.key()
    }
}

impl Named for Pairing {
    const WHAT: &'static str = "pairing";
    const ALL: &'static [Self] = &[Pairing::Adjacent, Pairing::Halves];
    fn name(self) -> &'static str {
        match self {
            Pairing::Adjacent => "adjacent",
            Pairing::Halves => "halves",
        }
    }
}

impl Named for RopeLayout {
    const WHAT: &'static str = "rope layout";
    const ALL: &'static [Self] = &[RopeLayout::Half, RopeLayout::Interleaved];
    fn name(self) -> &'static str {
        match self {
            RopeLayout::Half => "half",
            RopeLayout::Interleaved => "interleaved",
        }
    }
}

impl Named for Difference {
    const WHAT: &'static str = "difference";
    const ALL: &'static [Self] = &[Difference::Single, Difference::Symmetric];
    fn name(self) -> &'static str {
        match self {
            Difference::Single => "single",
            Difference::Symmetric => "symmetric",
        }
    }
}

impl Named for ShiftFill {
    const WHAT: &'static str = "fill";
    const ALL: &'static [Self] = &[ShiftFill::Circular, ShiftFill::Zero];
    fn name(self) -> &'static str {
        match self {
            ShiftFill::Circular => "circular",
            ShiftFill::Zero => "zero",
        }
    }
}

impl Named for Renormalize {
    const WHAT: &'static str = "renormalize";
    const ALL: &'static [Self] = &[Renormalize::None, Renormalize::Softmax];
    fn name(self) -> &'static str {
        match self {
            Renormalize::None => "none",
            Renormalize::Softmax => "softmax",
        }
    }
}

impl Named for StageId {
    const WHAT: &'static str = "stage";
    const ALL: &'static [Self] = &StageId::ALL;
    const ALIASES: &'static [(&'static str, Self)] = &[
        ("A", StageId::A),
        ("shift", StageId::Shifted),
        ("shift_back", StageId::ShiftedBack),
        ("D", StageId::D),
        ("G", StageId::G),
        ("A1", StageId::A1),
        ("A2", StageId::A2),
    ];
    /// The key of the stage in the stages JSON (`"a"`, `"shifted"`, ...).
    fn name(self) -> &'static str {
        match self {
            StageId::A => "a",
            StageId::Shifted => "shifted",
            StageId::ShiftedBack => "shifted_back",
            StageId::D => "d",
            StageId::G => "g",
            StageId::Fused => "fused",
            StageId::A1 => "a1",
            StageId::A2 => "a2",
            StageId::Diff => "diff",
            StageId::Local => "local",
            StageId::Segments => "segments",
            StageId::Lambda => "lambda",
            StageId::OutputGate => "output_gate_mean",
        }
    }
}

impl Named for Parameter {
    const WHAT: &'static str = "parameter";
    const ALL: &'static [Self] = &[
        Parameter::Shift,
        Parameter::Difference,
        Parameter::Fill,
        Parameter::Renormalize,
        Parameter::Gate,
        Parameter::Tau,
        Parameter::Window,
        Parameter::Segment,
        Parameter::Lambda,
        Parameter::Temperature,
    ];
    /// The control's name on the page, in the address and on the custom element.
    fn name(self) -> &'static str {
        match self {
            Parameter::Shift => "shift",
            Parameter::Difference => "difference",
            Parameter::Fill => "fill",
            Parameter::Renormalize => "renormalize",
            Parameter::Gate => "gate",
            Parameter::Tau => "tau",
            Parameter::Window => "window",
            Parameter::Segment => "segment",
            Parameter::Lambda => "lambda",
            Parameter::Temperature => "temperature",
        }
    }
}

impl Named for ScaleKind {
    const WHAT: &'static str = "scale";
    const ALL: &'static [Self] = &[ScaleKind::Sequential, ScaleKind::Unit, ScaleKind::Diverging];
    fn name(self) -> &'static str {
        match self {
            ScaleKind::Sequential => "sequential",
            ScaleKind::Unit => "unit",
            ScaleKind::Diverging => "diverging",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trips<T: Named + fmt::Debug>() {
        for &v in T::ALL {
            assert_eq!(parse::<T>(T::WHAT, v.name()), Ok(v));
        }
        let mut seen = names::<T>();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), T::ALL.len(), "{} names are unique", T::WHAT);
    }

    #[test]
    fn every_name_parses_back_to_its_value() {
        round_trips::<MechanismKind>();
        round_trips::<Difference>();
        round_trips::<Pairing>();
        round_trips::<RopeLayout>();
        round_trips::<ShiftFill>();
        round_trips::<Renormalize>();
        round_trips::<StageId>();
        round_trips::<Parameter>();
        round_trips::<ScaleKind>();
    }

    #[test]
    fn an_unknown_name_lists_the_allowed_ones_and_the_closest() {
        let e = parse::<Difference>("difference", "symetric").unwrap_err();
        assert_eq!(
            e.to_string(),
            "difference: unknown \"symetric\"; expected \"single\" or \"symmetric\" \
             (did you mean \"symmetric\"?)"
        );
        let e = parse::<ShiftFill>("shift_fill", "wrap").unwrap_err();
        assert_eq!(e.suggestion, None);
    }

    #[test]
    fn the_page_spellings_of_stages_are_aliases() {
        for (alias, want) in [
            ("A", StageId::A),
            ("shift", StageId::Shifted),
            ("D", StageId::D),
        ] {
            assert_eq!(parse::<StageId>("maps", alias), Ok(want));
        }
    }

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        // kitten → sitten → sittin → sitting: two substitutions and one insertion.
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }
}
