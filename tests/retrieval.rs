//! The shipped retrieval models (docs/LESSON.md) read back from their files: the held-out
//! accuracy their manifest claims, recomputed on the engine from `weights/retrieval/heldout.tsv`
//! (test names, nouns and fillers no training context used); the command line's answer and
//! measure against the library's; unknown keys said so.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{diffattn, retrieval_dir, retrieval_file, retrieval_heldout, RETRIEVAL_MECHANISMS};
use diffattn::model::RetrievalFile;
use diffattn::retrieval::{ask, Layout};

fn manifest() -> serde_json::Value {
    let text =
        std::fs::read_to_string(retrieval_dir().join("manifest.json")).expect("the manifest");
    serde_json::from_str(&text).expect("JSON")
}

fn load(mechanism: &str) -> RetrievalFile {
    retrieval_file(mechanism)
}

fn heldout() -> Vec<(u8, usize, String)> {
    retrieval_heldout()
}

#[test]
fn every_shipped_model_scores_on_the_engine_what_its_manifest_says() {
    let m = manifest();
    let set = heldout();
    assert_eq!(
        set.len(),
        60,
        "the held-out file: 6 numbers of facts x 2 lengths x 5"
    );
    let models = m["models"].as_array().expect("models");
    assert_eq!(models.len(), RETRIEVAL_MECHANISMS.len());
    for mechanism in RETRIEVAL_MECHANISMS {
        let entry = models
            .iter()
            .find(|e| e["mechanism"] == mechanism)
            .unwrap_or_else(|| panic!("{mechanism} in the manifest"));
        let file = load(mechanism);
        assert_eq!(
            file.model.layers.last().unwrap().mechanism.name(),
            mechanism,
            "the retrieving layer's mechanism"
        );
        let mut right = 0;
        for (answer, _, text) in &set {
            let a = ask(&file.model, text).unwrap();
            // The file's contexts read back to their answer: the task's reader agrees.
            assert_eq!(a.expected(), Some(*answer), "{text}");
            right += usize::from(a.retrieval.answer == *answer);
        }
        let claimed = entry["heldout_file"]["right"].as_u64().unwrap() as usize;
        assert_eq!(
            right,
            claimed,
            "{mechanism}: {right} of {} right on the engine, the manifest (candle) says {claimed}",
            set.len()
        );
        // The info inside the file says the same as the manifest.
        assert_eq!(
            file.info["heldout_file_right"].as_u64(),
            Some(claimed as u64)
        );
        assert_eq!(
            file.info["test_accuracy"], entry["test"]["accuracy"],
            "{mechanism}: the file and the manifest"
        );
    }
}

#[test]
fn every_shipped_file_is_within_the_download_budget() {
    for mechanism in RETRIEVAL_MECHANISMS {
        let bytes = std::fs::read(retrieval_dir().join(format!("{mechanism}.bin"))).unwrap();
        // A gzip-free bound that implies the budget: the raw file under 300 KB (gzip only
        // shrinks these files).
        assert!(
            bytes.len() <= 300 * 1024,
            "{mechanism}: {} bytes",
            bytes.len()
        );
    }
}

#[test]
fn retrieve_prints_the_answer_and_the_measure_the_library_computes() {
    let text = "The room of Anna is 42. It rained all day. The code of Ben is 7. What is the room of Anna?";
    let file = load("diff_transformer");
    let a = ask(&file.model, text).unwrap();
    let m = a.measure.as_ref().unwrap();
    let out = diffattn(&["retrieve", "--mechanism", "diff_transformer", text], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["answer"], a.retrieval.answer.to_string());
    assert_eq!(v["expected"], "42");
    assert_eq!(v["layer"], 2);
    assert_eq!(v["answer_attention"].as_f64(), Some(m.retrieving().answer));
    assert_eq!(v["noise_attention"].as_f64(), Some(m.retrieving().noise));
    assert_eq!(
        v["mean_over_layers"]["noise_attention"].as_f64(),
        Some(m.mean().noise)
    );
    // "42" is token 5.
    assert_eq!(v["answer_tokens"], serde_json::json!([5]));
    assert_eq!(v["unknown_keys"], serde_json::json!([]));
    assert!(v["warning"].is_null());
    // Layer 1 on request.
    let out = diffattn(&["retrieve", "--layer", "1", text], "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["layer"], 1);
    assert_eq!(v["answer_attention"].as_f64(), Some(m.layers[0].answer));
}

#[test]
fn a_key_outside_the_vocabulary_is_said_and_a_text_without_the_question_fails() {
    let text = "The room of Zebulonius is 42. What is the room of Zebulonius?";
    let out = diffattn(&["retrieve", "--mechanism", "standard", text], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["unknown_keys"], serde_json::json!(["zebulonius"]));
    assert!(v["warning"]
        .as_str()
        .unwrap()
        .contains("outside the model's vocabulary"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("zebulonius"));
    let out = diffattn(&["retrieve", "The room of Anna is 42."], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("What is the NOUN of NAME?"));
    let out = diffattn(
        &[
            "retrieve",
            "--layer",
            "3",
            "The room of Anna is 4. What is the room of Anna?",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    let out = diffattn(&["retrieve", "--mechanism", "cosine", "x"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn common_first_names_and_everyday_nouns_are_keys_the_models_can_read() {
    // Any listed name or noun has a row of its own, the held-out ones included.
    let file = load("standard");
    for key in [
        "anna", "james", "mary", "room", "code", "seat", "door", "page", "number",
    ] {
        assert!(file.model.knows(key), "{key}");
    }
    for (_, _, text) in heldout().iter().take(10) {
        let tokens: Vec<String> = diffattn::text::tokenize(text)
            .into_iter()
            .map(|t| t.text)
            .collect();
        let l = Layout::read(&tokens).unwrap();
        assert!(file.model.knows(&l.question.key.noun) && file.model.knows(&l.question.key.name));
    }
}

#[test]
fn a_context_over_the_token_limit_exits_2_naming_the_limit_before_any_map_is_made() {
    // 2,049 tokens: one past MAX_TOKENS. Without the limit a long context builds every layer's
    // L × L maps (7,500 tokens took over a gigabyte); with it the answer is an error at once.
    let tail = "The room of Anna is 42. What is the room of Anna?"; // 14 tokens
    let context = "good . ".repeat(1017) + "good " + tail;
    let out = diffattn(&["retrieve", "--mechanism", "standard", "-"], &context);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("text") && err.contains("2,048") && err.contains("2,049"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    // At the limit it answers.
    let context = "good . ".repeat(1017) + tail;
    let out = diffattn(&["retrieve", "--mechanism", "standard", "-"], &context);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
