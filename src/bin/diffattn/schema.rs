//! `diffattn schema`: the files made from the settings' schema (`diffattn::schema::generate`):
//! `--write` writes those that differ, `--check` (the default) names those that differ and
//! exits with status 2. Paths are from the repository root, `--root DIR` (default: the current
//! folder).

use std::ffi::OsString;
use std::path::PathBuf;

use diffattn::schema::generate::{files, COMMAND};

use super::streams::{write_stdout, Failure};

/// Runs the command on its arguments.
pub fn run(args: Vec<OsString>) -> Result<(), Failure> {
    let mut write = false;
    let mut root = PathBuf::from(".");
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--write") => write = true,
            Some("--check") => write = false,
            Some("--root") => {
                root = args
                    .next()
                    .map(PathBuf::from)
                    .ok_or_else(|| Failure::input("schema: --root needs a folder"))?;
            }
            _ => {
                return Err(Failure::input(format!(
                    "schema: unknown argument {:?}; expected --write, --check or --root DIR",
                    arg.to_string_lossy()
                )))
            }
        }
    }
    let mut stale = Vec::new();
    let mut report = Vec::new();
    for file in files() {
        let path = root.join(file.path);
        let same = std::fs::read(&path).is_ok_and(|bytes| bytes == file.text.as_bytes());
        if same {
            continue;
        }
        if write {
            std::fs::write(&path, &file.text).map_err(|e| {
                Failure::output(format!("schema: cannot write {}: {e}", path.display()))
            })?;
            report.push(format!("wrote {}", file.path));
        } else {
            stale.push(file.path);
        }
    }
    if !stale.is_empty() {
        return Err(Failure::input(format!(
            "schema: stale (run `{COMMAND}`): {}",
            stale.join(", ")
        )));
    }
    write_stdout("the report", |out| {
        for line in &report {
            writeln!(out, "{line}")?;
        }
        Ok(())
    })
}
