//! Rendering tests through the public API: colours, RGBA buffers, layout invariants and SVG output.
#![cfg(not(target_arch = "wasm32"))]

use diffattn::render::{
    cells_rgba, heatmap_svg, panel_svg, strip_rgba, Frame, FrameParts, HeatmapLayout, LayoutSpec,
    Palette, Panel, Scale, Strip, Theme, LABEL_PITCH_EM, LABEL_SHRINK, NAN_COLOR,
};
use ndarray::{array, Array2};
use proptest::prelude::*;

const PUOR_ORANGE: [u8; 3] = [0x7f, 0x3b, 0x08];
const PUOR_NEUTRAL: [u8; 3] = [0xf7, 0xf7, 0xf7];
const PUOR_PURPLE: [u8; 3] = [0x2d, 0x00, 0x4b];
const VIRIDIS_LOW: [u8; 3] = [68, 1, 84];
const VIRIDIS_HIGH: [u8; 3] = [253, 231, 37];

fn labels(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

// ---------------------------------------------------------------------------------------------
// Colours

#[test]
fn diverging_scale_is_neutral_at_zero_and_hits_both_ends() {
    // D = [[0.1, -0.4], [0.4, 0.0]] has max |v| = 0.4, so the scale is -0.4..0.4.
    let d = array![[0.1_f32, -0.4], [0.4, 0.0]];
    let scale = Scale::diverging_for(d.view());
    assert_eq!(scale, Scale::Diverging { abs_max: 0.4 });
    assert_eq!(scale.color(0.0), PUOR_NEUTRAL);
    assert_eq!(scale.color(0.4), PUOR_PURPLE);
    assert_eq!(scale.color(-0.4), PUOR_ORANGE);
    assert_eq!(scale.color(1e9), PUOR_PURPLE, "clamped above");
    assert_eq!(scale.color(-1e9), PUOR_ORANGE, "clamped below");
    assert_eq!(scale.color(f32::NAN), NAN_COLOR);
    // 0.2 is halfway to the purple end: position 0.75 of the palette.
    assert_eq!(scale.color(0.2), Palette::PuOr.at(0.75));
}

#[test]
fn sequential_scales_span_the_palette() {
    let a = array![[0.7_f32, 0.3], [0.2, 0.8]];
    let scale = Scale::sequential_for(a.view());
    assert_eq!(scale.color(0.2), VIRIDIS_LOW);
    assert_eq!(scale.color(0.8), VIRIDIS_HIGH);
    assert_eq!(scale.color(0.0), VIRIDIS_LOW);
    assert_eq!(scale.color(1.0), VIRIDIS_HIGH);
    // The gate is always on 0..1, whatever its values.
    assert_eq!(Scale::unit().color(0.0), VIRIDIS_LOW);
    assert_eq!(Scale::unit().color(1.0), VIRIDIS_HIGH);
    assert_eq!(Scale::unit().color(f32::NAN), NAN_COLOR);
}

#[test]
fn all_zero_map_gives_a_valid_scale() {
    let zero = Array2::<f32>::zeros((4, 4));
    for scale in [
        Scale::diverging_for(zero.view()),
        Scale::sequential_for(zero.view()),
    ] {
        let (lo, hi) = scale.range();
        assert!(lo.is_finite() && hi.is_finite() && lo < hi, "{scale:?}");
        assert!(scale.ticks(5).iter().all(|t| t.is_finite()));
    }
    assert_eq!(Scale::diverging_for(zero.view()).color(0.0), PUOR_NEUTRAL);
}

// ---------------------------------------------------------------------------------------------
// RGBA buffers

#[test]
fn cells_rgba_of_a_two_by_two_diverging_map() {
    // Scale -1..1. Row 0: -1 (orange end), 0 (neutral); row 1: 1 (purple end), 0.5, which is
    // palette position 0.75, i.e. level 192 of 256, i.e. 7.5 anchors of 10: halfway between
    // #b2abd2 (178,171,210) and #8073ac (128,115,172) = (153, 143, 191).
    let d = array![[-1.0_f32, 0.0], [1.0, 0.5]];
    let mut out = Vec::new();
    cells_rgba(d.view(), &Scale::diverging(1.0), &mut out);
    #[rustfmt::skip]
    let expected = [
        0x7f, 0x3b, 0x08, 255,   0xf7, 0xf7, 0xf7, 255,
        0x2d, 0x00, 0x4b, 255,   153, 143, 191, 255,
    ];
    assert_eq!(out, expected);
}

#[test]
fn cells_rgba_matches_color_on_a_large_map() {
    let map = Array2::from_shape_fn((37, 53), |(i, j)| ((i * 53 + j) as f32 * 0.618).sin() * 2.0);
    let scale = Scale::diverging_for(map.view());
    let mut out = vec![1, 2, 3];
    cells_rgba(map.view(), &scale, &mut out);
    assert_eq!(out.len(), 37 * 53 * 4);
    for ((i, j), &v) in map.indexed_iter() {
        let at = (i * 53 + j) * 4;
        let [r, g, b] = scale.color(v);
        assert_eq!(out[at..at + 4], [r, g, b, 255], "cell ({i}, {j})");
    }
}

// ---------------------------------------------------------------------------------------------
// Layout

fn layout_spec() -> impl Strategy<Value = LayoutSpec> {
    (
        (0u32..1600, 0u32..1600, 4.0f32..40.0),
        (0usize..600, 0usize..600),
        (0.0f32..12.0, 0.0f32..12.0, 0.0f32..6.0, 0.0f32..30.0),
        any::<bool>(),
    )
        .prop_map(
            |((width_px, height_px, font_px), (rows, cols), (re, ce, te, ti), colorbar)| {
                LayoutSpec {
                    width_px,
                    height_px,
                    font_px,
                    rows,
                    cols,
                    row_label_em: re,
                    col_label_em: ce,
                    tick_label_em: te,
                    title_em: ti,
                    colorbar,
                    padded: colorbar,
                    strip: None,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn cells_tile_the_plot_and_hit_back(spec in layout_spec()) {
        let layout = HeatmapLayout::new(&spec);
        let plot = layout.plot;
        let (rows, cols) = (spec.rows, spec.cols);
        if plot.width > 0 && plot.height > 0 {
            prop_assert!(plot.x >= 0 && plot.y >= 0);
            prop_assert!(plot.right() <= spec.width_px as i32);
            prop_assert!(plot.bottom() <= spec.height_px as i32);
        }
        prop_assert!(layout.colorbar.x >= plot.right());
        if rows == 0 || cols == 0 {
            prop_assert_eq!(layout.cell_at(f64::from(plot.x), f64::from(plot.y)), None);
            return Ok(());
        }
        // Columns: consecutive, starting at the plot's left edge and ending at its right edge.
        let mut x = plot.x;
        for col in 0..cols {
            let rect = layout.cell_rect(0, col);
            prop_assert_eq!(rect.x, x);
            x = rect.right();
        }
        prop_assert_eq!(x, plot.right());
        let mut y = plot.y;
        for row in 0..rows {
            let rect = layout.cell_rect(row, 0);
            prop_assert_eq!(rect.y, y);
            y = rect.bottom();
        }
        prop_assert_eq!(y, plot.bottom());
        // With a pixel or more per cell, cells are equal squares (in a map more than four
        // times taller than wide, equal rectangles at least as wide as tall, the plot at least
        // a quarter as wide as tall where there is room) and each centre hits its cell.
        if plot.width as usize >= cols && plot.height as usize >= rows {
            let first = layout.cell_rect(0, 0);
            if rows > 4 * cols {
                prop_assert!(first.width >= first.height);
                prop_assert_eq!(plot.width as usize % cols, 0);
            } else {
                prop_assert_eq!(first.width, first.height);
            }
            for (row, col) in [(0, 0), (rows - 1, cols - 1), (rows / 2, cols / 3), (rows - 1, 0)] {
                let rect = layout.cell_rect(row, col);
                prop_assert_eq!((rect.width, rect.height), (first.width, first.height));
                let centre = (
                    f64::from(rect.x) + f64::from(rect.width) / 2.0,
                    f64::from(rect.y) + f64::from(rect.height) / 2.0,
                );
                prop_assert_eq!(layout.cell_at(centre.0, centre.1), Some((row, col)));
            }
        }
        // Every pixel of the plot hits the cell whose rectangle contains it.
        for px in (plot.x..plot.right()).step_by(7) {
            let (row, col) = layout.cell_at(f64::from(px) + 0.5, f64::from(plot.y)).unwrap();
            let rect = layout.cell_rect(row, col);
            prop_assert!(rect.x <= px && px < rect.right());
            prop_assert!(rect.y <= plot.y && plot.y < rect.bottom());
        }
        prop_assert_eq!(layout.cell_at(f64::from(plot.right()), f64::from(plot.y)), None);
        prop_assert_eq!(layout.cell_at(f64::from(plot.x), f64::from(plot.bottom())), None);
    }

    #[test]
    fn shown_labels_never_overlap(spec in layout_spec()) {
        // Labels shown are `stride` cells apart; unless every label but the first is hidden,
        // that is at least the LABEL_PITCH_EM a line of text needs.
        let layout = HeatmapLayout::new(&spec);
        let line = LABEL_PITCH_EM * f64::from(layout.font_px) - 1e-9;
        for (count, stride, extent) in [
            (spec.rows, layout.row_label_stride, layout.plot.height),
            (spec.cols, layout.col_label_stride, layout.plot.width),
        ] {
            prop_assert!(stride >= 1);
            if count > 0 && stride < count {
                prop_assert!(stride as f64 * f64::from(extent) / count as f64 >= line);
            }
        }
    }

    #[test]
    fn labels_shrink_only_to_show_every_token(spec in layout_spec()) {
        // The labels keep the font asked for when every token fits at it; else they get no
        // smaller than LABEL_SHRINK of it, and no fewer are shown than at the font asked for.
        let layout = HeatmapLayout::new(&spec);
        let requested = spec.font_px.clamp(1.0, 1000.0);
        let exact = HeatmapLayout::at_font(&spec, requested);
        if exact.row_label_stride == 1 && exact.col_label_stride == 1 {
            prop_assert_eq!(layout, exact);
        } else {
            prop_assert!(layout.font_px <= requested);
            prop_assert!(layout.font_px >= requested * LABEL_SHRINK - 1e-4);
            prop_assert!(
                layout.row_label_stride + layout.col_label_stride
                    <= exact.row_label_stride + exact.col_label_stride
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// SVG output

/// The `(x, y, width, height, fill)` of every `<rect>` in an SVG written by plotters.
fn rects(svg: &str) -> Vec<(i32, i32, u32, u32, String)> {
    let attr = |line: &str, name: &str| -> String {
        let start = line.find(&format!(" {name}=\"")).expect(name) + name.len() + 3;
        line[start..]
            .split('"')
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    svg.lines()
        .filter(|l| l.starts_with("<rect "))
        .map(|l| {
            (
                attr(l, "x").parse().unwrap(),
                attr(l, "y").parse().unwrap(),
                attr(l, "width").parse().unwrap(),
                attr(l, "height").parse().unwrap(),
                attr(l, "fill"),
            )
        })
        .collect()
}

/// Every `<` opens or closes one of the elements plotters writes, so no label became markup,
/// and there is no character XML 1.0 forbids.
fn assert_only_known_markup(svg: &str) {
    const TAGS: [&str; 7] = [
        "svg ",
        "rect ",
        "text ",
        "polyline ",
        "polygon ",
        "circle ",
        "/",
    ];
    for (i, _) in svg.match_indices('<') {
        let rest = &svg[i + 1..];
        assert!(
            TAGS.iter().any(|t| rest.starts_with(t)),
            "unexpected markup at {}",
            &svg[i..]
        );
        if rest.starts_with('/') {
            assert!(["/svg>", "/text>"].iter().any(|t| rest.starts_with(t)));
        }
    }
    assert!(
        !svg.chars()
            .any(|c| (c < ' ' && !matches!(c, '\n' | '\t' | '\r'))
                || c == '\u{FFFE}'
                || c == '\u{FFFF}'),
        "a character XML forbids"
    );
}

fn hex(rgb: [u8; 3]) -> String {
    format!("#{:02X}{:02X}{:02X}", rgb[0], rgb[1], rgb[2])
}

#[test]
fn svg_has_title_escaped_labels_and_one_rect_per_cell() {
    let rows = labels(&["the", "<b>", "cat & dog"]);
    let cols = labels(&["the", "<b>", "cat & dog", "\"q\""]);
    let map = Array2::from_shape_fn((3, 4), |(i, j)| (i as f32 - j as f32) / 4.0);
    let scale = Scale::diverging_for(map.view());
    let theme = Theme::light();
    let frame = Frame {
        title: "D = A − shift(A) <head 1>",
        row_labels: &rows,
        col_labels: &cols,
        scale: &scale,
        theme: &theme,
        font_px: 12.0,
        mask: None,
        masked_label: "",
        constant: None,
        constant_label: "",
        parts: FrameParts::ALL,
        strip: None,
    };
    let svg = heatmap_svg(map.view(), &frame, 400, 320);

    assert!(svg.contains("D = A − shift(A) &lt;head 1&gt;"));
    assert!(svg.contains("&lt;b&gt;") && !svg.contains("<b>"));
    assert!(svg.contains("cat &amp; dog"));
    assert!(svg.contains("&quot;q&quot;"));
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
    assert_only_known_markup(&svg);

    // Every cell of the layout is drawn exactly once, in its colour.
    let layout = frame.layout(400, 320);
    let drawn = rects(&svg);
    for ((i, j), &v) in map.indexed_iter() {
        let cell = layout.cell_rect(i, j);
        let matches: Vec<_> = drawn
            .iter()
            .filter(|r| (r.0, r.1, r.2, r.3) == (cell.x, cell.y, cell.width, cell.height))
            .collect();
        assert_eq!(matches.len(), 1, "cell ({i}, {j}) at {cell:?}");
        assert_eq!(matches[0].4, hex(scale.color(v)));
    }
    // Nothing else is drawn inside the plot: the background and border lie around it.
    let inside = drawn
        .iter()
        .filter(|r| {
            r.0 >= layout.plot.x
                && r.1 >= layout.plot.y
                && r.0 + r.2 as i32 <= layout.plot.right()
                && r.1 + r.3 as i32 <= layout.plot.bottom()
        })
        .count();
    assert_eq!(inside, 3 * 4);
}

#[test]
fn the_sinks_strip_is_one_cell_wide_right_of_the_plot_labelled_and_on_the_maps_scale() {
    // Two rows that kept 0.75 and 0.25 of their mass: the sink took 0.25 and 0.75.
    let tokens = labels(&["the", "cat"]);
    let map = array![[0.5_f32, 0.25], [0.125, 0.125]];
    let shares = [0.25_f32, 0.75];
    let scale = Scale::sequential(0.0, 0.75);
    let theme = Theme::light();
    let plain = Frame {
        title: "A",
        row_labels: &tokens,
        col_labels: &tokens,
        scale: &scale,
        theme: &theme,
        font_px: 12.0,
        mask: None,
        masked_label: "",
        constant: None,
        constant_label: "",
        parts: FrameParts::ALL,
        strip: None,
    };
    let frame = Frame {
        strip: Some(Strip {
            values: &shares,
            label: "sink",
        }),
        ..plain
    };
    let layout = frame.layout(400, 320);
    let (p, s) = (layout.plot, layout.strip);
    // A cell wide, as tall as the plot, a gap right of it, the colour bar further right.
    assert_eq!(s.width, p.width / 2);
    assert_eq!((s.y, s.height), (p.y, p.height));
    assert!(s.x > p.right() && layout.colorbar.x > s.right());
    assert_eq!(
        layout.strip_row_at(f64::from(s.x), f64::from(s.bottom() - 1)),
        Some(1)
    );
    assert_eq!(
        layout.strip_row_at(f64::from(p.right() - 1), f64::from(p.y)),
        None
    );
    // Without a strip nothing of it is laid out, and the plot is as large as the room allows.
    let without = plain.layout(400, 320);
    assert_eq!(without.strip.width, 0);
    assert!(without.plot.width >= p.width);

    // The strip's pixels: each row of pixels the colour of its row's share.
    let mut rgba = Vec::new();
    strip_rgba(&frame.strip.unwrap(), &scale, &layout, &mut rgba);
    assert_eq!(rgba.len(), (s.width * s.height * 4) as usize);
    let at = |y: u32| rgba[(y * s.width * 4) as usize..][..3].to_vec();
    assert_eq!(at(0), scale.color(0.25).to_vec());
    assert_eq!(at(s.height - 1), scale.color(0.75).to_vec());
    assert_eq!(
        at(s.height - 1),
        VIRIDIS_HIGH.to_vec(),
        "0.75 is the top of the scale"
    );

    // The SVG export: one rectangle per strip cell in its colour, and the label.
    let svg = heatmap_svg(map.view(), &frame, 400, 320);
    let drawn = rects(&svg);
    for (row, &v) in shares.iter().enumerate() {
        let cell = layout.strip_cell_rect(row);
        assert!(
            drawn.iter().any(
                |r| (r.0, r.1, r.2, r.3) == (cell.x, cell.y, cell.width, cell.height)
                    && r.4 == hex(scale.color(v))
            ),
            "strip cell {row} at {cell:?}"
        );
    }
    let says_sink = |svg: &str| svg.lines().any(|l| l.trim() == "sink");
    assert!(says_sink(&svg));
    assert!(!says_sink(&heatmap_svg(map.view(), &plain, 400, 320)));
}

#[test]
fn svg_text_is_the_layout_font_size() {
    // plotters' SVG backend divides text sizes by 1.24; the export compensates, so 12 px
    // labels are written as font-size 12 (up to float noise).
    let words = labels(&["a", "b"]);
    let frame = Frame {
        title: "",
        row_labels: &words,
        col_labels: &words,
        scale: &Scale::unit(),
        theme: &Theme::light(),
        font_px: 12.0,
        mask: None,
        masked_label: "",
        constant: None,
        constant_label: "",
        parts: FrameParts::ALL,
        strip: None,
    };
    let svg = heatmap_svg(Array2::zeros((2, 2)).view(), &frame, 200, 200);
    let size: f64 = svg
        .split("font-size=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!((size - 12.0).abs() < 1e-6, "{size}");
}

#[test]
fn empty_maps_draw_a_frame() {
    let one = labels(&["solo"]);
    let none: Vec<String> = Vec::new();
    let map = Array2::<f32>::zeros((1, 0));
    let frame = Frame {
        title: "input difference",
        row_labels: &one,
        col_labels: &none,
        scale: &Scale::diverging_for(map.view()),
        theme: &Theme::dark(),
        font_px: 24.0,
        mask: None,
        masked_label: "",
        constant: None,
        constant_label: "",
        parts: FrameParts::ALL,
        strip: None,
    };
    let svg = heatmap_svg(map.view(), &frame, 600, 500);
    assert!(svg.contains("∅ (1 × 0)"));
    assert!(svg.contains("solo"));
    assert!(svg.contains(&hex([0x1e, 0x1e, 0x1e])), "dark background");
    assert!(!svg.contains("NaN"));
    let both_empty = heatmap_svg(
        Array2::<f32>::zeros((0, 0)).view(),
        &Frame {
            row_labels: &none,
            ..frame
        },
        10,
        10,
    );
    assert!(both_empty.starts_with("<svg"));
}

#[test]
fn labels_are_truncated_and_mismatched_labels_tolerated() {
    let long = labels(&["internationalisation", "x"]);
    let map = Array2::from_elem((3, 1), 0.5_f32);
    let frame = Frame {
        title: "A",
        row_labels: &long,
        col_labels: &long,
        scale: &Scale::unit(),
        theme: &Theme::light(),
        font_px: 12.0,
        mask: None,
        masked_label: "",
        constant: None,
        constant_label: "",
        parts: FrameParts::ALL,
        strip: None,
    };
    let svg = heatmap_svg(map.view(), &frame, 300, 300);
    assert!(svg.contains("internation…") && !svg.contains("internationalisation"));
    // Three rows but two labels, one column but two labels: every cell still drawn.
    let layout = frame.layout(300, 300);
    assert_eq!(
        (layout.rows, layout.cols),
        (2, 2),
        "frame.layout counts labels"
    );
    let cells = rects(&svg)
        .into_iter()
        .filter(|r| r.4 == hex(Scale::unit().color(0.5)))
        .count();
    assert_eq!(cells, 3);
}

#[test]
fn panels_sit_side_by_side() {
    let words = labels(&["x", "y"]);
    let (a, d) = (
        array![[0.5_f32, 0.5], [1.0, 0.0]],
        array![[0.0_f32, 0.25], [-0.5, 0.5]],
    );
    let (seq, div, theme) = (Scale::unit(), Scale::diverging(0.5), Theme::light());
    let frame = |title, scale| Frame {
        title,
        row_labels: &words,
        col_labels: &words,
        scale,
        theme: &theme,
        font_px: 12.0,
        mask: None,
        masked_label: "",
        constant: None,
        constant_label: "",
        parts: FrameParts::ALL,
        strip: None,
    };
    let svg = panel_svg(
        &[
            Panel {
                map: a.view(),
                frame: frame("A", &seq),
            },
            Panel {
                map: d.view(),
                frame: frame("D", &div),
            },
        ],
        300,
        250,
    );
    assert!(svg.starts_with("<svg width=\"600\" height=\"250\""));
    // The second panel's cells are the first layout shifted right by one panel width.
    let layout = frame("D", &div).layout(300, 250);
    let cell = layout.cell_rect(1, 0);
    let drawn = rects(&svg);
    assert!(drawn.iter().any(|r| (r.0, r.1, r.2, r.3, r.4.clone())
        == (
            cell.x + 300,
            cell.y,
            cell.width,
            cell.height,
            hex(PUOR_ORANGE)
        )));
    assert_only_known_markup(&svg);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_label_text_stays_text(
        words in prop::collection::vec(any::<String>(), 0..6),
        title in any::<String>(),
    ) {
        // Arbitrary Unicode, controls included, with NaN on the diagonal.
        let n = words.len();
        let map = Array2::from_shape_fn((n, n), |(i, j)| {
            if i == j { f32::NAN } else { i as f32 - j as f32 }
        });
        let scale = Scale::diverging_for(map.view());
        let frame = Frame {
            title: &title,
            row_labels: &words,
            col_labels: &words,
            scale: &scale,
            theme: &Theme::light(),
            font_px: 14.0,
            mask: None,
            masked_label: "",
            constant: None,
            constant_label: "",
            parts: FrameParts::ALL, strip: None,
        };
        let svg = heatmap_svg(map.view(), &frame, 360, 300);
        assert_only_known_markup(&svg);
        prop_assert!(svg.trim_end().ends_with("</svg>"));
    }
}

#[test]
fn masked_cells_are_drawn_as_masked_and_named_in_the_legend() {
    use diffattn::engine::Mask;
    use diffattn::render::{CellMask, MASKED_RGB};
    // A causal 3 x 3 map: the 3 cells above the diagonal are forbidden. They are drawn in the
    // hatching's light grey (not a colour of the scale), and the legend names them.
    let tokens = labels(&["a", "b", "c"]);
    let map = array![[1.0_f32, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]];
    let scale = Scale::sequential_for(map.view());
    let causal = CellMask::new(Mask::causal(true), 0);
    let frame = Frame {
        title: "A",
        row_labels: &tokens,
        col_labels: &tokens,
        scale: &scale,
        theme: &Theme::light(),
        font_px: 12.0,
        mask: Some(causal),
        masked_label: "masked",
        constant: None,
        constant_label: "",
        parts: FrameParts::ALL,
        strip: None,
    };
    let svg = heatmap_svg(map.view(), &frame, 400, 400);
    let light = hex(MASKED_RGB[1]);
    // The three cells (one rectangle each) and the legend's swatch use the hatching's greys.
    assert!(svg.matches(&light).count() > 3);
    let texts: Vec<&str> = svg
        .split("<text")
        .skip(1)
        .filter_map(|t| Some(t.split_once('>')?.1.split_once("</text>")?.0.trim()))
        .collect();
    assert!(
        texts.contains(&"masked"),
        "the legend names the masked cells: {texts:?}"
    );
    // The word fits on the 400-pixel canvas: its start plus its width (12 px per em).
    let legend = svg
        .split("<text")
        .find(|t| {
            t.split_once('>')
                .is_some_and(|(_, rest)| rest.trim().starts_with("masked"))
        })
        .expect("the legend's text element");
    let x: f32 = legend
        .split_once("x=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .and_then(|(x, _)| x.parse().ok())
        .expect("an x attribute");
    let width_px = diffattn::render::text_width_em("masked") * 12.0;
    assert!(
        x + width_px <= 400.0,
        "the legend ends at {} px",
        x + width_px
    );
    // Without a mask, or with a mask that forbids nothing, there is no legend and no grey.
    for mask in [None, Some(CellMask::new(Mask::FULL, 0))] {
        let svg = heatmap_svg(map.view(), &Frame { mask, ..frame }, 400, 400);
        assert!(!svg.contains(&light));
        assert!(!svg.contains(">masked<"));
    }
}

#[test]
fn a_constant_map_says_so_instead_of_stretching_noise() {
    use diffattn::render::constant_value;
    // D at a shift of 0 is zero up to rounding: one colour, and the colorbar says "constant".
    let tokens = labels(&["a", "b"]);
    let d = array![[1e-9_f32, -2e-9], [0.0, 3e-9]];
    let scale = Scale::diverging_for(d.view());
    let frame = Frame {
        title: "D",
        row_labels: &tokens,
        col_labels: &tokens,
        scale: &scale,
        theme: &Theme::light(),
        font_px: 12.0,
        mask: None,
        masked_label: "",
        constant: constant_value(d.view()),
        constant_label: "constant",
        parts: FrameParts::ALL,
        strip: None,
    };
    assert_eq!(frame.constant, Some(0.0));
    let svg = heatmap_svg(d.view(), &frame, 400, 400);
    assert!(svg.contains("constant"), "the colorbar names it");
    assert!(svg.contains("= 0.0000"));
    // A real spread is not constant.
    assert_eq!(constant_value(array![[0.1_f32, 0.2]].view()), None);
}

#[test]
fn maps_drawn_together_share_one_scale_so_one_value_has_one_colour() {
    use diffattn::engine::ScaleKind;
    let a = array![[0.6_f32, 0.4], [0.3, 0.7]];
    let fused = array![[0.9_f32, 0.1], [0.2, 0.8]];
    let shared = Scale::for_maps(ScaleKind::Sequential, &[a.view(), fused.view()]);
    assert_eq!(shared.range(), (0.0, 0.9));
    // Alone, each would have its own range, and 0.6 would differ in colour between them.
    let (own_a, own_f) = (
        Scale::for_values(ScaleKind::Sequential, a.view()),
        Scale::for_values(ScaleKind::Sequential, fused.view()),
    );
    assert_ne!(own_a.color(0.6), own_f.color(0.6));
    // Shared, the cell of 0.6 in A and a cell of 0.6 anywhere in A′ would be one colour: the
    // colour of 0.6 on 0..0.9, two thirds up the palette.
    assert_eq!(shared.color(0.6), Scale::sequential(0.0, 0.9).color(0.6));
}

#[test]
fn the_colorbar_as_one_image_runs_from_the_scales_top_down_to_its_bottom() {
    // A sequential scale over [0, 1]: the top row of the bar is (nearly) the high end of
    // viridis, the bottom row (nearly) the low end; every pixel of a row has the row's colour.
    let rows = labels(&["a", "b"]);
    let scale = Scale::sequential(0.0, 1.0);
    let mut frame = Frame {
        title: "A",
        row_labels: &rows,
        col_labels: &rows,
        scale: &scale,
        theme: &Theme::light(),
        font_px: 12.0,
        mask: None,
        masked_label: "",
        constant: None,
        constant_label: "",
        parts: FrameParts::ALL,
        strip: None,
    };
    let layout = frame.layout_with(
        400,
        300,
        (2, 2),
        &diffattn::render::LabelWidths::measure(&rows, &rows),
    );
    let bar = layout.colorbar;
    assert!(bar.width > 0 && bar.height > 1, "{bar:?}");
    let mut rgba = Vec::new();
    diffattn::render::colorbar_rgba(&frame, &layout, &mut rgba);
    assert_eq!(rgba.len(), (bar.width * bar.height * 4) as usize);
    let row = |y: u32| &rgba[(y * bar.width * 4) as usize..((y + 1) * bar.width * 4) as usize];
    let (lo, hi) = scale.range();
    let top = scale.color(lo + (1.0 - 0.5 / bar.height as f32) * (hi - lo));
    let bottom = scale.color(lo + (0.5 / bar.height as f32) * (hi - lo));
    assert!(row(0).chunks_exact(4).all(|p| p[..3] == top && p[3] == 255));
    assert!(row(bar.height - 1)
        .chunks_exact(4)
        .all(|p| p[..3] == bottom));
    // A constant map has no gradient: its swatch is part of the frame.
    frame.constant = Some(0.5);
    diffattn::render::colorbar_rgba(&frame, &layout, &mut rgba);
    assert!(rgba.is_empty());
}
