package weir

/*
#cgo noescape weir_lease_take
#cgo nocallback weir_lease_take
#cgo noescape weir_lease_read_stats
#cgo nocallback weir_lease_read_stats
#include "weir.h"
*/
import "C"

import (
	"runtime"
	"time"
)

// LeasePolicy is a lease's policy (weir_lease_policy). Start from
// [DefaultLeasePolicy].
type LeasePolicy struct {
	Interval time.Duration // how often a steady client asks; 1 µs up to TTL
	TTL      time.Duration // how long a grant may be spent after its ask; 1 ms..1 h
	Burst    int64         // the shared limit's burst, in units
	Share    float64       // the share of Burst one client may hold, in (0, 1]
}

// DefaultLeasePolicy is weir_lease_policy_preset: asks about every 100 ms,
// leases of 1 s, a burst of 100, a quarter of it on one client at most.
func DefaultLeasePolicy() LeasePolicy {
	p := C.weir_lease_policy_preset()
	return LeasePolicy{time.Duration(p.interval_ns), time.Duration(p.ttl_ns), int64(p.burst), float64(p.share)}
}

// LeaseVerdict is what a take answers.
type LeaseVerdict int32

// The three answers of [Lease.Take].
const (
	// LeaseGo: admitted from units held (Ask above 0: ask ahead now).
	LeaseGo LeaseVerdict = C.WEIR_LEASE_GO
	// LeaseAsk: not decided; ask the store for Ask units, Grant its answer,
	// take again.
	LeaseAsk LeaseVerdict = C.WEIR_LEASE_ASK
	// LeaseRefuse: refused; try again after RetryAfter.
	LeaseRefuse LeaseVerdict = C.WEIR_LEASE_REFUSE
)

// LeaseAnswer is weir_lease_answer.
type LeaseAnswer struct {
	Verdict    LeaseVerdict
	Ask        int64         // units to ask the store for now; 0 for none
	RetryAfter time.Duration // with LeaseRefuse: when a take may find units
}

// LeaseStats is weir_lease_stats: what a lease has done and holds.
type LeaseStats struct {
	Asks, Granted, Spent, Expired, Released, Held uint64
	RateMilli                                     uint64        // measured demand, thousandths of a unit a second
	RTT                                           time.Duration // measured round trip
}

// Lease is one client's account of units leased from a limit a fleet
// shares in a store (weir_lease; the Redis module's WEIR.LEASE grants
// them): it spends them locally, says when to ask for more and how many,
// and what to give back. The caller sends the asks; the bounds are in
// weir.h's weir_lease section. Safe for many goroutines; Close is not
// concurrent with use.
type Lease struct {
	p *C.weir_lease
}

// NewLease makes a lease holding nothing at now; nil is the preset. A bad
// policy is a Status naming the field (ErrLeaseTTL, ErrLeaseInterval, ...).
func NewLease(policy *LeasePolicy, now time.Duration) (*Lease, error) {
	var c C.weir_lease_policy
	cp := policy.c(&c)
	var p *C.weir_lease
	if err := check(C.weir_lease_new(cp, ns(now), &p)); err != nil {
		return nil, err
	}
	l := &Lease{p: p}
	runtime.SetFinalizer(l, finalize[*Lease])
	return l, nil
}

// c writes the policy into *c and returns c, or nil (the preset) for a nil
// policy.
func (policy *LeasePolicy) c(c *C.weir_lease_policy) (cp *C.weir_lease_policy) {
	if policy == nil {
		return nil
	}
	*c = C.weir_lease_policy{interval_ns: ns(policy.Interval), ttl_ns: ns(policy.TTL),
		burst: C.int64_t(policy.Burst), share: C.double(policy.Share)}
	return c
}

// Reconfigure gives the lease a new policy in place (weir_lease_reconfigure;
// nil is the preset): the units held stay spendable to the end of their own
// grants (above a lower cap too), and the ask in flight, the measured demand
// and round trip and the stats are kept; the new interval, ttl and cap count
// from the next call. A bad policy changes nothing. ErrClosed after Close.
// Safe beside other use (not Close): a call racing it sees the old policy or
// the new one.
func (l *Lease) Reconfigure(policy *LeasePolicy) error {
	if l.p == nil {
		return ErrClosed
	}
	var c C.weir_lease_policy
	err := check(C.weir_lease_reconfigure(l.p, policy.c(&c)))
	runtime.KeepAlive(l)
	return err
}

// Close frees the lease; its unspent units are not given back (Release
// them first).
func (l *Lease) Close() error {
	if l.p != nil {
		C.weir_lease_free(l.p)
		l.p = nil
		runtime.SetFinalizer(l, nil)
	}
	return nil
}

// Take spends cost units at now if they are held, or says to ask or to
// wait. ErrLeaseCost for a cost under 1 or over the cap.
func (l *Lease) Take(now time.Duration, cost int64) (LeaseAnswer, error) {
	if l.p == nil {
		return LeaseAnswer{Verdict: LeaseRefuse}, ErrClosed
	}
	var a C.weir_lease_answer
	err := check(C.weir_lease_take(l.p, ns(now), C.int64_t(cost), &a))
	runtime.KeepAlive(l)
	return LeaseAnswer{LeaseVerdict(a.verdict), int64(a.ask), time.Duration(a.retry_after_ns)}, err
}

// Grant records the store's answer at now: granted units spendable before
// until (the ask's send time plus the lease's length), and next, before
// which the store holds no more. A failed ask is Grant(now, 0, now, retry).
func (l *Lease) Grant(now time.Duration, granted int64, until, next time.Duration) error {
	if l.p == nil {
		return ErrClosed
	}
	err := check(C.weir_lease_grant(l.p, ns(now), C.int64_t(granted), ns(until), ns(next)))
	runtime.KeepAlive(l)
	return err
}

// Release drops every unit held at now and returns how many were live:
// refund them to the store.
func (l *Lease) Release(now time.Duration) int64 {
	if l.p == nil {
		return 0
	}
	n := int64(C.weir_lease_release(l.p, ns(now)))
	runtime.KeepAlive(l)
	return n
}

// Unspent is the units held and live at now. A reading.
func (l *Lease) Unspent(now time.Duration) int64 {
	if l.p == nil {
		return 0
	}
	n := int64(C.weir_lease_unspent(l.p, ns(now)))
	runtime.KeepAlive(l)
	return n
}

// Expires is when the earliest units held expire; the largest Duration
// when none are held. A reading.
func (l *Lease) Expires(now time.Duration) time.Duration {
	if l.p == nil {
		return time.Duration(1<<63 - 1)
	}
	t := time.Duration(C.weir_lease_expires(l.p, ns(now)))
	runtime.KeepAlive(l)
	return t
}

// Cap is the most units the lease holds and asks for together.
func (l *Lease) Cap() int64 {
	if l.p == nil {
		return 0
	}
	n := int64(C.weir_lease_cap(l.p))
	runtime.KeepAlive(l)
	return n
}

// StatsAt is what the lease has done and holds at now. A reading.
func (l *Lease) StatsAt(now time.Duration) (LeaseStats, error) {
	if l.p == nil {
		return LeaseStats{}, ErrClosed
	}
	var s C.weir_lease_stats
	err := check(C.weir_lease_read_stats(l.p, ns(now), &s))
	runtime.KeepAlive(l)
	return LeaseStats{uint64(s.asks), uint64(s.granted), uint64(s.spent), uint64(s.expired), uint64(s.released),
		uint64(s.held), uint64(s.rate_milli), time.Duration(s.rtt_ns)}, err
}
