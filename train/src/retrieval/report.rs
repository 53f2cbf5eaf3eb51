//! docs/LESSON.md from the experiment's runs: accuracy and attention shares, mean ± standard
//! deviation over seeds, by number of facts, context length and depth, beside the paper's
//! Table 3; and a reading computed from the numbers.

use std::fmt::Write as _;

use diffattn::retrieval::Shares;

use super::data::{Example, MAX_FACTS};
use super::fit::Scored;
use super::net::Kind;

/// One trained model and its scores on the test set.
pub struct Run {
    /// Its mechanism.
    pub kind: Kind,
    /// Its seed.
    pub seed: u64,
    /// The step of the kept checkpoint.
    pub best_step: usize,
    /// Validation accuracy there.
    pub validation: f64,
    /// Training time in seconds.
    pub seconds: f64,
    /// Trained scalars (lambda, gates).
    pub params: String,
    /// One entry per test context.
    pub scored: Vec<Scored>,
}

/// Which layer's shares.
#[derive(Clone, Copy)]
pub enum Which {
    /// The last layer, which looks the answer up.
    Retrieving,
    /// The mean over layers (the paper's average over heads and layers).
    Mean,
    /// One layer.
    Layer(usize),
}

fn pick(layers: &[Shares], which: Which) -> Shares {
    match which {
        Which::Retrieving => *layers.last().expect("a layer"),
        Which::Layer(l) => layers[l],
        Which::Mean => Shares::mean(layers),
    }
}

/// The depth of a context's answer: where its fact starts, as a fraction of the context.
pub fn depth(e: &Example) -> f64 {
    let context = e.tokens.len() - super::data::QUESTION_TOKENS;
    (e.answer_at - 5) as f64 / context.max(1) as f64
}

/// Depth bins as in the paper's Table 3 (the answer at 0 %, 25 %, ... of the context).
pub const DEPTHS: [(f64, f64, &str); 5] = [
    (0.0, 0.125, "0 %"),
    (0.125, 0.375, "25 %"),
    (0.375, 0.625, "50 %"),
    (0.625, 0.875, "75 %"),
    (0.875, 1.01, "100 %"),
];

/// Sample mean and standard deviation.
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

/// Per-run statistics over the test contexts `keep` selects.
pub struct Cell {
    /// Fraction answered right.
    pub accuracy: f64,
    /// Mean shares.
    pub shares: Shares,
    /// How many contexts.
    pub n: usize,
}

/// Statistics of one run over the contexts `keep` selects.
pub fn cell(run: &Run, test: &[Example], which: Which, keep: &dyn Fn(&Example) -> bool) -> Cell {
    let mut c = Cell {
        accuracy: 0.0,
        shares: Shares::default(),
        n: 0,
    };
    for (e, s) in test.iter().zip(&run.scored) {
        if !keep(e) {
            continue;
        }
        let sh = pick(&s.layers, which);
        c.n += 1;
        c.accuracy += f64::from(u8::from(s.predicted == e.answer));
        c.shares.answer += sh.answer;
        c.shares.noise += sh.noise;
        c.shares.noise_magnitude += sh.noise_magnitude;
    }
    let n = c.n.max(1) as f64;
    c.accuracy /= n;
    c.shares.answer /= n;
    c.shares.noise /= n;
    c.shares.noise_magnitude /= n;
    c
}

/// Over the seeds of one mechanism: mean and standard deviation of `f` of each run's cell.
pub fn over_seeds(
    runs: &[Run],
    kind: Kind,
    test: &[Example],
    which: Which,
    keep: &dyn Fn(&Example) -> bool,
    f: &dyn Fn(&Cell) -> f64,
) -> (f64, f64) {
    let v: Vec<f64> = runs
        .iter()
        .filter(|r| r.kind == kind)
        .map(|r| f(&cell(r, test, which, keep)))
        .collect();
    let (mean, std) = mean_std(&v);
    // One seed has no spread to report: NaN prints as no ± at all.
    (mean, if v.len() < 2 { f64::NAN } else { std })
}

fn pm(m: (f64, f64), digits: usize) -> String {
    if m.1.is_nan() {
        format!("{:.*}", digits, m.0)
    } else {
        format!("{:.*} ± {:.*}", digits, m.0, digits, m.1)
    }
}

fn pct(m: (f64, f64)) -> String {
    if m.1.is_nan() {
        format!("{:.1}", 100.0 * m.0)
    } else {
        format!("{:.1} ± {:.1}", 100.0 * m.0, 100.0 * m.1)
    }
}

/// `a` against `b` for one statistic over seeds: difference of means, its standard error, and
/// whether it exceeds twice that.
pub fn compare(a: &[f64], b: &[f64]) -> (f64, f64, bool) {
    let ((ma, sa), (mb, sb)) = (mean_std(a), mean_std(b));
    let se = (sa * sa / a.len().max(1) as f64 + sb * sb / b.len().max(1) as f64).sqrt();
    let d = ma - mb;
    (d, se, d.abs() > 2.0 * se)
}

fn values(
    runs: &[Run],
    kind: Kind,
    test: &[Example],
    which: Which,
    f: &dyn Fn(&Cell) -> f64,
) -> Vec<f64> {
    runs.iter()
        .filter(|r| r.kind == kind)
        .map(|r| f(&cell(r, test, which, &|_| true)))
        .collect()
}

/// A table column: its title and which test contexts it keeps.
type Column = (String, Box<dyn Fn(&Example) -> bool>);

/// What the report needs besides the runs.
pub struct Context<'a> {
    /// The command that reruns it.
    pub command: &'a str,
    /// The seeds.
    pub seeds: &'a [u64],
    /// One line about the data.
    pub data: String,
    /// One line about the budget.
    pub budget: String,
    /// One example context, as text.
    pub example: String,
    /// Wall time in seconds.
    pub seconds: f64,
    /// The test lengths.
    pub lengths: &'a [usize],
}

/// The whole of docs/LESSON.md.
pub fn lesson(ctx: &Context<'_>, runs: &[Run], test: &[Example]) -> String {
    let kinds: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|k| runs.iter().any(|r| r.kind == *k))
        .collect();
    let seeds = ctx
        .seeds
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Retrieval: results\n\nGenerated, do not edit: the task, the models, the measure and what \
         these numbers mean are in docs/LESSON.md."
    );
    let _ = writeln!(
        s,
        "\n## Results\n\nWritten by `{}` (do not edit this section by hand: rerun it). Seeds {seeds}; \
         {} {} {} \
         Training time: {:.0} s ({:.1} min) in all, one thread, on this machine's 2 cores shared with other work.\n",
        ctx.command,
        if ctx.seeds.len() < 2 {
            "one seed, so no figure has an error bar: differences of a few points between \
             mechanisms may be seed noise."
        } else {
            "every figure is the mean ± sample standard deviation over the seeds."
        },
        ctx.data,
        ctx.budget,
        ctx.seconds,
        ctx.seconds / 60.0
    );
    let _ = writeln!(
        s,
        "An example test context ({} tokens):\n\n> {}\n",
        test[0].tokens.len(),
        ctx.example
    );

    // Accuracy.
    let _ = writeln!(s, "### Accuracy on the held-out test set, percent\n");
    let mut head = "| mechanism | all |".to_string();
    let mut rule = "| --- | --- |".to_string();
    for f in 1..=MAX_FACTS {
        let _ = write!(head, " {f} fact{} |", if f == 1 { "" } else { "s" });
        rule += " --- |";
    }
    for l in ctx.lengths {
        let _ = write!(head, " {l} tokens |");
        rule += " --- |";
    }
    let _ = writeln!(s, "{head}\n{rule}");
    for &k in &kinds {
        let acc = |keep: &dyn Fn(&Example) -> bool| {
            pct(over_seeds(runs, k, test, Which::Retrieving, keep, &|c| {
                c.accuracy
            }))
        };
        let mut row = format!("| {} | {} |", k.key(), acc(&|_| true));
        for f in 1..=MAX_FACTS {
            let _ = write!(row, " {} |", acc(&|e| e.facts == f));
        }
        for &l in ctx.lengths {
            let _ = write!(row, " {} |", acc(&|e| e.tokens.len() == l));
        }
        let _ = writeln!(s, "{row}");
    }

    // Shares beside the paper.
    let _ = writeln!(
        s,
        "\n### Attention on the answer and on the noise, beside the paper\n\n\
         At the question's last token, averaged over heads and over the test contexts; \"retrieving \
         layer\" is the last layer, \"mean over layers\" averages both layers as the paper averages \
         over its layers. Noise is signed (negative cells of `A1 − λ·A2` and `A′` cancel positive \
         ones); |noise| sums magnitudes instead. The paper's figures are for 3-billion-parameter \
         language models on a needle-in-a-haystack retrieval over 4K-token contexts, answer at \
         depths 0 % to 100 % (Ye et al., ICLR 2025, Table 3).\n"
    );
    let _ = writeln!(
        s,
        "| model | answer (retrieving layer) | noise (retrieving layer) | \\|noise\\| (retrieving layer) | answer (mean over layers) | noise (mean over layers) |\n| --- | --- | --- | --- | --- | --- |"
    );
    for &k in &kinds {
        let sh =
            |w: Which, f: &dyn Fn(&Cell) -> f64| pm(over_seeds(runs, k, test, w, &|_| true, f), 3);
        let _ = writeln!(
            s,
            "| {} (this project) | {} | {} | {} | {} | {} |",
            k.key(),
            sh(Which::Retrieving, &|c| c.shares.answer),
            sh(Which::Retrieving, &|c| c.shares.noise),
            sh(Which::Retrieving, &|c| c.shares.noise_magnitude),
            sh(Which::Mean, &|c| c.shares.answer),
            sh(Which::Mean, &|c| c.shares.noise),
        );
    }
    let _ = writeln!(
        s,
        "| Transformer (paper) | | | | 0.03 to 0.09 | 0.49 to 0.54 |\n| DIFF Transformer (paper) | | | | 0.27 to 0.40 | 0.01 to 0.02 |"
    );

    // By facts, length, depth (retrieving layer).
    let by = |title: &str, cols: Vec<Column>| -> String {
        let mut t = format!(
            "\n### {title}\n\nRetrieving layer; each cell is answer / noise (mean ± std over the seeds when there are several).\n\n| mechanism |"
        );
        let mut rule = "| --- |".to_string();
        for (name, _) in &cols {
            let _ = write!(t, " {name} |");
            rule += " --- |";
        }
        let _ = writeln!(t, "\n{rule}");
        for &k in &kinds {
            let mut row = format!("| {} |", k.key());
            for (_, keep) in &cols {
                let a = over_seeds(runs, k, test, Which::Retrieving, keep.as_ref(), &|c| {
                    c.shares.answer
                });
                let n = over_seeds(runs, k, test, Which::Retrieving, keep.as_ref(), &|c| {
                    c.shares.noise
                });
                let _ = write!(row, " {} / {} |", pm(a, 3), pm(n, 3));
            }
            let _ = writeln!(t, "{row}");
        }
        t
    };
    let facts_cols: Vec<Column> = (1..=MAX_FACTS)
        .map(|f| {
            (
                format!("{f} fact{}", if f == 1 { "" } else { "s" }),
                Box::new(move |e: &Example| e.facts == f) as Box<dyn Fn(&Example) -> bool>,
            )
        })
        .collect();
    s += &by("Shares by number of facts", facts_cols);
    let len_cols: Vec<Column> = ctx
        .lengths
        .iter()
        .map(|&l| {
            (
                format!("{l} tokens"),
                Box::new(move |e: &Example| e.tokens.len() == l) as Box<dyn Fn(&Example) -> bool>,
            )
        })
        .collect();
    s += &by("Shares by context length", len_cols);
    let depth_cols: Vec<Column> = DEPTHS
        .iter()
        .map(|&(lo, hi, name)| {
            (
                format!("depth {name}"),
                Box::new(move |e: &Example| (lo..hi).contains(&depth(e)))
                    as Box<dyn Fn(&Example) -> bool>,
            )
        })
        .collect();
    s += &by(
        "Shares by depth of the answer in the context (as the paper's Table 3)",
        depth_cols,
    );

    // Per layer.
    let _ = writeln!(
        s,
        "\n### Every layer\n\n| mechanism | layer | answer | noise | \\|noise\\| |\n| --- | --- | --- | --- | --- |"
    );
    for &k in &kinds {
        let layers = runs
            .iter()
            .find(|r| r.kind == k)
            .map_or(0, |r| r.scored.first().map_or(0, |s| s.layers.len()));
        for l in 0..layers {
            let sh = |f: &dyn Fn(&Cell) -> f64| {
                pm(over_seeds(runs, k, test, Which::Layer(l), &|_| true, f), 3)
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                k.key(),
                l + 1,
                sh(&|c| c.shares.answer),
                sh(&|c| c.shares.noise),
                sh(&|c| c.shares.noise_magnitude)
            );
        }
    }

    // Per seed.
    let _ = writeln!(
        s,
        "\n### Per seed\n\n| mechanism | seed | accuracy | answer | noise | \\|noise\\| | kept step | validation | training | trained parameters |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    );
    for r in runs {
        let c = cell(r, test, Which::Retrieving, &|_| true);
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} | {:.3} | {:.3} | {:.3} | {} | {:.1} | {:.0} s | {} |",
            r.kind.key(),
            r.seed,
            100.0 * c.accuracy,
            c.shares.answer,
            c.shares.noise,
            c.shares.noise_magnitude,
            r.best_step,
            100.0 * r.validation,
            r.seconds,
            r.params
        );
    }

    // The reading.
    let _ = writeln!(s, "\n## Reading\n");
    let ans = |k: Kind| values(runs, k, test, Which::Retrieving, &|c| c.shares.answer);
    let noi = |k: Kind| values(runs, k, test, Which::Retrieving, &|c| c.shares.noise);
    let acc = |k: Kind| values(runs, k, test, Which::Retrieving, &|c| c.accuracy);
    let verdict = |a: Kind, b: Kind| -> String {
        let (da, sa, ka) = compare(&ans(a), &ans(b));
        let (dn, sn, kn) = compare(&noi(a), &noi(b));
        let (dc, sc, kc) = compare(&acc(a), &acc(b));
        let one_seed = ctx.seeds.len() < 2;
        let word = |d: f64, known: bool, up: &str, down: &str| {
            if one_seed {
                "one seed: no error bar".to_string()
            } else if !known {
                "no different beyond seed noise".to_string()
            } else if d > 0.0 {
                up.to_string()
            } else {
                down.to_string()
            }
        };
        format!(
            "- **{} against {}** (retrieving layer): attention on the answer {:+.3} (standard error {:.3}: {}), noise {:+.3} (standard error {:.3}: {}), accuracy {:+.1} points (standard error {:.1}: {}).",
            a.key(),
            b.key(),
            da,
            sa,
            word(da, ka, "more", "less"),
            dn,
            sn,
            word(dn, kn, "more", "less"),
            100.0 * dc,
            100.0 * sc,
            word(dc, kc, "better", "worse"),
        )
    };
    for k in [Kind::DiffTransformer, Kind::ShiftDiff] {
        if kinds.contains(&k) && kinds.contains(&Kind::Standard) {
            let _ = writeln!(s, "{}", verdict(k, Kind::Standard));
        }
    }
    s
}
