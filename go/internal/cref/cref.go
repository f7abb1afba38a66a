// Package cref calls the C static inline fast path of the rate word
// (rate_inline.h, part of weir.h: weir_rate_allow_inline and
// weir_rate_next_inline) for package weir's cross tests, which compare it
// with the pure-Go word and weir_rate_allow; test files cannot import "C",
// and package weir has no reason to export an inline path Go never takes.
//
// Every call passes values, or a pointer to a Go uint64 that holds no Go
// pointer and that C uses only during the call: the cgo pointer rules hold.
package cref

/*
#cgo pkg-config: weir-static
#include <weir.h>

// The limit by value: a Go value whose address is passed to C escapes to
// the heap.
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

// RateAllowInline is weir_rate_allow_inline on the word at w
// (weir_rate_allow where the header has no inline path; see HasInline).
func RateAllowInline(w *uint64, l RateLimit, now int64) bool {
	return bool(C.cref_rate_allow_inline((*C.uint64_t)(w), l.c(), C.int64_t(now)))
}

// RateNextInline is weir_rate_next_inline (or weir_rate_next).
func RateNextInline(w *uint64, l RateLimit, now int64) int64 {
	return int64(C.cref_rate_next_inline((*C.uint64_t)(w), l.c(), C.int64_t(now)))
}

// HasInline reports whether weir.h compiled its inline rate path here.
func HasInline() bool { return C.cref_rate_has_inline() != 0 }
