// Package cref calls weir's C library for the pure-Go words of package
// weir: their limit constructors (called once, when a limit is made, so
// that Go checks a rate exactly as C does) and the C decision paths the
// cross tests and benchmarks compare the Go ones against. Test files
// cannot import "C", so the C side lives here.
//
// Every call passes values, or a pointer to a Go uint64 that holds no Go
// pointer and that C uses only during the call: the cgo pointer rules hold.
package cref

/*
#cgo pkg-config: weir-static
#include <weir.h>

// The C static inline fast path over the rate word (rate_inline.h, part of
// weir.h), behind a call cgo can make.
static bool cref_rate_allow_inline(uint64_t *word, weir_rate_limit limit, int64_t now) {
#if defined(WEIR_RATE_INLINE)
	return weir_rate_allow_inline((weir_rate *)word, &limit, now);
#else
	return weir_rate_allow((weir_rate *)word, &limit, now);
#endif
}

static int64_t cref_rate_next_inline(const uint64_t *word, weir_rate_limit limit, int64_t now) {
#if defined(WEIR_RATE_INLINE)
	return weir_rate_next_inline((const weir_rate *)word, &limit, now);
#else
	return weir_rate_next((const weir_rate *)word, &limit, now);
#endif
}

// The decisions with the limit by value: a Go value whose address is
// passed to C escapes to the heap, and these are measured per call.
static bool cref_rate_allow(uint64_t *word, weir_rate_limit limit, int64_t now) {
	return weir_rate_allow((weir_rate *)word, &limit, now);
}
static int64_t cref_rate_next(const uint64_t *word, weir_rate_limit limit, int64_t now) {
	return weir_rate_next((const weir_rate *)word, &limit, now);
}
static bool cref_gcra_allow(uint64_t *word, weir_gcra_limit limit, int64_t now) {
	return weir_gcra_allow((weir_gcra *)word, &limit, now);
}
static bool cref_gcra_allow_n(uint64_t *word, weir_gcra_limit limit, int64_t now, int64_t n) {
	return weir_gcra_allow_n((weir_gcra *)word, &limit, now, n);
}
static int64_t cref_gcra_next(const uint64_t *word, weir_gcra_limit limit, int64_t now) {
	return weir_gcra_next((const weir_gcra *)word, &limit, now);
}
static int64_t cref_gcra_room(const uint64_t *word, weir_gcra_limit limit, int64_t now) {
	return weir_gcra_room((const weir_gcra *)word, &limit, now);
}

static int cref_rate_has_inline(void) {
#if defined(WEIR_RATE_INLINE)
	return 1;
#else
	return 0;
#endif
}
*/
import "C"

// RateLimit is weir_rate_limit's fields.
type RateLimit struct {
	IntervalNs   uint64
	IntervalFrac uint32
	Burst        uint32
}

func (l RateLimit) c() C.weir_rate_limit {
	return C.weir_rate_limit{
		interval_ns:   C.uint64_t(l.IntervalNs),
		interval_frac: C.uint32_t(l.IntervalFrac),
		burst:         C.uint32_t(l.Burst),
	}
}

// RateLimitNew is weir_rate_limit_new: the limit and WEIR_OK, or a zero
// limit and the status.
func RateLimitNew(perSecond float64, burst int64) (RateLimit, int32) {
	var out C.weir_rate_limit
	status := C.weir_rate_limit_new(C.double(perSecond), C.int64_t(burst), &out)
	if status != 0 {
		return RateLimit{}, int32(status)
	}
	return RateLimit{uint64(out.interval_ns), uint32(out.interval_frac), uint32(out.burst)}, 0
}

// RateAllow is weir_rate_allow on the word at w.
func RateAllow(w *uint64, l RateLimit, now int64) bool {
	return bool(C.cref_rate_allow((*C.uint64_t)(w), l.c(), C.int64_t(now)))
}

// RateNext is weir_rate_next on the word at w.
func RateNext(w *uint64, l RateLimit, now int64) int64 {
	return int64(C.cref_rate_next((*C.uint64_t)(w), l.c(), C.int64_t(now)))
}

// RateAllowInline is weir_rate_allow_inline (weir_rate_allow where the
// header has no inline path; see HasInline).
func RateAllowInline(w *uint64, l RateLimit, now int64) bool {
	return bool(C.cref_rate_allow_inline((*C.uint64_t)(w), l.c(), C.int64_t(now)))
}

// RateNextInline is weir_rate_next_inline (or weir_rate_next).
func RateNextInline(w *uint64, l RateLimit, now int64) int64 {
	return int64(C.cref_rate_next_inline((*C.uint64_t)(w), l.c(), C.int64_t(now)))
}

// HasInline reports whether weir.h compiled its inline rate path here.
func HasInline() bool { return C.cref_rate_has_inline() != 0 }

// GcraLimit is weir_gcra_limit's fields.
type GcraLimit struct {
	PerToken  uint64
	Tolerance int64
	Shift     uint32
	Reserved  uint32
}

func (l GcraLimit) c() C.weir_gcra_limit {
	return C.weir_gcra_limit{
		per_token: C.uint64_t(l.PerToken),
		tolerance: C.int64_t(l.Tolerance),
		shift:     C.uint32_t(l.Shift),
		reserved:  C.uint32_t(l.Reserved),
	}
}

// GcraLimitNew is weir_gcra_limit_new: the limit and WEIR_OK, or a zero
// limit and the status.
func GcraLimitNew(perSecond float64, burst int64) (GcraLimit, int32) {
	var out C.weir_gcra_limit
	status := C.weir_gcra_limit_new(C.double(perSecond), C.int64_t(burst), &out)
	if status != 0 {
		return GcraLimit{}, int32(status)
	}
	return GcraLimit{uint64(out.per_token), int64(out.tolerance), uint32(out.shift), uint32(out.reserved)}, 0
}

// GcraAllowN is weir_gcra_allow_n on the word at w.
func GcraAllowN(w *uint64, l GcraLimit, now, n int64) bool {
	return bool(C.cref_gcra_allow_n((*C.uint64_t)(w), l.c(), C.int64_t(now), C.int64_t(n)))
}

// GcraAllow is weir_gcra_allow on the word at w.
func GcraAllow(w *uint64, l GcraLimit, now int64) bool {
	return bool(C.cref_gcra_allow((*C.uint64_t)(w), l.c(), C.int64_t(now)))
}

// GcraNext is weir_gcra_next on the word at w.
func GcraNext(w *uint64, l GcraLimit, now int64) int64 {
	return int64(C.cref_gcra_next((*C.uint64_t)(w), l.c(), C.int64_t(now)))
}

// GcraRoom is weir_gcra_room on the word at w.
func GcraRoom(w *uint64, l GcraLimit, now int64) int64 {
	return int64(C.cref_gcra_room((*C.uint64_t)(w), l.c(), C.int64_t(now)))
}
