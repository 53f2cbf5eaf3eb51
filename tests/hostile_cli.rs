//! The command line against hostile input (issue 14): every case the issue lists, by its exact
//! input, plus the limits and options added for them. Each ends in output or in a message and
//! an exit status, never in a panic (status 101) or an abort (134).
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::ffi::OsStr;
use std::process::Output;

use common::{diffattn, diffattn_os, scratch_dir, stderr};

/// The smallest shift-difference spec of the CLI tests: three tokens of width 2.
const GOOD: &str = r#"{"mechanism": "shift_diff", "heads": 1, "causal": false,
  "x": [[1, 0], [0, 1], [1, 1]],
  "w_q": [[1, 0], [0, 1]], "w_k": [[1, 0], [0, 1]], "w_v": [[1, 0], [0, 1]], "w_o": [[1, 0], [0, 1]],
  "shift": 1, "difference": "single", "renormalize": "none",
  "gate": {"alpha": [1.0], "beta": [1.0], "gamma": [0.0]}}"#;

fn assert_clean_failure(out: &Output, code: i32, needles: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    for needle in needles {
        assert!(err.contains(needle), "{err:?} does not say {needle:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

fn succeeds(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "stderr: {}", stderr(out));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[cfg(unix)]
fn os(bytes: &[u8]) -> &OsStr {
    use std::os::unix::ffi::OsStrExt;
    OsStr::from_bytes(bytes)
}

// --- Arguments that are not UTF-8 -----------------------------------------------------------

#[cfg(unix)]
#[test]
fn predict_decodes_a_text_that_is_not_utf8_lossily_and_says_so() {
    // `diffattn predict $'good \xff film'` used to panic (exit 101) in std::env::args.
    let out = diffattn_os(&[os(b"predict"), os(b"good \xff film")], b"");
    let v = succeeds(&out);
    // The stray byte becomes U+FFFD, a symbol token of its own that the model reads as <unk>.
    assert_eq!(v["tokens"], serde_json::json!(["good", "\u{FFFD}", "film"]));
    assert_eq!(v["unknown"], serde_json::json!(["\u{FFFD}"]));
    assert!(
        stderr(&out).contains("warning: the text is not valid UTF-8; 1 invalid byte sequence"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn predict_decodes_standard_input_that_is_not_utf8_lossily_and_says_so() {
    // Two invalid sequences: a lone continuation byte and a truncated three-byte character.
    let out = diffattn_os(&[OsStr::new("predict")], b"great \x80 film \xe6\x97");
    let v = succeeds(&out);
    assert_eq!(v["tokens"][0], "great");
    assert!(
        stderr(&out).contains("2 invalid byte sequences replaced with U+FFFD"),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)]
#[test]
fn a_spec_file_whose_name_is_not_utf8_opens() {
    // `diffattn stages $'/tmp/\xff.json'` used to panic before looking at the file.
    let dir = scratch_dir("non-utf8-name");
    let mut path = dir.into_os_string().into_encoded_bytes();
    path.extend_from_slice(b"/\xff.json");
    let path = os(&path);
    std::fs::write(path, GOOD).unwrap();
    let v = succeeds(&diffattn_os(&[os(b"stages"), path], b""));
    assert_eq!(v["heads"][0]["a"].as_array().map(Vec::len), Some(3));

    // A missing file of such a name is an error that shows the name (lossily).
    let out = diffattn_os(&[os(b"stages"), os(b"/no/such/\xff.json")], b"");
    assert_clean_failure(&out, 2, &["cannot read /no/such/\u{FFFD}.json"]);
}

#[cfg(unix)]
#[test]
fn a_model_file_whose_name_is_not_utf8_opens() {
    let dir = scratch_dir("non-utf8-model");
    let mut path = dir.into_os_string().into_encoded_bytes();
    path.extend_from_slice(b"/\xfe.bin");
    let path = os(&path);
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/weights/local.bin");
    std::fs::copy(shipped, path).unwrap();
    let v = succeeds(&diffattn_os(
        &[os(b"predict"), os(b"--model"), path, os(b"good")],
        b"",
    ));
    assert_eq!(v["mechanism"], "local");
}

#[cfg(unix)]
#[test]
fn a_command_or_option_that_is_not_utf8_is_an_error_not_a_panic() {
    let out = diffattn_os(&[os(b"st\xffges")], b"");
    assert_clean_failure(&out, 2, &["unknown command \"st\u{FFFD}ges\""]);
    let out = diffattn_os(&[os(b"predict"), os(b"--mechanism"), os(b"\xff")], b"");
    assert_clean_failure(&out, 2, &["--mechanism: \"\u{FFFD}\" is not valid UTF-8"]);
}

// --- No limit on sequence length ------------------------------------------------------------

/// A spec of `tokens` one-wide tokens.
fn one_wide(tokens: usize, heads: usize, width: usize) -> String {
    let row = format!("[{}]", vec!["1"; width].join(","));
    let eye: Vec<String> = (0..width)
        .map(|i| {
            let cells: Vec<&str> = (0..width).map(|j| if i == j { "1" } else { "0" }).collect();
            format!("[{}]", cells.join(","))
        })
        .collect();
    let w = format!("[{}]", eye.join(","));
    format!(
        r#"{{"mechanism": "shift_diff", "heads": {heads}, "causal": false, "x": [{}],
           "w_q": {w}, "w_k": {w}, "w_v": {w}, "w_o": {w},
           "shift": 1, "difference": "single", "renormalize": "none",
           "gate": {{"alpha": [{g}], "beta": [{g}], "gamma": [{g}]}}}}"#,
        vec![row; tokens].join(","),
        g = vec!["0"; heads].join(","),
    )
}

#[test]
fn a_spec_of_100000_tokens_exits_2_naming_x_and_the_limit() {
    // The issue's 400 KB spec aborted the process allocating 40 GB (exit 134). Now the parser
    // stops at the 2,049th row of x, before any map exists.
    let spec = one_wide(100_000, 1, 1);
    assert!(spec.len() > 400_000, "{}", spec.len());
    let out = diffattn(&["stages"], &spec);
    assert_clean_failure(
        &out,
        2,
        &[
            "x: more than 2,048 tokens",
            "diffattn::text::limits::MAX_TOKENS",
        ],
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_spec_of_4096_tokens_and_8_heads_exits_2_at_once() {
    // It took 29 s and 5.7 GB, and printed 3.1 GB of JSON.
    let out = diffattn(&["stages"], &one_wide(4096, 8, 8));
    assert_clean_failure(&out, 2, &["x: more than 2,048 tokens"]);
}

#[test]
fn too_many_map_cells_exit_2_naming_x_and_the_cell_limit() {
    // 2,048 tokens are allowed, but at 16 heads a map has 2,048² × 16 = 67,108,864 cells,
    // twice MAX_MAP_CELLS = 33,554,432.
    let out = diffattn(&["stages"], &one_wide(2048, 16, 16));
    assert_clean_failure(
        &out,
        2,
        &[
            "x: 2,048 tokens × 2,048 keys × 16 heads = 67,108,864 cells per map",
            "over the limit of 33,554,432 (diffattn::text::limits::MAX_MAP_CELLS",
        ],
    );
}

#[test]
fn a_row_wider_than_the_model_limit_exits_2() {
    let out = diffattn(&["stages"], &one_wide(2, 1, 2049));
    assert_clean_failure(&out, 2, &["x[0]: more than 2,048 values", "MAX_D_MODEL"]);
}

#[test]
fn stages_writes_the_maps_asked_for_and_no_others() {
    // The page's spellings are accepted: A for a, D for d.
    let v = succeeds(&diffattn(&["stages", "--maps", "A,D"], GOOD));
    let head = v["heads"][0].as_object().unwrap();
    assert_eq!(head.keys().collect::<Vec<_>>(), ["a", "d"]);
    // The output is always written.
    assert_eq!(v["output"].as_array().map(Vec::len), Some(3));

    let out = diffattn(&["stages", "--maps", "a1"], GOOD);
    assert_clean_failure(
        &out,
        2,
        &["--maps: these stages have no map \"a1\"; they have \"a\", \"shifted\", \"d\""],
    );
    let out = diffattn(&["stages", "--maps", "fusd"], GOOD);
    assert_clean_failure(&out, 2, &["(did you mean \"fused\"?)"]);
}

#[test]
fn stages_streams_the_same_bytes_as_before() {
    // The answer is written as it is produced; the bytes are those of serialising the whole
    // StagesJson value, which is what this command printed before.
    let stages = diffattn::spec::parse_spec(GOOD).unwrap().run().unwrap();
    let whole = diffattn::spec::stages_json(&stages);
    let out = diffattn(&["stages"], GOOD);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        serde_json::to_string(&whole).unwrap() + "\n"
    );
    let out = diffattn(&["stages", "--pretty"], GOOD);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        serde_json::to_string_pretty(&whole).unwrap() + "\n"
    );
}

// --- Accepted without a word ---------------------------------------------------------------

#[test]
fn two_specs_in_one_input_are_an_error() {
    // Only the first was used.
    let out = diffattn(&["stages"], &format!("{GOOD}{GOOD}"));
    assert_clean_failure(
        &out,
        2,
        &[
            "spec: trailing data after the spec",
            "give one spec per input",
        ],
    );
    assert!(out.stdout.is_empty());
    // Whitespace after the spec is fine.
    succeeds(&diffattn(&["stages"], &format!("{GOOD}\n\n  \t\n")));
}

#[test]
fn a_json_array_is_not_read_as_a_spec_by_position() {
    // serde reads a struct from an array field by field; this one was taken as a standard
    // attention spec of one token.
    let array = r#"["standard", 1, false, [[1]], [[1]], [[1]], [[1]], [[1]]]"#;
    let out = diffattn(&["stages"], array);
    assert_clean_failure(
        &out,
        2,
        &["spec: invalid type: sequence, expected a JSON object"],
    );
    // Nor the gate.
    let out = diffattn(
        &["stages"],
        &GOOD.replace(
            r#"{"alpha": [1.0], "beta": [1.0], "gamma": [0.0]}"#,
            "[[1.0], [1.0], [0.0]]",
        ),
    );
    assert_clean_failure(
        &out,
        2,
        &["gate: invalid type: sequence, expected a JSON object"],
    );
}

#[test]
fn an_unknown_field_is_an_error_that_suggests_the_closest_known_one() {
    // The typo `"shiftfill": "zero"` silently gave circular fill.
    let spec = GOOD.replace(r#""shift": 1,"#, r#""shift": 1, "shiftfill": "zero","#);
    let out = diffattn(&["stages"], &spec);
    assert_clean_failure(
        &out,
        2,
        &["bad spec: shiftfill: unknown field (did you mean \"shift_fill\"?)"],
    );
    // Inside the gate too; and a name close to nothing lists the known fields.
    let out = diffattn(&["stages"], &GOOD.replace(r#""alpha""#, r#""alph""#));
    assert_clean_failure(
        &out,
        2,
        &["gate.alph: unknown field (did you mean \"alpha\"?)"],
    );
    let out = diffattn(
        &["stages"],
        &GOOD.replace(r#""heads": 1,"#, r#""heads": 1, "colour": 3,"#),
    );
    assert_clean_failure(
        &out,
        2,
        &["colour: unknown field; the known fields are mechanism, heads, causal, x,"],
    );
}

#[test]
fn a_utf8_byte_order_mark_is_accepted() {
    // It was "not valid JSON".
    let plain = diffattn(&["stages"], GOOD);
    let with_bom = diffattn(&["stages"], &format!("\u{FEFF}{GOOD}"));
    succeeds(&with_bom);
    assert_eq!(with_bom.stdout, plain.stdout);
    // From a file as well.
    let dir = scratch_dir("bom");
    let path = dir.join("spec.json");
    std::fs::write(&path, format!("\u{FEFF}{GOOD}")).unwrap();
    let from_file = diffattn(&["stages", path.to_str().unwrap()], "");
    assert_eq!(from_file.stdout, plain.stdout);
}

#[test]
fn a_spec_that_is_not_utf8_is_an_error_naming_where() {
    let spec = GOOD.replace("\"single\"", "\"sing\u{1}le\"").into_bytes();
    let mut bad = spec.clone();
    let at = bad.iter().position(|&b| b == 1).unwrap();
    bad[at] = 0xff;
    let out = diffattn_os(&[OsStr::new("stages")], &bad);
    assert_clean_failure(&out, 2, &["bad spec: difference:", "line 4"]);
}

#[test]
fn predict_says_when_it_kept_only_part_of_the_text() {
    // It kept the first 512 tokens without a word; now the limit is 2,048 and it says so.
    let text = "good ".repeat(3000);
    let out = diffattn(&["predict", &text], "");
    let v = succeeds(&out);
    assert_eq!(v["tokens"].as_array().map(Vec::len), Some(2048));
    assert_eq!(v["total_tokens"], 3000);
    assert!(
        stderr(&out).contains("the text has 3,000 tokens; only the first 2,048 were classified"),
        "{}",
        stderr(&out)
    );
    // A text within the limit says nothing.
    let out = diffattn(&["predict", "good film"], "");
    assert_eq!(succeeds(&out)["total_tokens"], 2);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn a_text_over_the_byte_limit_is_refused() {
    let text = "a".repeat(diffattn::text::limits::MAX_TEXT_BYTES + 1);
    let out = diffattn(&["predict"], &text);
    assert_clean_failure(
        &out,
        2,
        &["the text is longer than 16,777,216 bytes", "MAX_TEXT_BYTES"],
    );
}

// --- Failed writes ---------------------------------------------------------------------------

#[cfg(target_os = "linux")]
fn to_dev_full(args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_diffattn"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create("/dev/full").expect("/dev/full"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_failed_write_is_reported_with_a_message_and_status_1() {
    // `> /dev/full` exited 1 with no message; `--help > /dev/full` panicked in print!.
    for (args, stdin, what) in [
        (&["stages"][..], GOOD, "the stages"),
        (&["predict", "good"][..], "", "the prediction"),
        (&["--help"][..], "", "the help"),
        (&["--version"][..], "", "the version"),
    ] {
        let out = to_dev_full(args, stdin);
        assert_clean_failure(
            &out,
            1,
            &[&format!(
                "cannot write {what} to standard output: No space left on device"
            )],
        );
    }
}

// --- predict --model FILE -------------------------------------------------------------------

#[test]
fn predict_runs_any_weights_file_in_the_format() {
    for name in ["standard", "cosine", "input_diff"] {
        let path = format!("{}/weights/{name}.bin", env!("CARGO_MANIFEST_DIR"));
        let from_file = succeeds(&diffattn(&["predict", "--model", &path, "a fine film"], ""));
        let built_in = succeeds(&diffattn(
            &["predict", "--mechanism", name, "a fine film"],
            "",
        ));
        // The same bytes give the same prediction.
        assert_eq!(from_file, built_in, "{name}");
    }
}

#[test]
fn predict_model_errors_name_the_file_and_what_is_wrong() {
    let dir = scratch_dir("model-errors");
    let not_weights = dir.join("notes.txt");
    std::fs::write(&not_weights, "hello").unwrap();
    let path = not_weights.to_str().unwrap();
    let out = diffattn(&["predict", "--model", path, "good"], "");
    assert_clean_failure(&out, 2, &[path, "not a diffattn weights file"]);

    let shipped = format!("{}/weights/cosine.bin", env!("CARGO_MANIFEST_DIR"));
    let out = diffattn(
        &[
            "predict",
            "--model",
            &shipped,
            "--mechanism",
            "local",
            "good",
        ],
        "",
    );
    assert_clean_failure(&out, 2, &["--mechanism local but", "holds a cosine model"]);

    let out = diffattn(&["predict", "--model", dir.to_str().unwrap(), "good"], "");
    assert_clean_failure(&out, 2, &["it is a directory"]);
    let out = diffattn(&["predict", "--model"], "");
    assert_clean_failure(&out, 2, &["--model needs a value"]);
}

#[test]
fn help_states_the_limits_and_the_new_options() {
    let help = String::from_utf8(diffattn(&["--help"], "").stdout).unwrap();
    for needle in [
        "--maps",
        "--model FILE",
        "2,048 tokens",
        "33,554,432",
        "MAX_D_MODEL",
        "byte-order mark",
        "EXIT STATUS",
    ] {
        assert!(help.contains(needle), "help lacks {needle:?}");
    }
}
