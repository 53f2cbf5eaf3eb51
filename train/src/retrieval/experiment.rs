//! The retrieval commands: `train-retrieval` (the shipped models) and `experiment-retrieval`
//! (every mechanism over several seeds, written to docs/LESSON.md).

use std::path::Path;
use std::time::Instant;

use candle_core::Tensor;

use super::data::TaskData;
use super::fit::{fixed_set, Budget, Encoder};
use super::net::{ids_tensor, Config, Kind, Net};
use crate::data::Split;

/// Times forward + backward steps at a few lengths (for choosing the budget).
pub fn bench(dir: &Path, kind: Kind) -> Result<(), String> {
    let data = TaskData::load(dir)?;
    let encoder = Encoder::new(&data.vocab);
    let net = Net::new(Config::new(kind, data.vocab.len()), data.classes.clone(), 1)
        .map_err(|e| e.to_string())?;
    for len in [64usize, 128, 256, 512] {
        let set = fixed_set(&data, Split::Train, &[len], 6, 1);
        let take = (6_000_000 / (4 * len * len)).clamp(1, 32);
        let rows: Vec<Vec<u32>> = set
            .iter()
            .take(take)
            .map(|e| encoder.ids(&e.tokens))
            .collect();
        let labels: Vec<u32> = set.iter().take(take).map(|e| u32::from(e.answer)).collect();
        let run = || -> candle_core::Result<()> {
            let ids = ids_tensor(&rows, net.device())?;
            let labels = Tensor::from_vec(labels.clone(), labels.len(), net.device())?;
            let logits = net.forward(&ids)?.logits;
            let loss = candle_nn::loss::cross_entropy(&logits, &labels)?;
            loss.backward()?;
            Ok(())
        };
        run().map_err(|e| e.to_string())?;
        let start = Instant::now();
        for _ in 0..3 {
            run().map_err(|e| e.to_string())?;
        }
        eprintln!(
            "{} L = {len}: {:.3} s per step of {} contexts",
            kind.key(),
            start.elapsed().as_secs_f64() / 3.0,
            rows.len()
        );
    }
    let _ = Budget::default();
    Ok(())
}

/// The fixed validation set: validation keys and fillers, every number of facts at three
/// lengths, 15 contexts each (270).
pub fn validation_set(data: &TaskData) -> Vec<super::data::Example> {
    fixed_set(data, Split::Validation, &[64, 160, 320], 15, 0x0005_a11d)
}

/// The lengths of the test set.
pub const TEST_LENGTHS: [usize; 4] = [64, 128, 256, 512];

/// The fixed test set: test keys and fillers, every number of facts at every length of
/// [`TEST_LENGTHS`], `per_cell` contexts each.
pub fn test_set(data: &TaskData, per_cell: usize) -> Vec<super::data::Example> {
    fixed_set(data, Split::Test, &TEST_LENGTHS, per_cell, 0x7e57)
}

/// Trains `kinds` from `seed` and prints test accuracy by number of facts and by length.
pub fn try_command(
    dir: &Path,
    kinds: &[Kind],
    seed: u64,
    budget: &Budget,
    workers: usize,
) -> Result<(), String> {
    let data = TaskData::load(dir)?;
    eprintln!(
        "vocabulary {}; train {} names, {} nouns, {} own fillers, {} snippets; test {} names, {} nouns, {} own fillers, {} snippets",
        data.vocab.len(),
        data.train.names.len(),
        data.train.nouns.len(),
        data.train.own.len(),
        data.train.snippets.len(),
        data.test.names.len(),
        data.test.nouns.len(),
        data.test.own.len(),
        data.test.snippets.len()
    );
    let validation = validation_set(&data);
    let test = test_set(&data, 20);
    let seen = fixed_set(&data, Split::Train, &TEST_LENGTHS, 20, 0x5ee);
    let encoder = Encoder::new(&data.vocab);
    let results = crate::run::parallel(kinds, workers, |&kind| -> Result<String, String> {
        let mut log = |l: String| eprintln!("{l}");
        let config = Config::new(kind, data.vocab.len());
        let o = super::fit::train(config, &data, &validation, seed, budget, &mut log)
            .map_err(|e| e.to_string())?;
        let train_keys = super::fit::predict(&o.net, &encoder, &seen).map_err(|e| e.to_string())?;
        {
            let mut g = super::data::Generator::new(&data.train, 99);
            let e = g.example(40, 3);
            let layout = diffattn::retrieval::Layout::read(&e.tokens).expect("layout");
            let rows = vec![encoder.ids(&e.tokens)];
            let f = o
                .net
                .forward(&ids_tensor(&rows, o.net.device()).map_err(|e| e.to_string())?)
                .map_err(|e| e.to_string())?;
            let mut out = format!("{}\n", e.text);
            let mut queries: Vec<usize> = layout.facts.iter().map(|f| f.number_at).collect();
            queries.push(layout.question.last);
            for (li, m) in f.maps.iter().enumerate() {
                let m = m
                    .squeeze(1)
                    .map_err(|e| e.to_string())?
                    .to_vec3::<f32>()
                    .map_err(|e| e.to_string())?;
                for &q in &queries {
                    for (h, map) in m.iter().enumerate() {
                        let mut row: Vec<(usize, f32)> =
                            map[q].iter().copied().enumerate().collect();
                        row.sort_by(|a, b| b.1.total_cmp(&a.1));
                        let top: Vec<String> = row
                            .iter()
                            .take(3)
                            .map(|(j, v)| {
                                format!("{}@{}:{:.2}", e.tokens[*j], *j as i64 - q as i64, v)
                            })
                            .collect();
                        out += &format!(
                            "layer {li} query {}@{q} head {h}: {}\n",
                            e.tokens[q],
                            top.join(" ")
                        );
                    }
                }
            }
            eprintln!("{out}");
        }
        let by_facts_seen: Vec<String> = (1..=6)
            .map(|k| {
                let (n, r) = seen
                    .iter()
                    .zip(&train_keys)
                    .filter(|(e, _)| e.facts == k)
                    .fold((0, 0), |(n, r), (e, q)| {
                        (n + 1, r + usize::from(e.answer == q.0))
                    });
                format!("{:.2}", r as f64 / n.max(1) as f64)
            })
            .collect();
        let p = super::fit::predict(&o.net, &encoder, &test).map_err(|e| e.to_string())?;
        let cell = |f: &dyn Fn(&super::data::Example) -> bool| {
            let (n, r) = test
                .iter()
                .zip(&p)
                .filter(|(e, _)| f(e))
                .fold((0, 0), |(n, r), (e, q)| {
                    (n + 1, r + usize::from(e.answer == q.0))
                });
            format!("{:.3}", r as f64 / n.max(1) as f64)
        };
        let facts: Vec<String> = (1..=6).map(|k| cell(&|e| e.facts == k)).collect();
        let lens: Vec<String> = TEST_LENGTHS
            .iter()
            .map(|&l| cell(&|e| e.tokens.len() == l))
            .collect();
        Ok(format!(
            "{}: best step {} (validation {:.3}), {:.0} s; test {} | by facts {} | by length {} | training keys by facts {} | {}",
            kind.key(),
            o.best_step,
            o.validation,
            o.seconds,
            cell(&|_| true),
            facts.join(" "),
            lens.join(" "),
            by_facts_seen.join(" "),
            o.net.describe().map_err(|e| e.to_string())?
        ))
    });
    for r in results {
        println!("{}", r?);
    }
    Ok(())
}

/// The file of held-out contexts the engine's tests read back (`weights/retrieval/heldout.tsv`):
/// test keys and fillers, every number of facts at 64 and 128 tokens, 5 contexts each (60).
pub fn heldout_file_set(data: &TaskData) -> Vec<super::data::Example> {
    fixed_set(data, Split::Test, &[64, 128], 5, 0x000b_00c5)
}

/// `answer<TAB>facts<TAB>text`, one line per context, after a comment line.
pub fn heldout_tsv(examples: &[super::data::Example]) -> String {
    let mut s = String::from(
        "# answer\tfacts\ttext: held-out contexts (test names, nouns and fillers) written by diffattn-train train-retrieval\n",
    );
    for e in examples {
        s += &format!("{}\t{}\t{}\n", e.answer, e.facts, e.text);
    }
    s
}

/// What `train-retrieval` needs.
pub struct TrainRetrieval<'a> {
    /// `en.tsv`'s directory.
    pub data: &'a Path,
    /// Where the weights go (`weights/retrieval`).
    pub out: &'a Path,
    /// Where the generated results go (`docs/retrieval-results.md`).
    pub report: &'a Path,
    /// The mechanisms.
    pub kinds: &'a [Kind],
    /// The seed (the same for every mechanism: same data, same order).
    pub seed: u64,
    /// The budget (the same for every mechanism).
    pub budget: &'a Budget,
    /// Contexts per cell of the test set.
    pub per_cell: usize,
    /// The command line that reruns this, recorded in the manifest and the report.
    pub command: String,
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Trains one model per mechanism on the same data and budget, one after the other on one
/// thread; scores each on the held-out test set (accuracy and the lesson's measure); writes
/// `out/<mechanism>.bin`, `out/manifest.json`, `out/heldout.tsv` and the report.
pub fn train_retrieval(o: &TrainRetrieval<'_>) -> Result<(), String> {
    use serde_json::json;
    let start = Instant::now();
    let data = TaskData::load(o.data)?;
    let validation = validation_set(&data);
    let test = test_set(&data, o.per_cell);
    let heldout = heldout_file_set(&data);
    let encoder = Encoder::new(&data.vocab);
    let classes = super::data::class_names();
    std::fs::create_dir_all(o.out).map_err(err)?;
    let mut runs = Vec::new();
    let mut entries = Vec::new();
    for &kind in o.kinds {
        let mut log = |l: String| eprintln!("{l}");
        let config = Config::new(kind, data.vocab.len());
        let outcome = super::fit::train(config, &data, &validation, o.seed, o.budget, &mut log)
            .map_err(err)?;
        let scored = super::fit::score(&outcome.net, &encoder, &test).map_err(err)?;
        let on_file = super::fit::predict(&outcome.net, &encoder, &heldout).map_err(err)?;
        let file_right = heldout
            .iter()
            .zip(&on_file)
            .filter(|(e, (n, _))| e.answer == *n)
            .count();
        let params = outcome.net.describe().map_err(err)?;
        let run = super::report::Run {
            kind,
            seed: o.seed,
            best_step: outcome.best_step,
            validation: outcome.validation,
            seconds: outcome.seconds,
            params: params.clone(),
            scored,
        };
        let all = super::report::cell(&run, &test, super::report::Which::Retrieving, &|_| true);
        let mean = super::report::cell(&run, &test, super::report::Which::Mean, &|_| true);
        let by_facts: Vec<f64> = (1..=super::data::MAX_FACTS)
            .map(|f| {
                super::report::cell(&run, &test, super::report::Which::Retrieving, &|e| {
                    e.facts == f
                })
                .accuracy
            })
            .collect();
        let r4 = |x: f64| (x * 1e4).round() / 1e4;
        let info = json!({
            "seed": o.seed,
            "steps": o.budget.steps,
            "best_step": outcome.best_step,
            "validation_accuracy": r4(outcome.validation),
            "test_accuracy": r4(all.accuracy),
            "test_n": all.n,
            "heldout_file": "heldout.tsv",
            "heldout_file_right": file_right,
            "heldout_file_n": heldout.len(),
            "command": o.command,
        });
        let file = outcome
            .net
            .to_file(&data.vocab, &classes, info)
            .map_err(err)?;
        let bytes = file.to_bytes();
        let name = format!("{}.bin", kind.key());
        std::fs::write(o.out.join(&name), &bytes).map_err(err)?;
        entries.push(json!({
            "mechanism": kind.key(),
            "file": name,
            "bytes": bytes.len(),
            "layers": file.model.layers.iter().map(|l| json!({
                "mechanism": l.mechanism.name(),
                "heads": l.heads,
            })).collect::<Vec<_>>(),
            "best_step": outcome.best_step,
            "seconds": outcome.seconds.round(),
            "trained": params,
            "test": {
                "n": all.n,
                "accuracy": r4(all.accuracy),
                "accuracy_by_facts": by_facts.iter().map(|&a| r4(a)).collect::<Vec<_>>(),
                "retrieving_layer": { "answer": r4(all.shares.answer), "noise": r4(all.shares.noise), "noise_magnitude": r4(all.shares.noise_magnitude) },
                "mean_over_layers": { "answer": r4(mean.shares.answer), "noise": r4(mean.shares.noise), "noise_magnitude": r4(mean.shares.noise_magnitude) },
            },
            "heldout_file": { "right": file_right, "n": heldout.len() },
        }));
        eprintln!(
            "{}: test {:.3} (n {}), answer {:.3} noise {:.3} (retrieving layer), {:.0} s",
            kind.key(),
            all.accuracy,
            all.n,
            all.shares.answer,
            all.shares.noise,
            outcome.seconds
        );
        runs.push(run);
    }
    std::fs::write(o.out.join("heldout.tsv"), heldout_tsv(&heldout)).map_err(err)?;
    let manifest = json!({
        "task": "retrieval",
        "format_version": diffattn::model::FORMAT_VERSION,
        "command": o.command,
        "seed": o.seed,
        "budget": {
            "steps": o.budget.steps,
            "batch": o.budget.batch,
            "lr": o.budget.lr,
            "lengths": o.budget.lengths.iter().map(|l| json!([l.0, l.1, l.2])).collect::<Vec<_>>(),
            "max_facts": o.budget.max_facts,
        },
        "test_set": { "lengths": TEST_LENGTHS, "per_cell": o.per_cell, "facts": [1, 2, 3, 4, 5, 6] },
        "models": entries,
    });
    let text = serde_json::to_string_pretty(&manifest).map_err(err)? + "\n";
    std::fs::write(o.out.join("manifest.json"), text).map_err(err)?;
    let example = test
        .iter()
        .find(|e| e.tokens.len() == 64 && e.facts == 3)
        .map_or(String::new(), |e| e.text.clone());
    let ctx = super::report::Context {
        command: &o.command,
        seeds: &[o.seed],
        data: format!(
            "Vocabulary {} tokens; training keys {} names and {} nouns, test keys {} names and {} nouns (none shared); {} test contexts.",
            data.vocab.len(),
            data.train.names.len(),
            data.train.nouns.len(),
            data.test.names.len(),
            data.test.nouns.len(),
            test.len()
        ),
        budget: format!(
            "Budget, the same for every mechanism: {} steps of {} contexts, lengths {:?}, peak learning rate {}.",
            o.budget.steps, o.budget.batch, o.budget.lengths, o.budget.lr
        ),
        example,
        seconds: start.elapsed().as_secs_f64(),
        lengths: &TEST_LENGTHS,
    };
    let md = super::report::lesson(&ctx, &runs, &test);
    std::fs::write(o.report, md).map_err(err)?;
    Ok(())
}

/// Rewrites the report from the shipped files alone (no training): every model of
/// `dir/manifest.json` read from its file, scored again on the test set, checked against the
/// accuracy the manifest recorded, and the report written to `report`.
pub fn report_from_files(data_dir: &Path, dir: &Path, report: &Path) -> Result<(), String> {
    let start = Instant::now();
    let data = TaskData::load(data_dir)?;
    let text = std::fs::read_to_string(dir.join("manifest.json")).map_err(err)?;
    let manifest: serde_json::Value = serde_json::from_str(&text).map_err(err)?;
    let per_cell = manifest["test_set"]["per_cell"].as_u64().unwrap_or(20) as usize;
    let test = test_set(&data, per_cell);
    let mut runs = Vec::new();
    for entry in manifest["models"].as_array().ok_or("manifest: no models")? {
        let key = entry["mechanism"]
            .as_str()
            .ok_or("manifest: a model without mechanism")?;
        let kind = Kind::from_key(key).ok_or_else(|| format!("unknown mechanism {key}"))?;
        let file_name = entry["file"].as_str().ok_or("manifest: no file")?;
        let bytes = std::fs::read(dir.join(file_name)).map_err(err)?;
        let file = diffattn::model::RetrievalFile::from_bytes(&bytes).map_err(err)?;
        let net = Net::from_file(&file).map_err(err)?;
        let encoder = Encoder::new(file.model.table.tokens());
        let scored = super::fit::score(&net, &encoder, &test).map_err(err)?;
        let run = super::report::Run {
            kind,
            seed: file.info["seed"].as_u64().unwrap_or(0),
            best_step: entry["best_step"].as_u64().unwrap_or(0) as usize,
            validation: file.info["validation_accuracy"]
                .as_f64()
                .unwrap_or(f64::NAN),
            seconds: entry["seconds"].as_f64().unwrap_or(f64::NAN),
            params: entry["trained"].as_str().unwrap_or("").to_string(),
            scored,
        };
        let all = super::report::cell(&run, &test, super::report::Which::Retrieving, &|_| true);
        let claimed = entry["test"]["accuracy"].as_f64().unwrap_or(f64::NAN);
        if ((all.accuracy * 1e4).round() / 1e4 - claimed).abs() > 1e-9 {
            return Err(format!(
                "{key}: the file scores {:.4} on the test set, the manifest says {claimed}",
                all.accuracy
            ));
        }
        eprintln!("{key}: test {:.4} as the manifest says", all.accuracy);
        runs.push(run);
    }
    let seed = runs.first().map_or(0, |r| r.seed);
    let steps = manifest["budget"]["steps"].as_u64().unwrap_or(0);
    let example = test
        .iter()
        .find(|e| e.tokens.len() == 64 && e.facts == 3)
        .map_or(String::new(), |e| e.text.clone());
    let command = manifest["command"].as_str().unwrap_or("").to_string();
    let ctx = super::report::Context {
        command: &command,
        seeds: &[seed],
        data: format!(
            "Vocabulary {} tokens; training keys {} names and {} nouns, test keys {} names and {} nouns (none shared); {} test contexts (test names, nouns and fillers), {per_cell} per number of facts and length.",
            data.vocab.len(),
            data.train.names.len(),
            data.train.nouns.len(),
            data.test.names.len(),
            data.test.nouns.len(),
            test.len()
        ),
        budget: format!(
            "Budget, the same for every mechanism: {steps} steps of {} contexts, lengths {}, peak learning rate {}. Scored again from the shipped files by `diffattn-train retrieval-report` ({:.0} s).",
            manifest["budget"]["batch"],
            manifest["budget"]["lengths"],
            manifest["budget"]["lr"],
            start.elapsed().as_secs_f64()
        ),
        example,
        seconds: runs.iter().map(|r| r.seconds).sum(),
        lengths: &TEST_LENGTHS,
    };
    std::fs::write(report, super::report::lesson(&ctx, &runs, &test)).map_err(err)?;
    Ok(())
}
