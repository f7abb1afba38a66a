//! A bloom array laid into caller memory (`weir_bloom_*_in`), of either word
//! kind (rate words or GCRA words), then used, scribbled over and forged. The region is an allocation of exactly `len`
//! bytes, so under AddressSanitizer any read or write past it is a crash.
//!
//! Checked: `weir_bloom_init_in` writes nothing unless it succeeds;
//! `weir_bloom_check_in` accepts exactly the headers that describe a valid
//! array fitting the region (a forged magic, version, shape, limit or
//! kind, line size, reserved bits is refused, and so is a region shorter
//! than the shape it claims); `allow_in` and `next_in` refuse whatever
//! `check_in` refuses, and while the words are only weir's, each key stays
//! within its word's bound.
#![no_main]

use std::alloc::{alloc, dealloc, Layout};
use std::ffi::c_void;
use std::ptr::{null, null_mut};

use libfuzzer_sys::fuzz_target;
use weir::bloom::*;
use weir::gcra::*;
use weir::rate::*;
use weir::status::weir_status::{self, *};
use weir_fuzz::{abort_on_panic, skipped, trace, Clock, Input, RateBound};

/// An allocation of exactly `len` bytes (64-byte aligned, as a region
/// must be), freed on drop.
struct Region {
    base: *mut u8,
    len: usize,
}

impl Region {
    fn new(len: usize, fill: u8) -> Region {
        let layout = Layout::from_size_align(len.max(1), 64).unwrap();
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc(layout) };
        assert!(!base.is_null());
        // SAFETY: `base` holds `len` bytes.
        unsafe { base.write_bytes(fill, len) };
        Region { base, len }
    }
    fn bytes(&self) -> &[u8] {
        // SAFETY: `base` holds `len` initialised bytes.
        unsafe { std::slice::from_raw_parts(self.base, self.len) }
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `self` is borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.base, self.len) }
    }
    /// The header's word `i` (little-endian, as every target weir builds
    /// for here is).
    fn word(&self, i: usize) -> u64 {
        u64::from_le_bytes(self.bytes()[i * 8..i * 8 + 8].try_into().unwrap())
    }
    fn set_word(&mut self, i: usize, value: u64) {
        self.bytes_mut()[i * 8..i * 8 + 8].copy_from_slice(&value.to_le_bytes());
    }
    fn mem(&self) -> *mut c_void {
        self.base as *mut c_void
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len.max(1), 64).unwrap();
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.base, layout) };
    }
}

/// The header's first word: "weir:blm" (layout version 2: magic, version,
/// kind | line bytes << 32, size_log2 | hashes << 8 | shift << 16, the
/// limit's two words, seed0, seed1).
const MAGIC: u64 = u64::from_le_bytes(*b"weir:blm");

/// What `weir_bloom_check_in` must answer for the header in `region`'s
/// first `len` bytes: Ok(()) for a valid array that fits, else the set of
/// statuses a refusal may carry.
fn expected(region: &Region, len: usize) -> Result<(), &'static [weir_status]> {
    const FOREIGN: &[weir_status] = &[WEIR_ERR_BLOOM_FOREIGN];
    if len < WEIR_BLOOM_HEADER_BYTES {
        return Err(&[WEIR_ERR_BLOOM_TOO_SMALL]);
    }
    if region.word(0) != MAGIC {
        return Err(FOREIGN);
    }
    if region.word(1) != u64::from(WEIR_BLOOM_VERSION) {
        return Err(&[WEIR_ERR_BLOOM_VERSION]);
    }
    let (kind, line) = (region.word(2) & 0xffff_ffff, region.word(2) >> 32);
    if line != 64 {
        return Err(&[WEIR_ERR_BLOOM_LINE_SIZE]);
    }
    let sizes = region.word(3);
    let (size_log2, hashes, shift) = (
        (sizes & 0xff) as u32,
        (sizes >> 8 & 0xff) as u32,
        (sizes >> 16 & 0xff) as u32,
    );
    // Bits above the three shape bytes are refused before the kind is read,
    // in the library's order.
    if sizes >> 24 != 0 {
        return Err(FOREIGN);
    }
    let (a, b) = (region.word(4), region.word(5));
    // A limit is valid when a fresh word answers for it.
    let limit_ok = match kind {
        1 => {
            let limit = weir_rate_limit {
                interval_ns: a,
                interval_frac: b as u32,
                burst: (b >> 32) as u32,
            };
            shift == 0 && weir_rate_next(&weir_rate { state: 0 }, &limit, 0) != i64::MAX
        }
        2 => {
            let limit = weir_gcra_limit {
                per_token: a,
                tolerance: b as i64,
                shift,
                reserved: 0,
            };
            weir_gcra_next(&weir_gcra { state: 0 }, &limit, 0) != i64::MAX
        }
        _ => return Err(&[WEIR_ERR_BLOOM_KIND]),
    };
    let shape_ok = (WEIR_BLOOM_MIN_SIZE_LOG2..=WEIR_BLOOM_MAX_SIZE_LOG2).contains(&size_log2)
        && (1..=WEIR_BLOOM_MAX_HASHES).contains(&hashes);
    if sizes >> 24 != 0 || !limit_ok || !shape_ok {
        return Err(FOREIGN);
    }
    let needed = weir_bloom_footprint(size_log2);
    assert!(needed > 0);
    if len < needed {
        return Err(&[WEIR_ERR_BLOOM_TOO_SMALL]);
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    abort_on_panic();
    let mut input = Input::new(data);
    let size_log2 = WEIR_BLOOM_MIN_SIZE_LOG2 + input.below(7) as u32;
    let hashes = 1 + input.below(8) as u32;
    let gcra = input.one_in(2);
    let burst = [1, 2, 100, 1023][input.below(4) as usize];
    let window_ns = match input.u8() % 3 {
        0 => 51_300.0,
        1 => burst as f64 * (400.0 + input.below(700) as f64),
        _ => 1e9,
    }
    .max(51_300.0);
    let per_s = burst as f64 * 1e9 / window_ns;
    let mut limit = weir_rate_limit {
        interval_ns: 0,
        interval_frac: 0,
        burst: 0,
    };
    assert_eq!(weir_rate_limit_new(per_s, burst, &mut limit), WEIR_OK);
    let mut gcra_limit = weir_gcra_limit {
        per_token: 0,
        tolerance: 0,
        shift: 0,
        reserved: 0,
    };
    assert_eq!(weir_gcra_limit_new(per_s, burst, &mut gcra_limit), WEIR_OK);
    let footprint = weir_bloom_footprint(size_log2);
    assert_eq!(
        footprint,
        64 + (8 << size_log2),
        "weir_bloom_footprint({size_log2})"
    );
    assert_eq!(
        weir_bloom_footprint(WEIR_BLOOM_MAX_SIZE_LOG2 + 1 + input.below(100) as u32),
        0
    );
    assert_eq!(weir_bloom_footprint(input.below(3) as u32), 0);
    let len = match input.u8() % 4 {
        0 => footprint.saturating_sub(1 + input.below(footprint as u64) as usize),
        1 => footprint + input.below(64) as usize,
        _ => footprint,
    };
    let fill = input.u8();
    let mut region = Region::new(len, fill);
    let (seed0, seed1) = (input.u64(), input.u64());
    trace!("region of {len} bytes for 2^{size_log2} words, {hashes} hashes, gcra {gcra}, {limit:?}");

    // Arguments refused before anything is written.
    let spare = Region::new(len + 8, fill);
    // Any address that is not a multiple of 64, 8-aligned ones included.
    let odd = spare.base.wrapping_add(1 + input.below(63) as usize) as *mut c_void;
    let init = |mem: *mut c_void, len: usize| {
        if gcra {
            weir_bloom_init_gcra_in(mem, len, size_log2, hashes, &gcra_limit, seed0, seed1)
        } else {
            weir_bloom_init_in(mem, len, size_log2, hashes, &limit, seed0, seed1)
        }
    };
    assert_eq!(init(null_mut(), len), WEIR_ERR_NULL);
    assert_eq!(init(odd, len), WEIR_ERR_MISALIGNED);
    assert_eq!(
        init(region.mem(), isize::MAX as usize + 1),
        WEIR_ERR_TOO_LARGE
    );
    assert_eq!(weir_bloom_check_in(odd, len), WEIR_ERR_MISALIGNED);
    assert_eq!(weir_bloom_check_in(null(), len), WEIR_ERR_NULL);
    assert!(
        spare.bytes().iter().all(|&b| b == fill),
        "a refused init wrote"
    );
    drop(spare);
    assert_eq!(
        weir_bloom_init_in(region.mem(), len, size_log2, 0, &limit, seed0, seed1),
        WEIR_ERR_BLOOM_HASHES
    );
    assert_eq!(
        weir_bloom_init_in(region.mem(), len, size_log2, hashes, null(), seed0, seed1),
        WEIR_ERR_NULL
    );
    assert_eq!(
        weir_bloom_init_gcra_in(region.mem(), len, size_log2, 9, &gcra_limit, seed0, seed1),
        WEIR_ERR_BLOOM_HASHES
    );
    assert_eq!(
        weir_bloom_init_gcra_in(region.mem(), len, size_log2, hashes, null(), seed0, seed1),
        WEIR_ERR_NULL
    );
    assert_eq!(
        weir_bloom_init_gcra_in(region.mem(), len, 2, hashes, &gcra_limit, seed0, seed1),
        WEIR_ERR_BLOOM_TOO_FEW_WORDS
    );

    let status = init(region.mem(), len);
    if len < footprint {
        assert_eq!(status, WEIR_ERR_BLOOM_TOO_SMALL);
        assert!(
            region.bytes().iter().all(|&b| b == fill),
            "a refused init wrote"
        );
        assert_ne!(weir_bloom_check_in(region.mem(), len), WEIR_OK);
        return;
    }
    assert_eq!(status, WEIR_OK);
    assert!(
        region.bytes()[footprint..].iter().all(|&b| b == fill),
        "init wrote past the footprint"
    );
    assert_eq!(weir_bloom_check_in(region.mem(), len), WEIR_OK);

    let keys: Vec<Vec<u8>> = (0..1 + input.below(4))
        .map(|_| (0..input.below(12)).map(|_| input.u8()).collect())
        .collect();
    let mut bounds: Vec<RateBound> = keys
        .iter()
        .map(|_| RateBound::new(burst as u64, window_ns, hashes as u64))
        .collect();
    let mut alone = Some(RateBound::new(burst as u64, window_ns, 1));
    let mut first_key: Option<usize> = None;
    // The bound holds while the words are weir's alone and time has only
    // gone forwards (or one key is used).
    let mut pristine = true;
    let mut monotone = true;
    let mut clock = Clock::new(&mut input);
    clock.now = clock.now.max(0);
    let mut latest = 0i64;
    while !input.is_empty() {
        let now = clock.tick(&mut input);
        let which = input.below(keys.len() as u64) as usize;
        let key = &keys[which];
        // A length the caller claims: the whole region, or a prefix of it.
        let claimed = if input.one_in(8) {
            input.below(len as u64 + 1) as usize
        } else {
            len
        };
        let valid = expected(&region, claimed);
        match input.u8() % 10 {
            0..=4 => {
                if first_key.is_some_and(|k| keys[k] != *key) {
                    alone = None;
                }
                first_key.get_or_insert(which);
                let count = if input.one_in(4) {
                    1 + input.below(2000)
                } else {
                    1
                };
                for _ in 0..count {
                    let allowed = weir_bloom_allow_in(
                        region.mem(),
                        claimed,
                        now,
                        key.as_ptr() as *const c_void,
                        key.len(),
                    );
                    if !allowed {
                        continue;
                    }
                    assert!(
                        valid.is_ok() && now >= 0,
                        "allow_in admitted on a region check_in refuses"
                    );
                    if now < latest {
                        monotone = false;
                    }
                    latest = latest.max(now);
                    if pristine && !skipped("rate-bound") {
                        if let Some(bound) = &mut alone {
                            bound.admitted(latest, "weir_bloom_allow_in, one key");
                        }
                        if monotone {
                            bounds[which].admitted(latest, "weir_bloom_allow_in");
                        }
                    }
                }
            }
            5 => {
                let next = weir_bloom_next_in(
                    region.mem(),
                    claimed,
                    now,
                    key.as_ptr() as *const c_void,
                    key.len(),
                );
                assert!(next >= 0);
                if valid.is_err() || now < 0 {
                    assert_eq!(next, i64::MAX, "next_in on a region check_in refuses");
                }
            }
            6 => {
                let status = weir_bloom_check_in(region.mem(), claimed);
                match valid {
                    Ok(()) => assert_eq!(
                        status, WEIR_OK,
                        "check_in({claimed}) refused a valid header"
                    ),
                    Err(allowed) => assert!(
                        allowed.contains(&status),
                        "check_in({claimed}) answered {status:?}, want one of {allowed:?}"
                    ),
                }
                assert_eq!(
                    weir_bloom_check_in(region.mem(), usize::MAX),
                    WEIR_ERR_TOO_LARGE
                );
                assert!(!weir_bloom_allow_in(
                    region.mem(),
                    usize::MAX,
                    now,
                    null(),
                    0
                ));
            }
            7 => {
                // Scribble over the words: still safe, no bound any more.
                if len > 64 {
                    let at = 64 + input.below(len as u64 - 64) as usize;
                    region.bytes_mut()[at] = input.u8();
                    pristine = false;
                }
            }
            _ => {
                // Forge the header: one word, one bit, or a shape that
                // claims more than the region holds.
                let word = input.below(8) as usize;
                let old = region.word(word);
                let forged = match input.u8() % 6 {
                    0 => old ^ (1 << input.below(64)),
                    1 => input.u64(),
                    2 => old.wrapping_add(1),
                    3 => {
                        // More words than the region holds, or a hash count
                        // out of range.
                        let grow = (size_log2 + 1 + input.below(40) as u32) as u64;
                        let count = [0u64, 9, 1 + input.below(8)][input.below(3) as usize];
                        let keep = region.word(3) & 0xff_0000;
                        region.set_word(3, grow | count << 8 | keep);
                        pristine = false;
                        trace!("forged shape: 2^{grow} words, {count} hashes");
                        continue;
                    }
                    4 => 0,
                    _ => u64::MAX,
                };
                trace!("forged word {word}: {old:#x} -> {forged:#x}");
                region.set_word(word, forged);
                pristine = false;
            }
        }
    }
    assert!(!weir_bloom_allow_in(
        null_mut(),
        len,
        0,
        b"k".as_ptr() as *const c_void,
        1
    ));
    assert!(!weir_bloom_allow_in(region.mem(), len, 0, null(), 0));
    assert_eq!(weir_bloom_next_in(null(), len, 0, null(), 0), i64::MAX);
});
