//! The `diffattn` binary as a user runs it: good specs give stages, bad ones a message that
//! names the field and a non-zero exit, never a panic.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::diffattn;

const GOOD: &str = r#"{"mechanism": "shift_diff", "heads": 1, "causal": false,
  "x": [[1, 0], [0, 1], [1, 1]],
  "w_q": [[1, 0], [0, 1]], "w_k": [[1, 0], [0, 1]], "w_v": [[1, 0], [0, 1]], "w_o": [[1, 0], [0, 1]],
  "shift": 1, "difference": "single", "renormalize": "none",
  "gate": {"alpha": [1.0], "beta": [1.0], "gamma": [0.0]}}"#;

#[test]
fn stages_prints_every_shift_diff_stage() {
    let out = diffattn(&["stages"], GOOD);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let head = &v["heads"][0];
    for key in ["a", "shifted", "d", "g", "fused"] {
        assert_eq!(head[key].as_array().map(Vec::len), Some(3), "{key}");
    }
    assert_eq!(v["output"].as_array().map(Vec::len), Some(3));
    assert!(v.get("lambda").is_none());
}

#[test]
fn help_explains_the_format_and_its_example_runs() {
    let out = diffattn(&["--help"], "");
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    for word in [
        "mechanism",
        "shift_diff",
        "diff_transformer",
        "gate",
        "lambda",
        "EXAMPLE",
    ] {
        assert!(help.contains(word), "help lacks {word}");
    }
    // The example between `echo '` and `' |` must be a valid spec.
    let start = help.find("echo '").expect("an example") + "echo '".len();
    let end = help[start..].find("' |").expect("example end") + start;
    let out = diffattn(&["stages"], &help[start..end]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn rejects(spec: &str, field: &str) {
    let out = diffattn(&["stages"], spec);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "spec {spec} gave {err}");
    assert!(
        err.contains(field),
        "message {err:?} does not name {field:?}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty());
}

fn good_with(replace: &str, with: &str) -> String {
    assert!(GOOD.contains(replace), "{replace}");
    GOOD.replacen(replace, with, 1)
}

#[test]
fn bad_specs_name_the_field() {
    rejects("not json", "not valid JSON");
    rejects("", "not valid JSON");
    rejects(
        &good_with(r#""mechanism": "shift_diff""#, r#""mechanism": "magic""#),
        "mechanism",
    );
    rejects(
        &good_with(r#""difference": "single""#, r#""difference": "double""#),
        "difference",
    );
    rejects(&good_with(r#""heads": 1"#, r#""heads": 3"#), "heads");
    rejects(&good_with(r#""heads": 1"#, r#""heads": 0"#), "heads");
    rejects(&good_with(r#""heads": 1"#, r#""heads": -2"#), "heads");
    rejects(&good_with("[0, 1], [1, 1]]", "[0, 1], [1]]"), "x[2]");
    rejects(
        &good_with(r#""x": [[1, 0], [0, 1], [1, 1]]"#, r#""x": [[1, 0, 0]]"#),
        "x",
    );
    rejects(
        &good_with(r#""w_k": [[1, 0], [0, 1]]"#, r#""w_k": [[1, 0]]"#),
        "w_k",
    );
    rejects(&good_with(r#""shift": 1,"#, ""), "shift");
    rejects(&good_with(r#""shift": 1"#, r#""shift": 1.5"#), "shift");
    rejects(
        &good_with(r#""alpha": [1.0]"#, r#""alpha": [1.0, 2.0]"#),
        "gate.alpha",
    );
    rejects(
        &good_with(r#""gamma": [0.0]"#, r#""gamma": [1e39]"#),
        "gate.gamma[0]",
    );
    rejects(
        &good_with(r#""x": [[1, 0]"#, r#""x": [[1e300, 0]"#),
        "x[0][0]",
    );
    rejects(
        &good_with(r#""causal": false"#, r#""causal": "no""#),
        "causal",
    );
    rejects(
        r#"{"mechanism": "cosine", "heads": 1, "causal": false, "x": [[1]], "w_q": [[1]], "w_k": [[1]], "w_v": [[1]], "w_o": [[1]]}"#,
        "tau",
    );
    rejects(
        r#"{"mechanism": "local", "heads": 1, "causal": false, "window": -1, "x": [[1]], "w_q": [[1]], "w_k": [[1]], "w_v": [[1]], "w_o": [[1]]}"#,
        "window",
    );
}

#[test]
fn unknown_commands_and_missing_files_fail_cleanly() {
    let out = diffattn(&["frobnicate"], "");
    assert_eq!(out.status.code(), Some(2));
    let out = diffattn(&["stages", "/no/such/spec.json"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/spec.json"));
}
