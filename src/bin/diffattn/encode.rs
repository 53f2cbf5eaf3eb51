//! `diffattn encode [--model FILE] [--attentions] TEXT`: the real pretrained model
//! (all-MiniLM-L6-v2, docs/MINILM.md) on a text: its word pieces, its normalised sentence
//! embedding and, with `--attentions`, every layer's and head's softmax map, as one JSON object.
//! Without `--model` it reads the file the set-up built (scripts/fetch-model).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use diffattn::model::bert::Bert;
use diffattn::text::limits::grouped;

use crate::args::{unknown_option, Arg, Args};
use crate::predict::read_text;
use crate::streams::{read_model_file, say, write_stdout, Failure};

const OPTIONS: &[&str] = &["--model", "--attentions", "--help"];

/// Where scripts/fetch-model writes the converted model, in this checkout.
pub const DEFAULT_MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/weights/minilm/minilm.bin");

/// Runs the command.
pub fn run(args: Vec<OsString>) -> Result<(), Failure> {
    let mut args = Args::new(args);
    let mut model_file: Option<PathBuf> = None;
    let mut attentions = false;
    let mut words: Vec<OsString> = Vec::new();
    while let Some(arg) = args.next_arg() {
        match arg {
            Arg::Option(o) if o == "--model" => model_file = Some(args.value("--model")?.into()),
            Arg::Option(o) if o == "--attentions" => attentions = true,
            Arg::Option(o) if o == "-h" || o == "--help" => return crate::help(),
            Arg::Option(o) if o == "--" => {
                words.extend(args.rest());
                break;
            }
            Arg::Option(o) => return Err(unknown_option(&o, OPTIONS)),
            Arg::Plain(word) => words.push(word),
        }
    }
    let bert = load(model_file.as_deref())?;
    let text = read_text(&words)?;
    let encoded = bert
        .encode(&text, attentions)
        .map_err(|e| Failure::input(e.to_string()))?;
    if encoded.pieces.truncated {
        say(&format!(
            "the text has more than {} word pieces; only the first {} (with [CLS] and [SEP]) \
             were encoded, the model's positions",
            grouped(bert.config().positions),
            grouped(bert.config().positions)
        ));
    }
    write_stdout("the encoding", |out| {
        write!(out, "{{\"tokens\":")?;
        serde_json::to_writer(&mut *out, &encoded.pieces.pieces)?;
        write!(out, ",\"embedding\":")?;
        serde_json::to_writer(&mut *out, &encoded.forward.embedding)?;
        if attentions {
            // Written cell by cell: at 512 word pieces the maps are 18.9 million numbers, which
            // a JSON value in memory would hold many times over.
            write!(out, ",\"attentions\":[")?;
            for (l, layer) in encoded.forward.layers.iter().enumerate() {
                out.write_all(if l > 0 { b",[" } else { b"[" })?;
                for (h, map) in layer.attention.outer_iter().enumerate() {
                    out.write_all(if h > 0 { b",[" } else { b"[" })?;
                    for (q, row) in map.outer_iter().enumerate() {
                        out.write_all(if q > 0 { b",[" } else { b"[" })?;
                        for (k, v) in row.iter().enumerate() {
                            if k > 0 {
                                out.write_all(b",")?;
                            }
                            serde_json::to_writer(&mut *out, v)?;
                        }
                        out.write_all(b"]")?;
                    }
                    out.write_all(b"]")?;
                }
                out.write_all(b"]")?;
            }
            out.write_all(b"]")?;
        }
        writeln!(out, "}}")
    })
}

/// The model of `--model FILE`, or the one the set-up built; a missing default says how to
/// build it.
pub fn load(file: Option<&Path>) -> Result<Bert, Failure> {
    let path = file.unwrap_or(Path::new(DEFAULT_MODEL));
    if file.is_none() && !path.exists() {
        return Err(Failure::input(format!(
            "no model at {}: the set-up builds it (scripts/setup, or scripts/fetch-model \
             alone), or give one with --model FILE",
            path.display()
        )));
    }
    let bytes = read_model_file(path)?;
    Bert::from_bytes(&bytes).map_err(|e| Failure::input(format!("{}: {e}", path.display())))
}
