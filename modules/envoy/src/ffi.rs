//! The hooks Envoy calls (`envoy_dynamic_module_on_*`, the only symbols the
//! library exports) and the request as the key reader sees it.
//!
//! Lifetimes: `config_new` runs once per filter config on the main thread
//! and returns a boxed [`FilterConfig`]; every worker's filters get that
//! pointer, so the limits' words are shared by all workers, lock-free.
//! A `weir_limit` filter needs no state of its own: `filter_new` hands back
//! the config pointer itself, so a request allocates nothing for it. A
//! `weir_breaker` filter keeps the ticket of the call it let through until
//! the response settles it: `filter_new` allocates that per stream.
//!
//! Every object handed to Envoy (the two configs, a breaker stream, the two
//! route configs) starts with a `u32` tag, `#[repr(C)]`, so that a hook
//! Envoy calls with one of them knows which it holds.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use weir_core::breaker::BreakerTicket;

use crate::abi::*;
use crate::breaker::{
    self, BreakerConfig, BreakerRoute, Breakers, Failing, Found, Slot, BREAKER_FILTER_NAME,
};
use crate::config::{self, Apply, Config, LogLevel, RouteConfig, FILTER_NAME};
use crate::key::{self, Request};
use crate::limit::{self, Held, Limit, Note, Verdict};

/// Counter ids of one limit, by decision.
struct Counters {
    allowed: usize,
    refused: usize,
    dry_run_refused: usize,
    /// A table's limit only: calls its overflow policy answered.
    overflow: Option<usize>,
}

/// The tags at the start of each object Envoy holds for the module.
const TAG_LIMIT: u32 = 0x5745_4c31; // a weir_limit config
const TAG_BREAKER: u32 = 0x5745_4231; // a weir_breaker config
const TAG_STREAM: u32 = 0x5745_5331; // a weir_breaker stream
const TAG_LIMIT_ROUTE: u32 = 0x5745_4c52; // a weir_limit route config
const TAG_BREAKER_ROUTE: u32 = 0x5745_4252; // a weir_breaker route config

/// The request's route config of this filter's name when it is a `T`
/// (tagged `want`): a config of the other filter under this filter's name
/// counts as none.
fn route_config<'a, T>(envoy: FilterEnvoyPtr, want: u32) -> Option<&'a T> {
    // SAFETY: Envoy gives back a pointer per_route_config_new returned, or
    // null; it stays alive while the route does, past this request's hook.
    unsafe {
        let p = envoy_dynamic_module_callback_get_most_specific_route_config(envoy);
        if p.is_null() || tag(p) != want {
            return None;
        }
        // SAFETY: the tag says it is a T.
        Some(&*(p as *const T))
    }
}

/// The tag of an object this module made.
///
/// # Safety
/// `p` must be one of the objects this module handed Envoy, alive.
unsafe fn tag(p: *const c_void) -> u32 {
    // SAFETY: every such object is #[repr(C)] with a u32 tag first.
    *(p as *const u32)
}

/// The in-module filter config.
#[repr(C)]
pub struct FilterConfig {
    tag: u32,
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
            "filter_name: invalid \"{}\": this module's filters are \"{FILTER_NAME}\" and \"{BREAKER_FILTER_NAME}\"",
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
            overflow: match l.spec.store {
                config::Store::Table { .. } => {
                    Some(define_counter(envoy, &format!("weir_limit.{n}.overflow"))?)
                }
                config::Store::Bloom { .. } => None,
            },
        });
    }
    Ok(FilterConfig {
        tag: TAG_LIMIT,
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
        if name == BREAKER_FILTER_NAME.as_bytes() {
            new_breaker_config(envoy, bytes)
                .map(|c| Box::into_raw(Box::new(c)) as *const c_void)
                .map_err(|e| (BREAKER_FILTER_NAME, e))
        } else {
            new_config(envoy, name, bytes)
                .map(|c| Box::into_raw(Box::new(c)) as *const c_void)
                .map_err(|e| (FILTER_NAME, e))
        }
    }));
    match made {
        Ok(Ok(c)) => c,
        Ok(Err((who, e))) => {
            log(LOG_ERROR, &format!("{who}: {e}"));
            ptr::null()
        }
        Err(_) => {
            log(LOG_ERROR, "weir_envoy: the filter config panicked");
            ptr::null()
        }
    }
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_config_destroy(config: *const c_void) {
    if config.is_null() {
        return;
    }
    // SAFETY: made by Box::into_raw in config_new, destroyed once; the tag
    // says which.
    unsafe {
        if tag(config) == TAG_BREAKER {
            drop(Box::from_raw(config as *mut BreakerFilterConfig));
        } else {
            drop(Box::from_raw(config as *mut FilterConfig));
        }
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
        if name == BREAKER_FILTER_NAME.as_bytes() {
            return breaker::parse_route(bytes)
                .map(|route| {
                    Box::into_raw(Box::new(BreakerRouteConfig {
                        tag: TAG_BREAKER_ROUTE,
                        failing: route.failing.clone().map(Arc::new),
                        route,
                    })) as *const c_void
                })
                .map_err(|e| (BREAKER_FILTER_NAME, format!("per-route filter_config: {e}")));
        }
        if name != FILTER_NAME.as_bytes() {
            return Err((FILTER_NAME, format!(
                "per-route filter_name: invalid \"{}\": this module's filters are \"{FILTER_NAME}\" and \"{BREAKER_FILTER_NAME}\"",
                printable(name)
            )));
        }
        config::parse_route(bytes)
            .map(|route| {
                Box::into_raw(Box::new(LimitRouteConfig {
                    tag: TAG_LIMIT_ROUTE,
                    route,
                })) as *const c_void
            })
            .map_err(|e| (FILTER_NAME, format!("per-route filter_config: {e}")))
    }));
    match made {
        Ok(Ok(c)) => c,
        Ok(Err((who, e))) => {
            log(LOG_ERROR, &format!("{who}: {e}"));
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
    if config.is_null() {
        return;
    }
    // SAFETY: made by Box::into_raw in per_route_config_new; the tag says
    // which.
    unsafe {
        if tag(config) == TAG_BREAKER_ROUTE {
            drop(Box::from_raw(config as *mut BreakerRouteConfig));
        } else {
            drop(Box::from_raw(config as *mut LimitRouteConfig));
        }
    }
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_new(
    config: *const c_void,
    _filter: FilterEnvoyPtr,
) -> *const c_void {
    // SAFETY: a config this module made.
    if config.is_null() || unsafe { tag(config) } != TAG_BREAKER {
        // A weir_limit filter is its config: nothing per stream to keep.
        return config;
    }
    Box::into_raw(Box::new(BreakerStream {
        tag: TAG_STREAM,
        fc: config as *const BreakerFilterConfig,
        held: None,
    })) as *const c_void
}

#[no_mangle]
pub extern "C" fn envoy_dynamic_module_on_http_filter_destroy(filter: *const c_void) {
    // SAFETY: the pointer filter_new returned; a stream is ours to free.
    if filter.is_null() || unsafe { tag(filter) } != TAG_STREAM {
        return;
    }
    // SAFETY: made by Box::into_raw in filter_new, destroyed once.
    let mut stream = unsafe { Box::from_raw(filter as *mut BreakerStream) };
    // A call still held here ended without a response or stream_complete:
    // a failure. Envoy's counters and gauge cannot be reached from here: the
    // gauge is left for the breaker's next operation to set, `failed` does
    // not count it, and the log marks it `counted=no`.
    if let Some(mut h) = stream.held.take() {
        let now = limit::now();
        let seq = breaker::settle(&h.slot, &mut h.ticket, now, true, |_| false);
        // SAFETY: as in breaker_request: the config outlives its streams.
        let fc = unsafe { &*stream.fc };
        if let (Some(seq), true) = (seq, fc.config.log_decisions) {
            log(
                fc.config.log_level as u32,
                &format!(
                    "weir_breaker: settle breaker=\"{}\" seq={seq} now={now} outcome=failure counted=no",
                    printable(h.slot.name.as_bytes()),
                ),
            );
        }
    }
}

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
    let route: Option<&RouteConfig> =
        route_config::<LimitRouteConfig>(envoy, TAG_LIMIT_ROUTE).map(|r| &r.route);
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
            limit: &fc.limits[a.limit],
            dry_run: a.dry_run,
            key: k.get(&arena),
        }];
        &single
    } else {
        many = chosen
            .iter()
            .zip(&refs)
            .map(|(a, k)| Held {
                limit: &fc.limits[a.limit],
                dry_run: a.dry_run,
                key: k.get(&arena),
            })
            .collect();
        &many
    };

    let level = fc.config.log_level as u32;
    let mut dry_refused: Vec<usize> = Vec::new();
    let verdict = limit::judge(held, limit::now(), |h, note| match note {
        Note::DryRefusal => dry_refused.push(h),
        // Counted at once, whatever the verdict: the table's policy
        // answered this request's key.
        Note::Overflow => {
            if let Some(id) = fc.counters[chosen[h].limit].overflow {
                count(envoy, id);
            }
        }
    });
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
    // SAFETY: `filter` is a breaker stream or the FilterConfig config_new
    // made (filter_new hands it back), alive while any of its filters is.
    if unsafe { tag(filter) } == TAG_STREAM {
        // SAFETY: a stream filter_new made, this stream's alone.
        let stream = unsafe { &mut *(filter as *mut BreakerStream) };
        return match catch_unwind(AssertUnwindSafe(|| breaker_request(envoy, stream))) {
            Ok(status) => status,
            Err(_) => {
                log(LOG_ERROR, "weir_breaker: the request panicked; let through");
                HEADERS_CONTINUE
            }
        };
    }
    // SAFETY: as above, a FilterConfig.
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
    envoy: FilterEnvoyPtr,
    filter: *const c_void,
    _end_of_stream: bool,
) -> u32 {
    // SAFETY: the pointer filter_new returned.
    if unsafe { tag(filter) } == TAG_STREAM {
        // SAFETY: a stream filter_new made, this stream's alone.
        let stream = unsafe { &mut *(filter as *mut BreakerStream) };
        if catch_unwind(AssertUnwindSafe(|| breaker_response(envoy, stream))).is_err() {
            log(LOG_ERROR, "weir_breaker: the response panicked");
        }
    }
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
    envoy: FilterEnvoyPtr,
    filter: *const c_void,
) {
    // SAFETY: the pointer filter_new returned.
    if unsafe { tag(filter) } == TAG_STREAM {
        // SAFETY: a stream filter_new made, this stream's alone.
        let stream = unsafe { &mut *(filter as *mut BreakerStream) };
        // Still held: the stream ended without response headers (a reset).
        if catch_unwind(AssertUnwindSafe(|| settle_held(envoy, stream, None))).is_err() {
            log(LOG_ERROR, "weir_breaker: stream_complete panicked");
        }
    }
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

// ---- weir_breaker

/// A weir_limit route config, tagged.
#[repr(C)]
struct LimitRouteConfig {
    tag: u32,
    route: RouteConfig,
}

/// A weir_breaker route config, tagged; its failing statuses shared with
/// the streams that read them at their response.
#[repr(C)]
struct BreakerRouteConfig {
    tag: u32,
    route: BreakerRoute,
    failing: Option<Arc<Failing>>,
}

/// Metric ids of the breaker filter; every one but `overflow` is labelled
/// with the breaker's name.
struct BreakerIds {
    passed: usize,
    failed: usize,
    refused: usize,
    probes: usize,
    ratio: usize,
    overflow: usize,
}

/// The breaker filter's config: its breakers, made on first use.
#[repr(C)]
pub struct BreakerFilterConfig {
    tag: u32,
    config: BreakerConfig,
    failing: Arc<Failing>,
    breakers: Breakers,
    ids: BreakerIds,
}

/// A call the breaker let through, until its response settles it.
struct HeldCall {
    slot: Arc<Slot>,
    ticket: BreakerTicket,
    failing: Arc<Failing>,
}

/// One stream of the breaker filter.
#[repr(C)]
struct BreakerStream {
    tag: u32,
    fc: *const BreakerFilterConfig,
    held: Option<HeldCall>,
}

fn define_metric(
    envoy: ConfigEnvoyPtr,
    name: &str,
    labelled: bool,
    gauge: bool,
) -> Result<usize, String> {
    let mut id = 0usize;
    let mut label = [ModuleBuffer::of(b"breaker")];
    let (labels, n) = if labelled {
        (label.as_mut_ptr(), 1)
    } else {
        (ptr::null_mut(), 0)
    };
    // SAFETY: `name` and the label outlive the call.
    let r = unsafe {
        if gauge {
            envoy_dynamic_module_callback_http_filter_config_define_gauge(
                envoy,
                ModuleBuffer::of(name.as_bytes()),
                labels,
                n,
                &mut id,
            )
        } else {
            envoy_dynamic_module_callback_http_filter_config_define_counter(
                envoy,
                ModuleBuffer::of(name.as_bytes()),
                labels,
                n,
                &mut id,
            )
        }
    };
    if r == METRICS_SUCCESS {
        Ok(id)
    } else {
        Err(format!("defining the metric {name} failed ({r})"))
    }
}

fn new_breaker_config(envoy: ConfigEnvoyPtr, bytes: &[u8]) -> Result<BreakerFilterConfig, String> {
    let config = breaker::parse(bytes).map_err(|e| format!("filter_config: {e}"))?;
    let ids = BreakerIds {
        passed: define_metric(envoy, "weir_breaker.passed", true, false)?,
        failed: define_metric(envoy, "weir_breaker.failed", true, false)?,
        refused: define_metric(envoy, "weir_breaker.refused", true, false)?,
        probes: define_metric(envoy, "weir_breaker.probes", true, false)?,
        ratio: define_metric(envoy, "weir_breaker.refusal_ratio_ppm", true, true)?,
        overflow: define_metric(envoy, "weir_breaker.overflow", false, false)?,
    };
    Ok(BreakerFilterConfig {
        tag: TAG_BREAKER,
        failing: Arc::new(config.failing.clone()),
        breakers: Breakers::new(config.max_breakers),
        config,
        ids,
    })
}

fn count_breaker(envoy: FilterEnvoyPtr, id: usize, name: &str) {
    let mut label = [ModuleBuffer::of(name.as_bytes())];
    // SAFETY: an id this config defined with one label; the value outlives
    // the call.
    unsafe {
        envoy_dynamic_module_callback_http_filter_increment_counter(
            envoy,
            id,
            label.as_mut_ptr(),
            1,
            1,
        );
    }
}

/// Sets the breaker's gauge; answers whether Envoy took the value.
fn set_ratio(envoy: FilterEnvoyPtr, id: usize, name: &str, ppm: u64) -> bool {
    let mut label = [ModuleBuffer::of(name.as_bytes())];
    // SAFETY: as count_breaker.
    unsafe {
        envoy_dynamic_module_callback_http_filter_set_gauge(envoy, id, label.as_mut_ptr(), 1, ppm)
            == METRICS_SUCCESS
    }
}

thread_local! {
    /// A worker's buffer for the name of a route's own breaker.
    static KEY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn breaker_request(envoy: FilterEnvoyPtr, stream: &mut BreakerStream) -> u32 {
    // SAFETY: the config outlives its streams (Envoy keeps it while any of
    // its filters lives).
    let fc = unsafe { &*stream.fc };
    let mut cluster = EnvoyBuffer::NULL;
    // SAFETY: Envoy fills the view; it is Envoy's through this hook.
    let found = unsafe { envoy_dynamic_module_callback_http_get_cluster_name(envoy, &mut cluster) };
    if !found || cluster.ptr.is_null() || cluster.length == 0 {
        return HEADERS_CONTINUE; // no upstream cluster: nothing to break
    }
    // SAFETY: as above.
    let cluster = unsafe { cluster.bytes() };
    // SAFETY: a route config this module made, alive while the route is.
    let route = route_config::<BreakerRouteConfig>(envoy, TAG_BREAKER_ROUTE);
    let now = limit::now();
    let (found, status) = match route {
        Some(r) if r.route.breaker.is_some() => {
            let (name, policy) = r.route.breaker.as_ref().expect("checked");
            let found = KEY.with(|k| {
                let mut k = k.borrow_mut();
                k.clear();
                k.extend_from_slice(cluster);
                k.push(breaker::ROUTE_SEPARATOR);
                k.extend_from_slice(name.as_bytes());
                fc.breakers.find(&k, *policy, now)
            });
            // Routes naming one breaker with different policies share the
            // first one's: said once per breaker.
            if let Found::Slot(slot, false) = &found {
                if slot.policy != *policy && !slot.warned.swap(true, Ordering::Relaxed) {
                    log(
                        LOG_ERROR,
                        &format!(
                            "weir_breaker: routes name breaker \"{}\" with different policies; it keeps the one it was made with: {}",
                            printable(slot.name.as_bytes()),
                            breaker::policy_json(&slot.policy)
                        ),
                    );
                }
            }
            (found, r.route.status.unwrap_or(fc.config.status))
        }
        _ => (
            fc.breakers.find(cluster, fc.config.policy, now),
            route
                .and_then(|r| r.route.status)
                .unwrap_or(fc.config.status),
        ),
    };
    let slot = match found {
        Found::Full => {
            count(envoy, fc.ids.overflow);
            return HEADERS_CONTINUE;
        }
        Found::Slot(slot, made) => {
            if made {
                // The gauge exists from the breaker's making, at 0.
                set_ratio(envoy, fc.ids.ratio, &slot.name, 0);
            }
            if made && fc.config.log_decisions {
                let p = slot
                    .state
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .breaker
                    .policy();
                log(
                    fc.config.log_level as u32,
                    &format!(
                        "weir_breaker: new breaker=\"{}\" now={now} policy={}",
                        printable(slot.name.as_bytes()),
                        breaker::policy_json(&p)
                    ),
                );
            }
            slot
        }
    };
    let roll = breaker::roll();
    let d = breaker::decide(&slot, now, roll, |r| {
        set_ratio(envoy, fc.ids.ratio, &slot.name, r)
    });
    if fc.config.log_decisions {
        log(
            fc.config.log_level as u32,
            &format!(
                "weir_breaker: decide breaker=\"{}\" seq={} now={now} roll={roll:?} verdict={}",
                printable(slot.name.as_bytes()),
                d.seq,
                match (d.ticket.is_some(), d.probe) {
                    (false, _) => "refuse",
                    (true, true) => "probe",
                    (true, false) => "pass",
                }
            ),
        );
    }
    match d.ticket {
        Some(ticket) => {
            count_breaker(envoy, fc.ids.passed, &slot.name);
            if d.probe {
                count_breaker(envoy, fc.ids.probes, &slot.name);
            }
            let failing = route
                .and_then(|r| r.failing.clone())
                .unwrap_or_else(|| fc.failing.clone());
            stream.held = Some(HeldCall {
                slot,
                ticket,
                failing,
            });
            HEADERS_CONTINUE
        }
        None => {
            count_breaker(envoy, fc.ids.refused, &slot.name);
            let mut headers = [ModuleHttpHeader::of(
                b"x-weir-breaker",
                slot.name.as_bytes(),
            )];
            // SAFETY: the headers and buffers outlive the call; Envoy copies
            // them into its local reply.
            unsafe {
                envoy_dynamic_module_callback_http_send_response(
                    envoy,
                    status,
                    headers.as_mut_ptr(),
                    headers.len(),
                    ModuleBuffer::of(b""),
                    ModuleBuffer::of(b"weir_breaker_refused"),
                );
            }
            HEADERS_STOP_ITERATION
        }
    }
}

/// Settles the held call, if any: with the response's status, or (`None`)
/// as a failure, the stream having ended without one.
fn settle_held(envoy: FilterEnvoyPtr, stream: &mut BreakerStream, status: Option<u32>) {
    let Some(mut h) = stream.held.take() else {
        return;
    };
    // SAFETY: as in breaker_request.
    let fc = unsafe { &*stream.fc };
    let failed = match status {
        Some(s) => h.failing.fails(s),
        None => true,
    };
    let now = limit::now();
    let seq = breaker::settle(&h.slot, &mut h.ticket, now, failed, |r| {
        set_ratio(envoy, fc.ids.ratio, &h.slot.name, r)
    });
    if failed {
        count_breaker(envoy, fc.ids.failed, &h.slot.name);
    }
    if let (Some(seq), true) = (seq, fc.config.log_decisions) {
        log(
            fc.config.log_level as u32,
            &format!(
                "weir_breaker: settle breaker=\"{}\" seq={seq} now={now} outcome={}",
                printable(h.slot.name.as_bytes()),
                if failed { "failure" } else { "success" }
            ),
        );
    }
}

fn breaker_response(envoy: FilterEnvoyPtr, stream: &mut BreakerStream) {
    if stream.held.is_none() {
        return;
    }
    let mut out = EnvoyBuffer::NULL;
    // SAFETY: the key outlives the call; the view is Envoy's through this
    // hook.
    let ok = unsafe {
        envoy_dynamic_module_callback_http_get_header(
            envoy,
            RESPONSE_HEADER,
            ModuleBuffer::of(b":status"),
            &mut out,
            0,
            ptr::null_mut(),
        )
    };
    // SAFETY: as above.
    let status = if ok { unsafe { out.bytes() } } else { &[] };
    let status = std::str::from_utf8(status)
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .unwrap_or(0); // no status: counted by the failing ranges (0 is in none)
    settle_held(envoy, stream, Some(status));
}
