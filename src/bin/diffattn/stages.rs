//! `diffattn stages [--pretty] [--maps LIST] [--layer N] [FILE]`: a spec in, every stage out
//! (DESIGN.md §6); `--layer N` picks layer N (from 1) of a multi-layer file (§7.11).
//!
//! The spec is parsed as it is read, and the answer written as it is produced: neither is ever
//! held whole as text, so the memory is the engine's arrays, within the limits of
//! `diffattn::text::limits`.

use std::ffi::OsString;
use std::io::BufReader;
use std::path::PathBuf;

use diffattn::engine::StageId;
use diffattn::names::parse;
use diffattn::spec::{parse_spec_reader_layer, write_stages, SpecError, StagesView};

use crate::args::{unknown_option, Arg, Args};
use crate::streams::{open, stdin_unless_terminal, write_stdout, Failure};

const OPTIONS: &[&str] = &["--pretty", "--maps", "--layer", "--help"];

/// Runs the command.
pub fn run(args: Vec<OsString>) -> Result<(), Failure> {
    let mut args = Args::new(args);
    let mut pretty = false;
    let mut maps: Option<Vec<StageId>> = None;
    let mut file: Option<PathBuf> = None;
    let mut layer = 1;
    while let Some(arg) = args.next_arg() {
        match arg {
            Arg::Option(o) if o == "--pretty" => pretty = true,
            Arg::Option(o) if o == "--maps" => {
                maps = Some(stage_list(&args.text_value("--maps")?)?)
            }
            Arg::Option(o) if o == "--layer" => layer = layer_number(&args.text_value("--layer")?)?,
            Arg::Option(o) if o == "-h" || o == "--help" => return crate::help(),
            Arg::Option(o) => return Err(unknown_option(&o, OPTIONS)),
            Arg::Plain(path) if file.is_none() => file = Some(PathBuf::from(path)),
            Arg::Plain(extra) => {
                return Err(Failure::input(format!(
                    "unexpected argument {:?}: give one FILE",
                    extra.to_string_lossy()
                )))
            }
        }
    }
    let spec = match file.filter(|p| p.as_os_str() != "-") {
        Some(path) => parse_spec_reader_layer(BufReader::new(open(&path)?), layer - 1),
        None => parse_spec_reader_layer(
            stdin_unless_terminal(
                "expected a spec on standard input (diffattn stages < spec.json); see --help",
            )?,
            layer - 1,
        ),
    }
    .map(|(spec, _)| spec);
    let stages = spec.and_then(|s| s.run()).map_err(bad_spec)?;
    let view = match &maps {
        None => StagesView::new(&stages),
        Some(maps) => {
            StagesView::with_maps(&stages, maps).map_err(|e| Failure::input(format!("--{e}")))?
        }
    };
    write_stdout("the stages", |out| write_stages(out, &view, pretty))
}

fn bad_spec(e: SpecError) -> Failure {
    if e.field == "layer" {
        return Failure::input(format!("--layer {}", e.message));
    }
    Failure::input(format!("bad spec: {e}"))
}

/// `--layer N`: a whole number from 1.
fn layer_number(text: &str) -> Result<usize, Failure> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(Failure::input(format!(
            "--layer {text:?}: expected a layer number from 1 (the file's first layer)"
        ))),
    }
}

/// `a,d,fused` (or the page's spellings `A,shift,D`) as stages; an unknown name is an error
/// that lists the known ones and the closest.
fn stage_list(list: &str) -> Result<Vec<StageId>, Failure> {
    let mut stages = Vec::new();
    for name in list.split(',').map(str::trim) {
        let stage = parse::<StageId>("--maps", name).map_err(|e| Failure::input(e.to_string()))?;
        if !stages.contains(&stage) {
            stages.push(stage);
        }
    }
    Ok(stages)
}
