//! A setting's value without its Rust type: [`Raw`] is what a caller gives (a JavaScript value,
//! a CLI argument), [`Value`] what a setting holds, and [`SettingValue`] the conversions of each
//! Rust type a setting is stored in (integers, `f32`, `bool`, an optional `f32`, every named
//! enum). One conversion per type, so every setting of that type reads and reports the same way
//! and its error names the setting.

use std::fmt;

use crate::names::{self, Named};

/// A value as a caller gives it, before it is a setting's type.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    /// A number (JavaScript numbers are `f64`).
    Number(f64),
    /// `true` or `false`.
    Bool(bool),
    /// A string (a name, for a choice).
    Text(String),
    /// `null`: "back to the learned value" for a setting that has one.
    Null,
    /// Anything else (an object, an array), described for the error message.
    Other(String),
}

impl fmt::Display for Raw {
    /// As serde describes a value in "invalid type" errors (`string "two"`, `floating point
    /// `2.5``).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Raw::Number(n) if n.fract() == 0.0 && n.is_finite() => write!(f, "integer `{n}`"),
            Raw::Number(n) => write!(f, "floating point `{n}`"),
            Raw::Bool(b) => write!(f, "boolean `{b}`"),
            Raw::Text(s) => write!(f, "string {s:?}"),
            Raw::Null => write!(f, "null"),
            Raw::Other(what) => write!(f, "{what}"),
        }
    }
}

/// What a setting holds, whatever its Rust type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An integer.
    Int(i64),
    /// A number (`f32` in the engine).
    Float(f32),
    /// A boolean.
    Bool(bool),
    /// A choice, by its name.
    Name(&'static str),
    /// Not set: the learned value is used (λ until a person chooses one).
    Unset,
}

/// How a type is written in the generated files: a JavaScript number (an integer or not), a
/// boolean, or one of a list of names.
#[derive(Debug, Clone, Copy)]
pub enum Type {
    /// A whole number.
    Integer,
    /// Any finite number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// One of the names of a [`Named`] enum (`names` lists them).
    Name {
        /// The names, in order.
        names: fn() -> Vec<&'static str>,
        /// What one is (`"mechanism"`), the `Named::WHAT` of the enum.
        what: &'static str,
    },
}

/// The Rust type a setting is stored in: its [`Type`], and the conversions from a [`Raw`]
/// (naming `key` in its errors) and to a [`Value`].
pub trait SettingValue: Copy + Sized {
    /// How the type is written in the generated files.
    const TYPE: Type;
    /// The value `raw` stands for, or the sentence that says why it is none
    /// (`shift: invalid type: string "two", expected an integer`).
    fn from_raw(key: &str, raw: &Raw) -> Result<Self, String>;
    /// The value, without its type.
    fn to_value(self) -> Value;
}

fn invalid(key: &str, raw: &Raw, expected: &str) -> String {
    format!("{key}: invalid type: {raw}, expected {expected}")
}

fn integer(key: &str, raw: &Raw, min: f64, max: f64) -> Result<i64, String> {
    match raw {
        Raw::Number(n) if n.fract() == 0.0 && *n >= min && *n <= max => Ok(*n as i64),
        Raw::Number(n) if n.fract() == 0.0 && n.is_finite() => Err(format!(
            "{key}: invalid value: integer `{n}`, expected an integer from {min} to {max}"
        )),
        _ => Err(invalid(key, raw, "an integer")),
    }
}

impl SettingValue for i64 {
    const TYPE: Type = Type::Integer;
    fn from_raw(key: &str, raw: &Raw) -> Result<i64, String> {
        // The integers a JavaScript number holds exactly.
        const SAFE: f64 = 9_007_199_254_740_991.0;
        integer(key, raw, -SAFE, SAFE)
    }
    fn to_value(self) -> Value {
        Value::Int(self)
    }
}

impl SettingValue for usize {
    const TYPE: Type = Type::Integer;
    fn from_raw(key: &str, raw: &Raw) -> Result<usize, String> {
        const SAFE: f64 = 9_007_199_254_740_991.0;
        integer(key, raw, 0.0, SAFE.min(usize::MAX as f64)).map(|n| n as usize)
    }
    fn to_value(self) -> Value {
        Value::Int(self as i64)
    }
}

impl SettingValue for f32 {
    const TYPE: Type = Type::Number;
    /// Any number, as `f32` (whether it is finite is the settings' own check, which names it).
    fn from_raw(key: &str, raw: &Raw) -> Result<f32, String> {
        match raw {
            Raw::Number(n) => Ok(*n as f32),
            _ => Err(invalid(key, raw, "a number")),
        }
    }
    fn to_value(self) -> Value {
        Value::Float(self)
    }
}

impl SettingValue for Option<f32> {
    const TYPE: Type = Type::Number;
    /// A number, or `null` for "not set" (the learned value).
    fn from_raw(key: &str, raw: &Raw) -> Result<Option<f32>, String> {
        match raw {
            Raw::Null => Ok(None),
            raw => f32::from_raw(key, raw).map(Some),
        }
    }
    fn to_value(self) -> Value {
        self.map_or(Value::Unset, Value::Float)
    }
}

impl SettingValue for bool {
    const TYPE: Type = Type::Boolean;
    fn from_raw(key: &str, raw: &Raw) -> Result<bool, String> {
        match raw {
            Raw::Bool(b) => Ok(*b),
            _ => Err(invalid(key, raw, "a boolean")),
        }
    }
    fn to_value(self) -> Value {
        Value::Bool(self)
    }
}

/// Every named enum (a mechanism, a difference, a fill, a renormalisation) is a choice by name.
impl<T: Named> SettingValue for T {
    const TYPE: Type = Type::Name {
        names: names::names::<T>,
        what: T::WHAT,
    };
    fn from_raw(key: &str, raw: &Raw) -> Result<T, String> {
        match raw {
            Raw::Text(s) => names::parse::<T>(key, s).map_err(|e| e.to_string()),
            _ => Err(invalid(key, raw, &format!("the name of a {}", T::WHAT))),
        }
    }
    fn to_value(self) -> Value {
        Value::Name(self.name())
    }
}
