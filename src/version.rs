//! The library's version, for a caller to check against the header's.

/// NUL-terminated crate version, e.g. "0.2.0".
const VERSION: &core::ffi::CStr = {
    match core::ffi::CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes())
    {
        Ok(version) => version,
        Err(_) => panic!("the crate version contains a NUL byte"),
    }
};

/// The version of the linked library as "MAJOR.MINOR.PATCH", a static string
/// that must not be freed. Compare it with `WEIR_VERSION` from the header to
/// catch a header and a library from different releases.
#[no_mangle]
pub extern "C" fn weir_version() -> *const core::ffi::c_char {
    VERSION.as_ptr()
}
