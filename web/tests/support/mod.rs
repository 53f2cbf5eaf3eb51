//! What the wasm crates' browser tests share (web/tests/web.rs, and web-lesson/tests/lesson.rs
//! through `#[path]`): reading a JavaScript value's fields, an error's message, canvases on the
//! test page.
#![allow(dead_code)]

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

pub fn get(v: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(v, &JsValue::from_str(key)).expect("property")
}

pub fn num(v: &JsValue, key: &str) -> f64 {
    get(v, key)
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number"))
}

pub fn error_message(e: wasm_bindgen::JsError) -> String {
    let v: JsValue = e.into();
    get(&v, "message").as_string().unwrap_or_default()
}

pub fn canvases(n: usize, width: u32, height: u32) -> Vec<HtmlCanvasElement> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .expect("document");
    let body = document.body().expect("body");
    (0..n)
        .map(|_| {
            let c: HtmlCanvasElement = document
                .create_element("canvas")
                .expect("canvas")
                .dyn_into()
                .expect("a canvas element");
            c.set_width(width);
            c.set_height(height);
            body.append_child(&c).expect("attach");
            c
        })
        .collect()
}

/// `canvas`'s 2D context, for reading back its pixels.
pub fn context_2d(canvas: &HtmlCanvasElement) -> CanvasRenderingContext2d {
    canvas
        .get_context("2d")
        .expect("get_context")
        .expect("a 2D context")
        .dyn_into()
        .expect("a CanvasRenderingContext2d")
}
