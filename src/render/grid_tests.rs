//! The grid of maps: hand-worked arrangements, and that each map's canvas holds a plot of
//! exactly the grid's size when laid out on its own ([`HeatmapLayout::at_font`]).

use super::*;
use crate::render::{fit_focus, HeatmapLayout};

fn maps(count: usize, tokens: usize) -> Vec<GridMap> {
    vec![
        GridMap {
            rows: tokens,
            cols: tokens,
            col_label_em: 4.0,
            own_bar_em: None,
            strip: None,
        };
        count
    ]
}

fn spec(maps: &[GridMap], width_px: u32, height_px: Option<u32>) -> GridSpec<'_> {
    GridSpec {
        width_px,
        height_px,
        maps,
        font_px: 12.0,
        row_label_em: 4.0,
        title_px: 20,
        gap_px: 10,
        legend_entries: 3,
        max_plot_px: 0,
        min_plot_px: 0,
    }
}

/// The plot HeatmapLayout finds on `place`'s canvas, drawn as the page draws it.
fn plot_of(spec: &GridSpec, grid: &GridLayout, i: usize) -> PixelRect {
    let p = layout_of(spec, grid, i).plot;
    let place = grid.places[i];
    PixelRect {
        x: p.x + place.canvas.x,
        y: p.y + place.canvas.y,
        ..p
    }
}

/// The layout HeatmapLayout finds on `place`'s canvas, relative to the canvas.
fn layout_of(spec: &GridSpec, grid: &GridLayout, i: usize) -> HeatmapLayout {
    let (map, place) = (spec.maps[i], grid.places[i]);
    HeatmapLayout::at_font(
        &LayoutSpec {
            width_px: place.canvas.width,
            height_px: place.canvas.height,
            font_px: grid.font_px,
            rows: map.rows,
            cols: map.cols,
            row_label_em: if place.parts.row_labels {
                spec.row_label_em
            } else {
                0.0
            },
            col_label_em: if place.parts.col_labels {
                map.col_label_em
            } else {
                0.0
            },
            tick_label_em: map.own_bar_em.unwrap_or(0.0),
            title_em: 0.0,
            colorbar: place.parts.colorbar,
            padded: place.parts.padded,
            strip: map.strip.filter(|_| place.parts.strip),
        },
        grid.font_px,
    )
}

#[test]
fn five_maps_in_a_landscape_room_are_two_over_three_with_the_legend_at_the_top_right() {
    // 11 tokens; 1000 × 700 px. Two rows of maps, three columns: with the first row short
    // (A, shift(A) over D, G, A′) every map of the first row has one below it, so only the
    // second row carries column labels, and the legend takes the free slot at the top right.
    let maps = maps(5, 11);
    let s = spec(&maps, 1000, Some(700));
    let grid = fit_grid(&s);
    assert_eq!((grid.cols, grid.rows), (3, 2));
    assert_eq!(grid.plot_px % 11, 0);
    let legend = grid.legend.expect("a legend");
    assert_eq!(legend.x, grid.places[4].canvas.x);
    assert_eq!(legend.y, grid.places[0].canvas.y);
    let labels: Vec<(bool, bool)> = grid
        .places
        .iter()
        .map(|p| (p.parts.row_labels, p.parts.col_labels))
        .collect();
    assert_eq!(
        labels,
        [
            (true, false),
            (false, false),
            (true, true),
            (false, true),
            (false, true)
        ]
    );
    // Every plot the grid's size, and lined up: rows of maps at one y, columns at one x.
    for i in 0..5 {
        let p = plot_of(&s, &grid, i);
        assert_eq!((p.width, p.height), (grid.plot_px, grid.plot_px), "map {i}");
        // The place says where its plot is, as the layout finds it.
        let place = grid.places[i];
        assert_eq!(
            (place.canvas.x + place.plot.x, place.canvas.y + place.plot.y),
            (p.x, p.y)
        );
    }
    assert_eq!(plot_of(&s, &grid, 0).y, plot_of(&s, &grid, 1).y);
    assert_eq!(plot_of(&s, &grid, 2).y, plot_of(&s, &grid, 4).y);
    assert_eq!(plot_of(&s, &grid, 0).x, plot_of(&s, &grid, 2).x);
    assert_eq!(plot_of(&s, &grid, 1).x, plot_of(&s, &grid, 3).x);
    // One pixel a cell more would not fit, either way round; and leaving the last row short
    // gives smaller maps (a second row of column labels).
    for short in [Short::First, Short::Last] {
        let bigger = arrange(&s, 3, short, grid.plot_px + 11);
        assert!(bigger.width_px > 1000 || bigger.height_px > 700);
    }
    assert!(largest_with(&s, 3, Short::Last).plot_px < grid.plot_px);
}

#[test]
fn a_wide_short_room_puts_the_maps_in_one_row() {
    let maps = maps(5, 11);
    let grid = fit_grid(&spec(&maps, 2400, Some(400)));
    assert_eq!((grid.cols, grid.rows), (5, 1));
    // No free slot: the legend is a row of its own under the maps.
    let legend = grid.legend.unwrap();
    assert!(legend.y as u32 >= grid.places[0].canvas.bottom() as u32);
    assert!(grid.places.iter().all(|p| p.parts.col_labels));
}

#[test]
fn by_width_alone_and_presenting() {
    let maps = maps(5, 11);
    let explore = fit_grid(&spec(&maps, 1000, Some(700)));
    // Presenting: plots at least 1.5 × as tall, as many across as that allows, the page
    // scrolling for the rest.
    let target = explore.plot_px * 3 / 2;
    let present = fit_grid(&GridSpec {
        min_plot_px: target,
        max_plot_px: 700,
        ..spec(&maps, 1000, None)
    });
    assert!(present.plot_px >= target, "{} < {target}", present.plot_px);
    assert!(present.cols >= 2);
    let fewer = fit_grid(&GridSpec {
        min_plot_px: target,
        max_plot_px: 700,
        ..spec(&maps, 1000, None)
    });
    assert_eq!(present, fewer, "the same room, the same grid");
}

#[test]
fn long_maps_get_cells_under_a_pixel_and_the_smallest_labels() {
    let maps = maps(5, 2048);
    let grid = fit_grid(&spec(&maps, 1000, Some(700)));
    assert!(grid.plot_px > 100 && grid.plot_px < 2048);
    assert_eq!(grid.font_px, 12.0 * LABEL_SHRINK);
    assert!(grid.width_px <= 1000 && grid.height_px <= 700);
}

#[test]
fn a_map_with_its_own_colorbar_is_wider_and_its_plot_the_same() {
    let mut maps = maps(3, 8);
    maps[2] = GridMap {
        rows: 8,
        cols: 32,
        col_label_em: 1.5,
        own_bar_em: Some(2.5),
        strip: None,
    };
    let s = GridSpec {
        legend_entries: 1,
        ..spec(&maps, 1400, Some(500))
    };
    let grid = fit_grid(&s);
    let out = plot_of(&s, &grid, 2);
    assert_eq!(out.height, grid.plot_px);
    assert_eq!(out.width, grid.plot_px / 8 * 32);
    assert!(grid.places[2].parts.colorbar && !grid.places[0].parts.colorbar);
}

#[test]
fn any_room_gives_a_grid_inside_it() {
    for tokens in [1, 2, 5, 11, 64, 300, 2048] {
        for count in 1..=9 {
            for (w, h) in [(1, 1), (200, 150), (390, 600), (1000, 700), (1920, 900)] {
                let maps = maps(count, tokens);
                for height in [Some(h), None] {
                    let s = spec(&maps, w, height);
                    let grid = fit_grid(&s);
                    assert_eq!(grid.places.len(), count);
                    assert!(grid.plot_px >= 1);
                    if grid.plot_px > 1 {
                        assert!(grid.width_px <= w, "{tokens} × {count} in {w}: {grid:?}");
                        assert!(height.is_none_or(|h| grid.height_px <= h));
                    }
                    if grid.plot_px as usize >= tokens {
                        for i in 0..count {
                            let p = plot_of(&s, &grid, i);
                            assert_eq!(p.height, grid.plot_px, "{tokens} × {count} in {w}");
                        }
                    }
                }
            }
        }
    }
    let none = fit_grid(&spec(&[], 500, Some(500)));
    assert!(none.places.is_empty() && none.legend.is_none());
}

#[test]
fn a_map_with_the_sinks_strip_holds_its_plot_and_the_strip_inside_its_canvas() {
    // A (and A1, A2) with the strip, the other maps without: every canvas still holds a plot
    // of exactly the grid's size, and the strip, as tall as the plot, sits right of it.
    for tokens in [1, 2, 5, 11, 64, 300, 2048] {
        for count in 1..=5 {
            for (w, h) in [(200, 150), (390, 600), (1000, 700), (1920, 900)] {
                let mut maps = maps(count, tokens);
                maps[0].strip = Some(2.4);
                if count > 2 {
                    maps[1].strip = Some(2.4);
                }
                let s = spec(&maps, w, Some(h));
                for (grid, focus) in [
                    (fit_grid(&s), None),
                    (fit_focus(&s, count - 1), Some(count - 1)),
                ] {
                    if grid.plot_px <= 1 {
                        continue;
                    }
                    assert!(
                        grid.width_px <= w && grid.height_px <= h,
                        "{tokens} × {count} in {w}"
                    );
                    for (i, (map, place)) in maps.iter().zip(&grid.places).enumerate() {
                        let layout = layout_of(&s, &grid, i);
                        if grid.plot_px as usize >= tokens {
                            assert_eq!(
                                layout.plot.height, place.plot.height,
                                "{tokens} × {count} in {w}, map {i}"
                            );
                            assert_eq!(
                                layout.plot, place.plot,
                                "{tokens} × {count} in {w}, map {i}"
                            );
                        }
                        let drawn = map.strip.is_some() && (focus.is_none() || focus == Some(i));
                        assert_eq!(layout.strip.width > 0, drawn, "{tokens} × {count}, map {i}");
                        if drawn {
                            let (p, st) = (layout.plot, layout.strip);
                            assert!(st.x > p.right() && st.right() <= place.canvas.width as i32);
                            assert_eq!((st.y, st.height), (p.y, p.height));
                            assert!(st.width >= (grid.font_px.round() as u32).max(4), "{st:?}");
                        }
                    }
                }
            }
        }
    }
}
