//! The page's interface: a few plain exports, no wasm-bindgen. The page
//! writes knob values into a buffer it got from [`bay_buffer`], calls
//! [`bay_run`] (or [`bay_c_literal`], [`bay_meta`]), and reads the UTF-8
//! JSON or C text from [`bay_text_ptr`], its length being what the call returned. Single
//! threaded, as a page is, so one buffer and one text suffice.

use std::cell::RefCell;

use crate::{meta_json, scenarios::ALL};

thread_local! {
    static KNOBS: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
    static TEXT: RefCell<String> = const { RefCell::new(String::new()) };
}

fn set_text(text: String) -> usize {
    let len = text.len();
    TEXT.with(|t| *t.borrow_mut() = text);
    len
}

/// Room for `n` knob values; returns where to write them (f64s).
#[no_mangle]
pub extern "C" fn bay_buffer(n: usize) -> *mut f64 {
    KNOBS.with(|k| {
        let mut k = k.borrow_mut();
        k.clear();
        k.resize(n, 0.0);
        k.as_mut_ptr()
    })
}

/// Every scenario's table as JSON; returns its length in bytes.
#[no_mangle]
pub extern "C" fn bay_meta() -> usize {
    set_text(meta_json())
}

/// Runs scenario number `index` (in `bay_meta`'s order) on the knob buffer
/// with `seed` (an integer below 2^53, as JS numbers carry); returns the
/// series' JSON length in bytes, 0 for an unknown index.
#[no_mangle]
pub extern "C" fn bay_run(index: usize, seed: f64) -> usize {
    let Some(sc) = ALL.get(index) else { return 0 };
    let knobs = KNOBS.with(|k| k.borrow().clone());
    set_text((sc.run)(&knobs, seed as u64).to_json())
}

/// The C struct literal of scenario `index`'s policy at the knob buffer.
#[no_mangle]
pub extern "C" fn bay_c_literal(index: usize) -> usize {
    let Some(sc) = ALL.get(index) else { return 0 };
    let knobs = KNOBS.with(|k| k.borrow().clone());
    set_text(sc.c_literal(&knobs))
}

/// Where the last text starts.
#[no_mangle]
pub extern "C" fn bay_text_ptr() -> *const u8 {
    TEXT.with(|t| t.borrow().as_ptr())
}
