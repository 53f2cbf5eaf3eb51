//! `diffattn bench`: the engine's own timing of one full attention layer on this machine
//! (`diffattn::bench`), so anyone can compare with the figures of docs/PERFORMANCE.md.

use std::process::ExitCode;
use std::time::Instant;

use diffattn::bench::{median, quantile, time_layer, LayerBench, LayerTimings};
use diffattn::engine::{kernels, MechanismKind};

pub const HELP: &str = r#"diffattn bench: the engine's timing of one full attention layer.

USAGE
    diffattn bench [--tokens L] [--heads H] [--mechanism M] [--reps N] [--warmup-ms T]
                   [--portable] [--json]

One layer is every stage and the output: Q, K, V; every head's maps; the shift stages
(shift_diff); concat(A'·V)·W_oᵀ. The untrained model (d = 64), L seeded vectors, no mask,
the page's default parameters. Prints the median over N repetitions (after one untimed
layer) as layer_ms, and each stage's median.

    --tokens L      sentence length (default 512)
    --heads H       heads, a divisor of 64 (diff heads for diff_transformer: of 32); default 8
    --mechanism M   shift_diff (default), standard, diff_transformer, input_diff, cosine, local
    --reps N        repetitions (default: about 2 s of layers, between 5 and 100)
    --warmup-ms T   untimed layers first for T ms, at least one (default 50; 0 for exactly
                    one, as under callgrind)
    --portable      run the scalar kernels instead of the SIMD ones (the same bits)
    --json          one JSON object instead of text
"#;

struct Options {
    tokens: usize,
    heads: usize,
    mechanism: MechanismKind,
    reps: Option<usize>,
    warmup_ms: f64,
    portable: bool,
    json: bool,
}

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        tokens: 512,
        heads: 8,
        mechanism: MechanismKind::ShiftDiff,
        reps: None,
        warmup_ms: 50.0,
        portable: false,
        json: false,
    };
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        let mut value = || {
            i += 1;
            args.get(i)
                .map(String::as_str)
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        let count = |v: &str| -> Result<usize, String> {
            match v.parse::<usize>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!("{flag}: expected a positive integer, found {v:?}")),
            }
        };
        match flag {
            "--tokens" => o.tokens = count(value()?)?,
            "--heads" => o.heads = count(value()?)?,
            "--reps" => o.reps = Some(count(value()?)?),
            "--warmup-ms" => {
                let v = value()?;
                o.warmup_ms = match v.parse::<f64>() {
                    Ok(t) if t.is_finite() && t >= 0.0 => t,
                    _ => {
                        return Err(format!(
                            "--warmup-ms: expected a duration in ms, found {v:?}"
                        ))
                    }
                };
            }
            "--mechanism" => {
                let name = value()?;
                o.mechanism = MechanismKind::ALL
                    .into_iter()
                    .find(|k| k.key() == name)
                    .ok_or_else(|| {
                        let names: Vec<_> = MechanismKind::ALL.iter().map(|k| k.key()).collect();
                        format!(
                            "unknown mechanism {name:?}; choose one of {}",
                            names.join(", ")
                        )
                    })?;
            }
            "--portable" => o.portable = true,
            "--json" => o.json = true,
            "-h" | "--help" => return Ok(None),
            other => {
                return Err(format!(
                    "unknown option {other:?}; try `diffattn bench --help`"
                ))
            }
        }
        i += 1;
    }
    Ok(Some(o))
}

/// Runs `diffattn bench` with the arguments after `bench`.
pub fn main(args: &[String]) -> ExitCode {
    let o = match parse(args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("diffattn: {message}");
            return ExitCode::from(2);
        }
    };
    kernels::force_portable(o.portable);
    let start = Instant::now();
    let now_ms = || start.elapsed().as_secs_f64() * 1e3;
    let mut bench = LayerBench {
        tokens: o.tokens,
        heads: o.heads,
        mechanism: o.mechanism,
        reps: 1,
        clock_resolution_ms: 0.0,
        warmup_ms: 0.0,
    };
    let reps = match o.reps {
        Some(n) => n,
        None => {
            // One layer to size the run: about 2 s of samples.
            let probe = match time_layer(&bench, &now_ms) {
                Ok(t) => t.layer_ms[0],
                Err(e) => return fail(&e.to_string()),
            };
            ((2000.0 / probe.max(1e-3)) as usize).clamp(5, 100)
        }
    };
    bench.reps = reps;
    // A few layers untimed: caches, the allocator and the page tables settle.
    bench.warmup_ms = o.warmup_ms;
    let t = match time_layer(&bench, &now_ms) {
        Ok(t) => t,
        Err(e) => return fail(&e.to_string()),
    };
    if o.json {
        println!("{}", json(&o, reps, &t));
    } else {
        print!("{}", text(&o, reps, &t));
    }
    ExitCode::SUCCESS
}

fn fail(message: &str) -> ExitCode {
    eprintln!("diffattn: {message}");
    ExitCode::from(2)
}

fn stages(t: &LayerTimings) -> [(&'static str, &[f64]); 4] {
    [
        ("projection_ms", &t.projection_ms),
        ("maps_ms", &t.maps_ms),
        ("shift_ms", &t.shift_ms),
        ("output_ms", &t.output_ms),
    ]
}

fn text(o: &Options, reps: usize, t: &LayerTimings) -> String {
    let mut s = format!(
        "diffattn bench: {}, {} tokens, {} heads, d = 64, untrained model, {} kernels; \
         median of {reps} layers\n",
        o.mechanism.key(),
        o.tokens,
        o.heads,
        kernels::active_path(),
    );
    s += &format!(
        "layer_ms {:.4} (p95 {:.4})\n",
        median(&t.layer_ms),
        quantile(&t.layer_ms, 0.95)
    );
    for (name, v) in stages(t) {
        s += &format!("  {name} {:.4}\n", median(v));
    }
    s
}

fn json(o: &Options, reps: usize, t: &LayerTimings) -> String {
    let mut v = serde_json::json!({
        "mechanism": o.mechanism.key(),
        "tokens": o.tokens,
        "heads": o.heads,
        "d_model": 64,
        "kernels": kernels::active_path(),
        "reps": reps,
        "layer_ms": median(&t.layer_ms),
        "layer_ms_p95": quantile(&t.layer_ms, 0.95),
    });
    for (name, samples) in stages(t) {
        v[name] = serde_json::json!(median(samples));
    }
    v["samples"] = serde_json::json!({
        "layer_ms": t.layer_ms,
        "projection_ms": t.projection_ms,
        "maps_ms": t.maps_ms,
        "shift_ms": t.shift_ms,
        "output_ms": t.output_ms,
    });
    v.to_string()
}
