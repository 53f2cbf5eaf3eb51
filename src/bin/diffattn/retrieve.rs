//! `diffattn retrieve [--mechanism M] [--layer N] [--weights FILE] [--pretty] "TEXT"`: a context
//! ending with "What is the NOUN of NAME?" put to a trained retrieval model (docs/LESSON.md),
//! with the answer and the lesson's measure (diffattn::retrieval, the one implementation).
//! With `--spec FILE`, every layer of the model over TEXT as one multi-layer spec (DESIGN.md
//! §7.11, `diffattn::retrieval::specs`) written to FILE instead.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use diffattn::model::RetrievalFile;
use diffattn::retrieval::{layer_specs, Shares};
use diffattn::spec::layers_json;

use crate::args::{unknown_option, Arg, Args};
use crate::predict::read_text;
use crate::streams::{read_model_file, say, write_json, write_stdout, Failure};

const OPTIONS: &[&str] = &[
    "--mechanism",
    "--layer",
    "--weights",
    "--spec",
    "--pretty",
    "--help",
];

/// The shipped retrieval models, built into the binary.
const RETRIEVAL_WEIGHTS: [(&str, &[u8]); 4] = [
    (
        "diff_transformer",
        include_bytes!("../../../weights/retrieval/diff_transformer.bin"),
    ),
    (
        "standard",
        include_bytes!("../../../weights/retrieval/standard.bin"),
    ),
    (
        "shift_diff",
        include_bytes!("../../../weights/retrieval/shift_diff.bin"),
    ),
    (
        "diff_transformer_v2",
        include_bytes!("../../../weights/retrieval/diff_transformer_v2.bin"),
    ),
];

/// Runs the command.
pub fn run(args: Vec<OsString>) -> Result<(), Failure> {
    let mut args = Args::new(args);
    let mut mechanism: Option<String> = None;
    let mut layer: Option<String> = None;
    let mut weights: Option<PathBuf> = None;
    let mut spec: Option<PathBuf> = None;
    let mut pretty = false;
    let mut words: Vec<OsString> = Vec::new();
    while let Some(arg) = args.next_arg() {
        match arg {
            Arg::Option(o) if o == "--mechanism" => {
                mechanism = Some(args.text_value("--mechanism")?)
            }
            Arg::Option(o) if o == "--layer" => layer = Some(args.text_value("--layer")?),
            Arg::Option(o) if o == "--weights" => weights = Some(args.value("--weights")?.into()),
            Arg::Option(o) if o == "--spec" => spec = Some(args.value("--spec")?.into()),
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
    let (file, mechanism) = load(weights, mechanism)?;
    let text = read_text(&words)?;
    let asked = diffattn::retrieval::ask(&file.model, &text)
        .map_err(|e| Failure::input(format!("nothing to ask: {e}")))?;
    if let Some(path) = spec {
        if layer.is_some() {
            return Err(Failure::input(
                "--layer: --spec writes every layer (pick one with `diffattn stages --layer N`)",
            ));
        }
        return write_spec(&path, &file, &mechanism, &asked, pretty);
    }
    let (Some(layout), Some(measure)) = (&asked.layout, &asked.measure) else {
        return Err(Failure::input(
            "the text must end with the question \"What is the NOUN of NAME?\" (see --help)",
        ));
    };
    let layers = measure.layers.len();
    let at = match layer.as_deref().map(str::parse::<usize>) {
        None => measure.retrieving_layer(),
        Some(Ok(n)) if (1..=layers).contains(&n) => n - 1,
        Some(_) => {
            return Err(Failure::input(format!(
                "--layer: a layer from 1 to {layers}"
            )))
        }
    };
    let shares = |s: &Shares| {
        serde_json::json!({
            "answer_attention": s.answer,
            "noise_attention": s.noise,
            "noise_magnitude": s.noise_magnitude,
            "answer_abs": s.answer_abs,
            "noise_abs": s.noise_abs,
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
        say(&format!("warning: {w}"));
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
        "answer_abs": chosen.answer_abs,
        "noise_abs": chosen.noise_abs,
        "layers": measure.layers.iter().map(shares).collect::<Vec<_>>(),
        "mean_over_layers": shares(&measure.mean()),
        "tokens": asked.tokens,
        "unknown": asked.unknown,
        "answer_tokens": layout.answer_tokens(),
        "question": { "noun": layout.question.key.noun, "name": layout.question.key.name },
        "unknown_keys": asked.unknown_keys,
        "warning": warning,
    });
    write_json("the answer", &json, pretty)
}

/// `--spec FILE`: every layer of the model over the text as one multi-layer spec, to FILE (or
/// standard output for "-"); the text need not hold a question.
fn write_spec(
    path: &Path,
    file: &RetrievalFile,
    name: &str,
    asked: &diffattn::retrieval::Asked,
    pretty: bool,
) -> Result<(), Failure> {
    let specs = layer_specs(&file.model, name, asked);
    let text = layers_json(&specs)
        .to_text(pretty)
        .map_err(|e| Failure::output(e.to_string()))?;
    if path.as_os_str() == "-" {
        return write_stdout("the spec", |out| writeln!(out, "{text}"));
    }
    std::fs::write(path, format!("{text}\n"))
        .map_err(|e| Failure::output(format!("cannot write {}: {e}", path.display())))?;
    say(&format!(
        "{}: {} layers over {} tokens (diffattn stages --layer N {} draws layer N)",
        path.display(),
        specs.len(),
        asked.tokens.len(),
        path.display()
    ));
    Ok(())
}

/// The model of `--weights FILE` (its mechanism is the file's last layer's), or the built-in
/// one of `--mechanism` (diff_transformer by default).
fn load(
    file: Option<PathBuf>,
    mechanism: Option<String>,
) -> Result<(RetrievalFile, String), Failure> {
    let Some(path) = file else {
        let mechanism = mechanism.unwrap_or_else(|| "diff_transformer".to_string());
        let names: Vec<&str> = RETRIEVAL_WEIGHTS.iter().map(|(n, _)| *n).collect();
        let Some(&(_, bytes)) = RETRIEVAL_WEIGHTS.iter().find(|(n, _)| *n == mechanism) else {
            let suggestion = diffattn::names::closest(&mechanism, &names)
                .map(|s| format!(" (did you mean {s}?)"))
                .unwrap_or_default();
            return Err(Failure::input(format!(
                "unknown mechanism {mechanism:?}{suggestion}; choose one of {}",
                names.join(", ")
            )));
        };
        let file = RetrievalFile::from_bytes(bytes).map_err(|e| Failure {
            code: 1,
            message: Some(format!("built-in retrieval weights for {mechanism}: {e}")),
        })?;
        return Ok((file, mechanism));
    };
    let bytes = read_model_file(&path)?;
    let file = RetrievalFile::from_bytes(&bytes)
        .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let mechanism = file
        .model
        .layers
        .last()
        .map_or("", |l| l.mechanism.name())
        .to_string();
    Ok((file, mechanism))
}
