//! Helpers shared by the tests: the command line's, and the fixtures every head test runs over.
#![allow(dead_code)] // Each test file uses some of them.

use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Runs the `diffattn` binary with `args`, writes `stdin` to it, and waits for it.
pub fn diffattn(args: &[&str], stdin: &str) -> Output {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    diffattn_os(&args, stdin.as_bytes())
}

/// [`diffattn`] with arguments and standard input that need not be UTF-8.
pub fn diffattn_os(args: &[&OsStr], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_diffattn"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut input = child.stdin.take().expect("stdin");
    // The binary may stop reading early (an over-long spec is refused at its limit), which
    // closes the pipe: that is not a failure of the test.
    let written = input.write_all(stdin);
    drop(input);
    let out = child.wait_with_output().expect("the binary exits");
    if let Err(e) = written {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "writing stdin: {e}"
        );
    }
    out
}

/// A fresh, empty folder for one test's files.
pub fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("diffattn-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// Standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every spec of the reference fixtures (`tests/fixtures/stages/`, `tests/fixtures/real/`), with
/// its file name, in name order.
pub fn fixture_specs() -> Vec<(String, diffattn::spec::Spec)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut specs = Vec::new();
    for dir in ["stages", "real"] {
        let mut names: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect("fixtures")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.to_string_lossy().ends_with(".spec.json"))
            .collect();
        names.sort();
        for path in names {
            let text = std::fs::read_to_string(&path).expect("readable");
            let spec = diffattn::spec::parse_spec(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            specs.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                spec,
            ));
        }
    }
    specs
}

/// The four shipped retrieval models, by mechanism (weights/retrieval/NAME.bin).
pub const RETRIEVAL_MECHANISMS: [&str; 4] = [
    "standard",
    "diff_transformer",
    "shift_diff",
    "diff_transformer_v2",
];

/// The folder of the shipped retrieval models, their manifest and held-out contexts.
pub fn retrieval_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("weights/retrieval")
}

/// The shipped retrieval model of `mechanism`, read and checked.
pub fn retrieval_file(mechanism: &str) -> diffattn::model::RetrievalFile {
    let bytes =
        std::fs::read(retrieval_dir().join(format!("{mechanism}.bin"))).expect("a weights file");
    diffattn::model::RetrievalFile::from_bytes(&bytes).expect("a valid retrieval file")
}

/// `(answer, facts, text)` of every held-out context (weights/retrieval/heldout.tsv).
pub fn retrieval_heldout() -> Vec<(u8, usize, String)> {
    std::fs::read_to_string(retrieval_dir().join("heldout.tsv"))
        .expect("heldout.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let mut f = l.splitn(3, '\t');
            let answer = f.next().unwrap().parse().unwrap();
            let facts = f.next().unwrap().parse().unwrap();
            (answer, facts, f.next().unwrap().to_string())
        })
        .collect()
}

/// A safetensors file of F32 tensors (name, shape, values) with `metadata` as its
/// `__metadata__`: the binary spec form (DESIGN.md §7.8), made by hand for the tests.
pub fn safetensors_file<N: AsRef<str>>(
    tensors: &[(N, Vec<usize>, Vec<f32>)],
    metadata: serde_json::Value,
) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, shape, values) in tensors {
        let begin = data.len();
        values
            .iter()
            .for_each(|v| data.extend_from_slice(&v.to_le_bytes()));
        header.insert(
            name.as_ref().to_string(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [begin, data.len()]}),
        );
    }
    header.insert("__metadata__".into(), metadata);
    let text = serde_json::to_vec(&header).unwrap();
    let mut out = (text.len() as u64).to_le_bytes().to_vec();
    out.extend(text);
    out.extend(data);
    out
}

/// The `__metadata__` of a binary stages spec whose JSON part is `spec`.
pub fn stages_metadata(spec: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({"format": "diffattn.stages", "version": "1", "spec": spec.to_string()})
}
