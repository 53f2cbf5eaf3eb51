//! Standard input, output and error for the commands: what a command fails with, how its input
//! is read within the limits, how text that is not UTF-8 is decoded, and how output is written
//! so that a failed write (a full disk, a closed pipe) is reported rather than a panic.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufWriter, ErrorKind, IsTerminal, Read, Write};
use std::path::Path;

use diffattn::text::limits::{grouped, MAX_INPUT_BYTES};

/// Why a command stopped: the exit status and what to tell the person, if anything.
#[derive(Debug)]
pub struct Failure {
    /// 1 for output that could not be written, 2 for input that cannot be used.
    pub code: u8,
    /// The message for standard error; `None` when there is nothing worth saying.
    pub message: Option<String>,
}

impl Failure {
    /// Bad input: arguments, a spec, a text or a weights file. Exit status 2.
    pub fn input(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: Some(message.into()),
        }
    }

    /// The output could not be written. Exit status 1.
    pub fn output(message: impl Into<String>) -> Failure {
        Failure {
            code: 1,
            message: Some(message.into()),
        }
    }
}

/// Writes `diffattn: MESSAGE` to standard error. A standard error that cannot be written to
/// leaves nowhere to report that, so the error is dropped (`eprintln!` would panic).
pub fn say(message: &str) {
    let _ = writeln!(std::io::stderr().lock(), "diffattn: {message}");
}

/// Runs `write` on a buffered standard output and flushes it. A closed pipe (`diffattn stages
/// | head`) ends the command quietly with status 1; any other write error, such as a full disk,
/// is reported with status 1.
pub fn write_stdout(
    what: &str,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let result = write(&mut out).and_then(|()| out.flush());
    match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(Failure {
            code: 1,
            message: None,
        }),
        Err(e) => Err(Failure::output(format!(
            "cannot write {what} to standard output: {e}"
        ))),
    }
}

/// Standard input, unless it is a terminal (the person forgot the `<`): then `hint` says what
/// was expected.
pub fn stdin_unless_terminal(hint: &str) -> Result<std::io::StdinLock<'static>, Failure> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(Failure::input(hint));
    }
    Ok(stdin.lock())
}

/// Opens a file to read, with an error that names it; a directory is refused here, not by the
/// first read.
pub fn open(path: &Path) -> Result<File, Failure> {
    let file = File::open(path)
        .map_err(|e| Failure::input(format!("cannot read {}: {e}", path.display())))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(Failure::input(format!(
            "cannot read {}: it is a directory",
            path.display()
        )));
    }
    Ok(file)
}

/// Reads all of `reader`, refusing more than `limit` bytes (the limit's constant is named in
/// the message) without reading further.
pub fn read_limited(
    reader: impl Read,
    limit: usize,
    what: &str,
    limit_name: &str,
) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    reader
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::input(format!("cannot read {what}: {e}")))?;
    if bytes.len() > limit {
        return Err(Failure::input(format!(
            "{what} is longer than {} bytes, the limit (diffattn::text::limits::{limit_name})",
            grouped(limit)
        )));
    }
    Ok(bytes)
}

/// The bytes of a model file given by `--model` (`predict`, `retrieve`), at most
/// [`MAX_INPUT_BYTES`] of them, with errors naming the path.
pub fn read_model_file(path: &Path) -> Result<Vec<u8>, Failure> {
    read_limited(
        open(path)?,
        MAX_INPUT_BYTES,
        &path.display().to_string(),
        "MAX_INPUT_BYTES",
    )
}

/// Text from bytes that should be UTF-8: decoded as it is, or lossily (each invalid sequence
/// becomes U+FFFD, which reads as an unknown token) with a warning on standard error that says
/// how many sequences were replaced.
pub fn text_from_bytes(bytes: Vec<u8>, what: &str) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let bytes = e.into_bytes();
            let invalid = bytes
                .utf8_chunks()
                .filter(|chunk| !chunk.invalid().is_empty())
                .count();
            say(&format!(
                "warning: {what} is not valid UTF-8; {invalid} invalid byte sequence{} replaced \
                 with U+FFFD",
                if invalid == 1 { "" } else { "s" }
            ));
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

/// The bytes of an argument: exactly as the OS gave them on Unix; elsewhere, where arguments
/// are UTF-16, its lossy UTF-8 (already decoded, so [`text_from_bytes`] finds nothing to warn
/// about).
pub fn arg_bytes(arg: &OsStr) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        arg.as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        arg.to_string_lossy().into_owned().into_bytes()
    }
}

/// Writes `json` to standard output, indented when `pretty`, with a newline (`what` names it in
/// an error): the one JSON answer of `predict` and `retrieve`.
pub fn write_json(what: &str, json: &serde_json::Value, pretty: bool) -> Result<(), Failure> {
    write_stdout(what, |out| {
        if pretty {
            serde_json::to_writer_pretty(&mut *out, json)?;
        } else {
            serde_json::to_writer(&mut *out, json)?;
        }
        writeln!(out)
    })
}
