//! Helpers shared by the command-line tests.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs the `diffattn` binary with `args`, writes `stdin` to it, and waits for it.
pub fn diffattn(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_diffattn"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write the input");
    child.wait_with_output().expect("the binary exits")
}
