//! The uncased BERT tokenizer, exactly as Hugging Face `tokenizers` runs the `tokenizer.json` of
//! all-MiniLM-L6-v2 (docs/MINILM.md): the special tokens matched in the raw text first (its
//! `added_tokens`, not normalised), then `BertNormalizer` and `BertPreTokenizer`
//! ([`normalize`](self::normalize)), then the `WordPiece` model: each word cut greedily into
//! the longest pieces of the vocabulary from the left, every piece after the first written with
//! the `##` prefix, and a word with no such cut, or longer than 100 characters, one `[UNK]`.
//! `[CLS]` and `[SEP]` go around the pieces (its `TemplateProcessing`), and a text of more
//! pieces than the model has positions is cut, as its truncation does, and says so.
//!
//! Every piece keeps the bytes of the text it came from, so a page can label it.

pub mod normalize;

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::ops::Range;

pub use normalize::{is_chinese_char, is_punctuation, Normalization};

/// How the tokenizer is set up: what `tokenizer.json` says, in the weights file's header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordPieceSettings {
    /// The normaliser's steps.
    pub normalization: Normalization,
    /// The prefix of a piece that continues a word (`##`).
    pub prefix: String,
    /// A word of more characters is one unknown token (100).
    pub max_word_chars: usize,
    /// The unknown token (`[UNK]`).
    pub unk: String,
    /// The token that opens every sequence (`[CLS]`).
    pub cls: String,
    /// The token that closes it (`[SEP]`).
    pub sep: String,
    /// The special tokens matched in the raw text before anything else (`[PAD]`, `[UNK]`,
    /// `[CLS]`, `[SEP]`, `[MASK]`): typed as they are, each is that one token.
    pub specials: Vec<String>,
}

impl WordPieceSettings {
    /// The settings of an uncased BERT's `tokenizer.json`.
    pub fn uncased_bert() -> WordPieceSettings {
        WordPieceSettings {
            normalization: Normalization::UNCASED,
            prefix: "##".to_string(),
            max_word_chars: 100,
            unk: "[UNK]".to_string(),
            cls: "[CLS]".to_string(),
            sep: "[SEP]".to_string(),
            specials: ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                .map(str::to_string)
                .to_vec(),
        }
    }
}

/// FNV-1a over the bytes `Hash` writes: the vocabulary comes from the weights file, so there is
/// no flooding to resist, and the wasm then carries no SipHash with random keys.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// A word-piece vocabulary with its settings.
#[derive(Debug, Clone)]
pub struct WordPiece {
    vocab: Vec<String>,
    index: HashMap<String, u32, BuildHasherDefault<Fnv>>,
    settings: WordPieceSettings,
    unk: u32,
    cls: u32,
    sep: u32,
    /// The special tokens and their ids, longest first (the library matches leftmost-longest).
    specials: Vec<(String, u32)>,
    /// The longest token's length in bytes: no longer candidate can match, so none is tried.
    longest: usize,
}

/// A text cut into word pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pieces {
    /// The pieces' ids in the vocabulary, `[CLS]` first and `[SEP]` last.
    pub ids: Vec<u32>,
    /// The pieces as the vocabulary writes them (`##` on continuations).
    pub pieces: Vec<String>,
    /// The bytes of the text each piece came from (`None` for `[CLS]` and `[SEP]`; an unknown
    /// word's `[UNK]` covers the whole word).
    pub offsets: Vec<Option<Range<usize>>>,
    /// Whether the text had more pieces than fit, and was cut.
    pub truncated: bool,
}

impl WordPiece {
    /// A tokenizer over `vocab` (token `i` has id `i`). Refuses a vocabulary without the
    /// settings' special tokens, or with a token twice.
    pub fn new(vocab: Vec<String>, settings: WordPieceSettings) -> Result<WordPiece, String> {
        if u32::try_from(vocab.len()).is_err() {
            return Err(format!("{} tokens; at most 2^32", vocab.len()));
        }
        let mut index = HashMap::with_capacity_and_hasher(vocab.len(), Default::default());
        for (i, t) in vocab.iter().enumerate() {
            if index.insert(t.clone(), i as u32).is_some() {
                return Err(format!("vocabulary: {t:?} twice"));
            }
        }
        let id = |t: &str| {
            index
                .get(t)
                .copied()
                .ok_or_else(|| format!("vocabulary: no {t:?}"))
        };
        let (unk, cls, sep) = (id(&settings.unk)?, id(&settings.cls)?, id(&settings.sep)?);
        let mut specials = settings
            .specials
            .iter()
            .map(|s| match s.is_empty() {
                true => Err("an empty special token".to_string()),
                false => Ok((s.clone(), id(s)?)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        specials.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        if settings.max_word_chars == 0 {
            return Err("max_word_chars: 0".to_string());
        }
        let longest = vocab.iter().map(String::len).max().unwrap_or(0);
        Ok(WordPiece {
            longest,
            vocab,
            index,
            settings,
            unk,
            cls,
            sep,
            specials,
        })
    }

    /// The vocabulary, in id order.
    pub fn vocab(&self) -> &[String] {
        &self.vocab
    }

    /// The settings.
    pub fn settings(&self) -> &WordPieceSettings {
        &self.settings
    }

    /// The id of a token of the vocabulary.
    pub fn id(&self, token: &str) -> Option<u32> {
        self.index.get(token).copied()
    }

    /// `text` cut into pieces, `[CLS]` and `[SEP]` around them, at most `max_pieces` in all
    /// (at least 2): a longer text keeps its first `max_pieces − 2` pieces and is marked
    /// `truncated`. Work stops at the first piece past the limit.
    ///
    /// ```
    /// use diffattn::text::wordpiece::{WordPiece, WordPieceSettings};
    /// let vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "!"];
    /// let wp = WordPiece::new(vocab.map(String::from).to_vec(), WordPieceSettings::uncased_bert()).unwrap();
    /// let p = wp.encode("Unaffable!", 512);
    /// assert_eq!(p.pieces, ["[CLS]", "un", "##aff", "##able", "!", "[SEP]"]);
    /// assert_eq!(p.offsets[2], Some(2..5));
    /// ```
    pub fn encode(&self, text: &str, max_pieces: usize) -> Pieces {
        let body_max = max_pieces.max(2) - 2;
        let mut body: Vec<(u32, Option<Range<usize>>)> = Vec::new();
        let mut truncated = false;
        'segments: for segment in self.segments(text) {
            match segment {
                Segment::Special(id, at) => {
                    if body.len() == body_max {
                        truncated = true;
                        break;
                    }
                    body.push((id, Some(at)));
                }
                Segment::Text(at) => {
                    let chars =
                        normalize::normalize(&text[at.clone()], at.start, self.normalization());
                    for word in normalize::words(&chars) {
                        for piece in self.pieces_of(&chars[word]) {
                            if body.len() == body_max {
                                truncated = true;
                                break 'segments;
                            }
                            body.push(piece);
                        }
                    }
                }
            }
        }
        let mut p = Pieces {
            ids: Vec::with_capacity(body.len() + 2),
            pieces: Vec::with_capacity(body.len() + 2),
            offsets: Vec::with_capacity(body.len() + 2),
            truncated,
        };
        let all = std::iter::once((self.cls, None))
            .chain(body)
            .chain(std::iter::once((self.sep, None)));
        for (id, offset) in all {
            p.ids.push(id);
            p.pieces.push(self.vocab[id as usize].clone());
            p.offsets.push(offset);
        }
        p
    }

    fn normalization(&self) -> Normalization {
        self.settings.normalization
    }

    /// The raw text split around the special tokens typed in it (leftmost, longest first).
    fn segments(&self, text: &str) -> Vec<Segment> {
        let mut out = Vec::new();
        let (mut plain, mut i) = (0, 0);
        while i < text.len() {
            let rest = &text[i..];
            if let Some((s, id)) = self.specials.iter().find(|(s, _)| rest.starts_with(s)) {
                if plain < i {
                    out.push(Segment::Text(plain..i));
                }
                out.push(Segment::Special(*id, i..i + s.len()));
                i += s.len();
                plain = i;
            } else {
                i += rest.chars().next().map_or(1, char::len_utf8);
            }
        }
        if plain < text.len() {
            out.push(Segment::Text(plain..text.len()));
        }
        out
    }

    /// One word's pieces: greedy longest match from the left, `##` after the first; the whole
    /// word one `[UNK]` when some rest has no piece, or when it is too long.
    fn pieces_of(&self, word: &[normalize::Normalized]) -> Vec<(u32, Option<Range<usize>>)> {
        let span = |w: &[normalize::Normalized]| match (w.first(), w.last()) {
            (Some(a), Some(b)) => Some(a.from.start..b.from.end),
            _ => None,
        };
        let unknown = || vec![(self.unk, span(word))];
        if word.len() > self.settings.max_word_chars {
            return unknown();
        }
        let text: String = word.iter().map(|n| n.c).collect();
        // Byte offset in `text` of each character, and the end.
        let bounds: Vec<usize> = text
            .char_indices()
            .map(|(b, _)| b)
            .chain(std::iter::once(text.len()))
            .collect();
        let mut pieces = Vec::new();
        let mut start = 0;
        let mut key = String::new();
        while start < word.len() {
            // The longest candidate that could be a token (with the prefix after the first);
            // the greedy match tries the same candidates as the library from there down.
            let room = self.longest.saturating_sub(if start > 0 {
                self.settings.prefix.len()
            } else {
                0
            });
            let mut end = word.len();
            while end > start && bounds[end] - bounds[start] > room {
                end -= 1;
            }
            let found = loop {
                if end == start {
                    break None;
                }
                key.clear();
                if start > 0 {
                    key.push_str(&self.settings.prefix);
                }
                key.push_str(&text[bounds[start]..bounds[end]]);
                if let Some(&id) = self.index.get(key.as_str()) {
                    break Some(id);
                }
                end -= 1;
            };
            match found {
                Some(id) => pieces.push((id, span(&word[start..end]))),
                None => return unknown(),
            }
            start = end;
        }
        pieces
    }
}

/// A part of the raw text: a special token typed as it is, or text to normalise.
enum Segment {
    Special(u32, Range<usize>),
    Text(Range<usize>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer(words: &[&str]) -> WordPiece {
        let mut vocab: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
            .map(String::from)
            .to_vec();
        vocab.extend(words.iter().map(|w| w.to_string()));
        WordPiece::new(vocab, WordPieceSettings::uncased_bert()).unwrap()
    }

    #[test]
    fn the_longest_piece_wins_and_a_word_without_a_cut_is_unknown() {
        let wp = tokenizer(&["a", "ab", "abc", "##c", "##d", "x"]);
        // "abcd": "abc" (longest), then "##d". "abx": "ab" then "x" has no "##x": all [UNK].
        assert_eq!(
            wp.encode("abcd abx", 512).pieces[1..5],
            ["abc", "##d", "[UNK]", "[SEP]"]
        );
        assert_eq!(wp.encode("abx", 512).offsets[1], Some(0..3));
    }

    #[test]
    fn special_tokens_typed_are_kept_case_sensitively() {
        let wp = tokenizer(&["a", "[", "]", "mask"]);
        let p = wp.encode("a[MASK] [mask]", 512);
        assert_eq!(
            p.pieces,
            ["[CLS]", "a", "[MASK]", "[", "mask", "]", "[SEP]"]
        );
        assert_eq!(p.offsets[2], Some(1..7));
    }

    #[test]
    fn a_long_text_is_cut_to_the_limit_and_says_so() {
        let wp = tokenizer(&["a"]);
        let p = wp.encode("a a a a a", 5);
        assert_eq!(p.pieces, ["[CLS]", "a", "a", "a", "[SEP]"]);
        assert!(p.truncated);
        assert!(!wp.encode("a a a", 5).truncated);
    }

    #[test]
    fn a_word_over_the_character_limit_is_one_unknown() {
        let wp = tokenizer(&["a", "##a"]);
        assert_eq!(wp.encode(&"a".repeat(100), 512).pieces.len(), 2 + 100);
        assert_eq!(wp.encode(&"a".repeat(101), 512).pieces[1], "[UNK]");
    }

    #[test]
    fn a_vocabulary_without_the_special_tokens_is_refused() {
        let e = WordPiece::new(vec!["a".into()], WordPieceSettings::uncased_bert()).unwrap_err();
        assert!(e.contains("[UNK]"), "{e}");
    }
}
