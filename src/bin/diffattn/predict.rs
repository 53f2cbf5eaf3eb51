//! `diffattn predict [--mechanism M | --model FILE] [--lang en|zh|auto] [--pretty] "TEXT"`: the
//! sentiment of a text with a trained model (docs/MODEL.md), built in or read from a file.

use std::ffi::OsString;
use std::path::PathBuf;

use diffattn::engine::MechanismKind;
use diffattn::model::Model;
use diffattn::names::{names, parse};
use diffattn::text::limits::{grouped, MAX_TEXT_BYTES};
use diffattn::text::tokenize_up_to;

use crate::args::{unknown_option, Arg, Args};
use crate::streams::{
    arg_bytes, read_limited, read_model_file, say, stdin_unless_terminal, text_from_bytes,
    write_json, Failure,
};

const OPTIONS: &[&str] = &["--mechanism", "--model", "--lang", "--pretty", "--help"];

/// The shipped weights, built into the binary (never into the wasm library).
const WEIGHTS: [(MechanismKind, &[u8]); 9] = [
    (
        MechanismKind::ShiftDiff,
        include_bytes!("../../../weights/shift_diff.bin"),
    ),
    (
        MechanismKind::Standard,
        include_bytes!("../../../weights/standard.bin"),
    ),
    (
        MechanismKind::DiffTransformer,
        include_bytes!("../../../weights/diff_transformer.bin"),
    ),
    (
        MechanismKind::InputDiff,
        include_bytes!("../../../weights/input_diff.bin"),
    ),
    (
        MechanismKind::Cosine,
        include_bytes!("../../../weights/cosine.bin"),
    ),
    (
        MechanismKind::Local,
        include_bytes!("../../../weights/local.bin"),
    ),
    (
        MechanismKind::DiffTransformerV2,
        include_bytes!("../../../weights/diff_transformer_v2.bin"),
    ),
    (
        MechanismKind::Hierarchical,
        include_bytes!("../../../weights/hierarchical.bin"),
    ),
    (
        MechanismKind::GatedAttention,
        include_bytes!("../../../weights/gated_attention.bin"),
    ),
];

/// Runs the command.
pub fn run(args: Vec<OsString>) -> Result<(), Failure> {
    let mut args = Args::new(args);
    let mut mechanism: Option<MechanismKind> = None;
    let mut model_file: Option<PathBuf> = None;
    let mut lang = "auto".to_string();
    let mut pretty = false;
    let mut words: Vec<OsString> = Vec::new();
    while let Some(arg) = args.next_arg() {
        match arg {
            Arg::Option(o) if o == "--mechanism" => {
                let name = args.text_value("--mechanism")?;
                mechanism = Some(parse::<MechanismKind>("--mechanism", &name).map_err(|e| {
                    Failure::input(format!(
                        "unknown mechanism {name:?}; choose one of {}{}",
                        names::<MechanismKind>().join(", "),
                        e.suggestion
                            .map(|s| format!(" (did you mean {s}?)"))
                            .unwrap_or_default()
                    ))
                })?);
            }
            Arg::Option(o) if o == "--model" => model_file = Some(args.value("--model")?.into()),
            Arg::Option(o) if o == "--lang" => lang = args.text_value("--lang")?,
            Arg::Option(o) if o == "--pretty" => pretty = true,
            Arg::Option(o) if o == "-h" || o == "--help" => return crate::help(),
            Arg::Option(o) if o == "--" => {
                words.extend(args.rest());
                break;
            }
            Arg::Option(o) => return Err(unknown_option(&o, OPTIONS)),
            Arg::Plain(word) => words.push(word),
        }
    }
    if !["en", "zh", "auto"].contains(&lang.as_str()) {
        return Err(Failure::input(format!(
            "unknown language {lang:?}; choose en, zh or auto"
        )));
    }
    let model = load_model(model_file, mechanism)?;
    let text = read_text(&words)?;

    let keep = model.max_tokens();
    let (tokens, total) = tokenize_up_to(&text, keep);
    if tokens.is_empty() {
        return Err(Failure::input(
            "nothing to classify: the text has no tokens",
        ));
    }
    if total > keep {
        say(&format!(
            "the text has {} tokens; only the first {} were classified (the model's limit, \
             diffattn::text::limits::MAX_TOKENS)",
            grouped(total),
            grouped(keep)
        ));
    }
    let prediction = model
        .classify(&tokens)
        .map_err(|e| Failure::input(e.to_string()))?;
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
    let mechanism = model
        .trained_parts()
        .map_or("untrained", |t| t.mechanism.name());
    let json = serde_json::json!({
        "tokens": texts,
        "total_tokens": total,
        "unknown": unknown,
        "label": prediction.label.as_str(),
        "probability": prediction.probability,
        "positive": prediction.positive,
        "mechanism": mechanism,
        "lang": lang,
    });
    write_json("the prediction", &json, pretty)
}

/// The model of `--model FILE`, or the built-in one of `--mechanism` (shift_diff by default).
/// Both together must agree.
fn load_model(file: Option<PathBuf>, mechanism: Option<MechanismKind>) -> Result<Model, Failure> {
    let Some(path) = file else {
        let kind = mechanism.unwrap_or_default();
        let (_, bytes) = WEIGHTS
            .iter()
            .find(|(k, _)| *k == kind)
            .ok_or_else(|| Failure::input(format!("no built-in weights for {}", kind.key())))?;
        return Model::from_bytes(bytes).map_err(|e| Failure {
            code: 1,
            message: Some(format!("built-in weights for {}: {e}", kind.key())),
        });
    };
    let bytes = read_model_file(&path)?;
    let model = Model::from_bytes(&bytes)
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let kind = model
        .trained_parts()
        .map(|t| t.mechanism.kind())
        .ok_or_else(|| Failure::input(format!("{}: not a trained model", path.display())))?;
    match mechanism {
        Some(wanted) if wanted != kind => Err(Failure::input(format!(
            "--mechanism {} but {} holds a {} model; give one or the other",
            wanted.key(),
            path.display(),
            kind.key()
        ))),
        _ => Ok(model),
    }
}

/// The words of the command line joined by spaces, or standard input when there are none (or
/// just `-`); at most `MAX_TEXT_BYTES`, decoded lossily with a warning when not UTF-8.
pub(crate) fn read_text(words: &[OsString]) -> Result<String, Failure> {
    if words.is_empty() || words == ["-"] {
        let stdin = stdin_unless_terminal(
            "expected a text to classify, or one on standard input; see --help",
        )?;
        let bytes = read_limited(stdin, MAX_TEXT_BYTES, "the text", "MAX_TEXT_BYTES")?;
        return Ok(text_from_bytes(bytes, "the text"));
    }
    let mut bytes = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            bytes.push(b' ');
        }
        bytes.extend(arg_bytes(word));
    }
    if bytes.len() > MAX_TEXT_BYTES {
        return Err(Failure::input(format!(
            "the text is longer than {} bytes, the limit (diffattn::text::limits::MAX_TEXT_BYTES)",
            grouped(MAX_TEXT_BYTES)
        )));
    }
    Ok(text_from_bytes(bytes, "the text"))
}

/// Han ideographs (CJK Unified Ideographs and extension A, compatibility ideographs).
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}')
}
