//! `diffattn bench-bert [--model FILE] [--pieces 16,128,512] [--reps N] TEXTFILE`: the real
//! model's whole forward pass timed on this machine (embeddings, six layers, pooling), at each
//! length the first pieces of TEXTFILE's text cut as the tokenizer cuts it, one thread.
//! scripts/bench-minilm runs it beside PyTorch on the same pieces (docs/PERFORMANCE.md).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Instant;

use diffattn::bench::{median, quantile};

use crate::args::{unknown_option, Arg, Args};
use crate::encode::load;
use crate::streams::{write_json, Failure};

const OPTIONS: &[&str] = &["--model", "--pieces", "--reps", "--help"];

/// Runs the command: one JSON object, `{"kernels", "results": [{"pieces", "reps",
/// "forward_ms": {"median", "p95"}}]}`.
pub fn run(args: Vec<OsString>) -> Result<(), Failure> {
    let mut args = Args::new(args);
    let mut model: Option<PathBuf> = None;
    let mut pieces = vec![16usize, 128, 512];
    let mut reps: Option<usize> = None;
    let mut text_file: Option<PathBuf> = None;
    while let Some(arg) = args.next_arg() {
        match arg {
            Arg::Option(o) if o == "--model" => model = Some(args.value("--model")?.into()),
            Arg::Option(o) if o == "--pieces" => {
                let list = args.text_value("--pieces")?;
                pieces = list
                    .split(',')
                    .map(|n| n.trim().parse::<usize>().ok().filter(|&n| n >= 2))
                    .collect::<Option<_>>()
                    .ok_or_else(|| Failure::input(format!("--pieces {list:?}: counts >= 2")))?;
            }
            Arg::Option(o) if o == "--reps" => {
                let n = args.text_value("--reps")?;
                reps = Some(n.parse().map_err(|_| Failure::input("--reps: a count"))?);
            }
            Arg::Option(o) if o == "-h" || o == "--help" => return crate::help(),
            Arg::Option(o) => return Err(unknown_option(&o, OPTIONS)),
            Arg::Plain(p) => text_file = Some(p.into()),
        }
    }
    let text_file = text_file.ok_or_else(|| Failure::input("bench-bert needs a TEXTFILE"))?;
    let text = std::fs::read_to_string(&text_file)
        .map_err(|e| Failure::input(format!("cannot read {}: {e}", text_file.display())))?;
    let bert = load(model.as_deref())?;
    let mut results = Vec::new();
    for &n in &pieces {
        let p = bert.tokenizer().encode(&text, n);
        if p.ids.len() != n {
            return Err(Failure::input(format!(
                "the text has {} pieces, fewer than {n}",
                p.ids.len()
            )));
        }
        let forward = || {
            bert.forward(&p.ids, false)
                .map_err(|e| Failure::input(e.to_string()))
        };
        forward()?;
        // About two seconds of passes, between 5 and 200, unless given.
        let start = Instant::now();
        forward()?;
        let once = start.elapsed().as_secs_f64();
        let reps = reps.unwrap_or(((2.0 / once) as usize).clamp(5, 200));
        let mut ms = Vec::with_capacity(reps);
        for _ in 0..reps {
            let start = Instant::now();
            forward()?;
            ms.push(start.elapsed().as_secs_f64() * 1e3);
        }
        results.push(serde_json::json!({
            "pieces": n,
            "reps": reps,
            "forward_ms": {"median": median(&ms), "p95": quantile(&ms, 0.95)},
        }));
    }
    let json = serde_json::json!({
        "kernels": diffattn::engine::kernels::active_path(),
        "results": results,
    });
    write_json("the timings", &json, true)
}
