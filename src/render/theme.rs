//! The frame's colours, so the page can follow its light or dark mode.
//!
//! A theme colours only the frame (background, text, border, tick marks); the cells keep the
//! scale's palette in both modes, so a value has the same colour whatever the theme.

use plotters::style::RGBColor;

/// The colours of everything drawn around the cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    /// The canvas behind everything.
    pub background: RGBColor,
    /// Title, labels and tick values.
    pub foreground: RGBColor,
    /// The border of the plot and of the colorbar, and the tick marks.
    pub grid: RGBColor,
}

impl Theme {
    /// Dark text on white.
    ///
    /// ```
    /// use diffattn::render::Theme;
    /// assert_ne!(Theme::light().background, Theme::light().foreground);
    /// ```
    pub fn light() -> Self {
        Theme {
            background: RGBColor(255, 255, 255),
            foreground: RGBColor(0x22, 0x22, 0x22),
            grid: RGBColor(0x88, 0x88, 0x88),
        }
    }

    /// Light text on a near-black background.
    ///
    /// ```
    /// use diffattn::render::Theme;
    /// assert_ne!(Theme::dark(), Theme::light());
    /// ```
    pub fn dark() -> Self {
        Theme {
            background: RGBColor(0x1e, 0x1e, 0x1e),
            foreground: RGBColor(0xe6, 0xe6, 0xe6),
            grid: RGBColor(0x80, 0x80, 0x80),
        }
    }
}

impl Default for Theme {
    fn default() -> Self {
        Theme::light()
    }
}
