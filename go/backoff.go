package weir

/*
#include "weir.h"
*/
import "C"

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
	"unsafe"
)

// BackoffJitter says how a backoff delay is drawn from its ceiling.
type BackoffJitter int32

// The WEIR_BACKOFF_JITTER_* kinds.
const (
	BackoffJitterRigid        BackoffJitter = C.WEIR_BACKOFF_JITTER_RIGID
	BackoffJitterFull         BackoffJitter = C.WEIR_BACKOFF_JITTER_FULL
	BackoffJitterEqual        BackoffJitter = C.WEIR_BACKOFF_JITTER_EQUAL
	BackoffJitterDecorrelated BackoffJitter = C.WEIR_BACKOFF_JITTER_DECORRELATED
	BackoffJitterSpread       BackoffJitter = C.WEIR_BACKOFF_JITTER_SPREAD
)

// Backoff is a retry policy (weir_backoff), a plain value: the ceiling
// before retry r is min(Base × Factor^(r−1), Cap). Draws come from Rand
// (nil: math/rand/v2's global source); seed it for reproducible delays.
type Backoff struct {
	Base          time.Duration
	Factor        float64
	Cap           time.Duration
	Attempts      int32 // calls in all, the first included
	BackoffJitter BackoffJitter
	Spread        float64    // the fraction BackoffJitterSpread spreads by
	Rand          *rand.Rand // the draws; nil is the global source
}

// DefaultBackoff is weir_backoff_preset: 3 attempts, 100 ms doubling to
// 1 s, each delay spread by a fifth either way.
func DefaultBackoff() Backoff { return fromC(C.weir_backoff_preset()) }

// FullJitterBackoff is weir_backoff_full_jitter.
func FullJitterBackoff() Backoff { return fromC(C.weir_backoff_full_jitter()) }

func fromC(p C.weir_backoff) Backoff {
	return Backoff{time.Duration(p.base_ns), float64(p.factor), time.Duration(p.cap_ns), int32(p.attempts), BackoffJitter(p.jitter), float64(p.spread), nil}
}

func (b *Backoff) c() C.weir_backoff {
	return C.weir_backoff{base_ns: ns(b.Base), factor: C.double(b.Factor), cap_ns: ns(b.Cap),
		attempts: C.int32_t(b.Attempts), jitter: C.int32_t(b.BackoffJitter), spread: C.double(b.Spread)}
}

// Check is nil for a valid policy, else the Status naming the first wrong
// field (ErrUnknownKind, ErrBackoffBase, ...).
func (b *Backoff) Check() error {
	c := b.c()
	return check(C.weir_backoff_check(&c))
}

// Ceiling is the undelayed ceiling before retry (the first retry is 1);
// -1 for an invalid policy.
func (b *Backoff) Ceiling(retry int32) time.Duration {
	c := b.c()
	return time.Duration(C.weir_backoff_ceiling(&c, C.int32_t(retry)))
}

// Delay is the wait before retry drawn with the draw random in [0, 1);
// previous is the last delay (BackoffJitterDecorrelated reads it). -1 for an
// invalid policy.
func (b *Backoff) Delay(retry int32, random float64, previous time.Duration) time.Duration {
	c := b.c()
	return time.Duration(C.weir_backoff_delay(&c, C.int32_t(retry), C.double(random), ns(previous)))
}

// More reports whether a call that made made attempts may make another.
func (b *Backoff) More(made int32) bool {
	c := b.c()
	return bool(C.weir_backoff_more(&c, C.int32_t(made)))
}

// Schedule is the delays of a whole run of retries, retry i drawn with
// randoms[i-1] (0 once they run short): Attempts − 1 of them, none for an
// invalid policy.
func (b *Backoff) Schedule(randoms []float64) []time.Duration {
	c := b.c()
	if b.Check() != nil || b.Attempts < 2 {
		return nil
	}
	out := make([]C.int64_t, b.Attempts-1)
	var rp *C.double
	if len(randoms) > 0 {
		rp = (*C.double)(unsafe.Pointer(&randoms[0]))
	}
	n := int(C.weir_backoff_schedule(&c, rp, C.size_t(len(randoms)), &out[0], C.size_t(len(out))))
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = time.Duration(out[i])
	}
	return ds
}

func (b *Backoff) draw() float64 {
	if b.Rand != nil {
		return b.Rand.Float64()
	}
	return rand.Float64()
}

// Permanent wraps an error Retry must not retry.
func Permanent(err error) error { return permanent{err} }

type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Retry calls fn until it succeeds, the policy's attempts run out, fn
// returns a Permanent error, or ctx ends, sleeping a drawn delay between
// attempts. It answers nil, or the last error (unwrapped from Permanent),
// or ctx's error joined with the last one. A wait that would outlast
// ctx's deadline is not started. An invalid policy is its Check error.
func (b *Backoff) Retry(ctx context.Context, fn func(ctx context.Context) error) error {
	return b.retry(ctx, fn, sleepCtx)
}

func (b *Backoff) retry(ctx context.Context, fn func(ctx context.Context) error, sleep func(context.Context, time.Duration) error) error {
	if err := b.Check(); err != nil {
		return err
	}
	var previous time.Duration
	for made := int32(1); ; made++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := fn(ctx)
		if err == nil {
			return nil
		}
		var p permanent
		if errors.As(err, &p) {
			return p.err
		}
		if !b.More(made) {
			return err
		}
		d := b.Delay(made, b.draw(), previous)
		previous = d
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return errors.Join(context.DeadlineExceeded, err)
		}
		if serr := sleep(ctx, d); serr != nil {
			return errors.Join(serr, err)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
