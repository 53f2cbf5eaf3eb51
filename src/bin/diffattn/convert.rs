//! `diffattn convert-bert [--name NAME] [--source TEXT] DIR OUT`: a BERT in Hugging Face's files
//! (`DIR/model.safetensors`, `DIR/config.json`, `DIR/tokenizer.json`) converted to the project's
//! weights file (docs/MODEL.md, "The BERT file"), matrices in half floats. The same files give
//! the same bytes. scripts/fetch-model runs it on the pinned all-MiniLM-L6-v2.

use std::ffi::OsString;
use std::path::PathBuf;

use diffattn::model::bert::{convert, Bert};
use diffattn::text::limits::grouped;

use crate::args::{unknown_option, Arg, Args};
use crate::streams::{say, Failure};

const OPTIONS: &[&str] = &["--name", "--source", "--help"];

/// Runs the command.
pub fn run(args: Vec<OsString>) -> Result<(), Failure> {
    let mut args = Args::new(args);
    let mut name = "bert".to_string();
    let mut source = String::new();
    let mut paths: Vec<PathBuf> = Vec::new();
    while let Some(arg) = args.next_arg() {
        match arg {
            Arg::Option(o) if o == "--name" => name = args.text_value("--name")?,
            Arg::Option(o) if o == "--source" => source = args.text_value("--source")?,
            Arg::Option(o) if o == "-h" || o == "--help" => return crate::help(),
            Arg::Option(o) => return Err(unknown_option(&o, OPTIONS)),
            Arg::Plain(p) => paths.push(p.into()),
        }
    }
    let [dir, out] = &paths[..] else {
        return Err(Failure::input(
            "convert-bert needs DIR (with model.safetensors, config.json, tokenizer.json) and OUT",
        ));
    };
    let read = |file: &str| {
        let path = dir.join(file);
        std::fs::read(&path)
            .map_err(|e| Failure::input(format!("cannot read {}: {e}", path.display())))
    };
    let text = |file: &str| -> Result<String, Failure> {
        String::from_utf8(read(file)?).map_err(|_| Failure::input(format!("{file} is not UTF-8")))
    };
    let parts = convert::from_huggingface(
        &read("model.safetensors")?,
        &text("config.json")?,
        &text("tokenizer.json")?,
        &name,
        &source,
    )
    .map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?;
    let bert = Bert::new(parts).map_err(|e| Failure::input(e.to_string()))?;
    let bytes = bert.to_bytes();
    // Back through the reader before anything is written: the file must load.
    Bert::from_bytes(&bytes).map_err(|e| Failure::input(format!("the converted file: {e}")))?;
    let tmp = out.with_extension("tmp");
    std::fs::write(&tmp, &bytes)
        .and_then(|()| std::fs::rename(&tmp, out))
        .map_err(|e| Failure::output(format!("cannot write {}: {e}", out.display())))?;
    say(&format!(
        "{}: {} bytes ({} layers, {} heads, d = {}, {} word pieces)",
        out.display(),
        grouped(bytes.len()),
        bert.config().layers,
        bert.heads(),
        bert.config().d_model,
        grouped(bert.parts().vocab.len())
    ));
    Ok(())
}
