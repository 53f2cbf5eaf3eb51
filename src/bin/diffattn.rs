//! The `diffattn` command line: runs the engine on a JSON spec and prints every stage as JSON
//! (DESIGN.md §6), the same format the page exports; and classifies a sentence with the
//! trained sentiment models (docs/MODEL.md), whose weights are built into this binary.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

const HELP: &str = r#"diffattn: every stage of differential attention, from a JSON spec.

USAGE
    diffattn stages [--pretty] [FILE] < spec.json > stages.json
    diffattn predict [--mechanism M] [--lang en|zh|auto] [--pretty] "TEXT"
    diffattn retrieve [--mechanism M] [--layer N] [--weights FILE] [--pretty] "TEXT"
    diffattn --help | --version

`stages` reads a spec from FILE, or from standard input when FILE is absent or "-", and
prints the stages as JSON. The spec is JSON, or the binary form: a safetensors file whose
tensors are the array fields and whose __metadata__ "spec" holds the other fields as JSON
(docs/DESIGN.md §7.8; python/'s diffattn.save writes it). A bad spec exits with status 2 and
a message naming the field.

`predict` classifies TEXT (or standard input when TEXT is absent or "-") as positive or
negative with the trained model of mechanism M (default shift_diff; also standard,
diff_transformer, input_diff, cosine, local, diff_transformer_v2, hierarchical) and prints JSON:
    {"tokens": [...], "unknown": [tokens read as <unk>], "label": "positive"|"negative",
     "probability": P(label), "positive": P(positive), "mechanism": M, "lang": "en"|"zh"}
One model reads both languages (English words and Chinese characters share its vocabulary);
--lang only names the language in the output, and `auto` (the default) picks zh when most
tokens are CJK characters. The weights are built into the binary from weights/.

`retrieve` puts TEXT, a context ending with the question "What is the NOUN of NAME?", to the
trained retrieval model of mechanism M (default diff_transformer; also standard, shift_diff,
diff_transformer_v2; docs/RETRIEVAL.md) and prints JSON:
    {"mechanism": M, "answer": "N" (the predicted number), "probability": P(answer),
     "expected": "N" | null (what the context's last fact about the key says),
     "answer_attention", "noise_attention", "noise_magnitude": the lesson's measure at layer N
     (default the last, the layer that retrieves; 1 is the first), "layer": N,
     "layers": [every layer's measure], "mean_over_layers": {...} (the paper's average),
     "tokens", "unknown": [tokens read as <unk>], "answer_tokens": [their indices],
     "question": {"noun", "name"}, "unknown_keys": [the question's keys outside the vocabulary],
     "warning": a sentence when a key is outside the vocabulary}
The measure: the share of the question mark's attention on the answer's tokens and on every
other context token, averaged over heads, on A (standard), A' (shift_diff) or A1 - lambda A2
(both Differential Transformers). A text without the question exits with status 2.
--weights reads a retrieval weights file instead of the built-in one.

SPEC (one sentence; weights in PyTorch's [out][in] layout)
    mechanism   "standard" | "shift_diff" | "diff_transformer" | "input_diff" | "cosine" | "local"
                | "diff_transformer_v2" | "hierarchical"
    heads       H, a positive integer dividing d (diff heads for diff_transformer: 2H divides d)
    causal      true | false
    x           L x d   the vectors entering the attention layer
    w_q w_k w_v w_o     d x d each
    shift_diff:       shift (integer), difference "single"|"symmetric",
                      renormalize "none"|"softmax", shift_fill "circular"|"zero" (default circular),
                      gate {"alpha": [H], "beta": [H], "gamma": [H]}
    diff_transformer: depth (integer >= 0), lambda_q1 lambda_k1 lambda_q2 lambda_k2 ([d/H/2] each),
                      subln ([d/H])
    cosine:           tau
    local:            window (radius, integer >= 0)
  A real layer (docs/DESIGN.md §7; diffattn.capture in python/ writes these):
    head_dim, kv_heads (grouped-query attention), b_q b_k b_v b_o (biases),
    rope {layout "half"|"interleaved", theta | inv_freq, rotary_dim, positions,
          attention_scaling}, tokens (labels), model, layer
    diff_transformer:    pairing "adjacent"|"halves", lambda_init (instead of depth),
                         subln optional (no learned weight), subln_eps
    diff_transformer_v2: w_lambda (H x d): lambda = sigmoid(x w_lambda^T) per token and head
    hierarchical:        segment (tokens per segment)

OUTPUT
    heads   one object per head: "a" (L x L; L x (L-1) for input_diff);
            shift_diff adds "shifted", "d", "g", "fused" (and "shifted_back" when symmetric);
            diff_transformer and diff_transformer_v2 have "a1", "a2", "diff" instead;
            hierarchical has "local", "segments" (L x segments) and "a"
    lambda  diff_transformer: one number; diff_transformer_v2: L x H
    output  L x d

EXAMPLE
    echo '{"mechanism": "shift_diff", "heads": 1, "causal": false,
           "x": [[1, 0], [0, 1], [1, 1]],
           "w_q": [[1, 0], [0, 1]], "w_k": [[1, 0], [0, 1]],
           "w_v": [[1, 0], [0, 1]], "w_o": [[1, 0], [0, 1]],
           "shift": 1, "difference": "single", "renormalize": "none",
           "gate": {"alpha": [1.0], "beta": [1.0], "gamma": [0.0]}}' | diffattn stages --pretty
"#;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None | Some("-h" | "--help" | "help") => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        Some("-V" | "--version") => {
            println!("diffattn {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("stages") => stages(&args[1..]),
        Some("predict") => predict(&args[1..]),
        Some("retrieve") => retrieve(&args[1..]),
        Some(other) => fail(
            2,
            &format!("unknown command {other:?}; try `diffattn --help`"),
        ),
    }
}

fn stages(args: &[String]) -> ExitCode {
    let mut pretty = false;
    let mut file: Option<&str> = None;
    for arg in args {
        match arg.as_str() {
            "--pretty" => pretty = true,
            "-h" | "--help" => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            flag if flag.starts_with("--") => {
                return fail(
                    2,
                    &format!("unknown option {flag:?}; try `diffattn --help`"),
                )
            }
            path if file.is_none() => file = Some(path),
            extra => return fail(2, &format!("unexpected argument {extra:?}")),
        }
    }
    let text = match read_input(file) {
        Ok(text) => text,
        Err(message) => return fail(2, &message),
    };
    let spec = match diffattn::spec::parse_spec_bytes(&text).and_then(|s| s.run()) {
        Ok(stages) => diffattn::spec::stages_json(&stages),
        Err(e) => return fail(2, &format!("bad spec: {e}")),
    };
    let json = if pretty {
        serde_json::to_string_pretty(&spec)
    } else {
        serde_json::to_string(&spec)
    };
    let json = match json {
        Ok(json) => json,
        Err(e) => return fail(1, &format!("cannot write JSON: {e}")),
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe (`diffattn stages | head`) is not an error worth a message.
    if writeln!(out, "{json}").and_then(|()| out.flush()).is_err() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// The shipped weights, built into the binary (never into the wasm library).
const WEIGHTS: [(&str, &[u8]); 8] = [
    ("shift_diff", include_bytes!("../../weights/shift_diff.bin")),
    ("standard", include_bytes!("../../weights/standard.bin")),
    (
        "diff_transformer",
        include_bytes!("../../weights/diff_transformer.bin"),
    ),
    ("input_diff", include_bytes!("../../weights/input_diff.bin")),
    ("cosine", include_bytes!("../../weights/cosine.bin")),
    ("local", include_bytes!("../../weights/local.bin")),
    (
        "diff_transformer_v2",
        include_bytes!("../../weights/diff_transformer_v2.bin"),
    ),
    (
        "hierarchical",
        include_bytes!("../../weights/hierarchical.bin"),
    ),
];

/// The shipped retrieval models, built into the binary (docs/RETRIEVAL.md).
const RETRIEVAL_WEIGHTS: [(&str, &[u8]); 4] = [
    (
        "diff_transformer",
        include_bytes!("../../weights/retrieval/diff_transformer.bin"),
    ),
    (
        "standard",
        include_bytes!("../../weights/retrieval/standard.bin"),
    ),
    (
        "shift_diff",
        include_bytes!("../../weights/retrieval/shift_diff.bin"),
    ),
    (
        "diff_transformer_v2",
        include_bytes!("../../weights/retrieval/diff_transformer_v2.bin"),
    ),
];

fn retrieve(args: &[String]) -> ExitCode {
    use diffattn::retrieval::Shares;
    let mut mechanism = "diff_transformer".to_string();
    let mut layer: Option<String> = None;
    let mut weights: Option<String> = None;
    let mut pretty = false;
    let mut words: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "--mechanism" | "--layer" | "--weights" => {
                let Some(value) = args.get(i + 1) else {
                    return fail(2, &format!("{arg} needs a value"));
                };
                match arg {
                    "--mechanism" => mechanism = value.clone(),
                    "--layer" => layer = Some(value.clone()),
                    _ => weights = Some(value.clone()),
                }
                i += 1;
            }
            "--pretty" => pretty = true,
            "-h" | "--help" => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            "--" => {
                words.extend(args[i + 1..].iter().map(String::as_str));
                break;
            }
            flag if flag.starts_with("--") => {
                return fail(
                    2,
                    &format!("unknown option {flag:?}; try `diffattn --help`"),
                )
            }
            text => words.push(text),
        }
        i += 1;
    }
    let owned;
    let bytes: &[u8] = match &weights {
        Some(path) => match std::fs::read(path) {
            Ok(b) => {
                owned = b;
                &owned
            }
            Err(e) => return fail(2, &format!("cannot read {path}: {e}")),
        },
        None => match RETRIEVAL_WEIGHTS.iter().find(|(n, _)| *n == mechanism) {
            Some(&(_, b)) => b,
            None => {
                let names: Vec<&str> = RETRIEVAL_WEIGHTS.iter().map(|(n, _)| *n).collect();
                return fail(
                    2,
                    &format!(
                        "unknown mechanism {mechanism:?}; choose one of {}",
                        names.join(", ")
                    ),
                );
            }
        },
    };
    let file = match diffattn::model::RetrievalFile::from_bytes(bytes) {
        Ok(f) => f,
        Err(e) => return fail(1, &format!("retrieval weights: {e}")),
    };
    if weights.is_some() {
        mechanism = file
            .model
            .layers
            .last()
            .map_or("", |l| l.mechanism.name())
            .to_string();
    }
    let text = if words.is_empty() || words == ["-"] {
        match read_input(None).and_then(|bytes| {
            String::from_utf8(bytes).map_err(|e| format!("cannot read standard input: {e}"))
        }) {
            Ok(text) => text,
            Err(message) => return fail(2, &message.replace("a spec", "a text")),
        }
    } else {
        words.join(" ")
    };
    let asked = match diffattn::retrieval::ask(&file.model, &text) {
        Ok(a) => a,
        Err(e) => return fail(2, &format!("nothing to ask: {e}")),
    };
    let (Some(layout), Some(measure)) = (&asked.layout, &asked.measure) else {
        return fail(
            2,
            "the text must end with the question \"What is the NOUN of NAME?\" (see --help)",
        );
    };
    let layers = measure.layers.len();
    let at = match layer.as_deref().map(str::parse::<usize>) {
        None => measure.retrieving_layer(),
        Some(Ok(n)) if (1..=layers).contains(&n) => n - 1,
        Some(_) => return fail(2, &format!("--layer: a layer from 1 to {layers}")),
    };
    let shares = |s: &Shares| {
        serde_json::json!({
            "answer_attention": s.answer,
            "noise_attention": s.noise,
            "noise_magnitude": s.noise_magnitude,
        })
    };
    let chosen = measure.layers[at];
    let warning = if asked.unknown_keys.is_empty() {
        serde_json::Value::Null
    } else {
        let w = format!(
            "{} outside the model's vocabulary: it reads as <unk>, like every unknown word, so the \
             model cannot tell it from them and the answer is a guess",
            asked
                .unknown_keys
                .iter()
                .map(|k| format!("{k:?}"))
                .collect::<Vec<_>>()
                .join(" and ")
        );
        eprintln!("diffattn: warning: {w}");
        serde_json::Value::String(w)
    };
    let json = serde_json::json!({
        "mechanism": mechanism,
        "answer": asked.retrieval.answer.to_string(),
        "probability": asked.retrieval.probability(),
        "expected": asked.expected().map(|n| n.to_string()),
        "layer": at + 1,
        "answer_attention": chosen.answer,
        "noise_attention": chosen.noise,
        "noise_magnitude": chosen.noise_magnitude,
        "layers": measure.layers.iter().map(shares).collect::<Vec<_>>(),
        "mean_over_layers": shares(&measure.mean()),
        "tokens": asked.tokens,
        "unknown": asked.unknown,
        "answer_tokens": layout.answer_tokens(),
        "question": { "noun": layout.question.key.noun, "name": layout.question.key.name },
        "unknown_keys": asked.unknown_keys,
        "warning": warning,
    });
    let json = if pretty {
        serde_json::to_string_pretty(&json)
    } else {
        serde_json::to_string(&json)
    };
    match json {
        Ok(json) => {
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{json}").and_then(|()| out.flush()).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(1, &format!("cannot write JSON: {e}")),
    }
}

fn predict(args: &[String]) -> ExitCode {
    let mut mechanism = "shift_diff".to_string();
    let mut lang = "auto".to_string();
    let mut pretty = false;
    let mut words: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        match arg {
            "--mechanism" | "--lang" => {
                let Some(value) = args.get(i + 1) else {
                    return fail(2, &format!("{arg} needs a value"));
                };
                if arg == "--mechanism" {
                    mechanism = value.clone();
                } else {
                    lang = value.clone();
                }
                i += 1;
            }
            "--pretty" => pretty = true,
            "-h" | "--help" => {
                print!("{HELP}");
                return ExitCode::SUCCESS;
            }
            "--" => {
                words.extend(args[i + 1..].iter().map(String::as_str));
                break;
            }
            flag if flag.starts_with("--") => {
                return fail(
                    2,
                    &format!("unknown option {flag:?}; try `diffattn --help`"),
                )
            }
            text => words.push(text),
        }
        i += 1;
    }
    let Some(&(_, bytes)) = WEIGHTS.iter().find(|(name, _)| *name == mechanism) else {
        let names: Vec<&str> = WEIGHTS.iter().map(|(n, _)| *n).collect();
        return fail(
            2,
            &format!(
                "unknown mechanism {mechanism:?}; choose one of {}",
                names.join(", ")
            ),
        );
    };
    if !["en", "zh", "auto"].contains(&lang.as_str()) {
        return fail(
            2,
            &format!("unknown language {lang:?}; choose en, zh or auto"),
        );
    }
    let text = if words.is_empty() || words == ["-"] {
        match read_input(None).and_then(|bytes| {
            String::from_utf8(bytes).map_err(|e| format!("cannot read standard input: {e}"))
        }) {
            Ok(text) => text,
            Err(message) => return fail(2, &message.replace("a spec", "a sentence")),
        }
    } else {
        words.join(" ")
    };
    let (tokens, _) = diffattn::text::tokenize_limited(&text);
    if tokens.is_empty() {
        return fail(2, "nothing to classify: the text has no tokens");
    }
    let model = match diffattn::model::Model::from_bytes(bytes) {
        Ok(model) => model,
        Err(e) => return fail(1, &format!("built-in weights for {mechanism}: {e}")),
    };
    let prediction = match model.classify(&tokens) {
        Ok(p) => p,
        Err(e) => return fail(1, &e.to_string()),
    };
    let ids = model.token_ids(&tokens).unwrap_or_default();
    let unknown: Vec<&str> = tokens
        .iter()
        .zip(&ids)
        .filter(|(_, &id)| id == 0)
        .map(|(t, _)| t.text.as_str())
        .collect();
    if lang == "auto" {
        let cjk = tokens
            .iter()
            .filter(|t| t.text.chars().next().is_some_and(is_cjk))
            .count();
        lang = if 2 * cjk > tokens.len() { "zh" } else { "en" }.to_string();
    }
    let texts: Vec<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
    let json = serde_json::json!({
        "tokens": texts,
        "unknown": unknown,
        "label": prediction.label.as_str(),
        "probability": prediction.probability,
        "positive": prediction.positive,
        "mechanism": mechanism,
        "lang": lang,
    });
    let json = if pretty {
        serde_json::to_string_pretty(&json)
    } else {
        serde_json::to_string(&json)
    };
    match json {
        Ok(json) => {
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{json}").and_then(|()| out.flush()).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(1, &format!("cannot write JSON: {e}")),
    }
}

/// Han ideographs (CJK Unified Ideographs and extension A, compatibility ideographs).
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}')
}

fn read_input(file: Option<&str>) -> Result<Vec<u8>, String> {
    match file {
        None | Some("-") => {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                return Err(
                    "expected a spec on standard input (diffattn stages < spec.json); see --help"
                        .to_string(),
                );
            }
            let mut bytes = Vec::new();
            stdin
                .lock()
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(bytes)
        }
        Some(path) => std::fs::read(path).map_err(|e| format!("cannot read {path}: {e}")),
    }
}

fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("diffattn: {message}");
    ExitCode::from(code)
}
