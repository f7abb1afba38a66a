package weir

/*
#include "weir.h"
*/
import "C"

import (
	"context"
	"math"
	"runtime"
	"time"
)

// Bucket is a lock-free token bucket (weir_bucket): rate tokens a second
// accrue up to burst; each take spends what it costs. Safe for many
// goroutines; Close is not concurrent with use.
type Bucket struct {
	p *C.weir_bucket
	// unmap releases the mapped file of a shared bucket
	// (OpenSharedBucketFile); nil for a heap one.
	unmap func() error
}

// NewBucket makes a full bucket at [Now]. rate is tokens a second (0
// never refills); a burst of 0 or less is the rate, one under 1 is 1.
// ErrNotFinite, ErrNegative or ErrTooLarge for rates and bursts weir
// cannot hold.
func NewBucket(rate, burst float64) (*Bucket, error) { return NewBucketAt(rate, burst, Now()) }

// NewBucketAt is NewBucket, full at now.
func NewBucketAt(rate, burst float64, now time.Duration) (*Bucket, error) {
	var p *C.weir_bucket
	if err := check(C.weir_bucket_new(C.double(rate), C.double(burst), ns(now), &p)); err != nil {
		return nil, err
	}
	b := &Bucket{p: p}
	runtime.SetFinalizer(b, finalize[*Bucket])
	return b, nil
}

// Close frees the bucket. A second Close does nothing; after it every
// take refuses and Wait answers ErrClosed. Not concurrent with other use.
func (b *Bucket) Close() error {
	if b.p != nil {
		C.weir_bucket_free(b.p)
		b.p = nil
		runtime.SetFinalizer(b, nil)
		if b.unmap != nil {
			err := b.unmap()
			b.unmap = nil
			return err
		}
	}
	return nil
}

// Allow takes one token at [Now] if the bucket holds it.
func (b *Bucket) Allow() bool { return b.AllowN(Now(), 1) }

// AllowAt takes one token at now if the bucket holds it.
func (b *Bucket) AllowAt(now time.Duration) bool { return b.AllowN(now, 1) }

// AllowN takes n tokens (fractions allowed) at now, all or nothing. A
// cost that is 0, negative, NaN, infinite or above the burst is refused.
func (b *Bucket) AllowN(now time.Duration, n float64) bool {
	if b.p == nil {
		return false
	}
	ok := bool(C.weir_bucket_take(b.p, ns(now), C.double(n)))
	runtime.KeepAlive(b)
	return ok
}

// Delay is how long from now until n tokens are there, without taking
// them (a Retry-After): 0 if they are there now, [Never] if they never
// will be (n above the burst, a rate of 0, a bad n, or after Close).
func (b *Bucket) Delay(now time.Duration, n float64) time.Duration {
	if b.p == nil {
		return Never
	}
	d := dur(C.weir_bucket_next(b.p, ns(now), C.double(n)))
	runtime.KeepAlive(b)
	return d
}

// Tokens is what the bucket holds at now, from 0 to the burst.
func (b *Bucket) Tokens(now time.Duration) float64 {
	if b.p == nil {
		return 0
	}
	t := float64(C.weir_bucket_tokens(b.p, ns(now)))
	runtime.KeepAlive(b)
	return t
}

// Reconfigure gives the bucket a new rate and burst at now, in place
// (weir_bucket_reconfigure): it keeps the tokens it holds at now up to the
// new burst, and its counts; a fuller burst fills at the new rate from
// there. Across a change at c the tokens taken in [a, b] are at most
// burst + rate × (c − a) + rate' × (b − c): the change adds none.
// ErrNotFinite, ErrNegative or ErrTooLarge as NewBucket answers them,
// ErrClosed, ErrRegionUnsupported for a shared bucket
// (OpenSharedBucketFile: its policy is the file's); an error changes
// nothing. Like Close, it is not concurrent
// with other use: hold the bucket's callers off (a sync.RWMutex, the
// takes sharing it) while it runs.
func (b *Bucket) Reconfigure(rate, burst float64, now time.Duration) error {
	if b.p == nil {
		return ErrClosed
	}
	err := check(C.weir_bucket_reconfigure(b.p, C.double(rate), C.double(burst), ns(now)))
	runtime.KeepAlive(b)
	return err
}

// Reserve takes n tokens at now, or answers how long until they could be
// taken: 0 and nil when it took them, the Delay and ErrRefused when it
// did not (Never when they never will be). Unlike x/time/rate it does
// not borrow from the future: the caller waits the answer and asks again
// (Wait does exactly that).
func (b *Bucket) Reserve(now time.Duration, n float64) (time.Duration, error) {
	if b.p == nil {
		return Never, ErrClosed
	}
	if b.AllowN(now, n) {
		return 0, nil
	}
	return b.Delay(now, n), ErrRefused
}

// Refund gives back n tokens taken at takenAt (the now of that take) for
// a call let through but never made, as x/time/rate's Reservation.Cancel
// does: n less the refill since takenAt, never past the burst at now.
// ErrLimiterInvalidAmount (n not in (0, burst]), ErrRefundFuture (takenAt after
// now), ErrRefundExpired (the refill has made the take good already),
// ErrRefundFull (the bucket is full at now), ErrClosed; an error changes
// nothing. Give back only what a take that passed took, once: the bucket
// cannot check.
func (b *Bucket) Refund(now, takenAt time.Duration, n float64) error {
	if b.p == nil {
		return ErrClosed
	}
	err := check(C.weir_bucket_refund(b.p, ns(now), ns(takenAt), C.double(n)))
	runtime.KeepAlive(b)
	return err
}

// Wait blocks until a token is taken, ctx is done, or the wait could
// never end (ErrRefused) or would outlast ctx's deadline (it answers
// context.DeadlineExceeded at once then, as x/time/rate does).
func (b *Bucket) Wait(ctx context.Context) error { return b.WaitN(ctx, 1) }

// WaitN is Wait for n tokens.
func (b *Bucket) WaitN(ctx context.Context, n float64) error {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := Now()
		d, err := b.Reserve(now, n)
		if err == nil {
			return nil
		}
		if d == Never || d == math.MaxInt64 {
			return err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
			return context.DeadlineExceeded
		}
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
	}
}
