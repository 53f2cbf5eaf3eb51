//! What must hold for any input, one function per fuzz target (docs/RELIABILITY.md). Each
//! takes arbitrary bytes, returns quietly when the input is rejected cleanly or used correctly,
//! and panics (with the reason) when a promise of the crate is broken.
//!
//! This file is compiled twice: into the fuzz crate (`fuzz/src/lib.rs`) and into the
//! repository's tests (`tests/fuzz_inputs.rs`), so it uses nothing but `diffattn` and std.

use diffattn::engine::{StageId, Stages};
use diffattn::model::{Model, Prediction, Quantization, Sentiment};
use diffattn::spec::{
    parse_page_spec, parse_spec, parse_spec_bytes, parse_spec_reader, stage_maps, write_stages,
    StagesView,
};
use diffattn::text::{
    is_invisible, normalize, tokenize, tokenize_up_to, SeededEmbedding, Token, MAX_TOKENS,
    PAGE_MAX_TOKENS,
};

/// Every number of every stage finite: DESIGN.md §5, "no NaN or Inf ever leaves the engine".
fn assert_finite_stages(stages: &Stages, what: &str) {
    for stage in StageId::ALL {
        if let Some(maps) = stage_maps(stages, stage) {
            if let Some(v) = maps.iter().find(|v| !v.is_finite()) {
                panic!("{what}: {stage:?} holds {v}");
            }
        }
    }
    if let Some(v) = stages.output().iter().find(|v| !v.is_finite()) {
        panic!("{what}: the output holds {v}");
    }
    match stages {
        Stages::DiffTransformer { maps, .. } => {
            assert!(maps.lambda.is_finite(), "{what}: lambda {}", maps.lambda);
        }
        Stages::DiffTransformerV2 { maps, .. } => {
            assert!(maps.lambda.iter().all(|l| l.is_finite()), "{what}: lambda");
        }
        _ => {}
    }
}

/// The spec parser with the engine: any bytes are a spec error or stages of finite numbers.
///
/// Also: the three ways of reading a spec (bytes, reader, text) agree, the page's reader takes
/// exactly the specs of at most `PAGE_MAX_TOKENS` tokens, and the streamed answer is valid JSON.
pub fn spec(data: &[u8]) {
    let from_slice = parse_spec_bytes(data);
    let from_reader = parse_spec_reader(data);
    match (&from_slice, &from_reader) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the slice and reader parsers differ"),
        (Err(_), Err(_)) => {}
        _ => panic!("slice {from_slice:?} but reader {from_reader:?}"),
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let from_text = parse_spec(text);
        assert_eq!(
            from_text.is_ok(),
            from_slice.is_ok(),
            "text and bytes differ"
        );
        // Labels and rope positions must have one entry per row of x, so the row count alone
        // decides whether a spec the library reads is one the page reads.
        match (parse_page_spec(text), &from_text) {
            (Ok(page), Ok(library)) => {
                assert!(
                    page.x.nrows() <= PAGE_MAX_TOKENS,
                    "the page read {} rows",
                    page.x.nrows()
                );
                assert_eq!(
                    &page, library,
                    "the page and the library read it differently"
                );
            }
            (Ok(_), Err(e)) => panic!("the page read a spec the library refuses: {e}"),
            (Err(e), Ok(library)) => assert!(
                library.x.nrows() > PAGE_MAX_TOKENS,
                "the page refused a spec of {} tokens: {e}",
                library.x.nrows()
            ),
            (Err(_), Err(_)) => {}
        }
    }
    let Ok(spec) = from_slice else { return };
    let Ok(stages) = spec.run() else { return };
    assert_finite_stages(&stages, "spec");
    let mut json = Vec::new();
    write_stages(&mut json, &StagesView::new(&stages), false).expect("writing to memory");
    // Finite numbers only, so no `null` stands where a number should be, and it parses.
    let value: serde_json::Value = serde_json::from_slice(&json).expect("the answer is JSON");
    assert!(
        !json.windows(4).any(|w| w == b"null"),
        "a number was written as null"
    );
    assert!(value["heads"].is_array(), "the answer has heads");
}

fn assert_sane(p: &Prediction, what: &str) {
    assert!(
        p.logits.iter().all(|l| l.is_finite()),
        "{what}: logits {:?}",
        p.logits
    );
    assert!(
        (0.0..=1.0).contains(&p.positive),
        "{what}: positive {}",
        p.positive
    );
    assert!(
        (0.5..=1.0).contains(&p.probability),
        "{what}: probability {}",
        p.probability
    );
    assert_eq!(
        p.label == Sentiment::Positive,
        p.positive >= 0.5,
        "{what}: label"
    );
}

/// The model loader with the forward pass: any bytes are a `ModelError` or a model whose
/// predictions are finite, at its trained heads and at every other head count the page
/// offers, and which writes a file that reads back the same.
pub fn model(data: &[u8]) {
    let Ok(model) = Model::from_bytes(data) else {
        return;
    };
    let t = model.trained_parts().expect("a file holds a trained model");
    // Tokens from the vocabulary (known rows), one unknown, and a longer repeat.
    let mut words: Vec<String> = t.table.tokens().iter().take(6).cloned().collect();
    words.push("zzzz-unknown".to_string());
    let sentence: Vec<Token> = words
        .iter()
        .enumerate()
        .map(|(i, w)| Token {
            text: w.clone(),
            start: i,
            end: i + 1,
        })
        .collect();
    for tokens in [&sentence[..1], &sentence[..]] {
        match model.forward(tokens) {
            Ok((stages, p)) => {
                assert_finite_stages(&stages, "model");
                assert_sane(&p, "model");
            }
            Err(e) => panic!(
                "a model that loaded cannot classify {} tokens: {e}",
                tokens.len()
            ),
        }
    }
    assert!(model.forward(&[]).is_err(), "no tokens is an error");

    // The page's heads slider: every divisor of d (up to a few) adapts the trained parameters.
    let d = model.d_model();
    let x = model.embed(&sentence);
    assert!(x.iter().all(|v| v.is_finite()), "embedded vectors");
    for heads in (1..=d).filter(|h| d % h == 0).take(4) {
        let Some(Ok(mechanism)) = model.mechanism(heads) else {
            continue;
        };
        if let Ok(stages) =
            diffattn::engine::run(x.view(), &model.weights, heads, false, &mechanism)
        {
            assert_finite_stages(&stages, "model at other heads");
            let p = model
                .classify_output(stages.output().view())
                .expect("a trained model classifies");
            assert_sane(&p, "model at other heads");
        }
    }

    // What the reader accepts, the writer writes and the reader reads back unchanged.
    let bytes = model
        .to_bytes(Quantization::F32)
        .expect("a trained model writes");
    let back = Model::from_bytes(&bytes).expect("a written model reads back");
    assert_eq!(back.weights, model.weights, "weights round trip");
    let (a, b) = (back.trained_parts().unwrap(), t);
    assert_eq!(a.mechanism, b.mechanism, "mechanism round trip");
    assert_eq!(a.table.tokens(), b.table.tokens(), "vocabulary round trip");
    assert_eq!(a.table.vectors, b.table.vectors, "table round trip");
}

/// The tokenizer: any text (bytes decoded lossily) gives ordered, non-empty spans on character
/// boundaries whose token text is the normalised span, loses nothing visible, and a limited
/// tokenization is a prefix with the right total; the seeded vectors of the tokens are finite.
pub fn tokenizer(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    let tokens = tokenize(text);
    let mut covered = 0;
    for token in &tokens {
        assert!(token.start < token.end, "empty span {token:?}");
        assert!(covered <= token.start, "overlap or disorder at {token:?}");
        assert!(text.is_char_boundary(token.start) && text.is_char_boundary(token.end));
        let span = &text[token.start..token.end];
        let visible: String = token.text.chars().filter(|&c| !is_invisible(c)).collect();
        assert_eq!(visible, normalize(span), "{token:?} from {span:?}");
        let expected: String = span
            .to_lowercase()
            .chars()
            .filter(|&c| !is_invisible(c))
            .map(|c| if c == '\u{2019}' { '\'' } else { c })
            .collect();
        assert_eq!(normalize(span), expected, "normalize({span:?})");
        assert!(!visible.is_empty(), "invisible token {token:?}");
        assert!(
            !token
                .text
                .chars()
                .any(|c| c.is_whitespace() || c.is_control()),
            "whitespace or control inside {token:?}"
        );
        let gap = &text[covered..token.start];
        assert!(
            gap.chars()
                .all(|c| c.is_whitespace() || c.is_control() || is_invisible(c)),
            "something visible lost in {gap:?}"
        );
        covered = token.end;
    }
    let tail = &text[covered..];
    assert!(
        tail.chars()
            .all(|c| c.is_whitespace() || c.is_control() || is_invisible(c)),
        "something visible lost in {tail:?}"
    );
    // Keeping half of them, and all but one: the cut, and the count of what was dropped.
    for keep in [
        tokens.len() / 2,
        MAX_TOKENS.min(tokens.len().saturating_sub(1)),
    ] {
        let (kept, total) = tokenize_up_to(text, keep);
        assert_eq!(total, tokens.len(), "total with keep = {keep}");
        assert_eq!(
            kept[..],
            tokens[..tokens.len().min(keep)],
            "prefix with keep = {keep}"
        );
    }
    // A token's seeded vector depends on its text alone; a few tokens cover the path (it
    // costs about a microsecond a token, more than the tokenizer).
    let some = &tokens[..tokens.len().min(8)];
    if !some.is_empty() {
        let x = SeededEmbedding::new(8, 1).embed(some);
        assert!(x.iter().all(|v| v.is_finite()), "seeded vectors");
    }
}
