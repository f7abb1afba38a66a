//! The part of the Redis module API this module uses, bound by hand.
//!
//! Why not the `redis-module` crate: its build runs bindgen over the whole
//! `redismodule.h` (so CI needs libclang) and compiles a C shim plus a tree
//! of proc-macro and regex dependencies; measured here, a clean release
//! build of the crate alone took minutes on two shared cores. This module
//! needs about twenty functions, all with plain C signatures that have been
//! stable since Redis 6.2, so binding them directly costs one small file,
//! no build script and no extra CI package.
//!
//! How the API is reached: a module exports `RedisModule_OnLoad`; Redis
//! passes a context whose first word is a pointer to `RedisModule_GetApi`,
//! which looks a function up by its name. `redismodule.h` does exactly this
//! in its `RedisModule_Init`; [`Api::load`] does the same.
//!
//! Every function here is `unsafe` to call only because it crosses into
//! Redis; the wrappers in [`Ctx`] and [`Key`] keep the pointers they pass
//! valid for the call.

use std::ffi::{c_char, c_int, c_longlong, c_void, CStr};
use std::sync::OnceLock;

/// Redis's `RedisModuleCtx`: opaque.
#[repr(C)]
pub struct RawCtx {
    _private: [u8; 0],
}
/// Redis's `RedisModuleString`: opaque.
#[repr(C)]
pub struct RawString {
    _private: [u8; 0],
}
/// Redis's `RedisModuleKey`: opaque.
#[repr(C)]
pub struct RawKey {
    _private: [u8; 0],
}

/// Redis's `RedisModuleInfoCtx`: opaque.
#[repr(C)]
pub struct RawInfoCtx {
    _private: [u8; 0],
}

/// A command's entry point, as `RedisModule_CreateCommand` takes it.
pub type CommandFn = unsafe extern "C" fn(*mut RawCtx, *mut *mut RawString, c_int) -> c_int;

/// The module's `INFO` callback, as `RedisModule_RegisterInfoFunc` takes it:
/// the info context and whether Redis is writing a crash report.
pub type InfoFn = unsafe extern "C" fn(*mut RawInfoCtx, c_int);

pub const OK: c_int = 0;
pub const ERR: c_int = 1;
const APIVER_1: c_int = 1;
pub const READ: c_int = 1;
pub const WRITE: c_int = 2;
pub const KEYTYPE_EMPTY: c_int = 0;
pub const KEYTYPE_STRING: c_int = 1;
const NO_EXPIRE: c_longlong = -1;
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

type GetApiFn = unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int;

/// The functions, looked up once at load.
pub struct Api {
    create_command: unsafe extern "C" fn(
        *mut RawCtx,
        *const c_char,
        CommandFn,
        *const c_char,
        c_int,
        c_int,
        c_int,
    ) -> c_int,
    set_module_attribs: unsafe extern "C" fn(*mut RawCtx, *const c_char, c_int, c_int),
    is_module_name_busy: Option<unsafe extern "C" fn(*const c_char) -> c_int>,
    wrong_arity: unsafe extern "C" fn(*mut RawCtx) -> c_int,
    reply_with_long_long: unsafe extern "C" fn(*mut RawCtx, c_longlong) -> c_int,
    reply_with_error: unsafe extern "C" fn(*mut RawCtx, *const c_char) -> c_int,
    reply_with_array: unsafe extern "C" fn(*mut RawCtx, std::ffi::c_long) -> c_int,
    open_key: unsafe extern "C" fn(*mut RawCtx, *mut RawString, c_int) -> *mut RawKey,
    close_key: unsafe extern "C" fn(*mut RawKey),
    key_type: unsafe extern "C" fn(*mut RawKey) -> c_int,
    string_ptr_len: unsafe extern "C" fn(*const RawString, *mut usize) -> *const c_char,
    string_dma: unsafe extern "C" fn(*mut RawKey, *mut usize, c_int) -> *mut c_char,
    string_truncate: unsafe extern "C" fn(*mut RawKey, usize) -> c_int,
    set_abs_expire: unsafe extern "C" fn(*mut RawKey, c_longlong) -> c_int,
    delete_key: unsafe extern "C" fn(*mut RawKey) -> c_int,
    replicate: unsafe extern "C" fn(*mut RawCtx, *const c_char, *const c_char, ...) -> c_int,
    milliseconds: unsafe extern "C" fn() -> c_longlong,
    /// Redis 7.2+: the command's start time, the same for every call in a
    /// script or transaction. Preferred when present.
    cached_microseconds: Option<unsafe extern "C" fn() -> c_longlong>,
    /// Redis 7.2+: Unix microseconds now.
    microseconds: Option<unsafe extern "C" fn() -> c_longlong>,
    is_keys_position_request: unsafe extern "C" fn(*mut RawCtx) -> c_int,
    key_at_pos: unsafe extern "C" fn(*mut RawCtx, c_int),
    register_info_func: unsafe extern "C" fn(*mut RawCtx, InfoFn) -> c_int,
    info_add_section: unsafe extern "C" fn(*mut RawInfoCtx, *const c_char) -> c_int,
    info_begin_dict_field: unsafe extern "C" fn(*mut RawInfoCtx, *const c_char) -> c_int,
    info_end_dict_field: unsafe extern "C" fn(*mut RawInfoCtx) -> c_int,
    info_add_field_ulonglong:
        unsafe extern "C" fn(*mut RawInfoCtx, *const c_char, std::ffi::c_ulonglong) -> c_int,
}

static API: OnceLock<Api> = OnceLock::new();

/// The API; only reachable after [`Api::load`] succeeded (commands exist
/// only then).
pub fn api() -> &'static Api {
    API.get()
        .expect("the module API is loaded before any command runs")
}

/// Looks `name` up through `get_api`; `None` when this Redis lacks it.
///
/// # Safety
/// `get_api` is Redis's `RedisModule_GetApi`, and `F` is a function pointer
/// type matching the C signature of `name`.
unsafe fn lookup<F: Copy>(get_api: GetApiFn, name: &CStr) -> Option<F> {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    let mut slot: *mut c_void = std::ptr::null_mut();
    // SAFETY: GetApi writes one function pointer into `slot` on success.
    let status = unsafe { get_api(name.as_ptr(), (&mut slot as *mut *mut c_void).cast()) };
    if status != OK || slot.is_null() {
        return None;
    }
    // SAFETY: the caller names the function's real signature as `F`, a
    // pointer-sized function pointer type; `slot` is that function.
    Some(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&slot) })
}

impl Api {
    /// Binds the API from the context `RedisModule_OnLoad` received and
    /// registers the module's name: what `RedisModule_Init` does.
    ///
    /// # Safety
    /// `ctx` is the context Redis passed to `RedisModule_OnLoad`.
    pub unsafe fn load(ctx: *mut RawCtx, name: &CStr, version: c_int) -> Option<&'static Api> {
        // SAFETY: Redis lays the context out with the GetApi pointer first
        // (redismodule.h reads it the same way).
        let get_api: GetApiFn = unsafe { *(ctx as *const GetApiFn) };
        macro_rules! need {
            ($name:literal) => {
                // SAFETY: the field's type is the C signature of $name.
                match unsafe { lookup(get_api, $name) } {
                    Some(f) => f,
                    None => return None,
                }
            };
        }
        let api = Api {
            create_command: need!(c"RedisModule_CreateCommand"),
            set_module_attribs: need!(c"RedisModule_SetModuleAttribs"),
            // SAFETY: as in need!.
            is_module_name_busy: unsafe { lookup(get_api, c"RedisModule_IsModuleNameBusy") },
            wrong_arity: need!(c"RedisModule_WrongArity"),
            reply_with_long_long: need!(c"RedisModule_ReplyWithLongLong"),
            reply_with_error: need!(c"RedisModule_ReplyWithError"),
            reply_with_array: need!(c"RedisModule_ReplyWithArray"),
            open_key: need!(c"RedisModule_OpenKey"),
            close_key: need!(c"RedisModule_CloseKey"),
            key_type: need!(c"RedisModule_KeyType"),
            string_ptr_len: need!(c"RedisModule_StringPtrLen"),
            string_dma: need!(c"RedisModule_StringDMA"),
            string_truncate: need!(c"RedisModule_StringTruncate"),
            set_abs_expire: need!(c"RedisModule_SetAbsExpire"),
            delete_key: need!(c"RedisModule_DeleteKey"),
            replicate: need!(c"RedisModule_Replicate"),
            milliseconds: need!(c"RedisModule_Milliseconds"),
            // SAFETY: as in need!.
            cached_microseconds: unsafe { lookup(get_api, c"RedisModule_CachedMicroseconds") },
            // SAFETY: as in need!.
            microseconds: unsafe { lookup(get_api, c"RedisModule_Microseconds") },
            is_keys_position_request: need!(c"RedisModule_IsKeysPositionRequest"),
            key_at_pos: need!(c"RedisModule_KeyAtPos"),
            register_info_func: need!(c"RedisModule_RegisterInfoFunc"),
            info_add_section: need!(c"RedisModule_InfoAddSection"),
            info_begin_dict_field: need!(c"RedisModule_InfoBeginDictField"),
            info_end_dict_field: need!(c"RedisModule_InfoEndDictField"),
            info_add_field_ulonglong: need!(c"RedisModule_InfoAddFieldULongLong"),
        };
        if let Some(busy) = api.is_module_name_busy {
            // SAFETY: `name` is NUL-terminated.
            if unsafe { busy(name.as_ptr()) } != 0 {
                return None;
            }
        }
        // SAFETY: ctx is the load context; name is NUL-terminated.
        unsafe { (api.set_module_attribs)(ctx, name.as_ptr(), version, APIVER_1) };
        Some(API.get_or_init(|| api))
    }

    /// Registers a command. `flags` is Redis's space-separated flag list;
    /// `key` is the one key's position (0: none, or the getkeys API).
    ///
    /// # Safety
    /// `ctx` is the load context.
    pub unsafe fn create_command(
        &self,
        ctx: *mut RawCtx,
        name: &CStr,
        f: CommandFn,
        flags: &CStr,
        key: c_int,
    ) -> bool {
        let step = c_int::from(key > 0);
        // SAFETY: both strings are NUL-terminated and Redis copies them.
        unsafe {
            (self.create_command)(ctx, name.as_ptr(), f, flags.as_ptr(), key, key, step) == OK
        }
    }

    /// Registers the module's `INFO` callback.
    ///
    /// # Safety
    /// `ctx` is the load context.
    pub unsafe fn register_info(&self, ctx: *mut RawCtx, f: InfoFn) -> bool {
        // SAFETY: the load context; `f` lives as long as the module.
        unsafe { (self.register_info_func)(ctx, f) == OK }
    }
}

/// The context of one `INFO` callback, for the length of that call.
pub struct InfoCtx {
    raw: *mut RawInfoCtx,
}

impl InfoCtx {
    /// # Safety
    /// `raw` is the context Redis passed to the module's info callback, and
    /// the `InfoCtx` does not outlive that call.
    pub unsafe fn new(raw: *mut RawInfoCtx) -> InfoCtx {
        InfoCtx { raw }
    }

    /// Opens the module's section, named as the module (`# weir`); false
    /// when `INFO` asked for other sections only (then nothing more is
    /// added).
    pub fn section(&self) -> bool {
        // SAFETY: a live info context; NULL names the module's own section.
        unsafe { (api().info_add_section)(self.raw, std::ptr::null()) == OK }
    }

    /// One line `<module>_<name>:k=v,k=v` of `fields`, as Redis's own
    /// `cmdstat_` lines.
    pub fn dict(&self, name: &CStr, fields: &[(&CStr, u64)]) {
        // SAFETY: a live info context in an open section; the strings are
        // NUL-terminated and Redis copies them.
        unsafe {
            if (api().info_begin_dict_field)(self.raw, name.as_ptr()) != OK {
                return;
            }
            for (field, value) in fields {
                (api().info_add_field_ulonglong)(self.raw, field.as_ptr(), *value);
            }
            (api().info_end_dict_field)(self.raw);
        }
    }
}

/// What a command decided, told to [`Ctx::decided`] by its body and read by
/// the caller that counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing was decided (a refund, a limiter's peek).
    None,
    /// Admitted (or, for a peek, would be).
    Admitted,
    /// Refused (or, for a peek, would be).
    Refused,
    /// A keys-position request: not a call, not counted.
    NotACall,
}

/// A command's context and arguments, for the length of one call.
pub struct Ctx {
    raw: *mut RawCtx,
    argv: *mut *mut RawString,
    argc: usize,
    verdict: std::cell::Cell<Verdict>,
}

impl Ctx {
    /// # Safety
    /// `raw`, `argv` and `argc` are what Redis passed to a command function,
    /// and the `Ctx` does not outlive that call.
    pub unsafe fn new(raw: *mut RawCtx, argv: *mut *mut RawString, argc: c_int) -> Ctx {
        Ctx {
            raw,
            argv,
            argc: usize::try_from(argc).unwrap_or(0),
            verdict: std::cell::Cell::new(Verdict::None),
        }
    }

    /// Tells what this call decided, for `INFO weir`.
    pub fn decided(&self, admitted: bool) {
        self.verdict.set(if admitted {
            Verdict::Admitted
        } else {
            Verdict::Refused
        });
    }

    /// Marks this call a keys-position request, which `INFO weir` does not
    /// count.
    pub fn not_a_call(&self) {
        self.verdict.set(Verdict::NotACall);
    }

    /// What this call decided so far.
    pub fn verdict(&self) -> Verdict {
        self.verdict.get()
    }

    /// How many arguments, the command's name included.
    pub fn argc(&self) -> usize {
        self.argc
    }

    /// Argument `i` as Redis holds it.
    pub fn raw_arg(&self, i: usize) -> *mut RawString {
        assert!(i < self.argc);
        // SAFETY: argv has argc entries, and i < argc.
        unsafe { *self.argv.add(i) }
    }

    /// Argument `i`'s bytes, valid for this call.
    pub fn arg(&self, i: usize) -> &[u8] {
        let mut len = 0usize;
        // SAFETY: the argument is a live RedisModuleString; StringPtrLen
        // returns its buffer and length, alive while argv is.
        unsafe {
            let ptr = (api().string_ptr_len)(self.raw_arg(i), &mut len);
            if ptr.is_null() {
                return &[];
            }
            std::slice::from_raw_parts(ptr.cast::<u8>(), len)
        }
    }

    /// Whether Redis called the command only to ask where its keys are
    /// (the getkeys API, used by Cluster routing and `COMMAND GETKEYS`).
    pub fn is_keys_position_request(&self) -> bool {
        // SAFETY: a live command context.
        unsafe { (api().is_keys_position_request)(self.raw) != 0 }
    }

    /// Answers a keys-position request: argument `i` is a key.
    pub fn key_at(&self, i: usize) {
        // SAFETY: a live command context in a keys-position request.
        unsafe { (api().key_at_pos)(self.raw, i as c_int) }
    }

    /// Unix time in nanoseconds on this server's wall clock: the cached
    /// command time where Redis has one (7.2+), else a fresh reading, in
    /// microseconds where Redis offers them, else milliseconds.
    pub fn now_ns(&self) -> i64 {
        // Test builds only (feature `test-clock`): the time a test set.
        #[cfg(feature = "test-clock")]
        if let Some(now) = crate::test_clock::now() {
            return now;
        }
        let api = api();
        // SAFETY: these take no arguments and only read the clock.
        let micros = unsafe {
            if let Some(f) = api.cached_microseconds {
                f()
            } else if let Some(f) = api.microseconds {
                f()
            } else {
                (api.milliseconds)().saturating_mul(1000)
            }
        };
        micros.saturating_mul(1000)
    }

    pub fn wrong_arity(&self) -> c_int {
        // SAFETY: a live command context.
        unsafe { (api().wrong_arity)(self.raw) }
    }

    pub fn reply_int(&self, n: i64) {
        // SAFETY: a live command context.
        unsafe { (api().reply_with_long_long)(self.raw, n) };
    }

    pub fn reply_array(&self, len: usize) {
        // SAFETY: a live command context.
        unsafe { (api().reply_with_array)(self.raw, len as std::ffi::c_long) };
    }

    /// An error reply; `message` starts with its code (`ERR`, `WRONGTYPE`,
    /// a limiter status).
    pub fn reply_error(&self, message: &str) {
        // Messages are ours and hold no NUL; strip any anyway.
        let mut bytes: Vec<u8> = message.bytes().filter(|&b| b != 0).collect();
        bytes.push(0);
        // SAFETY: a live command context; the message is NUL-terminated and
        // Redis copies it.
        unsafe { (api().reply_with_error)(self.raw, bytes.as_ptr().cast()) };
    }

    /// Opens key argument `i` for reading.
    pub fn open_read(&self, i: usize) -> Key<'_> {
        self.open(i, READ)
    }

    /// Opens key argument `i` for writing.
    pub fn open_write(&self, i: usize) -> Key<'_> {
        self.open(i, READ | WRITE)
    }

    fn open(&self, i: usize, mode: c_int) -> Key<'_> {
        // SAFETY: a live context and key name; the handle is closed on drop.
        let raw = unsafe { (api().open_key)(self.raw, self.raw_arg(i), mode) };
        Key { ctx: self, raw }
    }

    /// Propagates `SET key value [PXAT at_ms]` to replicas and the AOF: the
    /// state the command wrote, with its absolute expiry.
    pub fn replicate_set(&self, i: usize, value: &[u8], expire_at_ms: Option<i64>) {
        let api = api();
        // SAFETY: the format's specifiers match the arguments: s = a
        // RedisModuleString, b = a pointer and a size_t, c = a C string,
        // l = a long long. Redis copies everything before returning.
        unsafe {
            match expire_at_ms {
                Some(at) => (api.replicate)(
                    self.raw,
                    c"SET".as_ptr(),
                    c"sbcl".as_ptr(),
                    self.raw_arg(i),
                    value.as_ptr().cast::<c_char>(),
                    value.len(),
                    c"PXAT".as_ptr(),
                    at as c_longlong,
                ),
                None => (api.replicate)(
                    self.raw,
                    c"SET".as_ptr(),
                    c"sb".as_ptr(),
                    self.raw_arg(i),
                    value.as_ptr().cast::<c_char>(),
                    value.len(),
                ),
            }
        };
    }

    /// Propagates `DEL key`.
    pub fn replicate_del(&self, i: usize) {
        // SAFETY: "s" takes one RedisModuleString.
        unsafe { (api().replicate)(self.raw, c"DEL".as_ptr(), c"s".as_ptr(), self.raw_arg(i)) };
    }
}

/// What a key holds, as far as this module cares.
pub enum Held<'a> {
    Empty,
    /// A string's bytes, valid while the key is open.
    String(&'a [u8]),
    /// A list, hash, set or anything else.
    Other,
}

/// An open key; closed when dropped.
pub struct Key<'c> {
    ctx: &'c Ctx,
    raw: *mut RawKey,
}

impl Key<'_> {
    /// What the key holds.
    pub fn held(&self) -> Held<'_> {
        if self.raw.is_null() {
            return Held::Empty;
        }
        let api = api();
        // SAFETY: an open key handle.
        match unsafe { (api.key_type)(self.raw) } {
            KEYTYPE_EMPTY => Held::Empty,
            KEYTYPE_STRING => {
                let mut len = 0usize;
                // SAFETY: a string key; read-only DMA gives its buffer,
                // valid until the key is written or closed.
                let ptr = unsafe { (api.string_dma)(self.raw, &mut len, READ) };
                if ptr.is_null() {
                    return Held::Other;
                }
                // SAFETY: as above; the slice borrows the key.
                Held::String(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
            }
            _ => Held::Other,
        }
    }

    /// Stores `value` as the key's string (the key was checked to be empty
    /// or a string) and sets its absolute expiry, or none.
    pub fn write(&mut self, value: &[u8], expire_at_ms: Option<i64>) -> bool {
        if self.raw.is_null() {
            return false;
        }
        let api = api();
        // SAFETY: an open, writable key holding a string or nothing. The
        // buffer DMA returns is the string's own, `len` bytes long, and is
        // re-obtained after every truncate as the DMA rules require.
        unsafe {
            let mut len = 0usize;
            let mut ptr = (api.string_dma)(self.raw, &mut len, READ | WRITE);
            if ptr.is_null() || len != value.len() {
                if (api.string_truncate)(self.raw, value.len()) != OK {
                    return false;
                }
                ptr = (api.string_dma)(self.raw, &mut len, READ | WRITE);
                if ptr.is_null() || len != value.len() {
                    return false;
                }
            }
            std::ptr::copy_nonoverlapping(value.as_ptr(), ptr.cast::<u8>(), len);
            (api.set_abs_expire)(self.raw, expire_at_ms.unwrap_or(NO_EXPIRE)) == OK
        }
    }

    /// Deletes the key.
    pub fn delete(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: an open, writable key.
            unsafe { (api().delete_key)(self.raw) };
        }
    }

    /// The context this key was opened in.
    pub fn ctx(&self) -> &Ctx {
        self.ctx
    }
}

impl Drop for Key<'_> {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: an open key handle, closed once.
            unsafe { (api().close_key)(self.raw) };
        }
    }
}
