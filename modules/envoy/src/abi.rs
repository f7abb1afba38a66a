//! The part of Envoy's dynamic module ABI (v0.2.0, Envoy 1.40) this module
//! uses, declared by hand from Envoy's
//! `source/extensions/dynamic_modules/abi/abi.h`: the types, and the
//! callbacks Envoy exports (`nm -D envoy | grep envoy_dynamic_module_callback`).
//! Nothing checks these signatures when the module loads: each is written
//! exactly as abi.h has it, and modules/envoy/test.sh exercises every one
//! against a real Envoy 1.40.0.
//!
//! C enums are `int`-sized; they are passed and returned here as `u32`
//! with the values abi.h gives them.

use std::ffi::{c_char, c_void};

/// The ABI version this module is built to; Envoy 1.40.0 logs
/// "Dynamic module ABI version v0.2.0 matched." for it.
pub const ABI_VERSION: &[u8] = b"v0.2.0\0";

/// `envoy_dynamic_module_type_envoy_buffer`: bytes Envoy owns.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct EnvoyBuffer {
    pub ptr: *const c_char,
    pub length: usize,
}

impl EnvoyBuffer {
    pub const NULL: EnvoyBuffer = EnvoyBuffer {
        ptr: std::ptr::null(),
        length: 0,
    };

    /// The bytes, valid for as long as Envoy keeps them (the current hook).
    ///
    /// # Safety
    /// `ptr` must point at `length` readable bytes for `'a`, or be null.
    pub unsafe fn bytes<'a>(self) -> &'a [u8] {
        if self.ptr.is_null() || self.length == 0 {
            &[]
        } else {
            // SAFETY: non-null, and the caller promises `length` readable
            // bytes at `ptr` for `'a` (this function's contract).
            std::slice::from_raw_parts(self.ptr.cast(), self.length)
        }
    }
}

/// `envoy_dynamic_module_type_module_buffer`: bytes the module owns.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ModuleBuffer {
    pub ptr: *const c_char,
    pub length: usize,
}

impl ModuleBuffer {
    pub fn of(bytes: &[u8]) -> ModuleBuffer {
        ModuleBuffer {
            ptr: bytes.as_ptr().cast(),
            length: bytes.len(),
        }
    }
}

/// `envoy_dynamic_module_type_envoy_http_header`: a header Envoy owns.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct EnvoyHttpHeader {
    pub key_ptr: *const c_char,
    pub key_length: usize,
    pub value_ptr: *const c_char,
    pub value_length: usize,
}

impl EnvoyHttpHeader {
    pub const NULL: EnvoyHttpHeader = EnvoyHttpHeader {
        key_ptr: std::ptr::null(),
        key_length: 0,
        value_ptr: std::ptr::null(),
        value_length: 0,
    };

    /// # Safety
    /// The pointers must be Envoy's, valid for `'a`.
    pub unsafe fn key<'a>(&self) -> &'a [u8] {
        EnvoyBuffer {
            ptr: self.key_ptr,
            length: self.key_length,
        }
        .bytes()
    }

    /// # Safety
    /// As [`EnvoyHttpHeader::key`].
    pub unsafe fn value<'a>(&self) -> &'a [u8] {
        EnvoyBuffer {
            ptr: self.value_ptr,
            length: self.value_length,
        }
        .bytes()
    }
}

/// `envoy_dynamic_module_type_module_http_header`.
#[repr(C)]
pub struct ModuleHttpHeader {
    pub key_ptr: *const c_char,
    pub key_length: usize,
    pub value_ptr: *const c_char,
    pub value_length: usize,
}

impl ModuleHttpHeader {
    pub fn of(key: &[u8], value: &[u8]) -> ModuleHttpHeader {
        ModuleHttpHeader {
            key_ptr: key.as_ptr().cast(),
            key_length: key.len(),
            value_ptr: value.as_ptr().cast(),
            value_length: value.len(),
        }
    }
}

/// `envoy_dynamic_module_type_http_filter_config_envoy_ptr` and
/// `envoy_dynamic_module_type_http_filter_envoy_ptr`: Envoy's objects.
pub type ConfigEnvoyPtr = *mut c_void;
pub type FilterEnvoyPtr = *mut c_void;

/// `envoy_dynamic_module_type_http_header_type_RequestHeader`.
pub const REQUEST_HEADER: u32 = 0;
/// `envoy_dynamic_module_type_http_header_type_ResponseHeader`.
pub const RESPONSE_HEADER: u32 = 2;
/// `envoy_dynamic_module_type_attribute_id_SourceAddress` (`source.address`:
/// the downstream peer, with its port).
pub const ATTRIBUTE_SOURCE_ADDRESS: u32 = 24;
/// `envoy_dynamic_module_type_metrics_result_Success`.
pub const METRICS_SUCCESS: u32 = 0;
/// `envoy_dynamic_module_type_on_http_filter_request_headers_status_*`.
pub const HEADERS_CONTINUE: u32 = 0;
pub const HEADERS_STOP_ITERATION: u32 = 1;
/// The body, trailers and local-reply statuses' `Continue`.
pub const CONTINUE: u32 = 0;

extern "C" {
    /// `void envoy_dynamic_module_callback_log(log_level level, module_buffer message)`.
    pub fn envoy_dynamic_module_callback_log(level: u32, message: ModuleBuffer);

    /// `bool envoy_dynamic_module_callback_log_enabled(log_level level)`.
    pub fn envoy_dynamic_module_callback_log_enabled(level: u32) -> bool;

    /// `metrics_result envoy_dynamic_module_callback_http_filter_config_define_counter(
    ///   http_filter_config_envoy_ptr, module_buffer name, module_buffer* label_names,
    ///   size_t label_names_length, size_t* counter_id_ptr)`.
    pub fn envoy_dynamic_module_callback_http_filter_config_define_counter(
        config: ConfigEnvoyPtr,
        name: ModuleBuffer,
        label_names: *mut ModuleBuffer,
        label_names_length: usize,
        counter_id: *mut usize,
    ) -> u32;

    /// `metrics_result envoy_dynamic_module_callback_http_filter_increment_counter(
    ///   http_filter_envoy_ptr, size_t id, module_buffer* label_values,
    ///   size_t label_values_length, uint64_t value)`.
    pub fn envoy_dynamic_module_callback_http_filter_increment_counter(
        filter: FilterEnvoyPtr,
        id: usize,
        label_values: *mut ModuleBuffer,
        label_values_length: usize,
        value: u64,
    ) -> u32;

    /// `size_t envoy_dynamic_module_callback_http_get_headers_size(http_filter_envoy_ptr,
    ///   http_header_type)`.
    pub fn envoy_dynamic_module_callback_http_get_headers_size(
        filter: FilterEnvoyPtr,
        header_type: u32,
    ) -> usize;

    /// `bool envoy_dynamic_module_callback_http_get_headers(http_filter_envoy_ptr,
    ///   http_header_type, envoy_http_header* result_headers)`.
    pub fn envoy_dynamic_module_callback_http_get_headers(
        filter: FilterEnvoyPtr,
        header_type: u32,
        result_headers: *mut EnvoyHttpHeader,
    ) -> bool;

    /// `bool envoy_dynamic_module_callback_http_filter_get_attribute_string(
    ///   http_filter_envoy_ptr, attribute_id, envoy_buffer* result)`.
    pub fn envoy_dynamic_module_callback_http_filter_get_attribute_string(
        filter: FilterEnvoyPtr,
        attribute_id: u32,
        result: *mut EnvoyBuffer,
    ) -> bool;

    /// `void envoy_dynamic_module_callback_http_send_response(http_filter_envoy_ptr,
    ///   uint32_t status_code, module_http_header* headers_vector, size_t headers_vector_size,
    ///   module_buffer body, module_buffer details)`.
    pub fn envoy_dynamic_module_callback_http_send_response(
        filter: FilterEnvoyPtr,
        status_code: u32,
        headers: *mut ModuleHttpHeader,
        headers_size: usize,
        body: ModuleBuffer,
        details: ModuleBuffer,
    );

    /// `http_filter_per_route_config_module_ptr
    ///   envoy_dynamic_module_callback_get_most_specific_route_config(http_filter_envoy_ptr)`.
    pub fn envoy_dynamic_module_callback_get_most_specific_route_config(
        filter: FilterEnvoyPtr,
    ) -> *const c_void;

    /// `metrics_result envoy_dynamic_module_callback_http_filter_config_define_gauge(
    ///   http_filter_config_envoy_ptr, module_buffer name, module_buffer* label_names,
    ///   size_t label_names_length, size_t* gauge_id_ptr)`.
    pub fn envoy_dynamic_module_callback_http_filter_config_define_gauge(
        config: ConfigEnvoyPtr,
        name: ModuleBuffer,
        label_names: *mut ModuleBuffer,
        label_names_length: usize,
        gauge_id: *mut usize,
    ) -> u32;

    /// `metrics_result envoy_dynamic_module_callback_http_filter_set_gauge(
    ///   http_filter_envoy_ptr, size_t id, module_buffer* label_values,
    ///   size_t label_values_length, uint64_t value)`.
    pub fn envoy_dynamic_module_callback_http_filter_set_gauge(
        filter: FilterEnvoyPtr,
        id: usize,
        label_values: *mut ModuleBuffer,
        label_values_length: usize,
        value: u64,
    ) -> u32;

    /// `bool envoy_dynamic_module_callback_http_get_header(http_filter_envoy_ptr,
    ///   http_header_type, module_buffer key, envoy_buffer* result_buffer, size_t index,
    ///   size_t* optional_size)`.
    pub fn envoy_dynamic_module_callback_http_get_header(
        filter: FilterEnvoyPtr,
        header_type: u32,
        key: ModuleBuffer,
        result: *mut EnvoyBuffer,
        index: usize,
        optional_size: *mut usize,
    ) -> bool;

    /// `bool envoy_dynamic_module_callback_http_get_cluster_name(http_filter_envoy_ptr,
    ///   envoy_buffer* result)`: the upstream cluster of the request's route.
    pub fn envoy_dynamic_module_callback_http_get_cluster_name(
        filter: FilterEnvoyPtr,
        result: *mut EnvoyBuffer,
    ) -> bool;
}
