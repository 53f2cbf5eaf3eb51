//! The tokenizer: a typed sentence to lower-cased words, numbers, punctuation, CJK characters and emoji, each with its byte span.
//!
//! The text is first cut into grapheme clusters (Unicode UAX #29, extended), so that a letter
//! keeps its combining marks and an emoji sequence (ZWJ families, flags, skin tones, keycaps,
//! tag sequences) stays one unit. Each cluster is then classified by its first visible
//! character, and runs of letters and digits become words:
//!
//! * **Words** are runs of letters and digits in any alphabetic script (Latin, Cyrillic, Greek,
//!   Arabic, Hebrew, Devanagari, …), lower-cased with Unicode's `to_lowercase`. Right-to-left
//!   words need nothing special: spans are logical (memory) order, which is the order the model
//!   reads them in.
//! * **Numbers** stay whole: a `.` or `,` (or the Arabic decimal and thousands separators
//!   U+066B and U+066C) between two digits joins them, so `3.5` and `1,000` are one token each.
//! * **Contractions** split the way the Penn Treebank does, which is how the Stanford Sentiment
//!   Treebank and the sentiment models trained on it see text: `don't` → `do` `n't`,
//!   `can't` → `ca` `n't`, `it's` → `it` `'s`, `they're` → `they` `'re`, and likewise `'m`
//!   `'d` `'ll` `'ve`. Negation then always arrives as the one token `n't`, which is what a
//!   sentiment model most needs to see. An apostrophe between two letters otherwise stays
//!   inside the word (`o'clock`, `l'homme`); anywhere else it is punctuation. The typographic
//!   apostrophe `’` (U+2019), which phones and word processors type, reads as `'`, so `don’t`
//!   gives the same tokens as `don't`.
//! * **Chinese, Japanese and Korean** characters (Han, Hiragana, Katakana, Hangul syllables and
//!   jamo, Bopomofo, CJK punctuation) are one token each, since these scripts put no spaces
//!   between words. Korean does use spaces, but is split per syllable all the same, as
//!   character-level CJK models do.
//! * **Emoji** are one token per grapheme cluster, with their joiners and selectors kept, so
//!   `👨‍👩‍👧` and `🇫🇷` each arrive whole.
//! * **Other punctuation and symbols** are one token per cluster: `!!` is two tokens.
//! * **Whitespace and control characters** separate tokens and never become one.
//! * **Invisible characters** ([`is_invisible`]: zero-width space, joiner and non-joiner outside
//!   emoji, soft hyphen, word joiner, byte-order mark, bidi marks, embeddings, overrides and
//!   isolates, variation selectors, tags) never become tokens and do not split a word either:
//!   `a\u{200B}b` is the one token `ab`. The tokenizer follows what a reader sees, and a reader
//!   of that text sees one word; the same rule keeps words whole when they were pasted with soft
//!   hyphens or bidi marks inside, or when a zero-width space was slipped in to hide a word.
//!
//! Each token keeps the byte span of the original text it came from, so the page can show the
//! original; a span may include invisible characters inside the word. The token text relates
//! to its span exactly: it is [`normalize`] applied to the span, except that an emoji keeps
//! its joiners and selectors and drops only a dangling joiner at its end.
//!
//! The work is linear in the length of the text: clusters are classified and grouped into
//! tokens as they are cut, in one pass that holds back only the word being read, and each
//! cluster is looked at a bounded number of times.

use super::clusters::for_each_cluster;
use super::limits::MAX_TOKENS;

/// One token: the text the model sees and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The token as the model sees it: lower-cased, see [`normalize`].
    pub text: String,
    /// Byte offset of the token's first byte in the input.
    pub start: usize,
    /// Byte offset just past the token's last byte in the input, so `&input[start..end]` is the
    /// original text of the token.
    pub end: usize,
}

/// Splits `text` into tokens; see the module documentation for the rules.
///
/// Never panics, on any string.
///
/// ```
/// use diffattn::text::tokenize;
///
/// let texts = |s: &str| tokenize(s).into_iter().map(|t| t.text).collect::<Vec<_>>();
/// assert_eq!(texts("This movie isn't good!"), ["this", "movie", "is", "n't", "good", "!"]);
/// assert_eq!(texts("It costs 3.5, not 1,000."), ["it", "costs", "3.5", ",", "not", "1,000", "."]);
/// assert_eq!(texts("Hello世界"), ["hello", "世", "界"]);
///
/// let tokens = tokenize("Ünïcode rocks");
/// assert_eq!(tokens[0].text, "ünïcode");
/// assert_eq!(&"Ünïcode rocks"[tokens[0].start..tokens[0].end], "Ünïcode");
/// ```
pub fn tokenize(text: &str) -> Vec<Token> {
    tokenize_up_to(text, usize::MAX).0
}

/// [`tokenize`], keeping only the first [`MAX_TOKENS`] tokens, and the number of tokens there
/// were before that cut.
///
/// ```
/// use diffattn::text::{tokenize_limited, MAX_TOKENS};
///
/// let (tokens, total) = tokenize_limited(&"word ".repeat(3000));
/// assert_eq!((tokens.len(), total), (MAX_TOKENS, 3000));
/// assert_eq!(tokenize_limited("two words").1, 2);
/// ```
pub fn tokenize_limited(text: &str) -> (Vec<Token>, usize) {
    tokenize_up_to(text, MAX_TOKENS)
}

/// [`tokenize`], keeping only the first `keep` tokens, and the number of tokens there were.
///
/// Tokens past `keep` are counted and dropped as they are cut, so the memory is that of `keep`
/// tokens however long the text: a gigabyte of `"a "` costs no more than a short sentence.
///
/// ```
/// use diffattn::text::tokenize_up_to;
///
/// let (tokens, total) = tokenize_up_to("don't stop", 2);
/// let texts: Vec<&str> = tokens.iter().map(|t| t.text.as_str()).collect();
/// assert_eq!((texts, total), (vec!["do", "n't"], 3));
/// ```
pub fn tokenize_up_to(text: &str, keep: usize) -> (Vec<Token>, usize) {
    let mut scanner = Scanner {
        text,
        tokens: Vec::new(),
        word: Vec::new(),
        connector: None,
        keep,
        dropped: 0,
    };
    for_each_cluster(text, |start, cluster| {
        // A prepended mark (such as U+0600) clusters with whatever follows it, even a space, and
        // a combining mark clusters with the space before it (the way isolated accents are
        // shown). Such a cluster is taken character by character, so that no token holds
        // whitespace and no visible mark is lost with the space.
        if cluster.len() > 1 && cluster.chars().any(separates) {
            for (offset, c) in cluster.char_indices() {
                let (start, end) = (start + offset, start + offset + c.len_utf8());
                scanner.feed(start, end, &text[start..end]);
            }
        } else {
            scanner.feed(start, start + cluster.len(), cluster);
        }
        scanner.settle();
    });
    scanner.finish()
}

/// The text the model sees for a span of input: Unicode lower case, invisible characters
/// ([`is_invisible`]) removed, and the typographic apostrophe `’` read as `'`.
///
/// Every token's text is `normalize(&input[start..end])`, except an emoji's, which keeps its
/// joiners and selectors.
///
/// ```
/// use diffattn::text::normalize;
///
/// assert_eq!(normalize("DON’T"), "don't");
/// assert_eq!(normalize("Ab\u{200B}c\u{00AD}d"), "abcd");
/// // Unicode lower case, not just ASCII: a final capital sigma becomes ς.
/// assert_eq!(normalize("ΟΔΟΣ"), "οδος");
/// ```
pub fn normalize(span: &str) -> String {
    // ASCII holds no invisible character and no typographic apostrophe: only the case changes.
    if span.is_ascii() {
        return span.to_ascii_lowercase();
    }
    // Every character but capital sigma lower-cases on its own, in the same pass that drops
    // invisible characters, which saves an allocation per token.
    let mut text = String::with_capacity(span.len());
    for c in span.chars() {
        if c == 'Σ' {
            // Sigma lower-cases by context (σ, or ς at the end of a word), a rule that
            // `str::to_lowercase` knows.
            return span
                .to_lowercase()
                .chars()
                .filter(|&c| !is_invisible(c))
                .map(fold_apostrophe)
                .collect();
        }
        if is_invisible(c) {
            continue;
        }
        if is_cjk(c) {
            // CJK characters have no case (a test checks every one); skipping the case table
            // matters when every character of a long Chinese text is a token.
            text.push(c);
        } else {
            text.extend(fold_apostrophe(c).to_lowercase());
        }
    }
    text
}

/// The typographic apostrophe `’` reads as the plain `'`.
fn fold_apostrophe(c: char) -> char {
    if c == '\u{2019}' {
        '\''
    } else {
        c
    }
}

/// Whether the tokenizer treats `c` as invisible: it never becomes a token and does not split a
/// word.
///
/// These are Unicode's Default_Ignorable_Code_Point characters (DerivedCoreProperties.txt),
/// the ones a renderer draws as nothing: soft hyphen, combining grapheme joiner, Arabic letter
/// mark, Hangul fillers, Khmer inherent vowels, Mongolian free variation selectors, zero-width
/// space, non-joiner and joiner, left-to-right and right-to-left marks, bidi embeddings,
/// overrides and isolates (U+202A..U+202E, U+2066..U+2069), word joiner and invisible
/// operators, variation selectors, byte-order mark, shorthand format controls, musical
/// formatting controls and tags. Whitespace and control characters are not in this set: they
/// separate tokens instead.
///
/// ```
/// use diffattn::text::is_invisible;
///
/// assert!(is_invisible('\u{200B}') && is_invisible('\u{FEFF}') && is_invisible('\u{202E}'));
/// assert!(!is_invisible(' ') && !is_invisible('a'));
/// ```
pub fn is_invisible(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

/// What one grapheme cluster is to the tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A letter of an alphabetic script, with its marks: part of a word.
    Letter,
    /// A digit (any numeric character): part of a word or number.
    Digit,
    /// `'` or `’`: inside a word between two letters or digits, punctuation elsewhere.
    Apostrophe,
    /// `.` `,` U+066B U+066C: inside a number between two digits, punctuation elsewhere.
    NumberSeparator,
    /// An emoji: a token of its own that keeps its joiners and selectors.
    Emoji,
    /// A CJK character, punctuation mark or other symbol: a token of its own.
    Alone,
    /// Whitespace or a control character: separates tokens.
    Space,
}

impl Kind {
    fn is_word(self) -> bool {
        matches!(self, Kind::Letter | Kind::Digit)
    }
}

/// A grapheme cluster (or, rarely, a single character) with its byte span and kind.
#[derive(Debug, Clone, Copy)]
struct Unit {
    start: usize,
    end: usize,
    kind: Kind,
}

/// Groups units into tokens in one pass, holding back only the word being read and a connector
/// that may yet continue it; that keeps the work linear and the memory to one word.
struct Scanner<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    /// The letters, digits and inner connectors of the word being read.
    word: Vec<Unit>,
    /// An apostrophe or separator right after the word, which joins the word if the next unit
    /// fits (see [`joins`]) and is punctuation otherwise.
    connector: Option<Unit>,
    /// How many tokens to keep; later ones are counted in `dropped` and not stored.
    keep: usize,
    /// Tokens cut after the first `keep`.
    dropped: usize,
}

impl Scanner<'_> {
    /// Drops the tokens past `keep`. Tokens are only ever pushed at the end, so the ones past
    /// `keep` are the latest, and calling this after every cluster keeps at most a word's worth
    /// of tokens over the limit.
    fn settle(&mut self) {
        while self.tokens.len() > self.keep {
            self.tokens.pop();
            self.dropped += 1;
        }
    }

    /// Takes the next cluster. A cluster with nothing visible is skipped without ending the
    /// word, which is what makes invisible characters transparent.
    fn feed(&mut self, start: usize, end: usize, cluster: &str) {
        let Some(kind) = classify(cluster) else {
            return;
        };
        let unit = Unit { start, end, kind };
        if let Some(connector) = self.connector.take() {
            if let Some(&last) = self.word.last() {
                if joins(last, connector, unit) {
                    self.word.push(connector);
                    self.word.push(unit);
                    return;
                }
            }
            self.end_word();
            self.tokens
                .push(token(self.text, connector.start, connector.end));
        }
        match kind {
            Kind::Letter | Kind::Digit => self.word.push(unit),
            Kind::Apostrophe | Kind::NumberSeparator if !self.word.is_empty() => {
                self.connector = Some(unit);
            }
            Kind::Space => self.end_word(),
            Kind::Emoji => {
                self.end_word();
                self.tokens.push(emoji_token(self.text, unit));
            }
            // An apostrophe or separator that follows no word is punctuation.
            Kind::Alone | Kind::Apostrophe | Kind::NumberSeparator => {
                self.end_word();
                self.tokens.push(token(self.text, start, end));
            }
        }
    }

    fn end_word(&mut self) {
        if !self.word.is_empty() {
            push_word(self.text, &self.word, &mut self.tokens);
            self.word.clear();
        }
    }

    /// The tokens kept and the number there were in all.
    fn finish(mut self) -> (Vec<Token>, usize) {
        self.end_word();
        if let Some(connector) = self.connector.take() {
            self.tokens
                .push(token(self.text, connector.start, connector.end));
        }
        self.settle();
        let total = self.tokens.len() + self.dropped;
        (self.tokens, total)
    }
}

/// The kind of a cluster, or `None` when it holds nothing visible.
fn classify(cluster: &str) -> Option<Kind> {
    // Most clusters of typed text are one ASCII byte; they skip the Unicode tables. A test
    // checks that this agrees with the general path on all 128 of them.
    if let &[byte] = cluster.as_bytes() {
        return Some(match byte {
            b'\'' => Kind::Apostrophe,
            b'.' | b',' => Kind::NumberSeparator,
            b'0'..=b'9' => Kind::Digit,
            b'a'..=b'z' | b'A'..=b'Z' => Kind::Letter,
            b' ' | 0x00..=0x1f | 0x7f => Kind::Space,
            _ => Kind::Alone,
        });
    }
    classify_any(cluster)
}

/// [`classify`] for any cluster, through the Unicode properties of its first visible character.
fn classify_any(cluster: &str) -> Option<Kind> {
    let base = cluster.chars().find(|&c| !is_invisible(c))?;
    // The order matters: an emoji keycap starts with a digit, and some emoji sit in CJK blocks.
    let kind = if separates(base) {
        Kind::Space
    } else if is_emoji_base(base) || (cluster.len() > base.len_utf8() && has_keycap(cluster)) {
        // U+20E3 makes a keycap of a digit, `#` or `*`: `1️⃣` is a picture, not a number.
        Kind::Emoji
    } else if is_cjk(base) {
        Kind::Alone
    } else if base == '\'' || base == '\u{2019}' {
        Kind::Apostrophe
    } else if matches!(base, '.' | ',' | '\u{066B}' | '\u{066C}') {
        Kind::NumberSeparator
    } else if base.is_numeric() {
        Kind::Digit
    } else if base.is_alphabetic() {
        Kind::Letter
    } else {
        Kind::Alone
    };
    Some(kind)
}

/// Whether the cluster holds U+20E3 COMBINING ENCLOSING KEYCAP. A plain scan, since a
/// substring search costs more than it saves on strings this short.
fn has_keycap(cluster: &str) -> bool {
    cluster.chars().any(|c| c == '\u{20E3}')
}

/// Whitespace and control characters separate tokens.
fn separates(c: char) -> bool {
    c.is_whitespace() || c.is_control()
}

/// Characters that start an emoji: the emoji and pictograph blocks, the regional indicators of
/// flags, and the older symbols that have emoji forms (©, ®, ‼, ™, ℹ, arrows, ⌚, Ⓜ, the
/// Miscellaneous Symbols and Dingbats, ⬛, 〰, 〽, ㊗, ㊙).
///
/// Most of these would be single tokens anyway; what the list decides is that their joiners and
/// selectors are kept, and that a letter-like one such as ℹ (U+2139) is not read as a word.
fn is_emoji_base(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00A9
            | 0x00AE
            | 0x203C
            | 0x2049
            | 0x2122
            | 0x2139
            | 0x2190..=0x21FF
            | 0x2300..=0x23FF
            | 0x24C2
            | 0x25A0..=0x27BF
            | 0x2934..=0x2935
            | 0x2B00..=0x2BFF
            | 0x3030
            | 0x303D
            | 0x3297
            | 0x3299
            | 0x1F000..=0x1FAFF
            | 0x1FC00..=0x1FFFD
    )
}

/// Characters of the Chinese, Japanese and Korean writing systems, one token each: Hangul jamo,
/// CJK radicals and description characters, CJK symbols and punctuation (U+3001..U+303F, after
/// the ideographic space, which is whitespace), Hiragana, Katakana, Bopomofo, Hangul
/// compatibility jamo, Kanbun, CJK strokes, enclosed CJK letters, CJK compatibility, the
/// unified ideographs and their extensions, Hangul syllables and extended jamo, CJK
/// compatibility ideographs and forms, halfwidth CJK punctuation, Katakana and Hangul, the Kana
/// supplements, and the supplementary ideographic planes.
fn is_cjk(c: char) -> bool {
    matches!(
        u32::from(c),
        0x1100..=0x11FF
            | 0x2E80..=0x2FFF
            | 0x3001..=0x303F
            | 0x3040..=0x33FF
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xA960..=0xA97F
            | 0xAC00..=0xD7FF
            | 0xF900..=0xFAFF
            | 0xFE30..=0xFE4F
            | 0xFF61..=0xFFDC
            | 0x1AFF0..=0x1B16F
            | 0x20000..=0x3FFFD
    )
}

/// Whether `connector` joins the word unit `before` to the unit `after`: an apostrophe between
/// two letters or digits, or a number separator between two digits.
fn joins(before: Unit, connector: Unit, after: Unit) -> bool {
    match connector.kind {
        Kind::Apostrophe => before.kind.is_word() && after.kind.is_word(),
        Kind::NumberSeparator => before.kind == Kind::Digit && after.kind == Kind::Digit,
        _ => false,
    }
}

/// Pushes the tokens of one word, `units` being its letters, digits and inner connectors:
/// the word itself, or its stem followed by the contraction suffixes peeled off its end.
fn push_word(text: &str, units: &[Unit], tokens: &mut Vec<Token>) {
    let Some(&Unit { end, .. }) = units.last() else {
        return;
    };
    let Some(first_split) = contraction_split(text, units) else {
        // Most words have no contraction; they cost no allocation beyond their token.
        tokens.push(token(text, units[0].start, end));
        return;
    };
    // Suffixes are found from the end backwards; a loop rather than recursion, because a
    // pathological word such as `x's's's…` may hold thousands of them.
    let mut splits = vec![first_split];
    let mut stem_len = first_split;
    while let Some(split) = contraction_split(text, &units[..stem_len]) {
        splits.push(split);
        stem_len = split;
    }
    tokens.push(token(text, units[0].start, units[stem_len - 1].end));
    // In reading order, each suffix runs from its split to the next one (or the word's end).
    for (i, &split) in splits.iter().enumerate().rev() {
        let suffix_end = if i == 0 {
            end
        } else {
            units[splits[i - 1]].start
        };
        tokens.push(token(text, units[split].start, suffix_end));
    }
}

/// Where the English contraction at the end of `word` starts, if it ends in one and something
/// is left before it: at the `n` of `n't`, or at the apostrophe of `'s` `'m` `'d` `'re` `'ve`
/// `'ll`.
fn contraction_split(text: &str, word: &[Unit]) -> Option<usize> {
    let is = |index: usize, letter: char| {
        let mut visible = text[word[index].start..word[index].end]
            .chars()
            .filter(|&c| !is_invisible(c));
        matches!((visible.next(), visible.next()), (Some(c), None) if c.eq_ignore_ascii_case(&letter))
    };
    let apostrophe = |index: usize| word[index].kind == Kind::Apostrophe;
    let n = word.len();
    // `n't` needs a letter before the `n`: the stem must not be empty.
    if n >= 4 && is(n - 1, 't') && apostrophe(n - 2) && is(n - 3, 'n') {
        return Some(n - 3);
    }
    if n >= 3 && apostrophe(n - 2) && ['s', 'm', 'd'].iter().any(|&c| is(n - 1, c)) {
        return Some(n - 2);
    }
    let two_letter_suffix = |a: char, b: char| is(n - 2, a) && is(n - 1, b);
    if n >= 4
        && apostrophe(n - 3)
        && (two_letter_suffix('r', 'e')
            || two_letter_suffix('v', 'e')
            || two_letter_suffix('l', 'l'))
    {
        return Some(n - 3);
    }
    None
}

fn token(text: &str, start: usize, end: usize) -> Token {
    Token {
        text: normalize(&text[start..end]),
        start,
        end,
    }
}

/// An emoji keeps its joiners and selectors, which are part of the picture; only a dangling
/// zero-width joiner at the end, which joins nothing, is dropped, so `👍` followed by a stray
/// joiner is still `👍`. Lower case and the apostrophe are treated as in [`normalize`], for the
/// rare cluster that holds a letter or an apostrophe.
fn emoji_token(text: &str, unit: Unit) -> Token {
    let lower: String = text[unit.start..unit.end]
        .to_lowercase()
        .chars()
        .map(fold_apostrophe)
        .collect();
    Token {
        text: lower.trim_end_matches('\u{200D}').to_owned(),
        start: unit.start,
        end: unit.end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ascii_shortcut_agrees_with_the_general_path() {
        for byte in 0..=0x7f_u8 {
            let cluster = char::from(byte).to_string();
            assert_eq!(
                classify(&cluster),
                classify_any(&cluster),
                "byte {byte:#04x}"
            );
        }
    }

    #[test]
    fn cjk_characters_have_no_case() {
        for c in (0..=0x10_FFFF_u32)
            .filter_map(char::from_u32)
            .filter(|&c| is_cjk(c))
        {
            assert!(
                c.to_lowercase().eq([c]),
                "U+{:04X} has a lower case",
                u32::from(c)
            );
            assert!(!separates(c) && c != '\u{2019}', "U+{:04X}", u32::from(c));
        }
    }
}
