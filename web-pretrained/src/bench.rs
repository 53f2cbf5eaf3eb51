//! The benchmarks' build only (cargo feature `bench`): the pretrained model's whole forward
//! pass timed in wasm ([`BenchBert`], scripts/bench-minilm-web), and the test hook
//! `trap_for_tests` (a real panic in this module, for the e2e test of its reset).

use wasm_bindgen::prelude::*;

use super::encoder::Encoder;
use super::{js_error, now_ms};
use diffattn::model::bert::Bert;

/// The pretrained model's whole forward pass timed in wasm (`Bert::forward`: embeddings, every
/// layer, pooling), for the side-by-side table with onnxruntime-web of docs/PERFORMANCE.md
/// (scripts/bench-minilm-web).
#[wasm_bindgen]
pub struct BenchBert {
    bert: Bert,
}

#[wasm_bindgen]
impl BenchBert {
    /// Reads the weights file (`weights/minilm/minilm.bin`).
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: &[u8]) -> Result<BenchBert, JsError> {
        let bert = Bert::from_bytes(bytes).map_err(js_error)?;
        Ok(BenchBert { bert })
    }

    /// The word-piece ids of `text`, at most `pieces` of them (`[CLS]` and `[SEP]` included):
    /// the same ids are given to the other runtime.
    pub fn ids(&self, text: &str, pieces: usize) -> Vec<u32> {
        self.bert.tokenizer().encode(text, pieces).ids
    }

    /// `reps` timed forward passes over `ids` (ms each), after one untimed pass and
    /// `warmup_ms` of passes (for V8 to tier the kernels up).
    pub fn forward_ms(
        &self,
        ids: &[u32],
        reps: usize,
        warmup_ms: f64,
    ) -> Result<Vec<f64>, JsError> {
        let forward = || self.bert.forward(ids, false).map(|_| ()).map_err(js_error);
        forward()?;
        let start = now_ms();
        while now_ms() - start < warmup_ms {
            forward()?;
        }
        let mut ms = Vec::with_capacity(reps);
        for _ in 0..reps {
            let t = now_ms();
            forward()?;
            ms.push(now_ms() - t);
        }
        Ok(ms)
    }

    /// The sentence embedding of `ids` (to check that both runtimes compute the same model).
    pub fn embedding(&self, ids: &[u32]) -> Result<Vec<f32>, JsError> {
        Ok(self.bert.forward(ids, false).map_err(js_error)?.embedding)
    }
}

/// Test hooks, in the benchmark build only: the shipped module never carries them.
#[wasm_bindgen]
impl Encoder {
    /// Panics, so tests/e2e/component.test.mjs can check what a real Rust panic in the model's
    /// module does (a trap, a fresh instance with the model read again, the maps as they were).
    pub fn trap_for_tests(&mut self) {
        panic!("trap_for_tests: a deliberate panic in the model's module");
    }
}
