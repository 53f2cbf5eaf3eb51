//! The retrieval task's text, read back from tokens: the facts `The NOUN of NAME is N.`, the
//! question `What is the NOUN of NAME?` that ends the text, and which tokens are the answer
//! (docs/LESSON.md, "The task").
//!
//! The reader works on the tokens of [`crate::text::tokenize`] (lower-cased, `42.` split into
//! `42` and `.`), so what a person types and what the generator writes are read the same way.
//! It knows nothing of models or attention; [`super::measure`] uses its [`Layout`] to say which
//! keys of a map are the answer and which are noise.

use std::ops::Range;

/// The tokens of a fact, with the two keys and the number as placeholders:
/// `the NOUN of NAME is N`, then usually `.` (not required).
const FACT_LEN: usize = 6;
/// The tokens of the question: `what is the NOUN of NAME ?`.
pub const QUESTION_LEN: usize = 7;

/// The numbers a fact can hold and the model can answer: `0` to `99`.
pub const ANSWERS: usize = 100;

/// The number a token stands for, if it is one of the answers `0` to `99` written the plain
/// way (no sign, no leading zero, no separator).
///
/// ```
/// use diffattn::retrieval::task::answer_number;
/// assert_eq!(answer_number("42"), Some(42));
/// assert_eq!(answer_number("0"), Some(0));
/// assert_eq!(answer_number("07"), None); // not how the task writes 7
/// assert_eq!(answer_number("100"), None);
/// assert_eq!(answer_number("4.5"), None);
/// ```
pub fn answer_number(token: &str) -> Option<u8> {
    let b = token.as_bytes();
    let plain = match b {
        [d] => d.is_ascii_digit(),
        [d, e] => (b'1'..=b'9').contains(d) && e.is_ascii_digit(),
        _ => false,
    };
    if plain {
        token.parse().ok()
    } else {
        None
    }
}

/// The key the question asks about, or a fact states: a noun and a first name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// The noun (`room`, `code`, ...), as a token.
    pub noun: String,
    /// The first name (`anna`, ...), as a token.
    pub name: String,
}

/// One fact `the NOUN of NAME is N` found in the tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// What it is about.
    pub key: Key,
    /// Its number.
    pub number: u8,
    /// The token index of its `the`.
    pub start: usize,
    /// The token index of its number.
    pub number_at: usize,
}

/// The question `what is the NOUN of NAME ?` at the end of the tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// What it asks about.
    pub key: Key,
    /// The token index of its `what`: everything before it is the context.
    pub start: usize,
    /// The token index of its `?`, the last token: the position the model answers at.
    pub last: usize,
}

/// The roles of the tokens of one retrieval text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The question.
    pub question: Question,
    /// Every fact in the context, in order.
    pub facts: Vec<Fact>,
}

impl Layout {
    /// Reads the layout of `tokens`: `None` unless the last seven tokens are
    /// `what is the NOUN of NAME ?`. Facts are read from the context only (the tokens before
    /// the question), wherever they stand.
    ///
    /// ```
    /// use diffattn::retrieval::task::Layout;
    /// use diffattn::text::tokenize;
    /// let tokens: Vec<String> = tokenize("The room of Anna is 42. It rained. What is the room of Anna?")
    ///     .into_iter().map(|t| t.text).collect();
    /// let layout = Layout::read(&tokens).unwrap();
    /// assert_eq!(layout.expected(), Some(42));
    /// assert_eq!(layout.answer_tokens(), vec![5]); // "42" is token 5
    /// assert_eq!(layout.context(), 0..10); // "the room of anna is 42 . it rained ."
    /// ```
    pub fn read<S: AsRef<str>>(tokens: &[S]) -> Option<Layout> {
        let t = |i: usize| tokens[i].as_ref();
        let n = tokens.len();
        if n < QUESTION_LEN {
            return None;
        }
        let start = n - QUESTION_LEN;
        let shape = [(0, "what"), (1, "is"), (2, "the"), (4, "of"), (6, "?")];
        if !shape.iter().all(|&(o, w)| t(start + o) == w) {
            return None;
        }
        let question = Question {
            key: Key {
                noun: t(start + 3).to_string(),
                name: t(start + 5).to_string(),
            },
            start,
            last: n - 1,
        };
        let mut facts = Vec::new();
        for i in 0..(start + 1).saturating_sub(FACT_LEN) {
            if t(i) == "the" && t(i + 2) == "of" && t(i + 4) == "is" {
                if let Some(number) = answer_number(t(i + 5)) {
                    facts.push(Fact {
                        key: Key {
                            noun: t(i + 1).to_string(),
                            name: t(i + 3).to_string(),
                        },
                        number,
                        start: i,
                        number_at: i + 5,
                    });
                }
            }
        }
        Some(Layout { question, facts })
    }

    /// The context: every token before the question.
    pub fn context(&self) -> Range<usize> {
        0..self.question.start
    }

    /// The facts about the question's key, in order.
    pub fn matching(&self) -> impl Iterator<Item = &Fact> {
        self.facts.iter().filter(|f| f.key == self.question.key)
    }

    /// The answer's tokens: the number token of every fact about the question's key (one in
    /// every generated text). Empty when the context does not say.
    pub fn answer_tokens(&self) -> Vec<usize> {
        self.matching().map(|f| f.number_at).collect()
    }

    /// The right answer: the number of the last fact about the question's key, if any.
    pub fn expected(&self) -> Option<u8> {
        self.matching().last().map(|f| f.number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        s.split(' ').collect()
    }

    #[test]
    fn facts_about_other_keys_are_read_but_not_the_answer() {
        // Tokens: 0-6 a fact about (seat, ben), 7-13 the one asked about, 14-20 the question.
        let t = words("the seat of ben is 7 . the room of ben is 13 . what is the room of ben ?");
        let l = Layout::read(&t).unwrap();
        assert_eq!(l.facts.len(), 2);
        assert_eq!(l.facts[0].number_at, 5);
        assert_eq!(l.answer_tokens(), vec![12]);
        assert_eq!(l.expected(), Some(13));
        assert_eq!(l.context(), 0..14);
        assert_eq!(l.question.last, 20);
    }

    #[test]
    fn a_text_that_does_not_end_with_the_question_has_no_layout() {
        assert!(Layout::read(&words("the room of ben is 13 .")).is_none());
        assert!(Layout::read(&words("what is the room of ben")).is_none());
        assert!(Layout::read(&words("what is a room of ben ?")).is_none());
    }

    #[test]
    fn a_question_the_context_does_not_answer_has_no_answer_tokens() {
        let l = Layout::read(&words("the room of ben is 1 . what is the room of ann ?")).unwrap();
        assert_eq!(l.facts.len(), 1);
        assert!(l.answer_tokens().is_empty());
        assert_eq!(l.expected(), None);
    }

    #[test]
    fn a_fact_needs_a_plain_number_and_must_lie_in_the_context() {
        // "07" and "100" are not answers; the question's own "the room of ben" is not a fact.
        let l = Layout::read(&words(
            "the room of ben is 07 . the room of ben is 100 . what is the room of ben ?",
        ))
        .unwrap();
        assert!(l.facts.is_empty());
        // A fact ending right before the question (no full stop) still counts.
        let l = Layout::read(&words("the room of ben is 3 what is the room of ben ?")).unwrap();
        assert_eq!(l.answer_tokens(), vec![5]);
    }
}
