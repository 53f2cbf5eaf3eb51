//! The layering rules of ARCHITECTURE.md, checked on the source text: the engine knows nothing
//! of the browser, JSON or drawing; the renderer knows nothing of the browser; only `web.rs`
//! speaks `#[wasm_bindgen]`.
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;

fn sources(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("source folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                // Only code counts: comments may name what the code must not use.
                let code: String = std::fs::read_to_string(&path)
                    .expect("source text")
                    .lines()
                    .filter(|line| !line.trim_start().starts_with("//"))
                    .collect::<Vec<_>>()
                    .join("\n");
                out.push((path.display().to_string(), code));
            }
        }
    }
    assert!(!out.is_empty(), "no sources under {dir}");
    out
}

fn assert_absent(dir: &str, forbidden: &[&str]) {
    for (path, text) in sources(dir) {
        for word in forbidden {
            assert!(!text.contains(word), "{path} mentions {word}");
        }
    }
}

#[test]
fn the_engine_imports_no_browser_json_or_drawing_crate() {
    assert_absent(
        "src/engine",
        &["web_sys", "wasm_bindgen", "js_sys", "serde", "plotters"],
    );
}

#[test]
fn the_renderer_and_the_explorer_import_no_browser_crate() {
    assert_absent("src/render", &["web_sys", "wasm_bindgen", "js_sys"]);
    assert_absent("src/explorer", &["web_sys", "wasm_bindgen", "js_sys"]);
    assert_absent("src/text", &["web_sys", "wasm_bindgen", "js_sys"]);
}

#[test]
fn the_names_module_has_no_serde() {
    let code = sources("src")
        .into_iter()
        .find(|(path, _)| path.ends_with("names.rs"))
        .expect("src/names.rs");
    assert!(!code.1.contains("serde"), "src/names.rs mentions serde");
}

#[test]
fn the_training_crate_never_imports_the_page_state() {
    assert_absent("train/src", &["explorer", "web_sys", "wasm_bindgen"]);
    assert_absent("train/tests", &["explorer"]);
}

#[test]
fn only_web_rs_uses_wasm_bindgen() {
    for (path, text) in sources("src") {
        if !path.ends_with("web.rs") {
            assert!(
                !text.contains("#[wasm_bindgen"),
                "{path} uses #[wasm_bindgen]"
            );
        }
    }
}
