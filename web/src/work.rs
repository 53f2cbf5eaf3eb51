//! The page's heavy work, in short pieces (`diffattn::explorer`'s `work`): `work(budget_ms, every)`
//! does pieces until the budget is used or nothing is left, so the page can spread a long
//! sentence, a large captured layer or every head over tasks between frames and answer a
//! slider between two of them. The one path for heavy work: there is no worker and no second
//! copy of the handle's state.

use wasm_bindgen::prelude::*;

use super::handle::{now_ms, Explorer};
use super::js::{js_error, to_js};
use diffattn::explorer::Need;

/// `{ done, total, finished, ms }`: heads up to date, heads needed, whether everything is (for
/// every head, the layer output too), and the time the call took.
#[derive(serde::Serialize)]
struct WorkJs {
    done: usize,
    total: usize,
    finished: bool,
    ms: f64,
}

#[wasm_bindgen]
impl Explorer {
    /// Does pieces of work toward the shown head (`every` false: what the explore view draws)
    /// or every head and the layer output (`every` true: the all-heads view, the prediction),
    /// the shown head first, until `budget_ms` have passed (at least one piece, if any is
    /// left). Returns `{ done, total, finished, ms }`.
    pub fn work(&mut self, budget_ms: f64, every: bool) -> Result<JsValue, JsError> {
        let need = if every { Need::Every } else { Need::Shown };
        let t0 = now_ms();
        while self.state.work(need).map_err(js_error)? {
            if now_ms() - t0 >= budget_ms {
                break;
            }
        }
        let progress = self.state.progress(need);
        to_js(&WorkJs {
            done: progress.done,
            total: progress.total,
            finished: progress.finished,
            ms: now_ms() - t0,
        })
    }

    /// How far the work toward the shown head (`every` false) or every head is, doing none:
    /// `{ done, total, finished, ms }` as `work` returns it (`ms` 0).
    pub fn progress(&self, every: bool) -> Result<JsValue, JsError> {
        let need = if every { Need::Every } else { Need::Shown };
        let progress = self.state.progress(need);
        to_js(&WorkJs {
            done: progress.done,
            total: progress.total,
            finished: progress.finished,
            ms: 0.0,
        })
    }

    /// How many heads are not computed yet under the current settings (the shown one is once
    /// anything is drawn): what the all-heads view, the layer output and the prediction still
    /// need.
    pub fn pending_heads(&self) -> usize {
        self.state.missing_heads().len()
    }
}
