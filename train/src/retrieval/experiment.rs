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
    let net = Net::new(Config::new(kind, data.vocab.len()), data.classes.clone(), 1).map_err(|e| e.to_string())?;
    for len in [64usize, 128, 256, 512] {
        let set = fixed_set(&data, Split::Train, &[len], 6, 1);
        let take = (6_000_000 / (4 * len * len)).clamp(1, 32);
        let rows: Vec<Vec<u32>> = set.iter().take(take).map(|e| encoder.ids(&e.tokens)).collect();
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
    fixed_set(data, Split::Test, &TEST_LENGTHS, per_cell, 0x0007_e57)
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
            let f = o.net.forward(&ids_tensor(&rows, o.net.device()).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
            let mut out = format!("{}\n", e.text);
            let mut queries: Vec<usize> = layout.facts.iter().map(|f| f.number_at).collect();
            queries.push(layout.question.last);
            for (li, m) in f.maps.iter().enumerate() {
                let m = m.squeeze(1).map_err(|e| e.to_string())?.to_vec3::<f32>().map_err(|e| e.to_string())?;
                for &q in &queries {
                    for (h, map) in m.iter().enumerate() {
                        let mut row: Vec<(usize, f32)> = map[q].iter().copied().enumerate().collect();
                        row.sort_by(|a, b| b.1.total_cmp(&a.1));
                        let top: Vec<String> = row.iter().take(3).map(|(j, v)| format!("{}@{}:{:.2}", e.tokens[*j], *j as i64 - q as i64, v)).collect();
                        out += &format!("layer {li} query {}@{q} head {h}: {}\n", e.tokens[q], top.join(" "));
                    }
                }
            }
            eprintln!("{out}");
        }
        let by_facts_seen: Vec<String> = (1..=6)
            .map(|k| {
                let (n, r) = seen.iter().zip(&train_keys).filter(|(e, _)| e.facts == k).fold(
                    (0, 0),
                    |(n, r), (e, q)| (n + 1, r + usize::from(e.answer == q.0)),
                );
                format!("{:.2}", r as f64 / n.max(1) as f64)
            })
            .collect();
        let p = super::fit::predict(&o.net, &encoder, &test).map_err(|e| e.to_string())?;
        let cell = |f: &dyn Fn(&super::data::Example) -> bool| {
            let (n, r) = test.iter().zip(&p).filter(|(e, _)| f(e)).fold((0, 0), |(n, r), (e, q)| {
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
