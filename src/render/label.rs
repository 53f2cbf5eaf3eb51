//! Label text as drawn: arbitrary user tokens made safe to draw, shortened, and measured.
//!
//! Labels are tokens of whatever the user typed: emoji, CJK, right-to-left scripts, markup.
//! They are only ever text: the SVG backend escapes `<`, `>`, `&` and quotes, and the canvas
//! draws text, not markup. What neither handles is control characters, which XML forbids even
//! escaped, so they are replaced here by their visible Unicode "control pictures".
//!
//! Layout must be computed without drawing (the page hit-tests with it), so text width is
//! estimated, not measured: in "em" (multiples of the font size). A printable ASCII character
//! is its advance in the metric-compatible sans-serif faces browsers draw with (Arial,
//! Helvetica, Liberation Sans), widened by [`ASCII_MARGIN`] so that wider faces (DejaVu Sans)
//! still fit; any other narrow grapheme 0.62 em, and a wide one (CJK, emoji) 1 em.

use std::borrow::Cow;

use unicode_segmentation::UnicodeSegmentation;

/// The longest token label drawn, in grapheme clusters (user-perceived characters).
pub const MAX_LABEL_GRAPHEMES: usize = 12;

/// The longest title drawn, in grapheme clusters.
pub const MAX_TITLE_GRAPHEMES: usize = 60;

/// The estimated width of a narrow grapheme outside ASCII, in em.
const NARROW_EM: f32 = 0.62;

/// How much wider than the Arial-metric advance an ASCII character is taken to be: DejaVu Sans,
/// the widest common sans-serif default, sets lower-case text about 15 % wider.
const ASCII_MARGIN: f32 = 1.15;

/// The advance of each printable ASCII character from U+0020 to U+007E in Arial-metric
/// sans-serif faces, in thousandths of an em.
const ASCII_ADVANCE: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278,
    278, // ' ' to '/'
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584,
    556, // '0' to '?'
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722,
    778, // '@' to 'O'
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469,
    556, // 'P' to '_'
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556,
    556, // '`' to 'o'
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, // 'p' to '~'
];

/// `text` made drawable: control characters and XML-forbidden noncharacters replaced by visible
/// symbols, and cut to at most `max_graphemes` grapheme clusters, the last of them an ellipsis
/// when something was cut. Grapheme clusters are never split, so an emoji sequence or a letter
/// with its accents stays whole.
///
/// ```
/// use diffattn::render::display_label;
/// assert_eq!(display_label("attention", 5), "atte…");
/// assert_eq!(display_label("<b>", 12), "<b>"); // escaping is the backend's job
/// assert_eq!(display_label("a\tb", 12), "a\u{2409}b"); // tab shown as the symbol ␉
/// assert_eq!(display_label("👩‍👩‍👧‍👦👩‍👩‍👧‍👦x", 2), "👩‍👩‍👧‍👦…");
/// ```
pub fn display_label(text: &str, max_graphemes: usize) -> Cow<'_, str> {
    let clean: Cow<'_, str> = if text.chars().any(needs_replacing) {
        Cow::Owned(text.chars().map(visible_char).collect())
    } else {
        Cow::Borrowed(text)
    };
    if max_graphemes == 0 {
        return Cow::Borrowed("");
    }
    match clean.grapheme_indices(true).nth(max_graphemes) {
        None => clean,
        Some(_) => {
            // Keep max_graphemes - 1 graphemes and use the last slot for the ellipsis.
            let cut = clean
                .grapheme_indices(true)
                .nth(max_graphemes - 1)
                .map_or(clean.len(), |(i, _)| i);
            let mut short = clean[..cut].to_owned();
            short.push('…');
            Cow::Owned(short)
        }
    }
}

/// The estimated drawn width of `text` in em (see the module documentation).
///
/// ```
/// use diffattn::render::text_width_em;
/// assert_eq!(text_width_em(""), 0.0);
/// // c, a, t: 0.500 + 0.556 + 0.278 em, 15 % wider.
/// assert!((text_width_em("cat") - 1.334 * 1.15).abs() < 1e-5);
/// assert!(text_width_em("ill") < text_width_em("mmm"));
/// assert_eq!(text_width_em("猫🐈"), 2.0);
/// assert_eq!(text_width_em("é"), 0.62);
/// ```
pub fn text_width_em(text: &str) -> f32 {
    text.graphemes(true)
        .map(|g| {
            let mut chars = g.chars();
            match (chars.next(), chars.next()) {
                (Some(c @ ' '..='~'), None) => {
                    f32::from(ASCII_ADVANCE[c as usize - 0x20]) / 1000.0 * ASCII_MARGIN
                }
                _ if g.chars().any(is_wide) => 1.0,
                _ => NARROW_EM,
            }
        })
        .sum()
}

/// Whether `c` would break an SVG document or be invisible: C0 and C1 controls, DEL, and the
/// noncharacters U+FFFE and U+FFFF, which XML 1.0 does not allow.
fn needs_replacing(c: char) -> bool {
    c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}'
}

fn visible_char(c: char) -> char {
    match c {
        // U+2400 to U+241F are pictures of the C0 controls, in order; U+2421 is DEL's.
        '\u{0}'..='\u{1F}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{FFFD}'),
        '\u{7F}' => '\u{2421}',
        c if needs_replacing(c) => '\u{FFFD}',
        c => c,
    }
}

/// Whether `c` is drawn about one em wide: East Asian wide and fullwidth ranges and emoji.
/// A close approximation of Unicode's East_Asian_Width property, enough for layout.
fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F
        | 0x231A..=0x231B
        | 0x2329..=0x232A
        | 0x23E9..=0x23EC
        | 0x2600..=0x27BF
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F680..=0x1F6FF
        | 0x1F900..=0x1F9FF
        | 0x1FA70..=0x1FAFF
        | 0x20000..=0x3FFFD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_labels_are_borrowed_unchanged() {
        assert!(matches!(display_label("שלום", 12), Cow::Borrowed("שלום")));
        assert_eq!(display_label("", 12), "");
        assert_eq!(display_label("abc", 3), "abc");
        assert_eq!(display_label("abcd", 3), "ab…");
        assert_eq!(display_label("abc", 0), "");
    }

    #[test]
    fn controls_become_visible_symbols() {
        assert_eq!(
            display_label("\n\u{0}\u{7F}\u{85}\u{FFFF}", 12),
            "␊␀␡\u{FFFD}\u{FFFD}"
        );
    }

    #[test]
    fn combining_marks_stay_with_their_letter() {
        // "é" written as e + U+0301 is one grapheme: cutting to 2 keeps it whole.
        assert_eq!(display_label("e\u{301}e\u{301}e\u{301}", 2), "e\u{301}…");
        assert!((text_width_em("e\u{301}") - NARROW_EM).abs() < 1e-6);
    }
}

/// The widest row label and the widest column label as drawn, in em (zero for none). Measuring
/// walks every label's graphemes, so a render measures once for all its maps: at 512 tokens
/// measuring per map cost more than drawing the map's text.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LabelWidths {
    /// The widest row label, in em.
    pub rows_em: f32,
    /// The widest column label, in em.
    pub cols_em: f32,
}

impl LabelWidths {
    /// Measures the labels as [`draw_frame`] draws them (made safe and shortened).
    ///
    /// ```
    /// use diffattn::render::{text_width_em, LabelWidths};
    /// let rows: Vec<String> = ["a", "cat"].map(String::from).to_vec();
    /// let w = LabelWidths::measure(&rows, &[]);
    /// assert_eq!((w.rows_em, w.cols_em), (text_width_em("cat"), 0.0));
    /// ```
    pub fn measure(row_labels: &[String], col_labels: &[String]) -> LabelWidths {
        let widest = |labels: &[String]| {
            labels
                .iter()
                .map(|l| text_width_em(&display_label(l, MAX_LABEL_GRAPHEMES)))
                .fold(0.0_f32, f32::max)
        };
        LabelWidths {
            rows_em: widest(row_labels),
            cols_em: widest(col_labels),
        }
    }
}
