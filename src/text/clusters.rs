//! Grapheme clusters (UAX #29, extended) with a fast path for the characters that never combine with a neighbour.
//!
//! `unicode-segmentation` applies every rule of UAX #29 to every character, which costs tens of
//! nanoseconds a character. Most typed text (ASCII, Latin, Greek, Cyrillic, CJK ideographs,
//! kana) is made of characters that can never join their neighbour: between two of them the
//! standard always breaks. Runs of such characters are cut one character per cluster here, and
//! only the stretches around the others (combining marks, emoji, Hangul, Indic scripts, CR LF)
//! go through the full algorithm. The result is exactly `text.grapheme_indices(true)`, which a
//! test checks character by character and on arbitrary strings.

use unicode_segmentation::UnicodeSegmentation;

/// Calls `each(start, cluster)` for every extended grapheme cluster of `text`, in order: the
/// same clusters as `text.grapheme_indices(true)`.
pub(crate) fn for_each_cluster(text: &str, mut each: impl FnMut(usize, &str)) {
    let mut chars = text.char_indices().peekable();
    while let Some((pos, first)) = chars.next() {
        let end = pos + first.len_utf8();
        let next = chars.peek().map(|&(_, next)| next);
        if never_joins(first) && next.is_none_or(never_joins) {
            // Between two characters that never join, UAX #29 always breaks (rule GB999).
            each(pos, &text[pos..end]);
            continue;
        }
        // `pos` is a boundary, so the full algorithm can start here. It runs up to the next
        // place where two characters that never join meet, which is a boundary again; no rule
        // of UAX #29 looks back across such a boundary, so cutting the slice there changes no
        // cluster.
        let stretch_end = next_certain_boundary(text, end);
        for (offset, cluster) in text[pos..stretch_end].grapheme_indices(true) {
            each(pos + offset, cluster);
        }
        while chars.next_if(|&(i, _)| i < stretch_end).is_some() {}
    }
}

/// The first byte offset at or after `from` where a never-joining character follows another,
/// or the end of the text.
///
/// The character before `from` is deliberately not consulted: it is the first character of a
/// stretch that needs the full algorithm, and may join the one at `from`.
fn next_certain_boundary(text: &str, from: usize) -> usize {
    let mut previous_never_joins = false;
    for (offset, c) in text[from..].char_indices() {
        let joins_nothing = never_joins(c);
        if joins_nothing && previous_never_joins {
            return from + offset;
        }
        previous_never_joins = joins_nothing;
    }
    text.len()
}

/// Characters that UAX #29 never joins to the character before or after them: neither CR,
/// Extend, ZWJ, SpacingMark, Prepend, a Hangul jamo or syllable, nor a regional indicator. Two
/// such characters in a row always have a boundary between them (GB4, GB5 or GB999).
///
/// The ranges are deliberately conservative (whole blocks known to hold only letters, digits,
/// punctuation and controls); anything else simply takes the full algorithm.
fn never_joins(c: char) -> bool {
    matches!(
        u32::from(c),
        0x0000..=0x000C
            | 0x000E..=0x007F
            | 0x00A0..=0x02FF
            | 0x0370..=0x0482
            | 0x048A..=0x052F
            | 0x05D0..=0x05EA
            | 0x0621..=0x064A
            | 0x0660..=0x0669
            | 0x1E00..=0x1FFF
            | 0x2010..=0x2027
            | 0x2030..=0x205E
            | 0x3000..=0x3029
            | 0x3041..=0x3096
            | 0x30A1..=0x30FA
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xFF01..=0xFF5E
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clusters(text: &str) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for_each_cluster(text, |start, cluster| out.push((start, cluster.to_owned())));
        out
    }

    fn reference(text: &str) -> Vec<(usize, String)> {
        text.grapheme_indices(true)
            .map(|(start, cluster)| (start, cluster.to_owned()))
            .collect()
    }

    #[test]
    fn every_never_joining_character_is_of_a_class_that_never_joins() {
        // Each probe pair must split in two, which rules out one group of joining classes:
        // after `a`, Extend, ZWJ and SpacingMark (GB9, GB9a); before `a`, Prepend (GB9b);
        // after a Hangul L, the jamo V, LV and LVT and another L (GB6); before a Hangul T, the
        // jamo LV, V, LVT and T (GB7, GB8); after a regional indicator, another one (GB12).
        // CR (GB3) is left out of the ranges by hand.
        let count = |text: String| text.graphemes(true).count();
        for c in (0..=0x10_FFFF_u32)
            .filter_map(char::from_u32)
            .filter(|&c| never_joins(c))
        {
            let code = u32::from(c);
            assert_eq!(
                count(format!("a{c}")),
                2,
                "U+{code:04X} joins what precedes it"
            );
            assert_eq!(count(format!("{c}a")), 2, "U+{code:04X} is a Prepend");
            assert_eq!(count(format!("\u{1100}{c}")), 2, "U+{code:04X} is Hangul");
            assert_eq!(count(format!("{c}\u{11A8}")), 2, "U+{code:04X} is Hangul");
            assert_eq!(
                count(format!("\u{1F1E6}{c}")),
                2,
                "U+{code:04X} is a regional indicator"
            );
        }
        assert!(!never_joins('\r'));
    }

    #[test]
    fn sentences_cluster_like_the_full_algorithm() {
        for text in [
            "",
            "plain ascii, with CR LF\r\n and tabs\t",
            "cafe\u{0301} naïve Ωμέγα привет",
            "这部电影不好看。カタカナ 한국어",
            "👨\u{200D}👩\u{200D}👧 🇫🇷🇩🇪 👍🏽 1\u{FE0F}\u{20E3} 🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}",
            "क्षत्रिय हिन्दी \u{0600}١٢ a\u{200B}b",
            "\u{1F1E6}\u{1F1E7}\u{1F1E8}x\u{1F1E6}",
        ] {
            assert_eq!(clusters(text), reference(text), "{text:?}");
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2_000))]

            #[test]
            fn clusters_match_the_full_algorithm(text in any::<String>()) {
                prop_assert_eq!(clusters(&text), reference(&text));
            }

            #[test]
            fn clusters_match_on_mixed_joiners(
                text in "[a\r\n\u{0301}\u{200D}\u{0903}\u{0600}\u{1100}\u{1161}\u{11A8}\u{AC00}\u{1F1E6}\u{1F1E7}\u{1F600}\u{1F3FD}\u{0915}\u{094D}世 ]{0,30}"
            ) {
                prop_assert_eq!(clusters(&text), reference(&text));
            }
        }
    }
}
