//! `diffattn predict` as a user runs it: JSON with the tokens, the label and its probability,
//! from the weights built into the binary; bad arguments exit 2 with a message.
#![cfg(not(target_arch = "wasm32"))]

use diffattn::engine::MechanismKind;

mod common;

use common::diffattn;

fn predict(args: &[&str]) -> serde_json::Value {
    let out = diffattn(args, "");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn predict_prints_tokens_label_and_probability() {
    let v = predict(&["predict", "A moving, beautifully acted film."]);
    assert_eq!(v["mechanism"], "shift_diff", "the default mechanism");
    assert_eq!(v["lang"], "en");
    assert_eq!(v["tokens"][0], "a");
    assert_eq!(v["tokens"].as_array().unwrap().len(), 7);
    let label = v["label"].as_str().unwrap();
    assert!(label == "positive" || label == "negative");
    let p = v["probability"].as_f64().unwrap();
    assert!((0.5..=1.0).contains(&p), "{p}");
    let positive = v["positive"].as_f64().unwrap();
    let expected = if label == "positive" { p } else { 1.0 - p };
    assert!((positive - expected).abs() < 1e-6);
}

#[test]
fn clear_reviews_get_the_right_label_in_both_languages() {
    for mechanism in MechanismKind::ALL.map(MechanismKind::key) {
        for (text, label) in [
            ("a wonderful, moving and beautifully acted film", "positive"),
            ("a dull, boring and lifeless mess", "negative"),
            ("非常好，很喜欢，推荐", "positive"),
            ("太差了，很失望，不推荐", "negative"),
        ] {
            let v = predict(&["predict", "--mechanism", mechanism, text]);
            assert_eq!(v["label"], label, "{mechanism} on {text:?}: {v}");
        }
    }
}

#[test]
fn language_is_detected_or_given() {
    assert_eq!(predict(&["predict", "这本书很好看"])["lang"], "zh");
    assert_eq!(predict(&["predict", "--lang", "zh", "good"])["lang"], "zh");
    assert_eq!(
        predict(&["predict", "--lang", "auto", "good"])["lang"],
        "en"
    );
}

#[test]
fn words_are_joined_and_unknown_tokens_listed() {
    let v = predict(&["predict", "not", "good", "qwertyuiop"]);
    assert_eq!(
        v["tokens"],
        serde_json::json!(["not", "good", "qwertyuiop"])
    );
    assert_eq!(v["unknown"], serde_json::json!(["qwertyuiop"]));
}

#[test]
fn text_can_come_from_standard_input() {
    let out = diffattn(&["predict", "--pretty"], "what a great film");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tokens"].as_array().unwrap().len(), 4);
}

#[test]
fn bad_arguments_exit_2_with_a_message() {
    for (args, message) in [
        (
            &["predict", "--mechanism", "nope", "good"][..],
            "unknown mechanism",
        ),
        (&["predict", "--lang", "fr", "bon"][..], "unknown language"),
        (&["predict", "--mechanism"][..], "needs a value"),
        (&["predict", "--frobnicate", "good"][..], "unknown option"),
        (&["predict", "   "][..], "no tokens"),
    ] {
        let out = diffattn(args, "");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn help_documents_predict() {
    let out = diffattn(&["--help"], "");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("diffattn predict [--mechanism M] [--lang en|zh|auto]"));
    assert!(help.contains("diffattn stages"));
}
