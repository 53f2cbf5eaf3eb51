//! `diffattn bench`: it runs every mechanism, prints its figures as text or JSON, and rejects
//! bad arguments with status 2. No timing is asserted (docs/PERFORMANCE.md).
#![cfg(not(target_arch = "wasm32"))]

use std::process::Command;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_diffattn"))
        .arg("bench")
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn bench_prints_the_median_layer_and_every_stage() {
    let out = bench(&["--tokens", "9", "--heads", "2", "--reps", "2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for word in [
        "shift_diff",
        "layer_ms",
        "projection_ms",
        "maps_ms",
        "shift_ms",
        "output_ms",
    ] {
        assert!(text.contains(word), "{word} missing from:\n{text}");
    }
}

#[test]
fn bench_json_has_the_figures_for_every_mechanism() {
    for mechanism in [
        "shift_diff",
        "standard",
        "diff_transformer",
        "input_diff",
        "cosine",
        "local",
    ] {
        let out = bench(&[
            "--tokens",
            "6",
            "--heads",
            "2",
            "--reps",
            "2",
            "--mechanism",
            mechanism,
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{mechanism}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(v["mechanism"], mechanism);
        assert_eq!(v["tokens"], 6);
        for key in [
            "layer_ms",
            "projection_ms",
            "maps_ms",
            "shift_ms",
            "output_ms",
        ] {
            assert!(
                v[key].as_f64().is_some_and(|ms| ms >= 0.0),
                "{mechanism}: {key}"
            );
        }
        assert_eq!(v["samples"]["layer_ms"].as_array().map(Vec::len), Some(2));
    }
}

#[test]
fn bench_rejects_bad_arguments() {
    for args in [
        &["--tokens", "0"][..],
        &["--tokens"],
        &["--heads", "3"],
        &["--mechanism", "nope"],
        &["--fast"],
    ] {
        let out = bench(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("diffattn: "));
    }
    let help = bench(&["--help"]);
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("--tokens"));
}
