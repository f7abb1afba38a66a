//! Another Rust library with a C entry point. It allocates and formats, so
//! its archive carries its own copy of std (`__rust_alloc`, the panic
//! machinery), exactly what collides with an archive that exports Rust's
//! globals too.

/// The length of a formatted, heap-allocated string: 12 for 42.
#[no_mangle]
pub extern "C" fn other_rust_answer(n: i32) -> i32 {
    let text = format!("answer: {n:>4}");
    let boxed: Box<[u8]> = text.into_bytes().into_boxed_slice();
    boxed.len() as i32
}
