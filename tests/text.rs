//! Tests of `diffattn::text` through its public API: hand-checked tokenizations, the tokenizer's invariants on arbitrary strings, and the seeded embeddings.

use diffattn::text::{
    is_invisible, normalize, seeded_normal, seeded_normal_vec, sinusoidal_positions, tokenize,
    tokenize_limited, SeededEmbedding, Token, MAX_TOKENS,
};

/// The token texts of `text`, which is what most hand-checked cases compare.
fn texts(text: &str) -> Vec<String> {
    tokenize(text).into_iter().map(|t| t.text).collect()
}

// ---------------------------------------------------------------------------------------------
// Hand-checked tokenizations.

#[test]
fn english_splits_into_lower_case_words_and_punctuation() {
    assert_eq!(
        texts("This movie is not good!"),
        ["this", "movie", "is", "not", "good", "!"]
    );
    // One token per punctuation mark, even in a run.
    assert_eq!(texts("Wow?!..."), ["wow", "?", "!", ".", ".", "."]);
    assert_eq!(texts("well-known"), ["well", "-", "known"]);
}

#[test]
fn spans_point_at_the_original_text() {
    let text = "I LOVE it";
    let tokens = tokenize(text);
    assert_eq!(
        tokens[1],
        Token {
            text: "love".into(),
            start: 2,
            end: 6
        }
    );
    assert_eq!(&text[tokens[1].start..tokens[1].end], "LOVE");
}

#[test]
fn contractions_split_the_penn_treebank_way() {
    assert_eq!(texts("I don't like it"), ["i", "do", "n't", "like", "it"]);
    assert_eq!(texts("it's"), ["it", "'s"]);
    assert_eq!(texts("Can't won't"), ["ca", "n't", "wo", "n't"]);
    assert_eq!(
        texts("I'm they're we've you'll he'd"),
        ["i", "'m", "they", "'re", "we", "'ve", "you", "'ll", "he", "'d"]
    );
    // Two suffixes peel off in reading order.
    assert_eq!(texts("shouldn't've"), ["should", "n't", "'ve"]);
    // The typographic apostrophe that phones type reads as the plain one.
    assert_eq!(texts("don’t"), ["do", "n't"]);
    // An apostrophe between letters that is no English clitic stays inside the word.
    assert_eq!(texts("o'clock l'homme"), ["o'clock", "l'homme"]);
    // At a word's edge an apostrophe is punctuation.
    assert_eq!(
        texts("'quoted' students'"),
        ["'", "quoted", "'", "students", "'"]
    );
    // A suffix alone has no stem to split from.
    assert_eq!(texts("n't 's"), ["n't", "'", "s"]);
}

#[test]
fn contraction_spans_cover_their_own_letters() {
    let text = "DON'T";
    let spans: Vec<&str> = tokenize(text)
        .iter()
        .map(|t| &text[t.start..t.end])
        .collect();
    assert_eq!(spans, ["DO", "N'T"]);
}

#[test]
fn numbers_stay_whole() {
    assert_eq!(
        texts("3.5 stars, 1,000 reviews, 2024."),
        ["3.5", "stars", ",", "1,000", "reviews", ",", "2024", "."]
    );
    assert_eq!(texts("1,000,000.25"), ["1,000,000.25"]);
    // A separator needs a digit on both sides.
    assert_eq!(texts("-3 .5 4."), ["-", "3", ".", "5", "4", "."]);
    assert_eq!(texts("mp3 90's"), ["mp3", "90", "'s"]);
}

#[test]
fn chinese_is_one_token_per_character() {
    assert_eq!(
        texts("这部电影不好看。"),
        ["这", "部", "电", "影", "不", "好", "看", "。"]
    );
    assert_eq!(texts("好，很好！"), ["好", "，", "很", "好", "！"]);
}

#[test]
fn japanese_and_korean_are_one_token_per_character() {
    assert_eq!(
        texts("映画はカタカナ"),
        ["映", "画", "は", "カ", "タ", "カ", "ナ"]
    );
    assert_eq!(texts("좋은 영화"), ["좋", "은", "영", "화"]);
}

#[test]
fn mixed_scripts_split_at_the_script_change() {
    assert_eq!(texts("Hello世界"), ["hello", "世", "界"]);
}

#[test]
fn emoji_sequences_stay_whole() {
    assert_eq!(
        texts("I don't like it 👨‍👩‍👧 🇫🇷"),
        ["i", "do", "n't", "like", "it", "👨‍👩‍👧", "🇫🇷"]
    );
    // Skin tone, keycap, a flag of a subdivision (tag sequence) and emoji presentation.
    assert_eq!(
        texts("👍🏽1️⃣🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}❤️"),
        [
            "👍🏽",
            "1️⃣",
            "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}",
            "❤️"
        ]
    );
    // Emoji next to each other are separate tokens, and a keycap is no number.
    assert_eq!(texts("😀😀"), ["😀", "😀"]);
    assert_eq!(texts("21️⃣"), ["2", "1️⃣"]);
}

#[test]
fn markup_is_just_text() {
    assert_eq!(
        texts("<script>alert(1)</script>"),
        ["<", "script", ">", "alert", "(", "1", ")", "<", "/", "script", ">"]
    );
}

#[test]
fn right_to_left_words_are_words() {
    assert_eq!(texts("مرحبا بالعالم"), ["مرحبا", "بالعالم"]);
    assert_eq!(texts("שלום עולם!"), ["שלום", "עולם", "!"]);
    // A right-to-left mark pasted between the words is invisible and changes nothing.
    assert_eq!(texts("\u{200F}مرحبا \u{200F}بالعالم"), ["مرحبا", "بالعالم"]);
}

#[test]
fn other_alphabets_lower_case_with_unicode_rules() {
    assert_eq!(texts("ПРИВЕТ Мир"), ["привет", "мир"]);
    // Unicode's final-sigma rule: Σ at the end of a word becomes ς.
    assert_eq!(texts("ΟΔΟΣ"), ["οδος"]);
    // Combining marks stay with their letter.
    assert_eq!(texts("cafe\u{0301} ok"), ["cafe\u{0301}", "ok"]);
}

#[test]
fn invisible_characters_neither_become_tokens_nor_split_words() {
    // A reader sees one word "ab", so the model gets one.
    assert_eq!(texts("a\u{200B}b"), ["ab"]);
    let tokens = tokenize("a\u{200B}b");
    assert_eq!((tokens[0].start, tokens[0].end), (0, 5));
    assert_eq!(texts("hy\u{00AD}phen\u{2060}ated"), ["hyphenated"]);
    assert_eq!(texts("\u{FEFF}good"), ["good"]);
    assert_eq!(
        texts("\u{202E}evil\u{202C} \u{2066}x\u{2069}"),
        ["evil", "x"]
    );
    assert_eq!(
        texts("\u{200B}\u{200C}\u{200D}\u{200E}\u{200F}"),
        Vec::<String>::new()
    );
    // A span never starts or ends with an invisible character left outside the word.
    let tokens = tokenize("\u{200B}ok\u{200B}");
    assert_eq!((tokens[0].start, tokens[0].end), (3, 5));
}

#[test]
fn whitespace_and_control_characters_separate_tokens() {
    assert!(tokenize("").is_empty());
    assert!(tokenize(" \t\r\n\u{00A0}\u{3000}\u{2028}").is_empty());
    assert_eq!(texts("a\u{0000}b\u{001B}c"), ["a", "b", "c"]);
    assert_eq!(texts("tab\tnew\nline"), ["tab", "new", "line"]);
}

#[test]
fn limited_keeps_the_first_tokens_and_counts_them_all() {
    let text = "a ".repeat(MAX_TOKENS + 10);
    let (tokens, total) = tokenize_limited(&text);
    assert_eq!(tokens.len(), MAX_TOKENS);
    assert_eq!(total, MAX_TOKENS + 10);
    assert_eq!(tokens[..], tokenize(&text)[..MAX_TOKENS]);
    assert_eq!(tokenize_limited(""), (vec![], 0));
}

/// A long paste (about 240,000 characters of mixed scripts) tokenises completely. Speed is
/// measured by the `engine` benchmark's tokenizer group, not asserted here: timed tests flake on
/// shared machines.
#[test]
fn a_long_mixed_text_tokenises_completely() {
    let text = "Don't 3.5 世界 👨‍👩‍👧 a\u{200B}b مرحبا! ".repeat(7_000);
    let tokens = tokenize(&text);
    assert_eq!(tokens.len(), 9 * 7_000);
    assert_eq!(tokens[8].text, "!");
    assert_eq!(tokens.last().map(|t| t.end), Some(text.trim_end().len()));
}

// ---------------------------------------------------------------------------------------------
// Invariants on arbitrary strings.

/// A token's text with invisible characters removed: the part of a token that [`normalize`]
/// determines (an emoji keeps its joiners, every other token has none to remove).
fn visible(text: &str) -> String {
    text.chars().filter(|&c| !is_invisible(c)).collect()
}

/// What [`normalize`] promises, spelled out with the standard library alone: Unicode lower case,
/// no invisible characters, `’` read as `'`.
fn expected_text(span: &str) -> String {
    span.to_lowercase()
        .chars()
        .filter(|&c| !is_invisible(c))
        .map(|c| if c == '\u{2019}' { '\'' } else { c })
        .collect()
}

fn check_invariants(text: &str) {
    let tokens = tokenize(text);
    let mut previous_end = 0;
    for token in &tokens {
        assert!(token.start < token.end, "empty span {token:?} in {text:?}");
        assert!(
            previous_end <= token.start,
            "overlap or disorder at {token:?} in {text:?}"
        );
        assert!(text.is_char_boundary(token.start) && text.is_char_boundary(token.end));
        let span = &text[token.start..token.end];
        // The token text is exactly the span lower-cased, with invisible characters removed and
        // `’` read as `'`, up to the joiners and selectors an emoji keeps.
        assert_eq!(
            visible(&token.text),
            expected_text(span),
            "{token:?} from {span:?}"
        );
        assert_eq!(normalize(span), expected_text(span));
        assert!(
            !visible(&token.text).is_empty(),
            "invisible token {token:?}"
        );
        assert!(
            !token
                .text
                .chars()
                .any(|c| c.is_whitespace() || c.is_control()),
            "whitespace or control inside {token:?}"
        );
        previous_end = token.end;
    }
    // Nothing visible is lost: everything outside the spans is whitespace, control or invisible.
    let mut covered = 0;
    for token in &tokens {
        assert!(text[covered..token.start]
            .chars()
            .all(|c| c.is_whitespace() || c.is_control() || is_invisible(c)));
        covered = token.end;
    }
    assert!(text[covered..]
        .chars()
        .all(|c| c.is_whitespace() || c.is_control() || is_invisible(c)));
}

#[cfg(not(target_arch = "wasm32"))]
mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn invariants_hold_on_arbitrary_strings(text in any::<String>()) {
            check_invariants(&text);
        }

        #[test]
        fn invariants_hold_on_tricky_alphabets(
            text in "[a-zA-Z0-9 '’.,!\u{200B}-\u{200F}\u{202A}-\u{202E}\u{2066}-\u{2069}\u{FEFF}\u{FE0F}\u{20E3}\u{0301}\u{00AD}\u{0600}\u{0085}\u{3000}ΣσİßẞΑ世。，👍👨‍🏽🇫🇷#*]{0,40}"
        ) {
            check_invariants(&text);
        }

        #[test]
        fn a_limited_tokenization_is_a_prefix(text in any::<String>()) {
            let all = tokenize(&text);
            let (kept, total) = tokenize_limited(&text);
            prop_assert_eq!(total, all.len());
            prop_assert_eq!(&kept[..], &all[..all.len().min(MAX_TOKENS)]);
        }
    }
}

#[test]
fn invariants_hold_on_hand_picked_edge_cases() {
    for text in [
        "",
        "\u{0600} 1",
        "\u{0600}١٢",
        "'",
        "''",
        "a''s",
        "n't",
        "x\u{200D}",
        "👍\u{200D}",
        "\u{200D}👍",
        " \u{0301}",
        // Found by the property test: a combining mark after a space used to vanish with it.
        " \u{1CF00}",
        "\u{0301}",
        "İSTANBUL",
        "ΣΑΣ'Α",
        "\u{1F1EB}",
        "\u{E0067}",
        "\r\n",
        "\u{FE0F}",
        "a\u{FE0F}b",
        "’\u{FE0F}",
        "1\u{20E3}2",
    ] {
        check_invariants(text);
    }
}

// ---------------------------------------------------------------------------------------------
// Seeded embeddings and weights.

#[test]
fn the_same_token_differs_only_by_its_position() {
    let embedding = SeededEmbedding::new(9, 11);
    let tokens = tokenize("good movie , good");
    let x = embedding.embed(&tokens);
    let positions = sinusoidal_positions(tokens.len(), 9);
    let good = embedding.token_vector("good");
    for (pos, row) in x.rows().into_iter().enumerate() {
        let vector = embedding.token_vector(&tokens[pos].text);
        for column in 0..9 {
            // The row is computed as exactly this f32 sum.
            assert_eq!(row[column], vector[column] + positions[[pos, column]]);
        }
    }
    for column in 0..9 {
        assert_eq!(x[[0, column]], good[column] + positions[[0, column]]);
        assert_eq!(x[[3, column]], good[column] + positions[[3, column]]);
    }
    assert_ne!(x.row(0), x.row(3));
}

#[test]
fn the_same_seed_gives_the_same_bits() {
    let tokens = tokenize("The plot was not bad at all 🙂");
    let a = SeededEmbedding::new(16, 5).embed(&tokens);
    let b = SeededEmbedding::new(16, 5).embed(&tokens);
    let bits = |m: &ndarray::Array2<f32>| m.iter().map(|v| v.to_bits()).collect::<Vec<u32>>();
    assert_eq!(bits(&a), bits(&b));
    // The vector of a token does not depend on the sentence around it.
    let alone = SeededEmbedding::new(16, 5).token_vector("plot");
    let in_sentence = &a.row(1) - &sinusoidal_positions(tokens.len(), 16).row(1);
    for (x, y) in alone.iter().zip(in_sentence.iter()) {
        assert!((x - y).abs() < 1e-5);
    }
}

#[test]
fn another_seed_gives_other_vectors() {
    let tokens = tokenize("not good");
    let a = SeededEmbedding::new(8, 1).embed(&tokens);
    let b = SeededEmbedding::new(8, 2).embed(&tokens);
    for (row_a, row_b) in a.rows().into_iter().zip(b.rows()) {
        assert_ne!(row_a, row_b);
    }
    assert_ne!(seeded_normal(4, 4, 1, 1.0), seeded_normal(4, 4, 2, 1.0));
}

#[test]
fn odd_widths_and_values_are_finite() {
    for d_model in [1, 2, 3, 5, 7, 64, 65] {
        let tokens = tokenize("an odd width, still fine");
        let x = SeededEmbedding::new(d_model, 3).embed(&tokens);
        assert_eq!(x.dim(), (tokens.len(), d_model));
        assert!(x.iter().all(|v| v.is_finite()));
        let pe = sinusoidal_positions(600, d_model);
        assert!(pe.iter().all(|v| v.is_finite() && v.abs() <= 1.0));
        // The last column of an odd width is a sine: 0 at position 0.
        if d_model % 2 == 1 {
            assert_eq!(pe[[0, d_model - 1]], 0.0);
        }
    }
}

#[test]
fn seeded_weights_have_the_asked_scale() {
    // d_in = 256 and std_dev 1/√256 = 1/16: 65,536 draws estimate the variance to about 0.6%.
    let w = seeded_normal(256, 256, 9, 1.0 / 16.0);
    let n = w.len() as f64;
    let mean = w.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    let var = w
        .iter()
        .map(|&v| (f64::from(v) - mean).powi(2))
        .sum::<f64>()
        / n;
    assert!(mean.abs() < 0.001, "mean {mean}");
    assert!(
        (var.sqrt() - 1.0 / 16.0).abs() < 0.001,
        "std {}",
        var.sqrt()
    );
    assert_eq!(
        w.iter().copied().collect::<Vec<f32>>(),
        seeded_normal_vec(256 * 256, 9, 1.0 / 16.0)
    );
}
