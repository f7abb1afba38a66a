package weir

/*
#include "weir.h"
*/
import "C"

import "runtime"

// Counts is what a handle decided since its counting was turned on
// (weir_counts): Admitted calls let through, Refused for want of room,
// Errors (an error status, or an argument no call could pass), and Units,
// the units the admitted calls took (a bucket's tokens, a window's added
// values; Admitted where each call is one). Every handle type reads the
// same struct with ReadCounts, once StartCounting has turned its counting
// on; until then ReadCounts answers ErrCountsOff, and the handle costs
// what it did before counting existed. The Go-heap [Bloom] and the words
// count nothing: count their answers beside them.
type Counts struct {
	Admitted, Refused, Errors uint64
	Units                     float64
}

func countsOf(c C.weir_counts) Counts {
	return Counts{uint64(c.admitted), uint64(c.refused), uint64(c.errors), float64(c.units)}
}

// StartCounting turns the bucket's counting on (weir_bucket_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (b *Bucket) StartCounting() error {
	if b.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(b)
	return check(C.weir_bucket_start_counting(b.p))
}

// ReadCounts is what it decided since StartCounting (weir_bucket_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (b *Bucket) ReadCounts() (Counts, error) {
	if b.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_bucket_read_counts(b.p, &c))
	runtime.KeepAlive(b)
	return countsOf(c), err
}

// StartCounting turns the window's counting on (weir_window_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (w *Window) StartCounting() error {
	if w.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(w)
	return check(C.weir_window_start_counting(w.p))
}

// ReadCounts is what it decided since StartCounting (weir_window_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (w *Window) ReadCounts() (Counts, error) {
	if w.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_window_read_counts(w.p, &c))
	runtime.KeepAlive(w)
	return countsOf(c), err
}

// StartCounting turns the sliding window's counting on (weir_sliding_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (s *Sliding) StartCounting() error {
	if s.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(s)
	return check(C.weir_sliding_start_counting(s.p))
}

// ReadCounts is what it decided since StartCounting (weir_sliding_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (s *Sliding) ReadCounts() (Counts, error) {
	if s.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_sliding_read_counts(s.p, &c))
	runtime.KeepAlive(s)
	return countsOf(c), err
}

// StartCounting turns the period's counting on (weir_period_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (p *Period) StartCounting() error {
	if p.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(p)
	return check(C.weir_period_start_counting(p.p))
}

// ReadCounts is what it decided since StartCounting (weir_period_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (p *Period) ReadCounts() (Counts, error) {
	if p.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_period_read_counts(p.p, &c))
	runtime.KeepAlive(p)
	return countsOf(c), err
}

// StartCounting turns the gate's counting on (weir_gate_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (g *Gate) StartCounting() error {
	if g.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(g)
	return check(C.weir_gate_start_counting(g.p))
}

// ReadCounts is what it decided since StartCounting (weir_gate_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (g *Gate) ReadCounts() (Counts, error) {
	if g.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_gate_read_counts(g.p, &c))
	runtime.KeepAlive(g)
	return countsOf(c), err
}

// StartCounting turns the budget's counting on (weir_budget_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (b *Budget) StartCounting() error {
	if b.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(b)
	return check(C.weir_budget_start_counting(b.p))
}

// ReadCounts is what it decided since StartCounting (weir_budget_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (b *Budget) ReadCounts() (Counts, error) {
	if b.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_budget_read_counts(b.p, &c))
	runtime.KeepAlive(b)
	return countsOf(c), err
}

// StartCounting turns the adaptive limit's counting on (weir_concurrency_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (c *Concurrency) StartCounting() error {
	if c.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(c)
	return check(C.weir_concurrency_start_counting(c.p))
}

// ReadCounts is what it decided since StartCounting (weir_concurrency_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (c *Concurrency) ReadCounts() (Counts, error) {
	if c.p == nil {
		return Counts{}, ErrClosed
	}
	var out C.weir_counts
	err := check(C.weir_concurrency_read_counts(c.p, &out))
	runtime.KeepAlive(c)
	return countsOf(out), err
}

// StartCounting turns the breaker's counting on (weir_breaker_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (b *Breaker) StartCounting() error {
	if b.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(b)
	return check(C.weir_breaker_start_counting(b.p))
}

// ReadCounts is what it decided since StartCounting (weir_breaker_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (b *Breaker) ReadCounts() (Counts, error) {
	if b.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_breaker_read_counts(b.p, &c))
	runtime.KeepAlive(b)
	return countsOf(c), err
}

// StartCounting turns the shedder's counting on (weir_shedder_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (s *Shedder) StartCounting() error {
	if s.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(s)
	return check(C.weir_shedder_start_counting(s.p))
}

// ReadCounts is what it decided since StartCounting (weir_shedder_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (s *Shedder) ReadCounts() (Counts, error) {
	if s.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_shedder_read_counts(s.p, &c))
	runtime.KeepAlive(s)
	return countsOf(c), err
}

// StartCounting turns the pool's counting on (weir_pool_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (pl *Pool[T]) StartCounting() error {
	if pl.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(pl)
	return check(C.weir_pool_start_counting(pl.p))
}

// ReadCounts is what it decided since StartCounting (weir_pool_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (pl *Pool[T]) ReadCounts() (Counts, error) {
	if pl.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_pool_read_counts(pl.p, &c))
	runtime.KeepAlive(pl)
	return countsOf(c), err
}

// StartCounting turns the bloom's counting on (weir_bloom_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (b *CBloom) StartCounting() error {
	if b.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(b)
	return check(C.weir_bloom_start_counting(b.p))
}

// ReadCounts is what it decided since StartCounting (weir_bloom_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (b *CBloom) ReadCounts() (Counts, error) {
	if b.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_bloom_read_counts(b.p, &c))
	runtime.KeepAlive(b)
	return countsOf(c), err
}

// StartCounting turns the lease's counting on (weir_lease_start_counting):
// from now on ReadCounts reports its decisions. Call it right after making
// it; a second call changes nothing. ErrClosed after Close.
func (l *Lease) StartCounting() error {
	if l.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(l)
	return check(C.weir_lease_start_counting(l.p))
}

// ReadCounts is what it decided since StartCounting (weir_lease_read_counts;
// what each field counts for it is there). A reading: it changes nothing.
// ErrCountsOff before StartCounting, ErrClosed after Close.
func (l *Lease) ReadCounts() (Counts, error) {
	if l.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_lease_read_counts(l.p, &c))
	runtime.KeepAlive(l)
	return countsOf(c), err
}

// StartCounting turns the keyed table's counting on
// (weir_keyed_start_counting): from now on ReadCounts reports its
// decisions. Call it right after making it; a second call changes nothing.
// A shared table's counts are the region's: one opener's call turns
// counting on for every process. ErrClosed after Close.
func (k *Keyed) StartCounting() error {
	if k.p == nil {
		return ErrClosed
	}
	defer runtime.KeepAlive(k)
	return check(C.weir_keyed_start_counting(k.p))
}

// ReadCounts is what it decided since StartCounting (weir_keyed_read_counts;
// what each field counts for it is there): Admitted and Refused by the
// key's own word or by the overflow policy, Errors for misuse (a negative
// now, an n outside 1..burst), Units the events admitted. A reading: it
// changes nothing and scans no slot. ErrCountsOff before StartCounting,
// ErrClosed after Close.
func (k *Keyed) ReadCounts() (Counts, error) {
	if k.p == nil {
		return Counts{}, ErrClosed
	}
	var c C.weir_counts
	err := check(C.weir_keyed_read_counts(k.p, &c))
	runtime.KeepAlive(k)
	return countsOf(c), err
}
