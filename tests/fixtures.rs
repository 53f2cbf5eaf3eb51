//! The reference cases: every `NAME.spec.json` in `tests/fixtures/stages/` (copied unchanged from
//! the project's shared reference set) and in `tests/fixtures/real/` (the real-layer format of
//! DESIGN.md §7), run through the same path as `diffattn stages`, must match
//! `NAME.expected.json` (computed in float64 by independent numpy implementations) within 1e-4
//! absolute (DESIGN.md §6).
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use diffattn::spec::{parse_spec, stages_json};
use serde_json::Value;

const TOLERANCE: f64 = 1e-4;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stages")
}

/// Compares two JSON values: same keys, same shapes, numbers within the tolerance.
fn compare(path: &str, got: &Value, want: &Value, errors: &mut Vec<String>) {
    match (got, want) {
        (Value::Number(g), Value::Number(w)) => {
            let (g, w) = (
                g.as_f64().unwrap_or(f64::NAN),
                w.as_f64().unwrap_or(f64::NAN),
            );
            // A NaN on either side must fail too, so test for "within" rather than "beyond".
            let within = (g - w).abs() <= TOLERANCE;
            if !within {
                errors.push(format!("{path}: got {g}, want {w}"));
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            if g.len() != w.len() {
                errors.push(format!("{path}: length {} != {}", g.len(), w.len()));
                return;
            }
            for (i, (g, w)) in g.iter().zip(w).enumerate() {
                compare(&format!("{path}[{i}]"), g, w, errors);
            }
        }
        (Value::Object(g), Value::Object(w)) => {
            let mut gk: Vec<_> = g.keys().collect();
            let mut wk: Vec<_> = w.keys().collect();
            gk.sort();
            wk.sort();
            if gk != wk {
                errors.push(format!("{path}: keys {gk:?} != {wk:?}"));
                return;
            }
            for (k, wv) in w {
                compare(&format!("{path}.{k}"), &g[k], wv, errors);
            }
        }
        _ => errors.push(format!("{path}: {got} is not like {want}")),
    }
}

#[test]
fn every_shared_fixture_matches_within_1e_4() {
    check_every_fixture(&fixtures_dir(), 100);
}

/// The real-layer cases of DESIGN.md §7 (rope, grouped-query attention, biases, pairings,
/// V2, hierarchical), made by `tests/fixtures/real/make.py` with the float64 reference.
#[test]
fn every_real_layer_fixture_matches_within_1e_4() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real");
    check_every_fixture(&dir, 20);
}

fn check_every_fixture(dir: &Path, at_least: usize) {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".spec.json"))
        .collect();
    specs.sort();
    assert!(
        specs.len() >= at_least,
        "expected the fixtures in {}, found {}",
        dir.display(),
        specs.len()
    );

    let mut failures = Vec::new();
    for spec_path in &specs {
        let name = spec_path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".spec.json", "");
        let expected_path = dir.join(format!("{name}.expected.json"));
        let spec_text = std::fs::read_to_string(spec_path).expect("spec text");
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&expected_path).expect("expected text"))
                .expect("expected JSON");
        let got = match parse_spec(&spec_text).and_then(|s| s.run()) {
            Ok(stages) => serde_json::to_value(stages_json(&stages)).expect("serialise"),
            Err(e) => {
                failures.push(format!("{name}: rejected: {e}"));
                continue;
            }
        };
        let mut errors = Vec::new();
        compare("", &got, &expected, &mut errors);
        if !errors.is_empty() {
            failures.push(format!(
                "{name}: {} mismatches, first: {}",
                errors.len(),
                errors[..errors.len().min(3)].join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        specs.len(),
        failures.join("\n")
    );
}
