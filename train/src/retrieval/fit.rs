//! Training and scoring the retrieval models: AdamW on cross-entropy over the 100 numbers, a
//! fresh seeded batch every step, the checkpoint with the best validation accuracy kept.

use std::collections::HashMap;
use std::time::Instant;

use candle_core::{Result, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

use super::data::{Example, Generator, TaskData, Training, MAX_FACTS};
use super::net::{ids_tensor, Config, Kind, Net};
use crate::data::Split;

/// The budget, the same for every mechanism.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Optimiser steps.
    pub steps: usize,
    /// Contexts per step (all of one length).
    pub batch: usize,
    /// The peak learning rate, reached after `warmup` steps, then decaying linearly to a tenth.
    pub lr: f64,
    /// Steps of linear warm-up.
    pub warmup: usize,
    /// AdamW's decoupled weight decay.
    pub weight_decay: f64,
    /// Gradients are scaled down to this global norm when larger.
    pub clip: f64,
    /// Validation every this many steps.
    pub eval_every: usize,
    /// The context lengths a step draws from, with their weights.
    pub lengths: Vec<(usize, usize, f64)>,
    /// The most facts in a training context.
    pub max_facts: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            steps: 6_000,
            batch: 32,
            lr: 3e-3,
            warmup: 200,
            weight_decay: 0.01,
            clip: 1.0,
            eval_every: 500,
            // (shortest, longest, weight): most contexts short and cheap; one in ten up to
            // the page's 512 tokens.
            lengths: vec![(28, 128, 0.9), (129, 512, 0.1)],
            max_facts: MAX_FACTS,
        }
    }
}

/// Token ids through a vocabulary, 0 for `<unk>`.
pub struct Encoder {
    index: HashMap<String, u32>,
}

impl Encoder {
    /// An encoder for `vocab` (row order).
    pub fn new(vocab: &[String]) -> Encoder {
        Encoder {
            index: vocab
                .iter()
                .enumerate()
                .map(|(i, t)| (t.clone(), i as u32))
                .collect(),
        }
    }

    /// The ids of `tokens`.
    pub fn ids(&self, tokens: &[String]) -> Vec<u32> {
        tokens
            .iter()
            .map(|t| self.index.get(t).copied().unwrap_or(0))
            .collect()
    }
}

/// A fixed set of contexts: every number of facts at each of `lengths`, `per_cell` each, from
/// `split`'s keys and fillers, generated from `seed`.
pub fn fixed_set(
    data: &TaskData,
    split: Split,
    lengths: &[usize],
    per_cell: usize,
    seed: u64,
) -> Vec<Example> {
    let mut g = Generator::new(data.pool(split), seed);
    let mut out = Vec::new();
    for &len in lengths {
        for facts in 1..=MAX_FACTS {
            if len < Generator::min_len(facts) {
                continue;
            }
            for _ in 0..per_cell {
                out.push(g.example(len, facts));
            }
        }
    }
    out
}

/// The predicted number and its probability for every example, in order (batched by length).
pub fn predict(net: &Net, encoder: &Encoder, examples: &[Example]) -> Result<Vec<(u8, f32)>> {
    let mut out = vec![(0u8, 0f32); examples.len()];
    let mut by_len: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (i, e) in examples.iter().enumerate() {
        by_len.entry(e.tokens.len()).or_default().push(i);
    }
    for (len, idx) in by_len {
        let size = micro_batch(net, len).min(64);
        for chunk in idx.chunks(size) {
            let rows: Vec<Vec<u32>> = chunk
                .iter()
                .map(|&i| encoder.ids(&examples[i].tokens))
                .collect();
            let logits = net.forward(&ids_tensor(&rows, net.device())?)?.logits;
            let p = candle_nn::ops::softmax_last_dim(&logits)?.to_vec2::<f32>()?;
            for (&i, row) in chunk.iter().zip(p) {
                let (n, &q) =
                    row.iter()
                        .enumerate()
                        .fold((0, &f32::MIN), |b, (n, q)| if q > b.1 { (n, q) } else { b });
                out[i] = (n as u8, q);
            }
        }
    }
    Ok(out)
}

/// The fraction of `examples` answered right.
pub fn accuracy(net: &Net, encoder: &Encoder, examples: &[Example]) -> Result<f64> {
    let p = predict(net, encoder, examples)?;
    let right = examples
        .iter()
        .zip(&p)
        .filter(|(e, (n, _))| e.answer == *n)
        .count();
    Ok(right as f64 / examples.len().max(1) as f64)
}

/// What training one model gives.
pub struct Outcome {
    /// The model at its best validation checkpoint.
    pub net: Net,
    /// That checkpoint's step.
    pub best_step: usize,
    /// Its validation accuracy.
    pub validation: f64,
    /// Wall time in seconds.
    pub seconds: f64,
}

fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A length from the budget's mixture.
fn draw_len(rng: &mut ChaCha8Rng, lengths: &[(usize, usize, f64)]) -> usize {
    let total: f64 = lengths.iter().map(|l| l.2).sum();
    let mut u = unit(rng) * total;
    for &(lo, hi, w) in lengths {
        if u < w {
            return lo + (rng.next_u64() % (hi - lo + 1) as u64) as usize;
        }
        u -= w;
    }
    lengths.last().map_or(64, |l| l.1)
}

/// Contexts of length `len` per micro-batch: the `(maps, batch, L, L)` tensors stay under
/// 6 M values (24 MB).
pub fn micro_batch(net: &Net, len: usize) -> usize {
    let maps = match net.config.kind {
        Kind::DiffTransformer | Kind::DiffTransformerV2 => 2 * net.config.heads,
        _ => net.config.heads,
    };
    (6_000_000 / (maps * len * len).max(1)).max(1)
}

/// Scales `grads` down to global norm `clip` when larger; returns the norm before.
fn clip_gradients(
    vars: &[candle_core::Var],
    grads: &mut candle_core::backprop::GradStore,
    clip: f64,
) -> Result<f64> {
    let mut sum = 0f64;
    for v in vars {
        if let Some(g) = grads.get(v.as_tensor()) {
            sum += f64::from(g.sqr()?.sum_all()?.to_scalar::<f32>()?);
        }
    }
    let norm = sum.sqrt();
    if norm > clip {
        let scale = clip / norm;
        for v in vars {
            if let Some(g) = grads.remove(v.as_tensor()) {
                grads.insert(v.as_tensor(), (g * scale)?);
            }
        }
    }
    Ok(norm)
}

/// Trains one model of `kind` from `seed` on `data` (training keys and fillers; the validation
/// set `validation` picks the checkpoint). `log` receives one line per validation.
pub fn train(
    config: Config,
    data: &TaskData,
    validation: &[Example],
    seed: u64,
    budget: &Budget,
    log: &mut dyn FnMut(String),
) -> Result<Outcome> {
    let start = Instant::now();
    let encoder = Encoder::new(&data.vocab);
    let kind = config.kind;
    let net = Net::new(config, data.classes.clone(), seed)?;
    let vars = net.vars();
    let mut opt = AdamW::new(
        vars.clone(),
        ParamsAdamW {
            lr: budget.lr,
            weight_decay: budget.weight_decay,
            ..ParamsAdamW::default()
        },
    )?;
    // The data stream depends on the seed only, not on the mechanism: every mechanism of one
    // seed sees the same contexts in the same order.
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7e7a_11e5_0000_0001);
    let mut gen = Generator::new(&data.train, seed ^ 0x7e7a_11e5_0000_0002);
    let mut best: Option<(f64, usize, Vec<Tensor>)> = None;
    let (mut loss_sum, mut right, mut seen, mut norm_sum) = (0f64, 0usize, 0usize, 0f64);
    for step in 1..=budget.steps {
        let len = draw_len(&mut rng, &budget.lengths);
        let max_facts = (len / 14).clamp(1, budget.max_facts);
        let examples: Vec<Training> = (0..budget.batch)
            .map(|_| {
                let facts = 1 + (rng.next_u64() % max_facts as u64) as usize;
                gen.training(len, facts)
            })
            .collect();
        let questions: usize = examples.iter().map(|e| e.questions.len()).sum();
        // Long contexts go through in micro-batches whose maps stay under glibc's largest
        // heap allocation (32 MB; anything larger is a fresh mmap and page faults each step);
        // their gradients add up to the batch's.
        let micro = micro_batch(&net, len);
        let mut grads: Option<candle_core::backprop::GradStore> = None;
        let mut loss_step = 0f64;
        for chunk in examples.chunks(micro) {
            let rows: Vec<Vec<u32>> = chunk.iter().map(|e| encoder.ids(&e.tokens)).collect();
            let ids = ids_tensor(&rows, net.device())?;
            let mut at = Vec::new();
            let mut labels = Vec::new();
            for (i, e) in chunk.iter().enumerate() {
                for &(p, n) in &e.questions {
                    at.push((i * len + p) as u32);
                    labels.push(u32::from(n));
                }
            }
            let n_q = labels.len();
            let labels = Tensor::from_vec(labels, n_q, net.device())?;
            let logits = net.forward_at(&ids, &at)?.logits;
            let share = n_q as f64 / questions as f64;
            let loss = (candle_nn::loss::cross_entropy(&logits, &labels)? * share)?;
            loss_step += f64::from(loss.to_scalar::<f32>()?);
            let predicted = logits.argmax(1)?.to_vec1::<u32>()?;
            right += predicted
                .iter()
                .zip(labels.to_vec1::<u32>()?)
                .filter(|(p, l)| **p == *l)
                .count();
            let g = loss.backward()?;
            match grads.as_mut() {
                None => grads = Some(g),
                Some(all) => all.extend(g)?,
            }
        }
        seen += questions;
        let mut grads = grads.expect("a batch has contexts");
        let lr = if step <= budget.warmup {
            budget.lr * step as f64 / budget.warmup.max(1) as f64
        } else {
            let progress =
                (step - budget.warmup) as f64 / (budget.steps - budget.warmup).max(1) as f64;
            budget.lr * (1.0 - 0.9 * progress)
        };
        opt.set_learning_rate(lr);
        norm_sum += clip_gradients(&vars, &mut grads, budget.clip)?;
        opt.step(&grads)?;
        loss_sum += loss_step;
        if step % budget.eval_every == 0 || step == budget.steps {
            let val = accuracy(&net, &encoder, validation)?;
            let n = budget.eval_every as f64;
            log(format!(
                "{} seed {seed} step {step}: loss {:.3}, train {:.3}, grad norm {:.2}, validation {val:.3} ({:.0} s)",
                kind.key(),
                loss_sum / n,
                right as f64 / seen.max(1) as f64,
                norm_sum / n,
                start.elapsed().as_secs_f64()
            ));
            (loss_sum, right, seen, norm_sum) = (0.0, 0, 0, 0.0);
            if best.as_ref().is_none_or(|(b, _, _)| val > *b) {
                best = Some((val, step, net.snapshot()?));
            }
        }
    }
    let (validation, best_step, snapshot) = best.expect("at least one validation");
    net.restore(&snapshot)?;
    Ok(Outcome {
        net,
        best_step,
        validation,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// One scored context: the model's answer and the measure of every layer.
#[derive(Debug, Clone)]
pub struct Scored {
    /// The predicted number.
    pub predicted: u8,
    /// Its probability.
    pub probability: f32,
    /// The attention shares of every layer (`diffattn::retrieval::Shares`, computed by the
    /// library from the question's row of each layer's final maps).
    pub layers: Vec<diffattn::retrieval::Shares>,
}

/// The answer and the measure for every example, in order (batched by length). Every example
/// must read back as a retrieval text (`Layout::read`).
pub fn score(net: &Net, encoder: &Encoder, examples: &[Example]) -> Result<Vec<Scored>> {
    use diffattn::retrieval::{Layout, Shares};
    let mut out: Vec<Option<Scored>> = vec![None; examples.len()];
    let mut by_len: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (i, e) in examples.iter().enumerate() {
        by_len.entry(e.tokens.len()).or_default().push(i);
    }
    for (len, idx) in by_len {
        for chunk in idx.chunks(micro_batch(net, len).min(64)) {
            let rows: Vec<Vec<u32>> = chunk
                .iter()
                .map(|&i| encoder.ids(&examples[i].tokens))
                .collect();
            let f = net.forward(&ids_tensor(&rows, net.device())?)?;
            let p = candle_nn::ops::softmax_last_dim(&f.logits)?.to_vec2::<f32>()?;
            // The question's row of every layer's maps: (heads, batch, keys).
            // (A or A′ per head, A1 − λA2 per diff head.)
            let last_rows: Vec<(usize, Vec<f32>)> = f
                .maps
                .iter()
                .map(|m| {
                    Ok((
                        m.dim(0)?,
                        m.narrow(2, len - 1, 1)?.flatten_all()?.to_vec1::<f32>()?,
                    ))
                })
                .collect::<Result<_>>()?;
            for (b, &i) in chunk.iter().enumerate() {
                let e = &examples[i];
                let layout = Layout::read(&e.tokens).ok_or_else(|| {
                    candle_core::Error::Msg(format!("not a retrieval text: {}", e.text))
                })?;
                let answer = layout.answer_tokens();
                let layers = last_rows
                    .iter()
                    .map(|(heads, rows)| {
                        let heads = *heads;
                        let mut m = ndarray::Array2::<f32>::zeros((heads, len));
                        for h in 0..heads {
                            let at = (h * chunk.len() + b) * len;
                            m.row_mut(h)
                                .assign(&ndarray::ArrayView1::from(&rows[at..at + len]));
                        }
                        Shares::of_rows(m.view(), &answer, layout.context().end).ok_or_else(|| {
                            candle_core::Error::Msg("maps do not cover the text".into())
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                let (n, &q) = p[b]
                    .iter()
                    .enumerate()
                    .fold(
                        (0, &f32::MIN),
                        |best, (n, q)| if q > best.1 { (n, q) } else { best },
                    );
                out[i] = Some(Scored {
                    predicted: n as u8,
                    probability: q,
                    layers,
                });
            }
        }
    }
    Ok(out
        .into_iter()
        .map(|s| s.expect("every example scored"))
        .collect())
}
