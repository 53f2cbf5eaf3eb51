//! The arguments of a command as the OS gives them: a file name or a text need not be UTF-8
//! (`std::env::args` would panic on it), so only options are read as strings.

use std::ffi::OsString;

use crate::streams::Failure;

/// One argument: an option (`--pretty`, `-h`, or `--` that ends the options) or anything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// An argument that starts with `--`, or `-h`.
    Option(String),
    /// Any other argument, as the OS gave it: a file name, words of a text, `-`.
    Plain(OsString),
}

/// A cursor over a command's arguments.
pub struct Args {
    args: std::vec::IntoIter<OsString>,
}

impl Args {
    /// The arguments after the command's name.
    pub fn new(args: Vec<OsString>) -> Args {
        Args {
            args: args.into_iter(),
        }
    }

    /// The next argument, if any.
    pub fn next_arg(&mut self) -> Option<Arg> {
        let arg = self.args.next()?;
        Some(match arg.to_str() {
            Some(s) if s.starts_with("--") || s == "-h" => Arg::Option(s.to_string()),
            _ => Arg::Plain(arg),
        })
    }

    /// The value that follows `option` (`--model FILE`), as the OS gave it.
    pub fn value(&mut self, option: &str) -> Result<OsString, Failure> {
        self.args
            .next()
            .ok_or_else(|| Failure::input(format!("{option} needs a value")))
    }

    /// The value that follows `option`, which must be UTF-8 (a name, a list of names).
    pub fn text_value(&mut self, option: &str) -> Result<String, Failure> {
        self.value(option)?.into_string().map_err(|value| {
            Failure::input(format!(
                "{option}: {:?} is not valid UTF-8",
                value.to_string_lossy()
            ))
        })
    }

    /// Every argument left, unread.
    pub fn rest(&mut self) -> Vec<OsString> {
        self.args.by_ref().collect()
    }
}

/// The error for an option a command does not know.
pub fn unknown_option(option: &str, known: &[&str]) -> Failure {
    let suggestion = diffattn::names::closest(option, known)
        .map(|s| format!(" (did you mean {s}?)"))
        .unwrap_or_default();
    Failure::input(format!(
        "unknown option {option:?}{suggestion}; try `diffattn --help`"
    ))
}
