//! Training and evaluation: AdamW on cross-entropy over length-bucketed batches, the epoch
//! with the best validation accuracy kept, and accuracy and F1 per language.

use std::time::Instant;

use candle_core::{Result, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use diffattn::engine::MechanismKind;
use rand_core::Rng;

use crate::data::{batches, rng, Encoded, Lang};
use crate::net::{Config, Net};

/// The training budget and regularisation, the same for every mechanism.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Passes over the training data.
    pub epochs: usize,
    /// Reviews per batch (all of one length).
    pub batch: usize,
    /// Training reviews are cut to this many tokens (evaluation sees every token).
    pub max_len: usize,
    /// AdamW's learning rate at the start; it decays linearly to a tenth.
    pub lr: f64,
    /// AdamW's decoupled weight decay.
    pub weight_decay: f64,
    /// The probability that a training token is replaced by `<unk>`.
    pub word_dropout: f64,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            epochs: 5,
            batch: 32,
            max_len: 64,
            lr: 3e-3,
            weight_decay: 1e-2,
            word_dropout: 0.25,
        }
    }
}

/// Accuracy and F1 of the positive class.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Scores {
    /// Fraction correct.
    pub accuracy: f64,
    /// F1 of the positive class.
    pub f1: f64,
    /// How many reviews.
    pub n: usize,
}

/// Scores from (label, predicted positive probability) pairs.
pub fn scores(pairs: &[(u32, f32)]) -> Scores {
    let (mut tp, mut fp, mut fn_, mut correct) = (0usize, 0usize, 0usize, 0usize);
    for &(label, p) in pairs {
        let predicted = u32::from(p >= 0.5);
        correct += usize::from(predicted == label);
        match (predicted, label) {
            (1, 1) => tp += 1,
            (1, 0) => fp += 1,
            (0, 1) => fn_ += 1,
            _ => {}
        }
    }
    let f1 = if tp == 0 {
        0.0
    } else {
        2.0 * tp as f64 / (2 * tp + fp + fn_) as f64
    };
    Scores {
        accuracy: correct as f64 / pairs.len().max(1) as f64,
        f1,
        n: pairs.len(),
    }
}

/// The positive probability of every review, in order, from the candle forward pass.
pub fn predict(net: &Net, data: &[Encoded]) -> Result<Vec<f32>> {
    let mut out = vec![0.0f32; data.len()];
    // Long reviews (up to 512 tokens) make (batch, heads, L, L) maps: keep them near 4 MB.
    let mut all = Vec::new();
    for batch in batches(data, None, 64, None) {
        let len = data[batch[0]].ids.len();
        let size = (262_144 / (len * len).max(1)).clamp(1, 64);
        all.extend(batch.chunks(size).map(<[usize]>::to_vec));
    }
    for batch in all {
        let ids = ids_tensor(net, data, &batch, None)?;
        let logits = net.forward(&ids)?.logits;
        let p = candle_nn::ops::softmax(&logits, 1)?.to_vec2::<f32>()?;
        for (&i, row) in batch.iter().zip(p) {
            out[i] = row[1];
        }
    }
    Ok(out)
}

/// Accuracy and F1 for each language present in `data`.
pub fn evaluate(net: &Net, data: &[Encoded]) -> Result<Vec<(Lang, Scores)>> {
    let p = predict(net, data)?;
    Ok(Lang::ALL
        .iter()
        .map(|&lang| {
            let pairs: Vec<(u32, f32)> = data
                .iter()
                .zip(&p)
                .filter(|(e, _)| e.lang == lang)
                .map(|(e, &p)| (e.label, p))
                .collect();
            (lang, scores(&pairs))
        })
        .filter(|(_, s)| s.n > 0)
        .collect())
}

fn ids_tensor(
    net: &Net,
    data: &[Encoded],
    batch: &[usize],
    max_len: Option<usize>,
) -> Result<Tensor> {
    let len = data[batch[0]].ids.len().min(max_len.unwrap_or(usize::MAX));
    let flat: Vec<u32> = batch
        .iter()
        .flat_map(|&i| data[i].ids[..len].iter().copied())
        .collect();
    Tensor::from_vec(flat, (batch.len(), len), net.device())
}

/// What training one classifier gives.
pub struct Outcome {
    /// The classifier at its best validation epoch.
    pub net: Net,
    /// That epoch (1-based).
    pub best_epoch: usize,
    /// Mean validation accuracy over the two languages at that epoch.
    pub validation: f64,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// What a classifier learns from.
#[derive(Clone, Copy)]
pub struct Data<'a> {
    /// Initial token vectors (GloVe for English words), by vocabulary row.
    pub pretrained: &'a [Option<Vec<f32>>],
    /// The training split.
    pub train: &'a [Encoded],
    /// The validation split, which picks the epoch.
    pub validation: &'a [Encoded],
}

/// Trains one classifier of the shipped configuration from `seed`. `log` receives one line
/// per epoch.
pub fn train(
    mechanism: MechanismKind,
    vocab: usize,
    seed: u64,
    budget: &Budget,
    data: Data<'_>,
    log: &mut dyn FnMut(String),
) -> Result<Outcome> {
    train_config(Config::new(mechanism, vocab), seed, budget, data, log)
}

/// Trains one classifier of any configuration from `seed`.
pub fn train_config(
    config: Config,
    seed: u64,
    budget: &Budget,
    data: Data<'_>,
    log: &mut dyn FnMut(String),
) -> Result<Outcome> {
    let Data {
        pretrained,
        train,
        validation,
    } = data;
    let start = Instant::now();
    let mechanism = config.mechanism;
    let name = format!(
        "{}{}",
        mechanism.key(),
        if config.bilstm && mechanism != MechanismKind::InputDiff {
            "+bilstm"
        } else {
            ""
        }
    );
    let net = Net::new(config, seed, pretrained)?;
    let mut opt = AdamW::new(
        net.vars(),
        ParamsAdamW {
            lr: budget.lr,
            weight_decay: budget.weight_decay,
            ..ParamsAdamW::default()
        },
    )?;
    let mut rng = rng(seed ^ 0x0005_eed0_fba7_c4e5);
    let total_steps =
        budget.epochs * batches(train, Some(budget.max_len), budget.batch, None).len();
    let mut step = 0usize;
    let mut best: Option<(f64, usize, Vec<Tensor>)> = None;
    for epoch in 1..=budget.epochs {
        let mut loss_sum = 0.0f64;
        let order = batches(train, Some(budget.max_len), budget.batch, Some(&mut rng));
        let n_batches = order.len();
        for batch in order {
            let len = train[batch[0]].ids.len().min(budget.max_len);
            let mut flat = Vec::with_capacity(batch.len() * len);
            for &i in &batch {
                for &id in &train[i].ids[..len] {
                    // Word dropout: a token read as <unk> now and then, so <unk> is learned.
                    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                    flat.push(if u < budget.word_dropout { 0 } else { id });
                }
            }
            let ids = Tensor::from_vec(flat, (batch.len(), len), net.device())?;
            let labels: Vec<u32> = batch.iter().map(|&i| train[i].label).collect();
            let labels = Tensor::from_vec(labels, batch.len(), net.device())?;
            let logits = net.forward(&ids)?.logits;
            let loss = candle_nn::loss::cross_entropy(&logits, &labels)?;
            let progress = step as f64 / total_steps.max(1) as f64;
            opt.set_learning_rate(budget.lr * (1.0 - 0.9 * progress));
            opt.backward_step(&loss)?;
            loss_sum += f64::from(loss.to_scalar::<f32>()?);
            step += 1;
        }
        let val = evaluate(&net, validation)?;
        let mean = val.iter().map(|(_, s)| s.accuracy).sum::<f64>() / val.len().max(1) as f64;
        log(format!(
            "{name} seed {seed} epoch {epoch}: loss {:.4}, validation {} ({:.0} s)",
            loss_sum / n_batches.max(1) as f64,
            val.iter()
                .map(|(l, s)| format!("{} {:.3}", l.code(), s.accuracy))
                .collect::<Vec<_>>()
                .join(", "),
            start.elapsed().as_secs_f64()
        ));
        if best.as_ref().is_none_or(|(b, _, _)| mean > *b) {
            best = Some((mean, epoch, net.snapshot()?));
        }
    }
    let (validation, best_epoch, snapshot) = best.expect("at least one epoch");
    net.restore(&snapshot)?;
    Ok(Outcome {
        net,
        best_epoch,
        validation,
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_count_by_hand() {
        // Labels 1 1 0 0, predictions 1 0 1 0: tp = 1, fp = 1, fn = 1, accuracy 2/4,
        // F1 = 2·1 / (2·1 + 1 + 1) = 0.5.
        let s = scores(&[(1, 0.9), (1, 0.1), (0, 0.6), (0, 0.2)]);
        assert_eq!((s.accuracy, s.f1, s.n), (0.5, 0.5, 4));
    }
}
