//! The retrieval task's data (docs/LESSON.md, "The task"): the names, nouns and filler sentences,
//! their fixed train / validation / test split, the vocabulary, and the seeded generator of
//! contexts of an exact length.
//!
//! A context is filler sentences with 1 to 6 facts `The NOUN of NAME is N.` between them and
//! the question `What is the NOUN of NAME?` at the end. Names, nouns and filler sentences are
//! split by a hash of their text, so the test facts use names and nouns that no training fact
//! used, and the test fillers are sentences training never saw. Every context is a pure
//! function of the seed, its length and its number of facts.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use diffattn::model::UNKNOWN_TOKEN;
use diffattn::retrieval::task::ANSWERS;
use diffattn::text::{fnv1a_64, tokenize};
use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};

use crate::data::{split_of, Split};

/// The names list (`train/retrieval/names.txt`).
pub const NAMES: &str = include_str!("../../retrieval/names.txt");
/// The nouns list (`train/retrieval/nouns.txt`).
pub const NOUNS: &str = include_str!("../../retrieval/nouns.txt");
/// The project's own filler sentences (`train/retrieval/fillers.txt`).
pub const FILLERS: &str = include_str!("../../retrieval/fillers.txt");

/// Tokens of one fact: `the NOUN of NAME is N .`
pub const FACT_TOKENS: usize = 7;
/// Tokens of the question: `what is the NOUN of NAME ?`
pub const QUESTION_TOKENS: usize = 7;
/// The most facts in one context.
pub const MAX_FACTS: usize = 6;

/// The tokens every context uses besides keys, numbers and fillers.
pub const TASK_TOKENS: [&str; 6] = ["the", "of", "is", ".", "what", "?"];

/// The split of a name, noun or own filler sentence: FNV-1a 64 of `"diffattn-retrieval-v1\0"`
/// and the text, modulo 10: 0 and 1 test (20 %), 2 validation (10 %), the rest training.
pub fn key_split(text: &str) -> Split {
    let mut bytes = b"diffattn-retrieval-v1\0".to_vec();
    bytes.extend_from_slice(text.as_bytes());
    match fnv1a_64(&bytes) % 10 {
        0 | 1 => Split::Test,
        2 => Split::Validation,
        _ => Split::Train,
    }
}

fn lines(list: &str) -> impl Iterator<Item = &str> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// One filler sentence: its text and its tokens.
#[derive(Debug, Clone)]
pub struct Filler {
    /// The sentence as written.
    pub text: String,
    /// Its tokens and their byte spans in `text`.
    pub tokens: Vec<diffattn::text::Token>,
    /// Whether it is one of the project's own sentences (else a Rotten Tomatoes snippet).
    pub own: bool,
}

impl Filler {
    /// Whether the text from token `at` on tokenizes to the tokens from `at` on, so a context
    /// that opens there reads back to the same tokens.
    pub fn cuts_cleanly(&self, at: usize) -> bool {
        let Some(first) = self.tokens.get(at) else {
            return true;
        };
        let rest = tokenize(&self.text[first.start..]);
        rest.len() == self.tokens.len() - at
            && rest
                .iter()
                .zip(&self.tokens[at..])
                .all(|(a, b)| a.text == b.text)
    }
}

/// Names, nouns and fillers of one split.
#[derive(Debug, Clone, Default)]
pub struct Pool {
    /// First names, as tokens.
    pub names: Vec<String>,
    /// Nouns, as tokens.
    pub nouns: Vec<String>,
    /// The project's own filler sentences.
    pub own: Vec<Filler>,
    /// Rotten Tomatoes snippets.
    pub snippets: Vec<Filler>,
}

/// Everything the task draws from.
#[derive(Debug, Clone)]
pub struct TaskData {
    /// Training keys and fillers.
    pub train: Pool,
    /// Validation keys and fillers (pick the checkpoint).
    pub validation: Pool,
    /// Test keys and fillers (only for the reported numbers).
    pub test: Pool,
    /// The vocabulary, `<unk>` first.
    pub vocab: Vec<String>,
    /// The two classes of each vocabulary entry ([`class_names`]).
    pub classes: Vec<[u32; 2]>,
}

/// The token classes. A token's vector is a frozen seeded vector of its own (its identity)
/// plus the learned vectors of its two classes: a shared class (every name shares one, every
/// noun another, every number a third; each of the task's own tokens `the`, `of`, `is`, `.`,
/// `what`, `?` is one; every other token, `<unk>` included, shares `other`) and, for the numbers
/// only, a class of their own (every number is an answer in training, so it may have a learned
/// vector, as the read-out has a learned row for it; the other tokens share `-`). Nothing is
/// learned about any one name or noun: a key that no training fact used reads exactly like one
/// that many did, and what the model learns is how to use "a name" and "a noun".
pub fn class_names() -> Vec<String> {
    ["other", "name", "noun", "number"]
        .into_iter()
        .map(String::from)
        .chain(TASK_TOKENS.iter().map(|t| t.to_string()))
        .chain(std::iter::once("-".to_string()))
        .chain((0..ANSWERS).map(|n| n.to_string()))
        .collect()
}

/// The two classes of each vocabulary entry (indices into [`class_names`]): shared, own.
pub fn token_classes(vocab: &[String], pools: [&Pool; 3]) -> Vec<[u32; 2]> {
    let names: HashSet<&str> = pools
        .iter()
        .flat_map(|p| p.names.iter().map(String::as_str))
        .collect();
    let nouns: HashSet<&str> = pools
        .iter()
        .flat_map(|p| p.nouns.iter().map(String::as_str))
        .collect();
    let classes = class_names();
    let index = |c: &str| classes.iter().position(|k| k == c).expect("a class") as u32;
    let none = index("-");
    vocab
        .iter()
        .map(|t| {
            let t = t.as_str();
            if names.contains(t) {
                [index("name"), none]
            } else if nouns.contains(t) {
                [index("noun"), none]
            } else if let Some(n) = diffattn::retrieval::task::answer_number(t) {
                [index("number"), none + 1 + u32::from(n)]
            } else if TASK_TOKENS.contains(&t) {
                [index(t), none]
            } else {
                [index("other"), none]
            }
        })
        .collect()
}

/// The largest vocabulary, `<unk>` included.
pub const MAX_VOCAB: usize = 8_000;
/// A filler token joins the vocabulary if training fillers use it this often.
pub const MIN_FILLER_COUNT: usize = 2;

impl TaskData {
    /// Reads the lists and `dir/en.tsv` (the Rotten Tomatoes snippets from
    /// `scripts/fetch-data`; their split is the sentiment data's, `data::split_of`).
    pub fn load(dir: &Path) -> Result<TaskData, String> {
        let path = dir.join("en.tsv");
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "cannot read {}: {e}; run scripts/fetch-data first",
                path.display()
            )
        })?;
        let snippets = text
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(_, t)| t);
        Ok(TaskData::from_parts(snippets))
    }

    /// The task data from snippet texts (and the built-in lists).
    pub fn from_parts<'a>(snippets: impl Iterator<Item = &'a str>) -> TaskData {
        let mut pools = [Pool::default(), Pool::default(), Pool::default()];
        let at = |s: Split| match s {
            Split::Train => 0,
            Split::Validation => 1,
            Split::Test => 2,
        };
        for name in lines(NAMES) {
            pools[at(key_split(name))].names.push(name.to_string());
        }
        for noun in lines(NOUNS) {
            pools[at(key_split(noun))].nouns.push(noun.to_string());
        }
        let filler = |text: &str, own: bool| Filler {
            text: text.to_string(),
            tokens: tokenize(text),
            own,
        };
        for line in lines(FILLERS) {
            pools[at(key_split(line))].own.push(filler(line, true));
        }
        for s in snippets {
            let f = filler(s, false);
            // Snippets with digits could state a number like a fact; keep the noise plain.
            if !f.tokens.is_empty() && !s.bytes().any(|b| b.is_ascii_digit()) {
                pools[at(split_of(s))].snippets.push(f);
            }
        }
        let [train, validation, test] = pools;
        let vocab = build_vocab(&train, &validation, &test);
        let classes = token_classes(&vocab, [&train, &validation, &test]);
        TaskData {
            train,
            validation,
            test,
            vocab,
            classes,
        }
    }

    /// The pool of a split.
    pub fn pool(&self, split: Split) -> &Pool {
        match split {
            Split::Train => &self.train,
            Split::Validation => &self.validation,
            Split::Test => &self.test,
        }
    }
}

/// `<unk>`, the task's own tokens, the numbers `0` to `99`, every name and noun of every split
/// (so any listed key has a row of its own), then the filler tokens of the training split seen
/// at least [`MIN_FILLER_COUNT`] times, most frequent first, up to [`MAX_VOCAB`] entries.
fn build_vocab(train: &Pool, validation: &Pool, test: &Pool) -> Vec<String> {
    let mut vocab = vec![UNKNOWN_TOKEN.to_string()];
    let mut seen: HashSet<String> = vocab.iter().cloned().collect();
    let mut push = |t: &str, vocab: &mut Vec<String>| {
        if seen.insert(t.to_string()) {
            vocab.push(t.to_string());
        }
    };
    for t in TASK_TOKENS {
        push(t, &mut vocab);
    }
    for n in 0..ANSWERS {
        push(&n.to_string(), &mut vocab);
    }
    for pool in [train, validation, test] {
        for k in pool.names.iter().chain(&pool.nouns) {
            push(k, &mut vocab);
        }
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for f in train.own.iter().chain(&train.snippets) {
        for t in &f.tokens {
            *counts.entry(t.text.as_str()).or_default() += 1;
        }
    }
    let mut kept: Vec<(&str, usize)> = counts
        .into_iter()
        .filter(|&(_, c)| c >= MIN_FILLER_COUNT)
        .collect();
    kept.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    for (t, _) in kept {
        if vocab.len() >= MAX_VOCAB {
            break;
        }
        push(t, &mut vocab);
    }
    vocab
}

/// One generated context.
#[derive(Debug, Clone)]
pub struct Example {
    /// The text, as a person would type it.
    pub text: String,
    /// Its tokens (those of `diffattn::text::tokenize(text)`).
    pub tokens: Vec<String>,
    /// The answer.
    pub answer: u8,
    /// How many facts.
    pub facts: usize,
    /// The token index of the answer's number.
    pub answer_at: usize,
    /// Every fact: noun, name, number; the first is the one asked about.
    pub stated: Vec<(String, String, u8)>,
}

/// A training context: a context with a question about each of its facts, the first at the
/// place of the context's own question and the others after it (in a random order), so that
/// every fact is asked about once and each question's `?` is read.
#[derive(Debug, Clone)]
pub struct Training {
    /// The tokens.
    pub tokens: Vec<String>,
    /// The position of each question's `?` and its answer.
    pub questions: Vec<(usize, u8)>,
}

/// The seeded generator of one split's contexts.
pub struct Generator<'a> {
    pool: &'a Pool,
    rng: ChaCha8Rng,
}

/// How often a filler is one of the project's own sentences rather than a review snippet.
const OWN_FILLER_SHARE: f64 = 0.3;

impl<'a> Generator<'a> {
    /// A generator over `pool` from `seed`.
    pub fn new(pool: &'a Pool, seed: u64) -> Generator<'a> {
        Generator {
            pool,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    fn unit(&mut self) -> f64 {
        (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn pick<'b>(&mut self, from: &'b [String]) -> &'b str {
        &from[self.below(from.len())]
    }

    /// The fewest tokens a context with `facts` facts can have.
    pub fn min_len(facts: usize) -> usize {
        facts * FACT_TOKENS + QUESTION_TOKENS
    }

    /// A context of exactly `len` tokens with `facts` facts (1 to 6; `len` at least
    /// [`Generator::min_len`]). The question asks about one fact; each other fact shares its
    /// noun (a third of the time), its name (a third) or neither, so the answer needs both keys.
    /// Fillers fill the rest; the first is cut at a token so the length comes out exact (the
    /// context then opens mid-sentence, as a window on a longer text would).
    pub fn example(&mut self, len: usize, facts: usize) -> Example {
        assert!((1..=MAX_FACTS).contains(&facts), "1 to 6 facts");
        assert!(len >= Self::min_len(facts), "too short for {facts} facts");
        let pool = self.pool;
        // Keys: the asked one first, then distinct others.
        let mut keys: Vec<(String, String)> =
            vec![(self.pick(&pool.nouns).into(), self.pick(&pool.names).into())];
        while keys.len() < facts {
            let (noun, name) = keys[0].clone();
            let key = match self.below(3) {
                0 => (noun, self.pick(&pool.names).to_string()),
                1 => (self.pick(&pool.nouns).to_string(), name),
                _ => (
                    self.pick(&pool.nouns).to_string(),
                    self.pick(&pool.names).to_string(),
                ),
            };
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        let numbers: Vec<u8> = (0..facts).map(|_| self.below(ANSWERS) as u8).collect();
        // The facts in a random order.
        let mut order: Vec<usize> = (0..facts).collect();
        for i in (1..facts).rev() {
            let j = self.below(i + 1);
            order.swap(i, j);
        }
        // Fillers: whole sentences until the budget is met, the first one cut to fit.
        let budget = len - Self::min_len(facts);
        let mut fillers: Vec<&Filler> = Vec::new();
        let mut have = 0;
        while have < budget {
            let own = self.unit() < OWN_FILLER_SHARE || pool.snippets.is_empty();
            let from = if own { &pool.own } else { &pool.snippets };
            let f = &from[self.below(from.len())];
            if have + f.tokens.len() > budget && !f.cuts_cleanly(have + f.tokens.len() - budget) {
                // Cut there, the text would read differently ("it's" cut before "'s"): draw
                // another sentence to end on.
                continue;
            }
            have += f.tokens.len();
            fillers.push(f);
        }
        // The last sentence overshot the budget by less than its own length: it goes first,
        // cut from the front.
        let cut = have - budget;
        if let Some(last) = fillers.pop() {
            fillers.insert(0, last);
        }
        // Facts go between fillers (or before the first, or after the last): slot of each fact.
        let mut slots: Vec<usize> = (0..facts).map(|_| self.below(fillers.len() + 1)).collect();
        slots.sort_unstable();
        let mut text = String::new();
        let mut tokens: Vec<String> = Vec::with_capacity(len);
        let mut answer_at = 0;
        let mut next_fact = 0;
        let mut put_facts = |slot: usize, text: &mut String, tokens: &mut Vec<String>| {
            while next_fact < facts && slots[next_fact] == slot {
                let k = order[next_fact];
                let (noun, name) = &keys[k];
                if k == 0 {
                    answer_at = tokens.len() + 5;
                }
                sentence(
                    text,
                    &format!("The {noun} of {} is {}.", capitalise(name), numbers[k]),
                );
                tokens.extend(
                    ["the", noun, "of", name, "is", &numbers[k].to_string(), "."].map(String::from),
                );
                next_fact += 1;
            }
        };
        for (i, f) in fillers.iter().enumerate() {
            put_facts(i, &mut text, &mut tokens);
            let skip = if i == 0 { cut } else { 0 };
            if skip < f.tokens.len() {
                sentence(&mut text, &f.text[f.tokens[skip].start..]);
                tokens.extend(f.tokens[skip..].iter().map(|t| t.text.clone()));
            }
        }
        put_facts(fillers.len(), &mut text, &mut tokens);
        let (noun, name) = &keys[0];
        sentence(
            &mut text,
            &format!("What is the {noun} of {}?", capitalise(name)),
        );
        tokens.extend(["what", "is", "the", noun, "of", name, "?"].map(String::from));
        debug_assert_eq!(tokens.len(), len);
        let stated = keys
            .into_iter()
            .zip(&numbers)
            .map(|((noun, name), &n)| (noun, name, n))
            .collect();
        Example {
            text,
            tokens,
            answer: numbers[0],
            facts,
            answer_at,
            stated,
        }
    }

    /// A training context of exactly `len` tokens with `facts` facts and one question about
    /// each fact (`len` at least `14 · facts`).
    pub fn training(&mut self, len: usize, facts: usize) -> Training {
        let extra = facts - 1;
        let e = self.example(len - QUESTION_TOKENS * extra, facts);
        let mut tokens = e.tokens;
        let mut questions = vec![(tokens.len() - 1, e.answer)];
        let mut rest: Vec<usize> = (1..facts).collect();
        for i in (1..rest.len()).rev() {
            let j = self.below(i + 1);
            rest.swap(i, j);
        }
        for k in rest {
            let (noun, name, n) = &e.stated[k];
            tokens.extend(["what", "is", "the", noun, "of", name, "?"].map(String::from));
            questions.push((tokens.len() - 1, *n));
        }
        Training { tokens, questions }
    }
}

fn sentence(text: &mut String, s: &str) {
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(s);
}

fn capitalise(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use diffattn::retrieval::task::Layout;

    fn data() -> TaskData {
        // A few snippets per split stand in for the reviews.
        let snippets: Vec<String> = (0..300)
            .map(|i| {
                format!(
                    "it's a review snippet that isn't about film {} , really",
                    "x".repeat(i % 7 + 1)
                )
            })
            .collect();
        TaskData::from_parts(snippets.iter().map(String::as_str))
    }

    #[test]
    fn the_splits_share_no_name_noun_or_own_filler() {
        let d = data();
        for (a, b) in [
            (&d.train, &d.test),
            (&d.train, &d.validation),
            (&d.validation, &d.test),
        ] {
            assert!(a.names.iter().all(|n| !b.names.contains(n)));
            assert!(a.nouns.iter().all(|n| !b.nouns.contains(n)));
            assert!(a.own.iter().all(|f| b.own.iter().all(|g| g.text != f.text)));
        }
        assert!(
            d.test.names.len() >= 50 && d.test.nouns.len() >= 20,
            "enough test keys"
        );
        assert!(d.test.own.len() >= 20);
    }

    #[test]
    fn every_key_and_number_is_one_token_of_its_own_in_the_vocabulary() {
        let d = data();
        let vocab: HashSet<&str> = d.vocab.iter().map(String::as_str).collect();
        for pool in [&d.train, &d.validation, &d.test] {
            for k in pool.names.iter().chain(&pool.nouns) {
                assert!(vocab.contains(k.as_str()), "{k}");
                assert_eq!(tokenize(&capitalise(k)).len(), 1, "{k}");
            }
        }
        for n in 0..ANSWERS {
            let s = n.to_string();
            assert!(vocab.contains(s.as_str()));
            // "42." is the number and a full stop.
            let t: Vec<String> = tokenize(&format!("{n}."))
                .into_iter()
                .map(|t| t.text)
                .collect();
            assert_eq!(t, [s, ".".to_string()]);
        }
    }

    #[test]
    fn contexts_have_the_exact_length_and_read_back_to_their_answer() {
        let d = data();
        let mut g = Generator::new(&d.test, 7);
        for (len, facts) in [(49, 6), (50, 6), (64, 1), (200, 3), (512, 6), (14, 1)] {
            for _ in 0..20 {
                let e = g.example(len, facts);
                assert_eq!(e.tokens.len(), len);
                let retokenized: Vec<String> =
                    tokenize(&e.text).into_iter().map(|t| t.text).collect();
                assert_eq!(retokenized, e.tokens, "{}", e.text);
                let layout = Layout::read(&e.tokens).expect("ends with the question");
                assert_eq!(layout.facts.len(), facts, "{}", e.text);
                assert_eq!(layout.expected(), Some(e.answer));
                assert_eq!(layout.answer_tokens(), vec![e.answer_at]);
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_contexts() {
        let d = data();
        let a: Vec<String> = (0..5)
            .map(|_| ())
            .scan(Generator::new(&d.train, 3), |g, _| {
                Some(g.example(100, 4).text)
            })
            .collect();
        let b: Vec<String> = (0..5)
            .map(|_| ())
            .scan(Generator::new(&d.train, 3), |g, _| {
                Some(g.example(100, 4).text)
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a[0], a[1]);
    }
}
