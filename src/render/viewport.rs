//! The part of a map that is drawn: a window of rows and columns, for zooming into a long map.
//!
//! A 2,048-token map on a 400-pixel plot shows one cell in five and labels every hundredth
//! token; the page zooms by drawing only a window of it (the detail), with an overview of the
//! whole map beside it. Everything that is drawn from a window keeps the whole map's
//! numbering: the labels are the window's tokens, the mask is the map's mask at the window's
//! place ([`crate::render::CellMask::origin`]), the colour scale is the whole map's (so
//! colours do not change as the window moves), and hit-testing gives whole-map indices.

use std::ops::Range;

use ndarray::{s, ArrayView2};

/// Rows `row..row + rows` and columns `col..col + cols` of a map.
///
/// A viewport is asked for without knowing the map (the page keeps one across sentences), so
/// [`Viewport::within`] fits it to a map's shape: inside the map, at least one cell, the same
/// size where the map allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Viewport {
    /// The first row shown.
    pub row: usize,
    /// The first column shown.
    pub col: usize,
    /// How many rows are shown.
    pub rows: usize,
    /// How many columns are shown.
    pub cols: usize,
}

impl Viewport {
    /// The whole of a map of `rows × cols`.
    pub fn whole((rows, cols): (usize, usize)) -> Self {
        Viewport {
            row: 0,
            col: 0,
            rows,
            cols,
        }
    }

    /// This viewport fitted to a map of `shape`: no larger than the map (a size of 0 means the
    /// whole extent), and moved back inside it when it reaches past an edge, so it keeps its
    /// size. An empty map gives an empty viewport.
    ///
    /// ```
    /// use diffattn::render::Viewport;
    /// let v = Viewport { row: 90, col: 10, rows: 32, cols: 32 };
    /// // Moved back inside a 100 x 100 map, same size.
    /// assert_eq!(v.within((100, 100)), Viewport { row: 68, col: 10, rows: 32, cols: 32 });
    /// // Larger than a 20-token map: the whole map.
    /// assert_eq!(v.within((20, 20)), Viewport::whole((20, 20)));
    /// // A size of 0 is the whole extent.
    /// assert_eq!(Viewport::default().within((7, 9)), Viewport::whole((7, 9)));
    /// ```
    pub fn within(self, (rows, cols): (usize, usize)) -> Self {
        let fit = |start: usize, size: usize, total: usize| {
            let size = if size == 0 { total } else { size.min(total) };
            (start.min(total - size), size)
        };
        let (row, rows) = fit(self.row, self.rows, rows);
        let (col, cols) = fit(self.col, self.cols, cols);
        Viewport {
            row,
            col,
            rows,
            cols,
        }
    }

    /// Whether this viewport shows all of a map of `shape`.
    pub fn is_whole(&self, shape: (usize, usize)) -> bool {
        self.within(shape) == Viewport::whole(shape)
    }

    /// The rows shown.
    pub fn row_range(&self) -> Range<usize> {
        self.row..self.row + self.rows
    }

    /// The columns shown.
    pub fn col_range(&self) -> Range<usize> {
        self.col..self.col + self.cols
    }

    /// Whether the whole-map cell `(row, col)` is shown.
    pub fn contains(&self, row: usize, col: usize) -> bool {
        self.row_range().contains(&row) && self.col_range().contains(&col)
    }

    /// The part of `map` shown; call on a viewport fitted to the map ([`Viewport::within`]).
    ///
    /// ```
    /// use diffattn::render::Viewport;
    /// use ndarray::array;
    /// let map = array![[1.0_f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]];
    /// let v = Viewport { row: 1, col: 1, rows: 2, cols: 2 }.within(map.dim());
    /// assert_eq!(v.slice(map.view()), array![[5.0_f32, 6.0], [8.0, 9.0]]);
    /// ```
    pub fn slice<'a>(&self, map: ArrayView2<'a, f32>) -> ArrayView2<'a, f32> {
        map.slice_move(s![self.row_range(), self.col_range()])
    }

    /// The labels of the shown part of `labels` (one per row or per column of the map).
    pub fn labels(range: Range<usize>, labels: &[String]) -> &[String] {
        let end = range.end.min(labels.len());
        &labels[range.start.min(end)..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Fitting always gives a viewport inside the map, of the asked size when it fits, and
        /// fitting twice changes nothing.
        #[test]
        fn within_is_inside_the_map_and_idempotent(
            row in 0usize..5000, col in 0usize..5000, rows in 0usize..3000, cols in 0usize..3000,
            total_rows in 0usize..2100, total_cols in 0usize..2100,
        ) {
            let shape = (total_rows, total_cols);
            let v = Viewport { row, col, rows, cols }.within(shape);
            prop_assert!(v.row + v.rows <= total_rows);
            prop_assert!(v.col + v.cols <= total_cols);
            let want = |asked: usize, total: usize| if asked == 0 { total } else { asked.min(total) };
            prop_assert_eq!(v.rows, want(rows, total_rows));
            prop_assert_eq!(v.cols, want(cols, total_cols));
            prop_assert_eq!(v.within(shape), v);
        }
    }

    #[test]
    fn an_empty_map_gives_an_empty_viewport() {
        let v = Viewport {
            row: 3,
            col: 3,
            rows: 8,
            cols: 8,
        }
        .within((0, 0));
        assert_eq!(v, Viewport::default());
        assert!(v.is_whole((0, 0)));
    }

    #[test]
    fn labels_follow_the_viewport() {
        let labels: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
        let v = Viewport {
            row: 4,
            col: 0,
            rows: 3,
            cols: 10,
        };
        assert_eq!(Viewport::labels(v.row_range(), &labels), &labels[4..7]);
        assert_eq!(Viewport::labels(20..30, &labels), &[] as &[String]);
    }
}
