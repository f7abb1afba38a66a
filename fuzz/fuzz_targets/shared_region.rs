//! Shared regions under attack: a region of each shareable type laid
//! by `weir_X_init_shared`, then bytes of the fuzzer's choosing written
//! over it (anywhere in its header or handle), or the whole region made of
//! the fuzzer's bytes, then `weir_X_attach` with a length of its choosing.
//! Checked: attach never panics or reads past the length handed over (the
//! memory ends at a guard the sanitizer watches only through weir's
//! reads); a region whose header lost any byte it was laid with is refused
//! and `*out` left alone; a region left as laid is attached at the handle
//! after the header, and its recoveries read zero.
#![no_main]

use std::ffi::c_void;
use std::ptr::null_mut;

use libfuzzer_sys::fuzz_target;
use weir::breaker::*;
use weir::budget::*;
use weir::concurrency::*;
use weir::bucket::*;
use weir::gate::*;
use weir::period::*;
use weir::pool::*;
use weir::region::*;
use weir::shedder::*;
use weir::sliding::*;
use weir::status::weir_status::*;
use weir::window::*;
use weir_fuzz::{abort_on_panic, Input};

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Line([u8; 64]);

fuzz_target!(|data: &[u8]| {
    abort_on_panic();
    let mut input = Input::new(data);
    let kind = input.u8() % 9;
    let (mut bytes, mut align) = (0usize, 0usize);
    let mut breaker_policy = weir_breaker_policy_preset();
    breaker_policy.size = 1 + i32::from(input.u8() % 64);
    let mut shedder_policy = weir_shedder_policy_preset();
    shedder_policy.size = 1 + i32::from(input.u8() % 64);
    let status = match kind {
        0 => weir_breaker_shared_footprint(&breaker_policy, &mut bytes, &mut align),
        1 => weir_shedder_shared_footprint(&shedder_policy, &mut bytes, &mut align),
        2 => weir_bucket_shared_footprint(&mut bytes, &mut align),
        3 => weir_gate_shared_footprint(&mut bytes, &mut align),
        4 => weir_period_shared_footprint(&mut bytes, &mut align),
        5 => weir_budget_shared_footprint(&mut bytes, &mut align),
        6 => weir_concurrency_shared_footprint(&mut bytes, &mut align),
        7 => weir_window_shared_footprint(8, 1_000_000, &mut bytes, &mut align),
        _ => weir_sliding_shared_footprint(8, 1_000_000, &mut bytes, &mut align),
    };
    assert_eq!(status, WEIR_OK);
    let mut lines = vec![Line([0; 64]); bytes / 64 + 1];
    let mem = lines.as_mut_ptr().cast::<c_void>();
    let laid = match kind {
        0 => weir_breaker_init_shared(mem, bytes, &breaker_policy, 0, &mut null_mut()),
        1 => weir_shedder_init_shared(mem, bytes, &shedder_policy, 0, &mut null_mut()),
        2 => weir_bucket_init_shared(mem, bytes, 1.0, 10.0, 0, &mut null_mut()),
        3 => weir_gate_init_shared(mem, bytes, 4, &mut null_mut()),
        4 => weir_period_init_shared(mem, bytes, 4, 1_000_000, false, &mut null_mut()),
        5 => weir_budget_init_shared(mem, bytes, &weir_budget_policy_preset(), 0, &mut null_mut()),
        6 => weir_concurrency_init_shared(
            mem,
            bytes,
            &weir_concurrency_policy_preset(),
            &mut null_mut(),
        ),
        7 => weir_window_init_shared(mem, bytes, 8, 1_000_000, 0, &mut null_mut()),
        _ => weir_sliding_init_shared(mem, bytes, 8, 1_000_000, &mut null_mut()),
    };
    assert_eq!(laid, WEIR_OK);
    // SAFETY: `lines` holds at least `bytes` bytes from `mem`, borrowed
    // only through this slice until the attach below.
    let region = unsafe { std::slice::from_raw_parts_mut(mem.cast::<u8>(), bytes) };
    let original = region.to_vec();
    if input.u8() % 8 == 0 {
        // The whole region from the fuzzer.
        for byte in region.iter_mut() {
            *byte = input.u8();
        }
    } else {
        for _ in 0..input.u8() % 8 {
            let at = usize::from(input.u16()) % bytes;
            region[at] = input.u8();
        }
    }
    let len = match input.u8() % 4 {
        0 => usize::from(input.u16()) % (bytes + 1),
        _ => bytes,
    };
    let changed = region[..WEIR_REGION_HEADER_BYTES] != original[..WEIR_REGION_HEADER_BYTES];
    // Past the header lie the lock's block (its recovery counts among it)
    // and the handle (its flag byte among it): bytes written there are
    // read back as counts, or as a poisoned handle.
    let body_changed = region[WEIR_REGION_HEADER_BYTES..] != original[WEIR_REGION_HEADER_BYTES..];
    // A pool has no shared form: any region, any bytes, is refused.
    let mut pool: *mut weir_pool = null_mut();
    assert_eq!(weir_pool_attach(mem, len, &mut pool), WEIR_ERR_REGION_POOL);
    assert!(pool.is_null());
    let mut out: *mut c_void = null_mut();
    let status = match kind {
        0 => weir_breaker_attach(mem, len, (&mut out as *mut *mut c_void).cast()),
        1 => weir_shedder_attach(mem, len, (&mut out as *mut *mut c_void).cast()),
        2 => weir_bucket_attach(mem, len, (&mut out as *mut *mut c_void).cast()),
        3 => weir_gate_attach(mem, len, (&mut out as *mut *mut c_void).cast()),
        4 => weir_period_attach(mem, len, (&mut out as *mut *mut c_void).cast()),
        5 => weir_budget_attach(mem, len, (&mut out as *mut *mut c_void).cast()),
        6 => weir_concurrency_attach(mem, len, (&mut out as *mut *mut c_void).cast()),
        7 => weir_window_attach(mem, len, (&mut out as *mut *mut c_void).cast()),
        _ => weir_sliding_attach(mem, len, (&mut out as *mut *mut c_void).cast()),
    };
    assert_ne!(status, WEIR_ERR_PANIC);
    if status == WEIR_OK {
        assert!(!changed, "a changed header was attached");
        assert!(len >= bytes);
        assert_eq!(out as usize, mem as usize + WEIR_REGION_HANDLE_OFFSET);
        let mut recoveries = weir_recoveries::default();
        let read = match kind {
            0 => weir_breaker_recoveries(out.cast(), &mut recoveries),
            1 => weir_shedder_recoveries(out.cast(), &mut recoveries),
            4 => weir_period_recoveries(out.cast(), &mut recoveries),
            5 => weir_budget_recoveries(out.cast(), &mut recoveries),
            6 => weir_concurrency_recoveries(out.cast(), &mut recoveries),
            7 => weir_window_recoveries(out.cast(), &mut recoveries),
            8 => weir_sliding_recoveries(out.cast(), &mut recoveries),
            _ => WEIR_OK,
        };
        assert_ne!(read, WEIR_ERR_PANIC);
        if !body_changed {
            assert_eq!(read, WEIR_OK);
            assert_eq!(recoveries, weir_recoveries::default());
        }
    } else {
        assert!(out.is_null(), "attach wrote *out on {status:?}");
        assert!(changed || len < bytes || status == WEIR_ERR_REGION_SHAPE);
    }
});
