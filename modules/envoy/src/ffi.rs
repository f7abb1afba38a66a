//! The hooks Envoy calls (`envoy_dynamic_module_on_*`, the only symbols the
//! library exports) and the request as the key reader sees it.
//!
//! Lifetimes: `config_new` runs once per filter config on the main thread
//! and returns a boxed [`FilterConfig`]; every worker's filters get that
//! pointer, so the limits' words are shared by all workers, lock-free.
//! A filter needs no state of its own: `filter_new` hands back the config
//! pointer itself, so a request allocates nothing for the filter.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use crate::abi::*;
use crate::config::{self, Apply, Config, LogLevel, RouteConfig, FILTER_NAME};
use crate::key::{self, Request};
use crate::limit::{self, Held, Limit, Verdict};

/// Counter ids of one limit, by decision.
struct Counters {
    allowed: usize,
    refused: usize,
    dry_run_refused: usize,
}

/// The in-module filter config.
pub struct FilterConfig {
    config: Config,
    limits: Vec<Limit>,
    counters: Vec<Counters>,
}

fn log(level: u32, msg: &str) {
    // SAFETY: the buffer outlives the call; Envoy copies the message.
    unsafe { envoy_dynamic_module_callback_log(level, ModuleBuffer::of(msg.as_bytes())) }
}

fn log_enabled(level: u32) -> bool {
    // SAFETY: a plain query.
    unsafe { envoy_dynamic_module_callback_log_enabled(level) }
}

const LOG_ERROR: u32 = LogLevel::Error as u32;

/// A key for a log line: printable ASCII as it is, other bytes as \xHH.
fn printable(key: &[u8]) -> String {
    let mut s = String::with_capacity(key.len());
    for &b in key {
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            s.push(b as char);
        } else {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_program_init() -> *const u8 {
    limit::now(); // fix the clock's epoch before any worker runs
    ABI_VERSION.as_ptr()
}

fn define_counter(envoy: ConfigEnvoyPtr, name: &str) -> Result<usize, String> {
    let mut id = 0usize;
    // SAFETY: `name` outlives the call; no labels.
    let r = unsafe {
        envoy_dynamic_module_callback_http_filter_config_define_counter(
            envoy,
            ModuleBuffer::of(name.as_bytes()),
            ptr::null_mut(),
            0,
            &mut id,
        )
    };
    if r == METRICS_SUCCESS {
        Ok(id)
    } else {
        Err(format!("defining the counter {name} failed ({r})"))
    }
}

fn new_config(envoy: ConfigEnvoyPtr, name: &[u8], bytes: &[u8]) -> Result<FilterConfig, String> {
    if name != FILTER_NAME.as_bytes() {
        return Err(format!(
            "filter_name: invalid \"{}\": this module's filter is \"{FILTER_NAME}\"",
            printable(name)
        ));
    }
    let config = config::parse(bytes).map_err(|e| format!("filter_config: {e}"))?;
    let limits = limit::attach(&config)?;
    let mut counters = Vec::with_capacity(limits.len());
    for l in &limits {
        let n = &l.spec.name;
        counters.push(Counters {
            allowed: define_counter(envoy, &format!("weir_limit.{n}.allowed"))?,
            refused: define_counter(envoy, &format!("weir_limit.{n}.refused"))?,
            dry_run_refused: define_counter(envoy, &format!("weir_limit.{n}.dry_run_refused"))?,
        });
    }
    Ok(FilterConfig {
        config,
        limits,
        counters,
    })
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_config_new(
    envoy: ConfigEnvoyPtr,
    name: EnvoyBuffer,
    config: EnvoyBuffer,
) -> *const c_void {
    let made = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: Envoy's buffers live through this hook.
        let (name, bytes) = unsafe { (name.bytes(), config.bytes()) };
        new_config(envoy, name, bytes)
    }));
    match made {
        Ok(Ok(c)) => Box::into_raw(Box::new(c)) as *const c_void,
        Ok(Err(e)) => {
            log(LOG_ERROR, &format!("weir_limit: {e}"));
            ptr::null()
        }
        Err(_) => {
            log(LOG_ERROR, "weir_limit: the filter config panicked");
            ptr::null()
        }
    }
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_config_destroy(config: *const c_void) {
    if !config.is_null() {
        // SAFETY: made by Box::into_raw in config_new, destroyed once.
        drop(unsafe { Box::from_raw(config as *mut FilterConfig) });
    }
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_per_route_config_new(
    name: EnvoyBuffer,
    config: EnvoyBuffer,
) -> *const c_void {
    let made = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: Envoy's buffers live through this hook.
        let (name, bytes) = unsafe { (name.bytes(), config.bytes()) };
        if name != FILTER_NAME.as_bytes() {
            return Err(format!(
                "per-route filter_name: invalid \"{}\": this module's filter is \"{FILTER_NAME}\"",
                printable(name)
            ));
        }
        config::parse_route(bytes).map_err(|e| format!("per-route filter_config: {e}"))
    }));
    match made {
        Ok(Ok(c)) => Box::into_raw(Box::new(c)) as *const c_void,
        Ok(Err(e)) => {
            log(LOG_ERROR, &format!("weir_limit: {e}"));
            ptr::null()
        }
        Err(_) => {
            log(LOG_ERROR, "weir_limit: the per-route config panicked");
            ptr::null()
        }
    }
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_per_route_config_destroy(
    config: *const c_void,
) {
    if !config.is_null() {
        // SAFETY: made by Box::into_raw in per_route_config_new.
        drop(unsafe { Box::from_raw(config as *mut RouteConfig) });
    }
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_new(
    config: *const c_void,
    _filter: FilterEnvoyPtr,
) -> *const c_void {
    // The filter is the config: nothing per stream to keep.
    config
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_destroy(_filter: *const c_void) {}

/// Headers held on the stack before the list moves to the heap.
const STACK_HEADERS: usize = 32;

/// The request's headers as Envoy lists them, fetched once per request.
/// Large on purpose: the common request lists them on the stack.
#[allow(clippy::large_enum_variant)]
enum Headers {
    Stack([EnvoyHttpHeader; STACK_HEADERS], usize),
    Heap(Vec<EnvoyHttpHeader>),
}

impl Headers {
    fn all(&self) -> &[EnvoyHttpHeader] {
        match self {
            Headers::Stack(h, n) => &h[..*n],
            Headers::Heap(h) => h,
        }
    }
}

/// The request, read through Envoy's callbacks during request_headers.
struct Req {
    envoy: FilterEnvoyPtr,
    headers: OnceCell<Headers>,
    peer: Cell<Option<EnvoyBuffer>>,
}

impl Req {
    /// Every request header in one crossing. Measured under callgrind in
    /// Envoy 1.40.0: get_header costs about 2,590 instructions a call (it
    /// builds a lowercase key and looks it up), listing every header about
    /// 690 for a small request, and a key of several parts reads the list
    /// once.
    fn headers(&self) -> &[EnvoyHttpHeader] {
        self.headers
            .get_or_init(|| {
                // SAFETY: Envoy fills at most `n` entries, the count it
                // just gave; the views stay Envoy's until the hook returns.
                unsafe {
                    let n = envoy_dynamic_module_callback_http_get_headers_size(
                        self.envoy,
                        REQUEST_HEADER,
                    );
                    if n <= STACK_HEADERS {
                        let mut h = [EnvoyHttpHeader::NULL; STACK_HEADERS];
                        let ok = n == 0
                            || envoy_dynamic_module_callback_http_get_headers(
                                self.envoy,
                                REQUEST_HEADER,
                                h.as_mut_ptr(),
                            );
                        Headers::Stack(h, if ok { n } else { 0 })
                    } else {
                        let mut h = vec![EnvoyHttpHeader::NULL; n];
                        let ok = envoy_dynamic_module_callback_http_get_headers(
                            self.envoy,
                            REQUEST_HEADER,
                            h.as_mut_ptr(),
                        );
                        if !ok {
                            h.clear();
                        }
                        Headers::Heap(h)
                    }
                }
            })
            .all()
    }
}

impl Request for Req {
    fn header(&self, name: &str, i: usize) -> Option<&[u8]> {
        // Envoy holds header names lowercase; `name` is lowercased at config.
        self.headers()
            .iter()
            // SAFETY: Envoy's until the hook returns, which outlives `self`.
            .filter(|h| unsafe { h.key() } == name.as_bytes())
            .nth(i)
            // SAFETY: as above: the header's value is Envoy's until the
            // hook returns.
            .map(|h| unsafe { h.value() })
    }

    fn peer(&self) -> Option<&[u8]> {
        let buf = match self.peer.get() {
            Some(b) => b,
            None => {
                let mut out = EnvoyBuffer::NULL;
                // SAFETY: as above.
                let ok = unsafe {
                    envoy_dynamic_module_callback_http_filter_get_attribute_string(
                        self.envoy,
                        ATTRIBUTE_SOURCE_ADDRESS,
                        &mut out,
                    )
                };
                let b = if ok { out } else { EnvoyBuffer::NULL };
                self.peer.set(Some(b));
                b
            }
        };
        // SAFETY: Envoy's until the hook returns.
        (!buf.ptr.is_null()).then(|| unsafe { buf.bytes() })
    }
}

fn count(envoy: FilterEnvoyPtr, id: usize) {
    // SAFETY: an id this config defined; no labels.
    unsafe {
        envoy_dynamic_module_callback_http_filter_increment_counter(
            envoy,
            id,
            ptr::null_mut(),
            0,
            1,
        );
    }
}

fn request_headers(envoy: FilterEnvoyPtr, fc: &FilterConfig) -> u32 {
    // SAFETY: Envoy gives back the pointer per_route_config_new returned,
    // or null.
    let route = unsafe { envoy_dynamic_module_callback_get_most_specific_route_config(envoy) }
        as *const RouteConfig;
    // SAFETY: a RouteConfig this module made, alive while the route is.
    let route = unsafe { route.as_ref() };
    let status = route.and_then(|r| r.status).unwrap_or(fc.config.status);

    // The limits this request is held to: the filter's, or the route's by
    // name (resolved per request: a route's config outlives filter configs).
    let chosen: Cow<[Apply]> = match route.and_then(|r| r.apply.as_ref()) {
        None => Cow::Borrowed(&fc.config.apply),
        Some(list) => {
            let mut out = Vec::with_capacity(list.len());
            for a in list {
                match fc.limits.iter().position(|l| l.spec.name == a.limit) {
                    Some(limit) => out.push(Apply {
                        limit,
                        dry_run: a.dry_run,
                    }),
                    None => log(
                        LOG_ERROR,
                        &format!(
                            "weir_limit: the route applies limit \"{}\", which this filter does not declare; skipped",
                            printable(a.limit.as_bytes())
                        ),
                    ),
                }
            }
            Cow::Owned(out)
        }
    };
    if chosen.is_empty() {
        return HEADERS_CONTINUE;
    }

    let req = Req {
        envoy,
        headers: OnceCell::new(),
        peer: Cell::new(None),
    };
    // One-part keys stay where Envoy holds them; longer ones are
    // concatenated into one arena. One limit (the common case) needs no
    // heap at all.
    let mut arena = Vec::new();
    let refs: Vec<key::KeyRef> = if chosen.len() == 1 {
        Vec::new()
    } else {
        chosen
            .iter()
            .map(|a| key::read_into(&req, &fc.limits[a.limit].spec.key, &mut arena))
            .collect()
    };
    let single;
    let many: Vec<Held>;
    let held: &[Held] = if let [a] = &chosen[..] {
        let k = key::read_into(&req, &fc.limits[a.limit].spec.key, &mut arena);
        single = [Held {
            words: &fc.limits[a.limit].words,
            dry_run: a.dry_run,
            key: k.get(&arena),
        }];
        &single
    } else {
        many = chosen
            .iter()
            .zip(&refs)
            .map(|(a, k)| Held {
                words: &fc.limits[a.limit].words,
                dry_run: a.dry_run,
                key: k.get(&arena),
            })
            .collect();
        &many
    };

    let level = fc.config.log_level as u32;
    let mut dry_refused: Vec<usize> = Vec::new();
    let verdict = limit::judge(held, limit::now(), |i| dry_refused.push(i));
    match verdict {
        Verdict::Admit => {
            for (h, a) in chosen.iter().enumerate() {
                let i = a.limit;
                if held[h].key.is_empty() {
                    continue;
                }
                if dry_refused.contains(&h) {
                    count(envoy, fc.counters[i].dry_run_refused);
                    if log_enabled(level) {
                        log(
                            level,
                            &format!(
                                "weir_limit: would refuse, dry run, limit \"{}\", key \"{}\"",
                                fc.limits[i].spec.name,
                                printable(held[h].key)
                            ),
                        );
                    }
                } else {
                    count(envoy, fc.counters[i].allowed);
                }
            }
            HEADERS_CONTINUE
        }
        Verdict::Refuse { index, wait } => {
            let i = chosen[index].limit;
            let spec = &fc.limits[i].spec;
            count(envoy, fc.counters[i].refused);
            if log_enabled(level) {
                log(
                    level,
                    &format!(
                        "weir_limit: refused, limit \"{}\", key \"{}\"",
                        spec.name,
                        printable(held[index].key)
                    ),
                );
            }
            let retry = limit::retry_after(wait).to_string();
            let state = format!("{}{}", spec.state_prefix, retry);
            let mut headers = [
                ModuleHttpHeader::of(b"retry-after", retry.as_bytes()),
                ModuleHttpHeader::of(b"ratelimit-policy", spec.policy.as_bytes()),
                ModuleHttpHeader::of(b"ratelimit", state.as_bytes()),
            ];
            // SAFETY: the headers and buffers outlive the call; Envoy copies
            // them into its local reply.
            unsafe {
                envoy_dynamic_module_callback_http_send_response(
                    envoy,
                    status,
                    headers.as_mut_ptr(),
                    headers.len(),
                    ModuleBuffer::of(b""),
                    ModuleBuffer::of(b"weir_limit_refused"),
                );
            }
            HEADERS_STOP_ITERATION
        }
    }
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_request_headers(
    envoy: FilterEnvoyPtr,
    filter: *const c_void,
    _end_of_stream: bool,
) -> u32 {
    // SAFETY: `filter` is the FilterConfig config_new made (filter_new
    // hands it back), alive while any of its filters is.
    let fc = unsafe { &*(filter as *const FilterConfig) };
    match catch_unwind(AssertUnwindSafe(|| request_headers(envoy, fc))) {
        Ok(status) => status,
        Err(_) => {
            log(LOG_ERROR, "weir_limit: the request panicked; admitted");
            HEADERS_CONTINUE
        }
    }
}

// The hooks Envoy 1.40 resolves for every HTTP filter module; this filter
// does nothing in them.

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_request_body(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _end_of_stream: bool,
) -> u32 {
    CONTINUE
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_request_trailers(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
) -> u32 {
    CONTINUE
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_response_headers(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _end_of_stream: bool,
) -> u32 {
    CONTINUE
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_response_body(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _end_of_stream: bool,
) -> u32 {
    CONTINUE
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_response_trailers(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
) -> u32 {
    CONTINUE
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_stream_complete(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_callout_done(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _callout_id: u64,
    _result: u32,
    _headers: *mut c_void,
    _headers_size: usize,
    _body_chunks: *mut EnvoyBuffer,
    _body_chunks_size: usize,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_stream_headers(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _stream_id: u64,
    _headers: *mut c_void,
    _headers_size: usize,
    _end_stream: bool,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_stream_data(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _stream_id: u64,
    _data: *const EnvoyBuffer,
    _data_count: usize,
    _end_stream: bool,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_stream_trailers(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _stream_id: u64,
    _trailers: *mut c_void,
    _trailers_size: usize,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_stream_complete(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _stream_id: u64,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_http_stream_reset(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _stream_id: u64,
    _reason: u32,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_scheduled(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _event_id: u64,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_config_scheduled(
    _envoy: ConfigEnvoyPtr,
    _config: *const c_void,
    _event_id: u64,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_downstream_above_write_buffer_high_watermark(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_downstream_below_write_buffer_low_watermark(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
) {
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_local_reply(
    _envoy: FilterEnvoyPtr,
    _filter: *const c_void,
    _response_code: u32,
    _details: EnvoyBuffer,
    _reset_imminent: bool,
) -> u32 {
    CONTINUE
}
