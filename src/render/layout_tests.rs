//! Hand-worked layouts and edge cases of [`super::HeatmapLayout`].

use super::*;

fn spec(width_px: u32, height_px: u32, rows: usize, cols: usize) -> LayoutSpec {
    LayoutSpec {
        width_px,
        height_px,
        font_px: 12.0,
        rows,
        cols,
        row_label_em: 0.0,
        col_label_em: 0.0,
        tick_label_em: 0.0,
        title_em: 0.0,
        colorbar: true,
        padded: true,
        strip: None,
    }
}

#[test]
fn hand_worked_layout() {
    // 12 px font: pad 6, gap 5, border 1; bar gap 10, bar 12, tick 4, so with no label
    // text the left band is 5 px and the right band 10 + 12 + 4 + 5 = 31 px. On 300 x 200:
    // inner 288 x 188, available 288 - 5 - 31 = 252 wide and 188 - 5 = 183 high. Three
    // rows and four columns: cells of min(252 / 4, 183 / 3) = min(63, 61) = 61 px, a
    // 244 x 183 plot. The group is 5 + 244 + 31 = 280 wide, centred: left = 6 + 4 = 10,
    // so the plot starts at x = 15; it is 183 + 5 = 188 high, so top = 6.
    let layout = HeatmapLayout::new(&spec(300, 200, 3, 4));
    assert_eq!(
        layout.plot,
        PixelRect {
            x: 15,
            y: 6,
            width: 244,
            height: 183
        }
    );
    assert_eq!(
        layout.colorbar,
        PixelRect {
            x: 15 + 244 + 10,
            y: 6,
            width: 12,
            height: 183
        }
    );
    assert_eq!(
        layout.cell_rect(2, 3),
        PixelRect {
            x: 15 + 183,
            y: 6 + 122,
            width: 61,
            height: 61
        }
    );
    assert_eq!(layout.cell_at(15.0 + 61.0, 6.0 + 60.9), Some((0, 1)));
    assert_eq!(layout.cell_at(15.0 + 60.9, 6.0 + 61.0), Some((1, 0)));
    assert_eq!(layout.title_at, None);
    assert_eq!(layout.colorbar_ticks, 6);
}

#[test]
fn more_cells_than_pixels() {
    // 400 columns over a plot narrower than 400 px: edges follow pixel-centre sampling,
    // some cells are empty, and every pixel still hits exactly one cell.
    let layout = HeatmapLayout::new(&spec(300, 300, 400, 400));
    let plot = layout.plot;
    assert!(plot.width < 400 && plot.width > 0 && plot.width == plot.height);
    let mut previous = None;
    for x in plot.x..plot.right() {
        let (_, col) = layout
            .cell_at(f64::from(x) + 0.5, f64::from(plot.y))
            .unwrap();
        let rect = layout.cell_rect(0, col);
        assert!(
            rect.x <= x && x < rect.right(),
            "pixel {x} in its cell {col}: {rect:?}"
        );
        assert!(previous.is_none_or(|p| p < col));
        previous = Some(col);
    }
    assert_eq!(layout.cell_rect(0, 399).right(), plot.right());
    assert_eq!(layout.cell_rect(0, 0).x, plot.x);
}

#[test]
fn label_strides_avoid_overlap() {
    // 512 tokens in a 400 px plot: under 1 px per cell, so even at the smallest labels
    // (0.8 × 12 = 9.6 px) roughly every ceil(1.1 * 9.6 * 512 / extent)-th label.
    let layout = HeatmapLayout::new(&spec(460, 460, 512, 512));
    assert_eq!(layout.font_px, 12.0 * LABEL_SHRINK);
    let extent = f64::from(layout.plot.height);
    assert_eq!(
        layout.row_label_stride,
        (LABEL_PITCH_EM * f64::from(12.0 * LABEL_SHRINK) * 512.0 / extent).ceil() as usize
    );
    assert!(layout.row_label_stride > 1);
    let few = HeatmapLayout::new(&spec(460, 460, 5, 5));
    assert_eq!((few.row_label_stride, few.col_label_stride), (1, 1));
    assert_eq!(few.font_px, 12.0, "labels that fit keep the font asked for");
}

#[test]
fn labels_shrink_before_any_is_skipped() {
    // 11 tokens on a 160 × 160 canvas (no label text, so the bands are the gaps): at 12 px
    // the plot is 110 px, 10 px cells, and a label needs 1.1 × 12 = 13.2 px (every other
    // one). The pitch asks for 10 / 1.1 = 9.1 px, under the floor 0.8 × 12 = 9.6 px; at
    // 9.6 px the smaller gaps and colorbar leave 121 px, 11 px cells, and 1.1 × 9.6 =
    // 10.6 px fits: every token is labelled.
    let at_12 = HeatmapLayout::at_font(&spec(160, 160, 11, 11), 12.0);
    assert_eq!(at_12.row_label_stride, 2);
    let layout = HeatmapLayout::new(&spec(160, 160, 11, 11));
    assert_eq!((layout.row_label_stride, layout.col_label_stride), (1, 1));
    assert!(layout.font_px < 12.0 && layout.font_px >= 12.0 * LABEL_SHRINK);
    assert!(layout.plot.width >= at_12.plot.width);
    let pitch = f64::from(layout.plot.height) / 11.0;
    assert!(pitch >= LABEL_PITCH_EM * f64::from(layout.font_px) - 1e-6);
}

#[test]
fn empty_and_tiny_inputs_do_not_panic() {
    for (w, h) in [(0, 0), (1, 1), (10, 500), (500, 10)] {
        for (rows, cols) in [(0, 0), (5, 0), (0, 5), (1, 1), (512, 512), (3, 300)] {
            let layout = HeatmapLayout::new(&LayoutSpec {
                title_em: 10.0,
                row_label_em: 12.0,
                col_label_em: 12.0,
                tick_label_em: 4.0,
                font_px: 24.0,
                ..spec(w, h, rows, cols)
            });
            let _ = layout.cell_at(f64::from(layout.plot.x), f64::from(layout.plot.y));
            let _ = layout.cell_rect(rows, cols);
            let _ = layout.cell_rect(usize::MAX, usize::MAX);
        }
    }
    let empty = HeatmapLayout::new(&spec(300, 200, 3, 0));
    assert!(empty.plot.width > 0 && empty.plot.width == empty.plot.height);
    assert_eq!(
        empty.cell_at(f64::from(empty.plot.x), f64::from(empty.plot.y)),
        None
    );
    let odd = HeatmapLayout::new(&LayoutSpec {
        font_px: f32::NAN,
        ..spec(300, 200, 3, 3)
    });
    assert_eq!(odd.font_px, 12.0);
}
