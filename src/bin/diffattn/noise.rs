//! `diffattn noise [--model FILE] [--query N] [--target N] TEXT`: the noise lesson's figures on
//! the real pretrained model (`diffattn::pretrained::noise`, docs/LESSON.md, "The noise lesson
//! on the real model"), the same function the page's lesson (`?lesson=noise`) calls: for the
//! query token and its target (from 0 among the word pieces; proposed when not given), every
//! layer's and head's share on the target, the sinks and the rest, before and after a
//! difference with a partner head, and after shift-difference, as one JSON object.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use diffattn::model::bert::Encoder;
use diffattn::pretrained::noise::{noise_lesson, propose, query_rows, sink_pieces};

use crate::args::{unknown_option, Arg, Args};
use crate::predict::read_text;
use crate::streams::{write_json, Failure};

const OPTIONS: &[&str] = &["--model", "--query", "--target", "--pretty", "--help"];

/// Runs the command.
pub fn run(args: Vec<OsString>) -> Result<(), Failure> {
    let mut args = Args::new(args);
    let mut model_file: Option<PathBuf> = None;
    let (mut query, mut target) = (None, None);
    let mut pretty = false;
    let mut words: Vec<OsString> = Vec::new();
    let index = |args: &mut Args, o: &str| -> Result<usize, Failure> {
        let v = args.text_value(o)?;
        v.parse()
            .map_err(|_| Failure::input(format!("{o}: a word piece's index from 0, not {v:?}")))
    };
    while let Some(arg) = args.next_arg() {
        match arg {
            Arg::Option(o) if o == "--model" => model_file = Some(args.value("--model")?.into()),
            Arg::Option(o) if o == "--query" => query = Some(index(&mut args, "--query")?),
            Arg::Option(o) if o == "--target" => target = Some(index(&mut args, "--target")?),
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
    let bert = Arc::new(crate::encode::load(model_file.as_deref())?);
    let text = read_text(&words)?;
    let layers = bert.config().layers;
    let mut encoder = Encoder::new(bert);
    let pieces = encoder.set_text(&text).pieces;
    let proposed = propose(&pieces);
    let (Some(query), Some(target)) = (
        query.or(proposed.map(|p| p.0)),
        target.or(proposed.map(|p| p.1)),
    ) else {
        return Err(Failure::input(
            "no query and target to propose (no pronoun after a noun, no retrieval question): \
             give --query N and --target N (word pieces from 0, [CLS] being 0)",
        ));
    };
    while encoder.work(layers - 1) {}
    let rows = query_rows(&encoder, query)
        .ok_or_else(|| {
            Failure::input(format!(
                "--query {query}: the text has {} word pieces",
                pieces.len()
            ))
        })?
        .map_err(|e| Failure::input(e.to_string()))?;
    let lesson = noise_lesson(&rows, query, target, &sink_pieces(&pieces))
        .map_err(|e| Failure::input(e.to_string()))?;
    let json = serde_json::json!({
        "tokens": pieces,
        "proposed": proposed == Some((query, target)),
        "lesson": lesson,
    });
    write_json("the noise lesson", &json, pretty)
}
