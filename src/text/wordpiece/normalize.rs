//! The BERT tokenizer's text steps before word pieces, as Hugging Face `tokenizers` does them
//! (its `BertNormalizer` and `BertPreTokenizer`, the ones `tokenizer.json` of an uncased BERT
//! names): clean the text, put spaces around Chinese characters, strip accents, lower-case, then
//! split into words at whitespace and around punctuation.
//!
//! Every character of the normalised text keeps the byte range of the character of the input it
//! came from, so each word (and later each word piece) can point back into the typed text.

use std::ops::Range;

use unicode_categories::UnicodeCategories;
use unicode_normalization::char::{canonical_combining_class, decompose_canonical};

/// Which normalisation steps run (the fields of `BertNormalizer` in `tokenizer.json`; its
/// `strip_accents: null` means "as `lowercase`").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Normalization {
    /// Drop NUL, U+FFFD and control characters; every whitespace character becomes a space.
    pub clean_text: bool,
    /// Put spaces around each CJK ideograph, so that each is a word of its own.
    pub chinese_chars: bool,
    /// Canonical decomposition (NFD), then every nonspacing mark (Mn) dropped.
    pub strip_accents: bool,
    /// Lower-case every character (Unicode's full mapping, `char::to_lowercase`).
    pub lowercase: bool,
}

impl Normalization {
    /// The uncased BERT's: every step.
    pub const UNCASED: Normalization = Normalization {
        clean_text: true,
        chinese_chars: true,
        strip_accents: true,
        lowercase: true,
    };
}

/// One character of the normalised text and the bytes of the input it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Normalized {
    pub c: char,
    pub from: Range<usize>,
}

/// Whitespace as BERT's cleaning sees it: tab, newline, carriage return and every character
/// with Unicode's `White_Space` property.
fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// A control character as BERT's cleaning sees it: Unicode's Cc, Cf and Co, except tab, newline
/// and carriage return (which are whitespace).
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && c.is_other()
}

/// The CJK ideographs Hugging Face's `BertNormalizer` puts spaces around: the CJK Unified
/// Ideographs and their extensions A to E (its fifth range starts at U+2B920, not U+2B820 as in
/// the original Python tokenizer: the library's, kept here so that the pieces agree), and the
/// compatibility ideographs. Hiragana, katakana and hangul are not among them.
pub fn is_chinese_char(c: char) -> bool {
    matches!(
        c as u32,
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

/// Punctuation as BERT's pre-tokenizer sees it: ASCII punctuation (``!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~``,
/// symbols among them) and every character of Unicode's P categories.
pub fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// The normalised characters of `text`, which starts at byte `at` of the input.
pub(super) fn normalize(text: &str, at: usize, steps: Normalization) -> Vec<Normalized> {
    let mut out: Vec<Normalized> = Vec::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        let from = at + i..at + i + c.len_utf8();
        let c = if steps.clean_text {
            if c == '\0' || c == '\u{FFFD}' || is_control(c) {
                continue;
            }
            if is_whitespace(c) {
                ' '
            } else {
                c
            }
        } else {
            c
        };
        let push = |out: &mut Vec<Normalized>, c: char| {
            out.push(Normalized {
                c,
                from: from.clone(),
            })
        };
        if steps.chinese_chars && is_chinese_char(c) {
            push(&mut out, ' ');
            push(&mut out, c);
            push(&mut out, ' ');
        } else if steps.strip_accents {
            decompose_canonical(c, |d| push(&mut out, d));
        } else {
            push(&mut out, c);
        }
    }
    if steps.strip_accents {
        // NFD's canonical ordering: within each run of combining marks (combining class > 0),
        // a stable sort by class. Then the nonspacing marks go.
        reorder_marks(&mut out);
        out.retain(|n| !n.c.is_mark_nonspacing());
    }
    if steps.lowercase {
        let mut lower = Vec::with_capacity(out.len());
        for n in out {
            lower.extend(n.c.to_lowercase().map(|c| Normalized {
                c,
                from: n.from.clone(),
            }));
        }
        out = lower;
    }
    out
}

/// The canonical ordering of NFD (Unicode Standard §3.11, D109): each maximal run of characters
/// with a nonzero combining class sorted, stably, by class.
fn reorder_marks(chars: &mut [Normalized]) {
    let mut i = 0;
    while i < chars.len() {
        if canonical_combining_class(chars[i].c) == 0 {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && canonical_combining_class(chars[i].c) != 0 {
            i += 1;
        }
        chars[start..i].sort_by_key(|n| canonical_combining_class(n.c));
    }
}

/// The words of normalised text: split at whitespace (dropped), each punctuation character a
/// word of its own. Each word is its characters' range in `chars`.
pub(super) fn words(chars: &[Normalized]) -> Vec<Range<usize>> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, n) in chars.iter().enumerate() {
        if n.c.is_whitespace() {
            if let Some(s) = start.take() {
                words.push(s..i);
            }
        } else if is_punctuation(n.c) {
            if let Some(s) = start.take() {
                words.push(s..i);
            }
            words.push(i..i + 1);
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(s..chars.len());
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(chars: &[Normalized]) -> String {
        chars.iter().map(|n| n.c).collect()
    }

    #[test]
    fn accents_go_after_decomposition_and_case_follows() {
        // "É" decomposes to "E" + U+0301 (a nonspacing mark, dropped), then lower-cases to "e";
        // both characters point back at the two bytes of "É".
        let n = normalize("Éa", 0, Normalization::UNCASED);
        assert_eq!(text(&n), "ea");
        assert_eq!(n[0].from, 0..2);
        assert_eq!(n[1].from, 2..3);
    }

    #[test]
    fn controls_go_and_whitespace_becomes_spaces() {
        // U+200B (Cf) and U+0007 (Cc) are dropped; a tab and U+3000 are spaces.
        let n = normalize("a\u{200B}b\u{7}\tc\u{3000}d", 0, Normalization::UNCASED);
        assert_eq!(text(&n), "ab c d");
    }

    #[test]
    fn chinese_characters_become_words_of_their_own_but_kana_do_not() {
        let n = normalize("我爱ひらがな", 0, Normalization::UNCASED);
        let words: Vec<String> = words(&n).into_iter().map(|w| text(&n[w])).collect();
        assert_eq!(words, ["我", "爱", "ひらかな"]);
    }

    #[test]
    fn punctuation_is_split_out_and_whitespace_dropped() {
        let n = normalize("Hey,  you!? $5", 0, Normalization::UNCASED);
        let words: Vec<String> = words(&n).into_iter().map(|w| text(&n[w])).collect();
        assert_eq!(words, ["hey", ",", "you", "!", "?", "$", "5"]);
    }

    #[test]
    fn marks_are_put_in_canonical_order() {
        // U+0323 (class 220) sorts before U+0301 (class 230) whatever order they were typed in;
        // without stripping, NFD keeps them.
        let steps = Normalization {
            strip_accents: true,
            ..Normalization::UNCASED
        };
        let mut a = vec![
            Normalized { c: 'e', from: 0..1 },
            Normalized {
                c: '\u{301}',
                from: 1..3,
            },
            Normalized {
                c: '\u{323}',
                from: 3..5,
            },
        ];
        reorder_marks(&mut a);
        assert_eq!(text(&a), "e\u{323}\u{301}");
        assert_eq!(text(&normalize("e\u{301}\u{323}", 0, steps)), "e");
    }
}
