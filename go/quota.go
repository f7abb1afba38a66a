package weir

/*
#include "weir.h"
*/
import "C"

import (
	"context"
	"runtime"
	"time"
)

// Sliding is an exact sliding-window quota: at most quota events in any
// stretch of window (weir_sliding). Safe for many goroutines; Close is
// not concurrent with use.
type Sliding struct {
	p *C.weir_sliding
	// unmap releases the mapped file of a shared sliding window
	// (OpenSharedSlidingFile); nil for a heap one.
	unmap func() error
}

// NewSliding makes an empty window. ErrQuota (quota ≤ 0),
// ErrSlidingWindow (window ≤ 0), ErrTooLarge, ErrNoMemory.
func NewSliding(quota int64, window time.Duration) (*Sliding, error) {
	var p *C.weir_sliding
	if err := check(C.weir_sliding_new(C.int64_t(quota), ns(window), &p)); err != nil {
		return nil, err
	}
	s := &Sliding{p: p}
	runtime.SetFinalizer(s, finalize[*Sliding])
	return s, nil
}

// Close frees the window; later takes refuse. Not concurrent with use.
func (s *Sliding) Close() error {
	if s.p != nil {
		C.weir_sliding_free(s.p)
		s.p = nil
		runtime.SetFinalizer(s, nil)
		if s.unmap != nil {
			err := s.unmap()
			s.unmap = nil
			return err
		}
	}
	return nil
}

// Allow counts an event at [Now] if the window has room.
func (s *Sliding) Allow() bool { return s.AllowAt(Now()) }

// AllowAt counts an event at now if the window has room.
func (s *Sliding) AllowAt(now time.Duration) bool {
	if s.p == nil {
		return false
	}
	ok := bool(C.weir_sliding_take(s.p, ns(now)))
	runtime.KeepAlive(s)
	return ok
}

// Left is how many more events the window would count at now.
func (s *Sliding) Left(now time.Duration) int64 {
	if s.p == nil {
		return 0
	}
	n := int64(C.weir_sliding_left(s.p, ns(now)))
	runtime.KeepAlive(s)
	return n
}

// Next is how long from now until the window has room; [Never] after Close.
func (s *Sliding) Next(now time.Duration) time.Duration {
	if s.p == nil {
		return Never
	}
	d := dur(C.weir_sliding_next(s.p, ns(now)))
	runtime.KeepAlive(s)
	return d
}

// Reconfigure gives the window a new quota and length in place
// (weir_sliding_reconfigure): it keeps the newest stamps it counts, up to
// the new quota, judged from then on by the new window (events fallen out
// of the old one stay gone), so any stretch of window with an admission
// after the change holds at most quota of them. A larger quota allocates a
// larger ring first. ErrQuota, ErrSlidingWindow, ErrTooLarge, ErrNoMemory,
// ErrClosed, ErrRegionUnsupported for a shared window
// (OpenSharedSlidingFile: its policy is the file's); an error changes
// nothing. Safe beside other use (not Close):
// a take racing it is judged by the old quota and window or the new ones.
func (s *Sliding) Reconfigure(quota int64, window time.Duration) error {
	if s.p == nil {
		return ErrClosed
	}
	err := check(C.weir_sliding_reconfigure(s.p, C.int64_t(quota), ns(window)))
	runtime.KeepAlive(s)
	return err
}

// PeriodQuota is where a Period's quota stands after a take.
type PeriodQuota int32

// The answers of Period.Take: Under and Hit are admitted, Over refused.
const (
	PeriodQuotaUnder PeriodQuota = C.WEIR_PERIOD_QUOTA_UNDER
	PeriodQuotaHit   PeriodQuota = C.WEIR_PERIOD_QUOTA_HIT
	PeriodQuotaOver  PeriodQuota = C.WEIR_PERIOD_QUOTA_OVER
)

// Admitted reports whether the take was let through.
func (q PeriodQuota) Admitted() bool { return q != PeriodQuotaOver }

// Period is a fixed-window quota: at most quota events per period
// (weir_period). Safe for many goroutines; Close is not concurrent with use.
type Period struct {
	p *C.weir_period
	// unmap releases the mapped file of a shared period counter
	// (OpenSharedPeriodFile); nil for a heap one.
	unmap func() error
}

// NewPeriod makes a counter of quota events per period; with align the
// periods open on multiples of period on the caller's clock. ErrQuota for
// a quota ≤ 0.
func NewPeriod(quota int64, period time.Duration, align bool) (*Period, error) {
	var p *C.weir_period
	if err := check(C.weir_period_new(C.int64_t(quota), ns(period), C.bool(align), &p)); err != nil {
		return nil, err
	}
	q := &Period{p: p}
	runtime.SetFinalizer(q, finalize[*Period])
	return q, nil
}

// Close frees the counter; later takes answer PeriodQuotaOver.
func (q *Period) Close() error {
	if q.p != nil {
		C.weir_period_free(q.p)
		q.p = nil
		runtime.SetFinalizer(q, nil)
		if q.unmap != nil {
			err := q.unmap()
			q.unmap = nil
			return err
		}
	}
	return nil
}

// Take counts one event at [Now].
func (q *Period) Take() PeriodQuota { return q.TakeAt(Now()) }

// TakeAt counts one event at now and says where the quota stands.
func (q *Period) TakeAt(now time.Duration) PeriodQuota {
	if q.p == nil {
		return PeriodQuotaOver
	}
	r := PeriodQuota(C.weir_period_take(q.p, ns(now)))
	runtime.KeepAlive(q)
	return r
}

// Left is how many more events the open period admits at now.
func (q *Period) Left(now time.Duration) int64 {
	if q.p == nil {
		return 0
	}
	n := int64(C.weir_period_left(q.p, ns(now)))
	runtime.KeepAlive(q)
	return n
}

// Next is how long from now until the open period ends (0: none open).
func (q *Period) Next(now time.Duration) time.Duration {
	if q.p == nil {
		return Never
	}
	d := dur(C.weir_period_next(q.p, ns(now)))
	runtime.KeepAlive(q)
	return d
}

// Reconfigure gives the counter a new quota, period and alignment in place
// (weir_period_reconfigure): the open period keeps its end and its count,
// which counts against the new quota, and closes when it would have; later
// periods have the new length. ErrQuota for a quota ≤ 0, ErrClosed,
// ErrRegionUnsupported for a shared counter (OpenSharedPeriodFile: its
// policy is the file's); an error changes nothing. Safe beside other use (not Close): a take racing
// it is judged by the old policy or the new one.
func (q *Period) Reconfigure(quota int64, period time.Duration, align bool) error {
	if q.p == nil {
		return ErrClosed
	}
	err := check(C.weir_period_reconfigure(q.p, C.int64_t(quota), ns(period), C.bool(align)))
	runtime.KeepAlive(q)
	return err
}

// Gate is a lock-free concurrency ceiling: at most limit calls inside at
// once (weir_gate). Safe for many goroutines; Close is not concurrent
// with use.
type Gate struct {
	p *C.weir_gate
	// unmap releases the mapped file of a shared gate
	// (OpenSharedGateFile); nil for a heap one.
	unmap func() error
}

// NewGate makes an empty gate; a limit ≤ 0 is no ceiling.
func NewGate(limit int64) (*Gate, error) {
	var p *C.weir_gate
	if err := check(C.weir_gate_new(C.int64_t(limit), &p)); err != nil {
		return nil, err
	}
	g := &Gate{p: p}
	runtime.SetFinalizer(g, finalize[*Gate])
	return g, nil
}

// Close frees the gate; later Enters refuse.
func (g *Gate) Close() error {
	if g.p != nil {
		C.weir_gate_free(g.p)
		g.p = nil
		runtime.SetFinalizer(g, nil)
		if g.unmap != nil {
			err := g.unmap()
			g.unmap = nil
			return err
		}
	}
	return nil
}

// Enter takes room if there is some; pair a true with one Leave.
func (g *Gate) Enter() bool {
	if g.p == nil {
		return false
	}
	ok := bool(C.weir_gate_enter(g.p))
	runtime.KeepAlive(g)
	return ok
}

// Leave gives room back (never below zero).
func (g *Gate) Leave() {
	if g.p == nil {
		return
	}
	C.weir_gate_leave(g.p)
	runtime.KeepAlive(g)
}

// Reconfigure gives the gate a new limit in place (weir_gate_reconfigure;
// ≤ 0 is no ceiling): the calls inside stay, and none enters until the
// count is under the new limit. ErrClosed after Close,
// ErrRegionUnsupported for a shared gate (OpenSharedGateFile: its limit is
// the file's); an error changes nothing. Safe beside other
// use (not Close): an Enter racing it is judged by the old limit or the new.
func (g *Gate) Reconfigure(limit int64) error {
	if g.p == nil {
		return ErrClosed
	}
	err := check(C.weir_gate_reconfigure(g.p, C.int64_t(limit)))
	runtime.KeepAlive(g)
	return err
}

// Held is how many are inside now.
func (g *Gate) Held() int64 {
	if g.p == nil {
		return 0
	}
	n := int64(C.weir_gate_held(g.p))
	runtime.KeepAlive(g)
	return n
}

// Do runs fn inside the gate: ErrRefused when full (or closed), ctx's
// error when ctx is done, otherwise fn's error.
func (g *Gate) Do(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !g.Enter() {
		if g.p == nil {
			return ErrClosed
		}
		return ErrRefused
	}
	defer g.Leave()
	return fn()
}

// Deadline is a time budget measured from a start (weir_deadline): a
// plain value. A budget ≤ 0 never expires.
type Deadline struct {
	d C.weir_deadline
}

// StartDeadline is a budget starting at now.
func StartDeadline(budget, now time.Duration) Deadline {
	return Deadline{C.weir_deadline_start(ns(budget), ns(now))}
}

// DeadlineFromContext is ctx's deadline as a budget from now on the Now
// clock; ok is false when ctx has none (the Deadline never expires).
func DeadlineFromContext(ctx context.Context, now time.Duration) (Deadline, bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return StartDeadline(0, now), false
	}
	left := time.Until(dl)
	if left <= 0 {
		left = 1 // already spent: one nanosecond, expired at once
		return Deadline{C.weir_deadline{start: ns(now - 1), budget_ns: ns(left)}}, true
	}
	return StartDeadline(left, now), true
}

// Expired reports whether the budget is spent at now.
func (d Deadline) Expired(now time.Duration) bool {
	return bool(C.weir_deadline_expired(&d.d, ns(now)))
}

// Remaining is what is left at now (0 once expired); ok is false for a
// budget that never expires.
func (d Deadline) Remaining(now time.Duration) (left time.Duration, ok bool) {
	var out C.int64_t
	if !C.weir_deadline_remaining(&d.d, ns(now), &out) {
		return Never, false
	}
	return time.Duration(out), true
}

// Context derives a context that ends when the budget does, reading the
// Now clock for what is left; a budget that never expires derives a plain
// cancelable context.
func (d Deadline) Context(parent context.Context) (context.Context, context.CancelFunc) {
	left, ok := d.Remaining(Now())
	if !ok {
		return context.WithCancel(parent)
	}
	return context.WithTimeout(parent, left)
}
