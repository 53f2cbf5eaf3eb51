//! The invariants of ARCHITECTURE.md, stated as absences and checked on the source text: the
//! engine knows nothing of the browser, JSON, drawing or the page's state; the renderer knows
//! nothing of the browser; the library has no `#[wasm_bindgen]` (the wasm crates, `web/` and
//! the others, are thin boundaries over it); the training crate never
//! imports the page's state; no page module has top-level mutable state (the element's entry
//! modules in pkg/ keep exactly one page-wide memo); the page never branches on a mechanism's
//! name; no page module and no Rust module under src/ is over 600 lines; there is one build
//! per SIMD flavour (no cargo feature about downloads, no `cfg(feature` in the engine, no
//! second build the page moves to), no page module reads wasm-bindgen's memory layout, and no
//! hand-written stand-in replaces a crate.
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;

/// Every file under `dir` (and its folders) whose name ends in `.ext`, as `(path, text)`.
fn files(dir: &str, ext: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("source folder") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == ext) {
                let text = std::fs::read_to_string(&path).expect("source text");
                out.push((path.display().to_string(), text));
            }
        }
    }
    assert!(!out.is_empty(), "no .{ext} files under {dir}");
    out
}

/// The Rust sources under `dir`, comment lines dropped.
fn sources(dir: &str) -> Vec<(String, String)> {
    files(dir, "rs")
        .into_iter()
        .map(|(path, text)| {
            // Only code counts: comments may name what the code must not use.
            let code = text
                .lines()
                .filter(|line| !line.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            (path, code)
        })
        .collect()
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
fn the_retrieval_lesson_imports_no_json_browser_or_drawing_crate() {
    // One measure for the command line, the page and the experiment: pure Rust over the
    // engine's stages (its file format lives in src/model/retrieval.rs).
    assert_absent(
        "src/retrieval",
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

/// The thin crates that make the wasm modules, each over the library (which has no
/// `#[wasm_bindgen]`): what a crate and its dependencies export is what its module carries.
/// The page's (`web`), the pretrained model's (`web-pretrained`), the retrieval lesson's
/// (`web-lesson`).
const WASM_CRATES: [&str; 3] = ["web", "web-pretrained", "web-lesson"];

/// Crates the wasm modules share, which must export nothing: linked into a module, they add no
/// export to it (`web-canvas`: maps drawn on a canvas, for the page's and the lesson's).
const SHARED_WASM_CRATES: [&str; 1] = ["web-canvas"];

#[test]
fn only_the_wasm_crates_use_wasm_bindgen() {
    for (path, text) in sources("src") {
        assert!(
            !text.contains("#[wasm_bindgen") && !text.contains("wasm_bindgen::"),
            "{path} uses wasm_bindgen: the library has none (the wasm crates: {WASM_CRATES:?})"
        );
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    for krate in ["wasm-bindgen", "js-sys", "web-sys"] {
        assert!(
            !manifest
                .lines()
                .any(|l| l.starts_with(&format!("{krate} ="))),
            "Cargo.toml: the library depends on {krate}"
        );
    }
    for krate in WASM_CRATES {
        let seen = sources(&format!("{krate}/src"))
            .iter()
            .filter(|(_, text)| text.contains("#[wasm_bindgen"))
            .count();
        assert!(
            seen > 0,
            "{krate}/src has no #[wasm_bindgen]: the scan is broken"
        );
    }
    for krate in SHARED_WASM_CRATES {
        for (path, text) in sources(&format!("{krate}/src")) {
            assert!(
                !text.contains("#[wasm_bindgen"),
                "{path}: a crate every module may link exports nothing"
            );
        }
    }
}

#[test]
fn the_pages_module_carries_no_model_code() {
    // What the first view downloads is the page's crate (web/) and what it links: the model's
    // code (the BERT reader and forward pass, the word-piece tokenizer) ships beside the model
    // (web-pretrained/), the retrieval lesson's with the lesson (web-lesson/). The page's crate,
    // the crate it shares with the lesson and the explorer name neither; the built module is
    // checked too (tests/e2e/wasm-builds.test.mjs: no BERT reader, no tokenizer, no export of
    // the other modules).
    let model = [
        "model::bert",
        "wordpiece",
        "Bert",
        "Encoder",
        "pretrained::Feed",
    ];
    let lesson = ["retrieval", "Retrieval", "Lesson"];
    for dir in ["web/src", "web-canvas/src"] {
        assert_absent(dir, &model);
        assert_absent(dir, &lesson);
    }
    assert_absent("src/explorer", &model);
    assert_absent("src/explorer", &lesson);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in ["web/Cargo.toml", "web-canvas/Cargo.toml"] {
        let manifest = std::fs::read_to_string(root.join(file)).expect("a manifest");
        for krate in [
            "diffattn-pretrained",
            "diffattn-lesson",
            "unicode-normalization",
        ] {
            assert!(
                !manifest.contains(krate),
                "{file} depends on {krate}: the page's module would carry it"
            );
        }
    }
}

#[test]
fn the_engine_knows_nothing_of_the_page_state_or_the_names() {
    assert_absent(
        "src/engine",
        &["explorer", "crate::names", "crate::spec", "crate::schema"],
    );
}

/// The element's entry modules, the package's committed sources (pkg/ is otherwise built).
const ELEMENT_ENTRIES: [&str; 2] = ["pkg/element.js", "pkg/inline.js"];

/// The one top-level mutable binding an element entry may hold: the page-wide memo of the wasm
/// runtime, the stylesheet and the weights store, shared by every element of a page.
const PAGE_WIDE_MEMO: &str = "let shared = null;";

/// Every page module (www/, www/explorer/, www/examples/, the benchmark harness too, and the
/// element's entries in pkg/) as `(path, text)`.
fn page_modules() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ["www", "www/explorer", "www/examples"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("www folder") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "js") {
                let text = std::fs::read_to_string(&path).expect("page module");
                out.push((path.display().to_string(), text));
            }
        }
    }
    for file in ELEMENT_ENTRIES {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).expect("element entry");
        out.push((path.display().to_string(), text));
    }
    assert!(out.len() > 10, "found only {} page modules", out.len());
    out
}

#[test]
fn each_element_entry_keeps_exactly_one_page_wide_memo() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in ELEMENT_ENTRIES {
        let text = std::fs::read_to_string(root.join(file)).expect("element entry");
        let memos = text.lines().filter(|line| *line == PAGE_WIDE_MEMO).count();
        assert_eq!(
            memos, 1,
            "{file}: expected one `{PAGE_WIDE_MEMO}`, found {memos}"
        );
    }
    // The component itself registers nothing and caches nothing for the page.
    let element = std::fs::read_to_string(root.join("www/explorer/element.js")).expect("element");
    assert!(
        !element
            .lines()
            .any(|line| line.starts_with("customElements.define")),
        "www/explorer/element.js registers the element at import; the entries in pkg/ do"
    );
}

#[test]
fn no_page_module_has_top_level_mutable_state() {
    for (path, text) in page_modules() {
        for (n, line) in text.lines().enumerate() {
            let at = format!("{path}:{}", n + 1);
            // Only lines at the top level (no indentation) declare module-level bindings.
            if ELEMENT_ENTRIES.iter().any(|e| path.ends_with(e)) && line == PAGE_WIDE_MEMO {
                continue; // the one page-wide memo (each_element_entry_keeps_exactly_one_page_wide_memo)
            }
            for keyword in ["let ", "var ", "export let ", "export var "] {
                assert!(!line.starts_with(keyword), "{at}: top-level `{line}`");
            }
            if let Some(rest) = line
                .strip_prefix("export const ")
                .or_else(|| line.strip_prefix("const "))
            {
                let value = rest.split_once('=').map_or("", |(_, v)| v.trim());
                let mutable = ["[", "{", "new Map", "new Set", "new WeakMap", "new Array"]
                    .iter()
                    .any(|start| value.starts_with(start));
                assert!(
                    !mutable,
                    "{at}: top-level mutable value `{line}` (freeze it, or keep it in an instance)"
                );
            }
        }
    }
}

#[test]
fn the_page_never_branches_on_a_mechanism_name() {
    use diffattn::engine::MechanismKind;
    for (path, text) in page_modules() {
        for kind in MechanismKind::ALL {
            for quoted in [format!("'{}'", kind.key()), format!("\"{}\"", kind.key())] {
                assert!(
                    !text.contains(&quoted),
                    "{path} names the mechanism {quoted}: ask the engine (view(), names()) instead"
                );
            }
        }
    }
}

/// The redesign's bound (issue 8): a module that grows past it holds more than one concern.
const MAX_MODULE_LINES: usize = 600;

fn assert_no_module_over_the_bound(modules: Vec<(String, String)>) {
    for (path, text) in modules {
        let lines = text.lines().count();
        assert!(
            lines <= MAX_MODULE_LINES,
            "{path}: {lines} lines; split it by concern (over {MAX_MODULE_LINES})"
        );
    }
}

#[test]
fn no_page_module_is_over_600_lines() {
    assert_no_module_over_the_bound(page_modules());
}

#[test]
fn no_rust_module_is_over_600_lines() {
    // Every `.rs` under src/ and the wasm crates' src/, comments and tests included, as `wc -l`
    // counts them.
    assert_no_module_over_the_bound(files("src", "rs"));
    for krate in WASM_CRATES.iter().chain(&SHARED_WASM_CRATES) {
        assert_no_module_over_the_bound(files(&format!("{krate}/src"), "rs"));
    }
}

/// The one cargo feature a crate may have: `bench` (the engine timed alone and the test hook
/// `trap_for_tests`, for the benchmarks' builds in pkg/bench/). None says what a download
/// carries: which code is in which module follows from which crate exports what.
const CARGO_FEATURES: [&str; 1] = ["bench"];

/// The features a manifest declares (none without a `[features]` table).
fn cargo_features(manifest: &str) -> Vec<String> {
    manifest
        .split("\n[features]\n")
        .nth(1)
        .map(|table| {
            table
                .lines()
                .take_while(|line| !line.starts_with('['))
                .filter(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
                .map(|line| line.split('=').next().unwrap_or("").trim().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn there_is_no_cargo_feature_about_downloads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    assert!(
        cargo_features(&manifest).is_empty(),
        "Cargo.toml: the library has features"
    );
    for krate in WASM_CRATES.iter().chain(&SHARED_WASM_CRATES) {
        let file = format!("{krate}/Cargo.toml");
        let manifest = std::fs::read_to_string(root.join(&file)).expect("a wasm crate's manifest");
        for feature in cargo_features(&manifest) {
            assert!(
                CARGO_FEATURES.contains(&feature.as_str()),
                "{file}: the feature {feature:?}, which says what a download carries"
            );
        }
    }
    let mut sources_of = sources("src");
    for krate in WASM_CRATES.iter().chain(&SHARED_WASM_CRATES) {
        sources_of.extend(sources(&format!("{krate}/src")));
    }
    for (path, text) in sources_of {
        for (n, line) in text.lines().enumerate() {
            // `feature = "…"`, not `target_feature = "…"` (the SIMD paths).
            let features = line
                .match_indices("feature = \"")
                .filter(|(at, _)| !line[..*at].ends_with("target_"));
            for (at, _) in features {
                let named = line[at + 11..].split('"').next().unwrap_or("");
                assert!(
                    CARGO_FEATURES.contains(&named),
                    "{path}:{}: a cfg of the feature {named:?}, which is no feature of a crate",
                    n + 1
                );
                assert!(
                    WASM_CRATES
                        .iter()
                        .any(|k| path.contains(&format!("/{k}/src/"))),
                    "{path}:{}: the benchmarks' feature outside the wasm crates",
                    n + 1
                );
            }
        }
    }
}

#[test]
fn the_engine_has_no_cfg_of_a_feature() {
    // Any `feature = "…"` in a cfg, not `target_feature = "…"` (the SIMD paths are the engine's).
    assert_absent(
        "src/engine",
        &[
            "(feature = ",
            ", feature = ",
            "cfg(feature",
            "cfg(not(feature",
        ],
    );
}

/// A page module's code: its lines without the comment lines (`//`, and `/** … */` blocks' lines).
fn page_code(text: &str) -> String {
    text.lines()
        .filter(|line| {
            let t = line.trim_start();
            !(t.starts_with("//") || t.starts_with("/*") || t.starts_with('*'))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_page_module_reads_wasm_bindgen_internals() {
    // A handle lost to a panic is dropped with its instance (runtime.js `reset`), never taken
    // apart: no raw pointer, no free by hand, no view into the instance's memory at an offset.
    for (path, text) in page_modules() {
        for word in [
            "__destroy_into_raw",
            "__wbg_ptr",
            "__wbg_explorer_free",
            "memory.buffer,",
        ] {
            assert!(
                !text.contains(word),
                "{path} reads wasm-bindgen's internals: {word}"
            );
        }
    }
}

#[test]
fn no_page_module_knows_of_a_second_build() {
    // One build per SIMD flavour, everything in it: nothing moves a handle to another build.
    // Code only: a comment may tell what was (the heads' worker, which issue 18 removes).
    for (path, text) in page_modules() {
        let text = page_code(&text);
        for word in [
            "full/diffattn",
            "pkg/full",
            "useFull",
            "fullBuild",
            ".full()",
            "lesson/diffattn",
        ] {
            assert!(
                !text.contains(word),
                "{path} knows of a second build: {word}"
            );
        }
    }
}

#[test]
fn no_hand_written_stand_in_replaces_a_crate() {
    // The weights header is read by serde_json's derive, the seeded streams come from
    // rand_chacha: the stand-ins written for download bytes alone are gone.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for gone in ["src/model/json.rs", "src/text/chacha.rs"] {
        assert!(!root.join(gone).exists(), "{gone} is back: use the crate");
    }
    assert_absent(
        "src",
        &["mod json;", "mod chacha;", "super::chacha", "model::json"],
    );
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("Cargo.toml");
    let dependencies = manifest
        .split("\n[dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .expect("a [dependencies] table");
    for krate in ["serde_json", "rand_chacha", "rand_core"] {
        assert!(
            dependencies
                .lines()
                .any(|l| l.starts_with(&format!("{krate} ="))),
            "{krate} is no dependency of the library"
        );
    }
}

/// Where the page's settings are used by name: the page, the package, the widget, and the
/// Rust of the page's state and of the boundary. (The stages format and the weights format have
/// fields of their own, DESIGN.md §6 and docs/MODEL.md, read in src/spec, src/model and
/// python/diffattn/reference.py; the engine's parameter structs are the maths.)
fn setting_users() -> Vec<(String, String)> {
    let mut out = page_modules();
    out.retain(|(path, _)| !path.ends_with("settings.generated.js"));
    for (dir, ext) in [("pkg", "ts"), ("python/diffattn", "py")] {
        out.extend(files(dir, ext).into_iter().filter(|(path, _)| {
            !path.contains("pkg/explorer/") && !path.ends_with("reference.py")
        }));
    }
    for dir in ["src/explorer", "web/src", "src/schema"] {
        out.extend(files(dir, "rs"));
    }
    // The one table, and the files made from it.
    out.retain(|(path, text)| {
        !path.ends_with("src/schema/table.rs")
            && !text
                .lines()
                .next()
                .is_some_and(|l| l.contains("generated by"))
    });
    out
}

/// The settings named on `line` as a list names them: quoted (`'shift'`, `"shift"`) or as a key
/// or a field (`shift:`, `shift =`, `pub shift:`).
fn named_settings<'a>(line: &str, names: &[&'a str]) -> Vec<&'a str> {
    let bytes = line.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    for &name in names {
        let mut from = 0;
        while let Some(at) = line[from..].find(name).map(|i| i + from) {
            from = at + name.len();
            let before = at.checked_sub(1).map(|i| bytes[i]);
            let after = bytes.get(from).copied();
            let quoted = matches!(
                (before, after),
                (Some(b'\''), Some(b'\'')) | (Some(b'"'), Some(b'"'))
            );
            let rest = line[from..].trim_start();
            let key = !before.is_some_and(|b| ident(b) || b == b'.')
                && !after.is_some_and(ident)
                && ((rest.starts_with(':') && !rest.starts_with("::"))
                    || (rest.starts_with('=')
                        && !rest.starts_with("==")
                        && !rest.starts_with("=>")));
            if quoted || key {
                found.push(name);
                break;
            }
        }
    }
    found
}

#[test]
fn no_hand_written_list_of_setting_names() {
    // A list is five settings or more named within eight lines (code only). Each setting is
    // declared once, in src/schema/table.rs; everything else derives its tables from the
    // schema (the generated files, or `diffattn::schema` in Rust).
    let names: Vec<&str> = diffattn::schema::engine_keys().map(|k| k.name).collect();
    for (path, text) in setting_users() {
        let lines: Vec<&str> = text
            .lines()
            .map(|l| {
                let t = l.trim_start();
                if ["//", "#", "*", "/*"].iter().any(|c| t.starts_with(c)) {
                    ""
                } else {
                    l
                }
            })
            .collect();
        for (i, window) in lines.windows(8.min(lines.len())).enumerate() {
            let mut found: Vec<&str> = window
                .iter()
                .flat_map(|l| named_settings(l, &names))
                .collect();
            found.sort_unstable();
            found.dedup();
            assert!(
                found.len() < 5,
                "{path}:{}: a hand-written list of settings ({}): derive it from the schema (src/schema/)",
                i + 1,
                found.join(", ")
            );
        }
    }
}

#[test]
fn the_page_has_one_path_for_heavy_work() {
    // No Web Worker computes heads beside the page's handle, and no handle is mirrored or
    // adopts maps computed elsewhere: heavy work is the engine's pieces (src/explorer/work.rs),
    // run between frames by www/explorer/work.js.
    for (path, text) in page_modules() {
        for forbidden in ["new Worker(", "new SharedWorker(", "importScripts("] {
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//") && !l.trim_start().starts_with('*'))
                .collect::<Vec<_>>()
                .join("\n");
            assert!(
                !code.contains(forbidden),
                "{path} uses {forbidden}: heavy work has one path (work.js)"
            );
        }
    }
    for dir in ["src", "web/src"] {
        assert_absent(dir, &["export_head", "adopt_head", "adopt_map", "HeadKey"]);
    }
}

#[test]
fn the_engine_has_no_import_circle() {
    // Each engine module's `use super::m` edges; a depth-first search finds any circle.
    let modules: Vec<(String, Vec<String>)> = sources("src/engine")
        .into_iter()
        .filter(|(path, _)| !path.contains("/kernels/") && !path.ends_with("mod.rs"))
        .map(|(path, text)| {
            let name = Path::new(&path)
                .file_stem()
                .expect("a file name")
                .to_string_lossy()
                .to_string();
            let uses = text
                .lines()
                .filter_map(|l| {
                    let l = l.trim_start();
                    let rest = l
                        .strip_prefix("use super::")
                        .or_else(|| l.strip_prefix("pub use super::"))?;
                    Some(rest.split([':', ';', '{']).next()?.trim().to_string())
                })
                .filter(|m| !m.is_empty() && m != "kernels")
                .collect();
            (name, uses)
        })
        .collect();
    assert!(modules.len() > 15, "found {} engine modules", modules.len());
    fn visit(
        m: &str,
        modules: &[(String, Vec<String>)],
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) {
        if done.iter().any(|d| d == m) {
            return;
        }
        if let Some(at) = path.iter().position(|p| p == m) {
            panic!(
                "src/engine imports in a circle: {} -> {m}",
                path[at..].join(" -> ")
            );
        }
        path.push(m.to_string());
        if let Some((_, uses)) = modules.iter().find(|(n, _)| n == m) {
            for u in uses {
                visit(u, modules, path, done);
            }
        }
        path.pop();
        done.push(m.to_string());
    }
    let mut done = Vec::new();
    for (m, _) in &modules {
        visit(m, &modules, &mut Vec::new(), &mut done);
    }
}
