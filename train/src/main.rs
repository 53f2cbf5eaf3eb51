//! `diffattn-train`: trains the shipped weights, runs the experiment, or the baseline.

use std::path::PathBuf;
use std::process::ExitCode;

use diffattn::engine::MechanismKind;
use diffattn_train::data::Lang;
use diffattn_train::run::{
    describe, experiment_command, prepare, train_command, ExperimentOptions, TrainOptions,
};
use diffattn_train::train::Budget;

const HELP: &str = "diffattn-train: trains diffattn's sentiment classifiers (docs/MODEL.md).

USAGE
    diffattn-train train [--mechanisms all|M,M..] [--seed N] [--out DIR] [OPTIONS]
        one classifier per mechanism; writes DIR/<mechanism>.bin and DIR/manifest.json
        (default DIR: weights)
    diffattn-train experiment [--seeds 1,2,3] [--out FILE] [OPTIONS]
        every mechanism (and a standard + BiLSTM control) per seed; writes FILE
        (default docs/EXPERIMENT.md)
    diffattn-train baseline [--data DIR]
        bag-of-words logistic regression, test scores per language
    diffattn-train train-retrieval [--retrieval M,M..] [--seed N] [--steps N] [--lengths LO-HI]
        [--out DIR] [--report FILE] one retrieval model per mechanism (standard, diff_transformer, shift_diff,
        diff_transformer_v2), the same data and budget; writes DIR/<mechanism>.bin,
        DIR/manifest.json, DIR/heldout.tsv (default DIR: weights/retrieval) and
        docs/retrieval-results.md (docs/LESSON.md)
    diffattn-train retrieval-report [--out DIR]
        docs/retrieval-results.md again from the files in DIR (default weights/retrieval),
        scored again on the test set and checked against the manifest; no training
    diffattn-train experiment-retrieval --dirs DIR,DIR,.. [--report FILE]
        the experiment's report over seeds (docs/LESSON.md): the models of each DIR (one per
        seed, from train-retrieval --seed N --out DIR) scored again and checked against their
        manifests, mean ± std over the folders (default FILE docs/lesson-results.md)
    diffattn-train data [--data DIR]
        counts of the splits and the vocabulary
    diffattn-train maps [--out DIR]
        SVG figures of the shipped models' maps on a few sentences (default docs/maps),
        and the Markdown that shows them on standard output

OPTIONS
    --data DIR       en.tsv and zh.tsv from scripts/fetch-data (default .data)
    --workers N      training threads (default 2)
    --epochs N       passes over the training data (default 6)

Mechanisms: standard, shift_diff, diff_transformer, input_diff, cosine, local,
diff_transformer_v2, hierarchical.
";

/// glibc's `mallopt`: candle allocates fresh tensors for every operation, and with glibc's
/// defaults each large one is a new `mmap` and each free a `munmap`, so page faults took two
/// thirds of the training time. Keeping freed memory in the heap makes training three times
/// faster. Other platforms keep their allocator's defaults.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed_memory() {
    extern "C" {
        fn mallopt(param: i32, value: i32) -> i32;
    }
    const M_TRIM_THRESHOLD: i32 = -1;
    const M_TOP_PAD: i32 = -2;
    const M_MMAP_THRESHOLD: i32 = -3;
    // SAFETY: mallopt only changes allocator tuning parameters; it is called before any
    // thread starts.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 32 << 20);
        mallopt(M_TRIM_THRESHOLD, 1 << 30);
        mallopt(M_TOP_PAD, 256 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn keep_freed_memory() {}

fn main() -> ExitCode {
    keep_freed_memory();
    // Small matrices: one thread per model is faster than splitting each product, and keeps
    // every run bit-for-bit reproducible. Models train in parallel instead (--workers).
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        std::env::set_var("RAYON_NUM_THREADS", "1");
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("diffattn-train: {e}");
            ExitCode::from(2)
        }
    }
}

fn value<'a>(args: &'a [String], i: &mut usize, flag: &str) -> Result<&'a str, String> {
    *i += 1;
    args.get(*i)
        .map(String::as_str)
        .ok_or_else(|| format!("{flag} needs a value"))
}

fn run(args: &[String]) -> Result<(), String> {
    let Some(command) = args.first() else {
        print!("{HELP}");
        return Ok(());
    };
    let mut data = PathBuf::from(".data");
    let mut out: Option<PathBuf> = None;
    let mut mechanisms: Vec<MechanismKind> = MechanismKind::ALL.to_vec();
    let mut seed = 1u64;
    let mut seeds = vec![1u64, 2, 3];
    let mut workers = 2usize;
    let mut budget = Budget::default();
    let mut steps: Option<usize> = None;
    let mut lr: Option<f64> = None;
    let mut max_facts: Option<usize> = None;
    let mut lengths: Option<(usize, usize)> = None;
    let mut retrieval_kinds: Option<Vec<diffattn_train::retrieval::net::Kind>> = None;
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut report: Option<PathBuf> = None;
    let mut i = 1;
    while i < args.len() {
        let flag = args[i].as_str();
        match flag {
            "--data" => data = value(args, &mut i, flag)?.into(),
            "--out" => out = Some(value(args, &mut i, flag)?.into()),
            "--seed" => seed = parse(value(args, &mut i, flag)?, flag)?,
            "--workers" => workers = parse(value(args, &mut i, flag)?, flag)?,
            "--epochs" => budget.epochs = parse(value(args, &mut i, flag)?, flag)?,
            "--seeds" => {
                seeds = value(args, &mut i, flag)?
                    .split(',')
                    .map(|s| parse(s, flag))
                    .collect::<Result<_, _>>()?
            }
            "--dirs" => {
                dirs = value(args, &mut i, flag)?
                    .split(',')
                    .map(PathBuf::from)
                    .collect()
            }
            "--report" => report = Some(value(args, &mut i, flag)?.into()),
            "--steps" => steps = Some(parse(value(args, &mut i, flag)?, flag)?),
            "--lr" => lr = Some(parse(value(args, &mut i, flag)?, flag)?),
            "--max-facts" => max_facts = Some(parse(value(args, &mut i, flag)?, flag)?),
            "--lengths" => {
                let v = value(args, &mut i, flag)?;
                let (lo, hi) = v.split_once('-').ok_or_else(|| format!("{flag}: LO-HI"))?;
                lengths = Some((parse(lo, flag)?, parse(hi, flag)?));
            }
            "--retrieval" => {
                retrieval_kinds = Some(
                    value(args, &mut i, flag)?
                        .split(',')
                        .map(|k| {
                            diffattn_train::retrieval::net::Kind::from_key(k)
                                .ok_or_else(|| format!("unknown mechanism {k:?}"))
                        })
                        .collect::<Result<_, _>>()?,
                )
            }
            "--mechanisms" => {
                let v = value(args, &mut i, flag)?;
                if v != "all" {
                    mechanisms = v
                        .split(',')
                        .map(|k| {
                            diffattn::names::parse::<MechanismKind>("--mechanisms", k)
                                .map_err(|e| e.to_string())
                        })
                        .collect::<Result<_, _>>()?;
                }
            }
            "-h" | "--help" => {
                print!("{HELP}");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?}; try --help")),
        }
        i += 1;
    }
    match command.as_str() {
        "train" => train_command(&TrainOptions {
            data,
            out: out.unwrap_or_else(|| "weights".into()),
            mechanisms,
            seed,
            workers,
            budget,
        }),
        "experiment" => experiment_command(&ExperimentOptions {
            data,
            out: out.unwrap_or_else(|| "docs/EXPERIMENT.md".into()),
            command: format!(
                "scripts/experiment{}",
                if seeds == [1, 2, 3] {
                    String::new()
                } else {
                    format!(
                        " --seeds {}",
                        seeds
                            .iter()
                            .map(u64::to_string)
                            .collect::<Vec<_>>()
                            .join(",")
                    )
                }
            ),
            seeds,
            workers,
            budget,
        }),
        "baseline" => {
            let p = prepare(&data)?;
            for lang in Lang::ALL {
                let (s, l2) = diffattn_train::baseline::baseline(&p.corpus, lang);
                println!(
                    "{}: accuracy {:.4}, F1 {:.4} on {} test reviews (L2 {l2})",
                    lang.code(),
                    s.accuracy,
                    s.f1,
                    s.n
                );
            }
            Ok(())
        }
        "maps" => {
            let md = diffattn_train::maps::write_figures(
                std::path::Path::new("weights"),
                &out.unwrap_or_else(|| "docs/maps".into()),
            )?;
            print!("{md}");
            Ok(())
        }
        "train-retrieval" => {
            let kinds: Vec<diffattn_train::retrieval::net::Kind> = retrieval_kinds
                .clone()
                .unwrap_or_else(|| diffattn_train::retrieval::net::Kind::ALL.to_vec());
            let mut b = diffattn_train::retrieval::fit::Budget::default();
            if let Some(s) = steps {
                b.steps = s;
            }
            if let Some(lr) = lr {
                b.lr = lr;
            }
            if let Some(f) = max_facts {
                b.max_facts = f;
            }
            if let Some((lo, hi)) = lengths {
                b.lengths = vec![(lo, hi, 1.0)];
            }
            let out = out.unwrap_or_else(|| "weights/retrieval".into());
            let report = report
                .clone()
                .unwrap_or_else(|| PathBuf::from("docs/retrieval-results.md"));
            diffattn_train::retrieval::experiment::train_retrieval(
                &diffattn_train::retrieval::experiment::TrainRetrieval {
                    data: &data,
                    out: &out,
                    report: &report,
                    kinds: &kinds,
                    seed,
                    budget: &b,
                    per_cell: 20,
                    command: format!("scripts/train-retrieval {}", args[1..].join(" "))
                        .trim_end()
                        .to_string(),
                },
            )
        }
        "experiment-retrieval" => diffattn_train::retrieval::experiment::report_from_dirs(
            &data,
            &dirs,
            &report.unwrap_or_else(|| "docs/lesson-results.md".into()),
            &format!(
                "scripts/experiment-retrieval (diffattn-train experiment-retrieval --dirs {})",
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        ),
        "retrieval-report" => diffattn_train::retrieval::experiment::report_from_files(
            &data,
            &out.unwrap_or_else(|| "weights/retrieval".into()),
            std::path::Path::new("docs/retrieval-results.md"),
        ),
        "retrieval-try" => {
            let kinds: Vec<diffattn_train::retrieval::net::Kind> = retrieval_kinds
                .clone()
                .unwrap_or_else(|| diffattn_train::retrieval::net::Kind::ALL.to_vec());
            let mut b = diffattn_train::retrieval::fit::Budget::default();
            if let Some(s) = steps {
                b.steps = s;
            }
            if let Some(lr) = lr {
                b.lr = lr;
            }
            if let Some(f) = max_facts {
                b.max_facts = f;
            }
            if let Some((lo, hi)) = lengths {
                b.lengths = vec![(lo, hi, 1.0)];
            }
            diffattn_train::retrieval::experiment::try_command(&data, &kinds, seed, &b, workers)
        }
        "retrieval-bench" => {
            for kind in diffattn_train::retrieval::net::Kind::ALL {
                diffattn_train::retrieval::experiment::bench(&data, kind)?;
            }
            Ok(())
        }
        "data" => {
            println!("{}", describe(&prepare(&data)?));
            Ok(())
        }
        "-h" | "--help" | "help" => {
            print!("{HELP}");
            Ok(())
        }
        other => Err(format!("unknown command {other:?}; try --help")),
    }
}

fn parse<T: std::str::FromStr>(v: &str, flag: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("{flag}: cannot read {v:?}"))
}
