package weir

/*
#cgo noescape weir_rate_allow
#cgo nocallback weir_rate_allow
#cgo noescape weir_rate_next
#cgo nocallback weir_rate_next
#cgo noescape weir_gcra_allow
#cgo nocallback weir_gcra_allow
#cgo noescape weir_gcra_allow_n
#cgo nocallback weir_gcra_allow_n
#cgo noescape weir_gcra_next
#cgo nocallback weir_gcra_next
#cgo noescape weir_gcra_room
#cgo nocallback weir_gcra_room
#include "weir.h"
*/
import "C"

import (
	"time"
	"unsafe"
)

// RateLimit is a rate word's policy (weir_rate_limit), checked once by
// [NewRateLimit] so that decisions do integer work only. A plain value:
// copy it, share it read-only. Its layout is weir_rate_limit's, field for
// field, so C reads it in place.
type RateLimit struct {
	intervalNs   uint64 // whole ns of one interval (1 / limit, rounded up to 2^-32 ns)
	intervalFrac uint32 // the interval's fraction, in 2^-32 ns
	burst        uint32 // events per window, 1..1023
}

// NewRateLimit checks a limit of perSecond events a second in windows of
// burst events. ErrRateBurst (burst outside 1..1023), ErrNotFinite,
// ErrNegative, ErrRateZero, ErrRateTooFast (a window under 51.2 µs),
// ErrRateTooSlow, checked in that order.
func NewRateLimit(perSecond float64, burst int64) (RateLimit, error) {
	var l RateLimit
	err := check(C.weir_rate_limit_new(C.double(perSecond), C.int64_t(burst), l.c()))
	return l, err
}

// Interval is one interval of the limit: whole nanoseconds and the
// fraction in units of 2^-32 ns.
func (l RateLimit) Interval() (ns uint64, frac uint32) { return l.intervalNs, l.intervalFrac }

// Burst is the events a window admits.
func (l RateLimit) Burst() int { return int(l.burst) }

func (l *RateLimit) c() *C.weir_rate_limit { return (*C.weir_rate_limit)(unsafe.Pointer(l)) }

// GCRALimit is a GCRA word's policy (weir_gcra_limit), checked once by
// [NewGCRALimit]. Layout-identical to weir_gcra_limit.
type GCRALimit struct {
	perToken  uint64 // ticks one token is worth
	tolerance int64  // ticks a full word holds: burst × perToken
	shift     uint32 // a tick is 2^-shift ns
	reserved  uint32
}

// NewGCRALimit checks a token bucket of ratePerSecond tokens a second and
// burst tokens: ErrGCRABurst, ErrNotFinite, ErrNegative, ErrGCRAZero,
// ErrGCRATooFast, ErrGCRATooSlow, in that order.
func NewGCRALimit(ratePerSecond float64, burst int64) (GCRALimit, error) {
	var l GCRALimit
	err := check(C.weir_gcra_limit_new(C.double(ratePerSecond), C.int64_t(burst), l.c()))
	return l, err
}

// PerToken is the ticks one token is worth.
func (l GCRALimit) PerToken() uint64 { return l.perToken }

// Tolerance is the ticks a full word holds.
func (l GCRALimit) Tolerance() int64 { return l.tolerance }

// Shift is the tick's size: 2^-Shift ns.
func (l GCRALimit) Shift() uint32 { return l.shift }

// Burst is the tokens a full word admits at once.
func (l GCRALimit) Burst() int64 {
	if l.perToken == 0 {
		return 0
	}
	return l.tolerance / int64(l.perToken)
}

func (l *GCRALimit) c() *C.weir_gcra_limit { return (*C.weir_gcra_limit)(unsafe.Pointer(l)) }

// The C paths of the two frozen words, over any 8-byte-aligned uint64 (a
// Go variable, an atomic.Uint64's address, a word of an mmapped file).
// The pure-Go paths (RateWord, GCRAWord) agree with these bit for bit;
// these cost one cgo crossing a call. A misaligned word, a bad limit or a
// negative now refuses, as in C.

// RateAllowC is weir_rate_allow on the word at word.
func RateAllowC(word *uint64, limit *RateLimit, now time.Duration) bool {
	return bool(C.weir_rate_allow((*C.weir_rate)(unsafe.Pointer(word)), limit.c(), ns(now)))
}

// RateNextC is weir_rate_next on the word at word: how long until it
// allows, 0 if it would now, [Never] for a bad word, limit or now.
func RateNextC(word *uint64, limit *RateLimit, now time.Duration) time.Duration {
	return dur(C.weir_rate_next((*C.weir_rate)(unsafe.Pointer(word)), limit.c(), ns(now)))
}

// GCRAAllowC is weir_gcra_allow on the word at word.
func GCRAAllowC(word *uint64, limit *GCRALimit, now time.Duration) bool {
	return bool(C.weir_gcra_allow((*C.weir_gcra)(unsafe.Pointer(word)), limit.c(), ns(now)))
}

// GCRAAllowNC is weir_gcra_allow_n: n tokens, all or nothing.
func GCRAAllowNC(word *uint64, limit *GCRALimit, now time.Duration, n int64) bool {
	return bool(C.weir_gcra_allow_n((*C.weir_gcra)(unsafe.Pointer(word)), limit.c(), ns(now), C.int64_t(n)))
}

// GCRANextC is weir_gcra_next: how long until one token passes.
func GCRANextC(word *uint64, limit *GCRALimit, now time.Duration) time.Duration {
	return dur(C.weir_gcra_next((*C.weir_gcra)(unsafe.Pointer(word)), limit.c(), ns(now)))
}

// GCRARoomC is weir_gcra_room: whole tokens the word would admit at now.
func GCRARoomC(word *uint64, limit *GCRALimit, now time.Duration) int64 {
	return int64(C.weir_gcra_room((*C.weir_gcra)(unsafe.Pointer(word)), limit.c(), ns(now)))
}
