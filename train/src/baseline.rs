//! The bag-of-words baseline: logistic regression on which tokens occur (binary unigram
//! features of the page's tokenizer), one model per language, L2 strength picked on the
//! validation split. Deterministic: per-example AdaGrad in a seeded order.

use std::collections::HashMap;

use crate::data::{Corpus, Example, Lang, Split};
use crate::train::{scores, Scores};

fn features(index: &HashMap<&str, usize>, e: &Example) -> Vec<usize> {
    let mut f: Vec<usize> = e
        .tokens
        .iter()
        .filter_map(|t| index.get(t.as_str()).copied())
        .collect();
    f.sort_unstable();
    f.dedup();
    f
}

fn scale(f: &[usize]) -> f64 {
    1.0 / (f.len().max(1) as f64).sqrt()
}

struct Logistic {
    w: Vec<f64>,
    b: f64,
}

impl Logistic {
    /// Features are binary, scaled to unit length (`1 / sqrt(count)` each) so long reviews do
    /// not dominate the updates.
    fn score(&self, f: &[usize]) -> f64 {
        self.b + f.iter().map(|&i| self.w[i]).sum::<f64>() * scale(f)
    }

    fn fit(data: &[(Vec<usize>, u32)], dim: usize, l2: f64, epochs: usize) -> Logistic {
        let mut m = Logistic {
            w: vec![0.0; dim],
            b: 0.0,
        };
        let (mut gw, mut gb) = (vec![1e-8; dim], 1e-8);
        let lr = 0.5;
        for _ in 0..epochs {
            for (f, y) in data {
                let p = 1.0 / (1.0 + (-m.score(f)).exp());
                let err = p - f64::from(*y);
                let x = scale(f);
                for &i in f {
                    let g = err * x + l2 * 0.01 * m.w[i];
                    gw[i] += g * g;
                    m.w[i] -= lr * g / gw[i].sqrt();
                }
                gb += err * err;
                m.b -= lr * err / gb.sqrt();
            }
        }
        m
    }
}

/// Test scores of the baseline for one language, with the L2 strength it picked.
pub fn baseline(corpus: &Corpus, lang: Lang) -> (Scores, f64) {
    let train = corpus.part(Split::Train, Some(lang));
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for e in &train {
        for t in &e.tokens {
            if !index.contains_key(t.as_str()) {
                index.insert(t, order.len());
                order.push(t);
            }
        }
    }
    let encode = |part: Vec<&Example>| -> Vec<(Vec<usize>, u32)> {
        part.iter()
            .map(|e| (features(&index, e), e.label))
            .collect()
    };
    let mut train = encode(train);
    // The files list one class after the other; per-example updates need a mixed order.
    crate::data::shuffle(&mut train, &mut crate::data::rng(7));
    let validation = encode(corpus.part(Split::Validation, Some(lang)));
    let test = encode(corpus.part(Split::Test, Some(lang)));
    let evaluate = |m: &Logistic, data: &[(Vec<usize>, u32)]| {
        let pairs: Vec<(u32, f32)> = data
            .iter()
            .map(|(f, y)| (*y, (1.0 / (1.0 + (-m.score(f)).exp())) as f32))
            .collect();
        scores(&pairs)
    };
    let mut best: Option<(f64, f64, Logistic)> = None;
    for l2 in [0.0, 1.0, 3.0, 10.0, 30.0] {
        let m = Logistic::fit(&train, order.len(), l2, 10);
        let acc = evaluate(&m, &validation).accuracy;
        if best.as_ref().is_none_or(|(b, _, _)| acc > *b) {
            best = Some((acc, l2, m));
        }
    }
    let (_, l2, m) = best.expect("five strengths tried");
    (evaluate(&m, &test), l2)
}
