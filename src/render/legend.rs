//! The legend of a grid of maps: one colour bar per scale the maps share, named by the maps
//! that use it ("A, shift(A)"), laid across with round ticks under it, and a hatched swatch for
//! the cells a mask forbids. Drawn with plotters on any backend; the page puts each bar's
//! gradient on as one image ([`legend_bar_rgba`]), as it does a map's cells.

use plotters::coord::Shift;
use plotters::drawing::{DrawingArea, DrawingAreaErrorKind};
use plotters::element::Rectangle;
use plotters::prelude::DrawingBackend;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{Color, FontDesc, FontFamily, FontStyle, RGBColor, TextStyle};

use super::cells::masked_rgba;
use super::grid::legend_entry_px;
use super::label::{display_label, text_width_em, MAX_TITLE_GRAPHEMES};
use super::layout::PixelRect;
use super::scale::Scale;
use super::theme::Theme;
use super::ticks::format_one;

/// One colour scale of the legend.
#[derive(Clone, Copy, Debug)]
pub struct LegendEntry<'a> {
    /// The maps that use it, as the page names them (`"A, shift(A)"`).
    pub title: &'a str,
    /// The scale.
    pub scale: &'a Scale,
    /// The one value of maps that are (nearly) constant: a swatch of it, not a gradient.
    pub constant: Option<f32>,
}

/// A legend to draw.
#[derive(Clone, Copy, Debug)]
pub struct Legend<'a> {
    /// The scales, in the order of the maps.
    pub entries: &'a [LegendEntry<'a>],
    /// The word for cells a mask forbids, when some map has any: a hatched swatch beside it.
    pub masked_label: Option<&'a str>,
    /// The word for a constant map (`"constant"`).
    pub constant_label: &'a str,
    /// Colours of text, borders and background.
    pub theme: &'a Theme,
    /// The label font, in device pixels (the grid's).
    pub font_px: f32,
}

/// Where one entry went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LegendSlot {
    /// The top-left corner of its title.
    pub title_at: (i32, i32),
    /// Its bar (or swatch), high values at the right.
    pub bar: PixelRect,
}

impl Legend<'_> {
    /// How many entries it has: the scales, and the masked swatch.
    pub fn len(&self) -> usize {
        self.entries.len() + usize::from(self.masked_label.is_some())
    }

    /// Whether it has no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where each entry goes on a `width_px × height_px` area: one under the other when they
    /// fit so, else side by side. The masked swatch is the last slot.
    pub fn layout(&self, width_px: u32, height_px: u32) -> Vec<LegendSlot> {
        let n = self.len() as i64;
        if n == 0 {
            return Vec::new();
        }
        let f = f64::from(self.font_px);
        let entry_h = i64::from(legend_entry_px(self.font_px));
        let stacked = i64::from(height_px) >= n * entry_h;
        let (w, h) = (i64::from(width_px), i64::from(height_px));
        let each_w = if stacked { w } else { w / n };
        // Half a tick label's room at each end ("-0.5" centred on the end), so the end labels
        // stay on the area.
        let inset = (f64::from(text_width_em("-0.00")) / 2.0 * f + 0.3 * f).round() as i64;
        (0..n)
            .map(|i| {
                let (x, y) = if stacked {
                    (0, i * entry_h)
                } else {
                    (i * each_w, 0)
                };
                let bar_y = y + (1.4 * f).round() as i64;
                let bar_w = (each_w - 2 * inset).max(1);
                LegendSlot {
                    title_at: (clamp(x + inset), clamp(y.min(h))),
                    bar: PixelRect {
                        x: clamp(x + inset),
                        y: clamp(bar_y),
                        width: bar_w as u32,
                        height: (f.round() as i64).max(4) as u32,
                    },
                }
            })
            .collect()
    }

    /// Draws the legend on `area` (its titles, borders, ticks and labels; with `gradient`, the
    /// bars' colours too, else the caller puts them on as images). Returns the slots.
    pub fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        gradient: bool,
    ) -> Result<Vec<LegendSlot>, DrawingAreaErrorKind<DB::ErrorType>> {
        let (width, height) = area.dim_in_pixel();
        let slots = self.layout(width, height);
        area.fill(&self.theme.background)?;
        let f = f64::from(self.font_px);
        let style = |h: HPos, v: VPos| -> TextStyle<'static> {
            FontDesc::new(FontFamily::SansSerif, f, FontStyle::Normal)
                .color(&self.theme.foreground)
                .pos(Pos::new(h, v))
        };
        let border = ((f / 12.0).round() as i32).max(1);
        for (entry, slot) in self.entries.iter().zip(&slots) {
            let bar = slot.bar;
            area.draw_text(
                &display_label(entry.title, MAX_TITLE_GRAPHEMES),
                &style(HPos::Left, VPos::Top),
                slot.title_at,
            )?;
            if let Some(value) = entry.constant {
                let side = bar.height as i32;
                let swatch = [(bar.x, bar.y), (bar.x + side, bar.bottom())];
                area.draw(&Rectangle::new(
                    swatch,
                    entry.scale.plotters_color(value).filled(),
                ))?;
                let text = if self.constant_label.is_empty() {
                    format!("= {}", format_one(value))
                } else {
                    format!("= {} ({})", format_one(value), self.constant_label)
                };
                let at = (bar.x + side + (0.5 * f) as i32, bar.y + side / 2);
                area.draw_text(&text, &style(HPos::Left, VPos::Center), at)?;
                continue;
            }
            if gradient {
                let (lo, hi) = entry.scale.range();
                let bands = bar.width.min(128);
                for b in 0..bands {
                    let x0 =
                        bar.x + (u64::from(b) * u64::from(bar.width) / u64::from(bands)) as i32;
                    let x1 =
                        bar.x + (u64::from(b + 1) * u64::from(bar.width) / u64::from(bands)) as i32;
                    let t = (b as f32 + 0.5) / bands as f32;
                    let color = entry.scale.plotters_color(lo + t * (hi - lo));
                    area.draw(&Rectangle::new(
                        [(x0, bar.y), (x1, bar.bottom())],
                        color.filled(),
                    ))?;
                }
            }
            outline(area, bar, border, &self.theme.grid)?;
            let (lo, hi) = entry.scale.range();
            let labels = entry.scale.tick_labels(tick_count(bar.width, f));
            let tick = ((0.3 * f).round() as i32).max(2);
            for (value, label) in labels {
                let t = f64::from((value - lo) / (hi - lo)).clamp(0.0, 1.0);
                let x = bar.x + (t * f64::from(bar.width)).round() as i32;
                let mark = [
                    (x - border / 2, bar.bottom()),
                    (x - border / 2 + border, bar.bottom() + tick),
                ];
                area.draw(&Rectangle::new(mark, self.theme.grid.filled()))?;
                area.draw_text(
                    &label,
                    &style(HPos::Center, VPos::Top),
                    (x, bar.bottom() + tick + 1),
                )?;
            }
        }
        if let (Some(label), Some(slot)) = (self.masked_label, slots.last()) {
            let bar = slot.bar;
            let side = (bar.height as i32).max(4);
            let stripe_px = (self.font_px / 3.0).round().max(2.0) as usize;
            for dy in 0..side {
                for dx in 0..side {
                    let [r, g, b, _] = masked_rgba(dx as usize, dy as usize, stripe_px);
                    let at = (bar.x + dx, bar.y + dy);
                    area.draw(&Rectangle::new(
                        [at, (at.0 + 1, at.1 + 1)],
                        RGBColor(r, g, b).filled(),
                    ))?;
                }
            }
            let at = (bar.x + side + (0.5 * f) as i32, bar.y + side / 2);
            area.draw_text(
                &display_label(label, MAX_TITLE_GRAPHEMES),
                &style(HPos::Left, VPos::Center),
                at,
            )?;
        }
        Ok(slots)
    }
}

/// How many ticks a bar `width_px` wide holds at `font` px: labels of about three em with an
/// em between them, two to six.
fn tick_count(width_px: u32, font: f64) -> usize {
    let room = text_width_em("-0.00") as f64 + 1.0;
    ((f64::from(width_px) / (room * font)).floor() as usize + 1).clamp(2, 6)
}

/// A bar's gradient as RGBA pixels, `bar.width × bar.height`, low values at the left: each
/// column the colour of the value at its middle.
pub fn legend_bar_rgba(scale: &Scale, bar: PixelRect, out: &mut Vec<u8>) {
    out.clear();
    if bar.width == 0 || bar.height == 0 {
        return;
    }
    let (lo, hi) = scale.range();
    let row: Vec<[u8; 3]> = (0..bar.width)
        .map(|x| {
            let t = (x as f32 + 0.5) / bar.width as f32;
            scale.color(lo + t * (hi - lo))
        })
        .collect();
    for _ in 0..bar.height {
        for [r, g, b] in &row {
            out.extend_from_slice(&[*r, *g, *b, 255]);
        }
    }
}

/// A border `thickness` pixels wide just outside `rect`.
fn outline<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    rect: PixelRect,
    thickness: i32,
    color: &RGBColor,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let b = thickness.max(1);
    let (x0, y0, x1, y1) = (rect.x - b, rect.y - b, rect.right() + b, rect.bottom() + b);
    for side in [
        [(x0, y0), (x1, rect.y)],
        [(x0, rect.bottom()), (x1, y1)],
        [(x0, rect.y), (rect.x, rect.bottom())],
        [(rect.right(), rect.y), (x1, rect.bottom())],
    ] {
        area.draw(&Rectangle::new(side, color.filled()))?;
    }
    Ok(())
}

fn clamp(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::*;

    #[test]
    fn entries_stack_when_they_fit_and_sit_side_by_side_when_not() {
        let (attention, difference) = (Scale::sequential(0.0, 0.5), Scale::diverging(0.4));
        let entries = [
            LegendEntry {
                title: "A, shift(A)",
                scale: &attention,
                constant: None,
            },
            LegendEntry {
                title: "D, A′",
                scale: &difference,
                constant: None,
            },
        ];
        let theme = Theme::light();
        let legend = Legend {
            entries: &entries,
            masked_label: Some("masked"),
            constant_label: "constant",
            theme: &theme,
            font_px: 12.0,
        };
        assert_eq!(legend.len(), 3);
        let tall = legend.layout(300, 3 * legend_entry_px(12.0));
        assert!(tall[1].bar.y > tall[0].bar.bottom() && tall[0].bar.x == tall[1].bar.x);
        let wide = legend.layout(900, legend_entry_px(12.0));
        assert!(wide[1].bar.x > wide[0].bar.right() && wide[0].bar.y == wide[1].bar.y);
        let mut svg = String::new();
        {
            let area = SVGBackend::with_string(&mut svg, (300, 200)).into_drawing_area();
            legend.draw(&area, true).unwrap();
        }
        assert!(svg.contains("A, shift(A)") && svg.contains("masked"));
        // The diverging bar has round ticks on both sides of zero.
        assert!(svg.contains("\n-0.2\n") && svg.contains("\n0.2\n"), "{svg}");
    }

    #[test]
    fn a_bar_runs_from_low_at_the_left_to_high_at_the_right() {
        let scale = Scale::unit();
        let bar = PixelRect {
            x: 0,
            y: 0,
            width: 10,
            height: 2,
        };
        let mut rgba = Vec::new();
        legend_bar_rgba(&scale, bar, &mut rgba);
        assert_eq!(rgba.len(), 10 * 2 * 4);
        assert_eq!(rgba[..3], scale.color(0.05));
        assert_eq!(rgba[9 * 4..9 * 4 + 3], scale.color(0.95));
    }
}
