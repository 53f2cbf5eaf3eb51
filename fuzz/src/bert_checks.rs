//! What must hold for any input to the real model's reader and tokenizer (docs/RELIABILITY.md,
//! docs/MINILM.md), one function per fuzz target: `bert` (the BERT weights file) and
//! `wordpiece` (the uncased BERT tokenizer). Compiled into the fuzz crate and into
//! `tests/fuzz_inputs.rs`, like `checks.rs`, so it uses nothing but `diffattn` and std.

use diffattn::model::bert::Bert;
use diffattn::text::wordpiece::{WordPiece, WordPieceSettings};

/// The BERT reader with the forward pass: any bytes are a `ModelError` or a model whose
/// embedding and maps are finite (each map row a softmax), and which writes a file that reads
/// back to the same parts.
pub fn bert(data: &[u8]) {
    let Ok(bert) = Bert::from_bytes(data) else {
        return;
    };
    for text in ["", "the cat sat on the mat.", "Ünïcödé 漢字 [MASK] ##s 🙂"] {
        let Ok(e) = bert.encode(text, true) else {
            // Only a model of fewer positions than [CLS] and [SEP] cannot encode a text.
            assert!(bert.config().positions < 2, "{text:?} did not encode");
            continue;
        };
        assert!(e.pieces.ids.len() <= bert.config().positions);
        assert!(
            e.forward.embedding.iter().all(|v| v.is_finite()),
            "embedding of {text:?}"
        );
        assert!(e.forward.hidden.iter().all(|v| v.is_finite()), "hidden");
        for layer in &e.forward.layers {
            assert!(layer.input.iter().all(|v| v.is_finite()), "layer input");
            for row in layer.attention.rows() {
                let sum: f32 = row.iter().sum();
                assert!(row.iter().all(|v| v.is_finite() && *v >= 0.0), "a map cell");
                assert!((sum - 1.0).abs() < 1e-3, "a map row sums to {sum}");
            }
        }
    }
    let back = Bert::from_bytes(&bert.to_bytes()).expect("a written model reads back");
    assert_eq!(back.parts(), bert.parts(), "parts round trip");
}

/// A vocabulary of characters, words and continuations, enough for every path of the greedy
/// match (a longest piece, a continuation, a word with no cut, the special tokens).
fn tokenizer() -> &'static WordPiece {
    static TOKENIZER: std::sync::OnceLock<WordPiece> = std::sync::OnceLock::new();
    TOKENIZER.get_or_init(make_tokenizer)
}

fn make_tokenizer() -> WordPiece {
    let mut vocab: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .map(String::from)
        .to_vec();
    for w in [
        "a", "b", "c", "e", "i", "o", "u", "the", "cat", "at", "an", ".", ",", "!", "?", "'", "-",
        "[", "]", "#", "漢", "字", "ひ", "か", "1", "12", "123",
    ] {
        vocab.push(w.to_string());
    }
    for w in [
        "a", "b", "c", "e", "s", "t", "at", "ing", "1", "2", "3", "\u{307}",
    ] {
        vocab.push(format!("##{w}"));
    }
    WordPiece::new(vocab, WordPieceSettings::uncased_bert()).expect("a good vocabulary")
}

/// The tokenizer: any text (bytes decoded lossily) gives `[CLS]` … `[SEP]` of vocabulary
/// pieces with offsets inside the text on character boundaries, in order; a limited encoding
/// is a prefix of the whole one, marked cut exactly when something was left out.
pub fn wordpiece(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    let wp = tokenizer();
    let all = wp.encode(text, usize::MAX);
    assert!(!all.truncated);
    let n = all.ids.len();
    assert!(n >= 2);
    assert_eq!(all.pieces[0], "[CLS]");
    assert_eq!(all.pieces[n - 1], "[SEP]");
    assert_eq!(all.offsets[0], None);
    assert_eq!(all.offsets[n - 1], None);
    let (mut start, mut end) = (0, 0);
    for ((id, piece), offset) in all.ids.iter().zip(&all.pieces).zip(&all.offsets).skip(1) {
        assert_eq!(wp.vocab()[*id as usize], *piece);
        let Some(r) = offset else {
            assert_eq!(piece, "[SEP]", "only [CLS] and [SEP] point nowhere");
            continue;
        };
        assert!(
            r.start < r.end && r.end <= text.len(),
            "{r:?} in {}",
            text.len()
        );
        assert!(text.is_char_boundary(r.start) && text.is_char_boundary(r.end));
        assert!(
            r.start >= start && r.end >= end,
            "{r:?} after {start}..{end}"
        );
        (start, end) = (r.start, r.end);
    }
    // At least 2: `[CLS]` and `[SEP]` are always there (a smaller limit counts as 2).
    for max in [2, 3, 8, n - 1, n].into_iter().filter(|&m| m >= 2) {
        let cut = wp.encode(text, max);
        let kept = max.min(n);
        assert_eq!(cut.ids.len(), kept, "max {max}");
        assert_eq!(
            cut.ids[..kept - 1],
            all.ids[..kept - 1],
            "a prefix (max {max})"
        );
        assert_eq!(cut.pieces[kept - 1], "[SEP]");
        assert_eq!(cut.truncated, n > max, "marked cut (max {max} of {n})");
    }
}
