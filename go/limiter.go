package weir

/*
#cgo noescape weir_limiter_try_consume
#cgo nocallback weir_limiter_try_consume
#cgo noescape weir_limiter_consume
#cgo nocallback weir_limiter_consume
#include "weir.h"
*/
import "C"

import "time"

// Limiter is weir's embeddable integer quota (weir_limiter): a 48-byte
// plain value, a bucket, a fixed window or a cooldown. No handle and no
// heap, so no Close: embed it in a struct. Not safe for concurrent use:
// the caller guards it, as in C. The zero Limiter is not a limiter: its
// calls answer ErrLimiterCorrupt or refuse.
type Limiter struct {
	l C.weir_limiter
}

// NewLimiterBucket is a bucket of capacity units holding available,
// crediting amount every interval counted from lastRefill (pass now for a
// new one). ErrLimiterZeroCapacity, ErrLimiterZeroRefillAmount, ErrLimiterZeroRefillInterval,
// ErrLimiterInitialAboveCapacity, ErrLimiterBucketAnchorInFuture.
func NewLimiterBucket(capacity, amount uint64, interval, lastRefill time.Duration, available uint64, now time.Duration) (Limiter, error) {
	var l Limiter
	err := check(C.weir_limiter_bucket(&l.l, C.uint64_t(capacity), C.uint64_t(amount), ns(interval), ns(lastRefill), C.uint64_t(available), ns(now)))
	return l, err
}

// NewLimiterWindow is a fixed window of window laid from start with
// available of capacity units left. ErrLimiterZeroCapacity, ErrLimiterZeroWindow,
// ErrLimiterInitialAboveCapacity, ErrLimiterWindowAnchorInFuture.
func NewLimiterWindow(capacity uint64, window, start time.Duration, available uint64, now time.Duration) (Limiter, error) {
	var l Limiter
	err := check(C.weir_limiter_fixed_window(&l.l, C.uint64_t(capacity), ns(window), ns(start), C.uint64_t(available), ns(now)))
	return l, err
}

// NewLimiterCooldown is batches of capacity units with a gate of cooldown
// after each; end at or before now is no gate armed. ErrLimiterZeroCapacity,
// ErrLimiterZeroCooldown, ErrLimiterInitialAboveCapacity, ErrLimiterCooldownArmedWithTokens.
func NewLimiterCooldown(capacity uint64, cooldown, end time.Duration, available uint64, now time.Duration) (Limiter, error) {
	var l Limiter
	err := check(C.weir_limiter_cooldown(&l.l, C.uint64_t(capacity), ns(cooldown), ns(end), C.uint64_t(available), ns(now)))
	return l, err
}

// Allow takes amount units at now, all or nothing.
func (l *Limiter) Allow(now time.Duration, amount uint64) bool {
	return bool(C.weir_limiter_try_consume(&l.l, ns(now), C.uint64_t(amount)))
}

// Consume is Allow with the reason: nil, ErrLimiterRateLimited,
// ErrLimiterInvalidAmount, ErrLimiterCorrupt, ErrLimiterCooldownDeadlineOverflow.
func (l *Limiter) Consume(now time.Duration, amount uint64) error {
	return check(C.weir_limiter_consume(&l.l, ns(now), C.uint64_t(amount)))
}

// Refund gives back amount units taken at takenAt for a call never made.
func (l *Limiter) Refund(now, takenAt time.Duration, amount uint64) error {
	return check(C.weir_limiter_refund(&l.l, ns(now), ns(takenAt), C.uint64_t(amount)))
}

// Available is the units a consume at now could take.
func (l *Limiter) Available(now time.Duration) uint64 {
	return uint64(C.weir_limiter_available(&l.l, ns(now)))
}

// Capacity is the limiter's capacity; 0 for a corrupt one.
func (l *Limiter) Capacity() uint64 { return uint64(C.weir_limiter_capacity(&l.l)) }

// LimiterKind says which variant a Limiter is.
type LimiterKind int

// The variants; LimiterCorrupt for a zero or overwritten value.
const (
	LimiterCorrupt LimiterKind = iota
	LimiterBucket
	LimiterWindow
	LimiterCooldown
)

// Kind is the variant.
func (l *Limiter) Kind() LimiterKind {
	switch {
	case bool(C.weir_limiter_is_bucket(&l.l)):
		return LimiterBucket
	case bool(C.weir_limiter_is_fixed_window(&l.l)):
		return LimiterWindow
	case bool(C.weir_limiter_is_cooldown(&l.l)):
		return LimiterCooldown
	}
	return LimiterCorrupt
}

// Anchor is what a rebuild needs with Available(now) to keep the phase: a
// bucket's refill anchor or a window's start projected to now, or a
// cooldown's gate deadline. Period is the refill interval, window or
// cooldown length. Amount is a bucket's refill amount (0 otherwise).
func (l *Limiter) Anchor(now time.Duration) (anchor, period time.Duration, amount uint64, err error) {
	var a, p C.int64_t
	var m C.uint64_t
	switch l.Kind() {
	case LimiterBucket:
		if err = check(C.weir_limiter_last_refill(&l.l, ns(now), &a)); err == nil {
			err = check(C.weir_limiter_refill_interval_ns(&l.l, &p))
		}
		if err == nil {
			err = check(C.weir_limiter_refill_amount(&l.l, &m))
		}
	case LimiterWindow:
		if err = check(C.weir_limiter_window_start(&l.l, ns(now), &a)); err == nil {
			err = check(C.weir_limiter_window_ns(&l.l, &p))
		}
	case LimiterCooldown:
		if err = check(C.weir_limiter_cooldown_end(&l.l, &a)); err == nil {
			err = check(C.weir_limiter_cooldown_ns(&l.l, &p))
		}
	default:
		return 0, 0, 0, ErrLimiterCorrupt
	}
	return time.Duration(a), time.Duration(p), uint64(m), err
}
