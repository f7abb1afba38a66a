//! The library's version, for a caller to check against the header's.

/// The crate version with its NUL, e.g. "0.2.0\0".
const TEXT: &[u8] = concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes();

/// NUL-terminated crate version. A `static` array rather than a string
/// literal, so that it sits in a section of its own: a string literal lands
/// in the merged string pool with every status message, and a firmware
/// image that links only `weir_version` would carry all of them (2 KB).
static VERSION: [u8; TEXT.len()] = {
    if core::ffi::CStr::from_bytes_with_nul(TEXT).is_err() {
        panic!("the crate version contains a NUL byte");
    }
    let mut out = [0; TEXT.len()];
    let mut i = 0;
    while i < TEXT.len() {
        out[i] = TEXT[i];
        i += 1;
    }
    out
};

/// The version of the linked library as "MAJOR.MINOR.PATCH", a static string
/// that must not be freed. Compare it with `WEIR_VERSION` from the header to
/// catch a header and a library from different releases.
#[no_mangle]
pub extern "C" fn weir_version() -> *const core::ffi::c_char {
    VERSION.as_ptr().cast()
}
