package weir

/*
#cgo noescape weir_breaker_allow
#cgo nocallback weir_breaker_allow
#cgo noescape weir_breaker_pass
#cgo nocallback weir_breaker_pass
#cgo noescape weir_breaker_fail
#cgo nocallback weir_breaker_fail
#cgo noescape weir_breaker_read_tally
#cgo nocallback weir_breaker_read_tally
#include "weir.h"
*/
import "C"

import (
	"context"
	"math/rand/v2"
	"runtime"
	"time"
)

// BreakerPolicy is the breaker's policy (weir_breaker_policy): Google SRE's
// client-side throttling constants, then Envoy admission_control's limits
// on the refusal probability. Start from [DefaultBreakerPolicy] (a zero
// Aggression is refused, and a zero MaxRejectionProbability refuses
// nothing).
type BreakerPolicy struct {
	// How many calls each success pays for while nothing fails; at least
	// Floor.
	K float64
	// What K decays to as the failing run fills the window; at least 1.
	Floor float64
	// Calls in the window that are never refused.
	Protection float64
	// How long with nothing let through before one call goes anyway.
	Probe time.Duration
	// Buckets in the window (below one counts as one).
	Size int32
	// How far back the window reaches.
	Window time.Duration
	// Whether the breaker's own refusals are left out of the traffic the
	// formula counts, as in Envoy and go-zero since its PR #5551 (false,
	// the preset: they count, as in the SRE book).
	SkipRefusals bool
	// The most the refusal probability reaches, in [0, 1] (Envoy's
	// max_rejection_probability), applied last; the preset's 1 caps
	// nothing.
	MaxRejectionProbability float64
	// A traffic floor in calls a second (Envoy's rps_threshold): while the
	// window's average rate is under it, nothing is refused. The preset's
	// 0 is no floor.
	RPSThreshold float64
	// An exponent on the refusal probability (Envoy's aggression): drop
	// becomes drop^(1/Aggression) before the cap; above 1 refuses more.
	// Positive; the preset's 1 changes nothing.
	Aggression float64
}

// DefaultBreakerPolicy is weir_breaker_policy_preset: k 1.5 decaying to 1.1,
// protection 5, a probe after 1 s, 40 buckets over 10 s; refusals count,
// no cap (1), no traffic floor (0), aggression 1.
func DefaultBreakerPolicy() BreakerPolicy {
	p := C.weir_breaker_policy_preset()
	return BreakerPolicy{K: float64(p.k), Floor: float64(p.floor), Protection: float64(p.protection),
		Probe: time.Duration(p.probe_ns), Size: int32(p.size), Window: time.Duration(p.window_ns),
		SkipRefusals: p.skip_refusals != 0, MaxRejectionProbability: float64(p.max_rejection_probability),
		RPSThreshold: float64(p.rps_threshold), Aggression: float64(p.aggression)}
}

func (p *BreakerPolicy) c() C.weir_breaker_policy {
	var skip C.int32_t
	if p.SkipRefusals {
		skip = 1
	}
	return C.weir_breaker_policy{k: C.double(p.K), floor: C.double(p.Floor), protection: C.double(p.Protection),
		probe_ns: ns(p.Probe), size: C.int32_t(p.Size), window_ns: ns(p.Window), skip_refusals: skip,
		max_rejection_probability: C.double(p.MaxRejectionProbability), rps_threshold: C.double(p.RPSThreshold),
		aggression: C.double(p.Aggression)}
}

// Breaker is a circuit breaker that refuses a growing fraction of calls
// as failures pile up (weir_breaker). Safe for many goroutines; Close is
// not concurrent with use (see the package doc).
type Breaker struct {
	p *C.weir_breaker
	// unmap releases the mapped file of a shared breaker
	// (OpenSharedBreakerFile); nil for a heap one.
	unmap func() error
}

// NewBreaker makes a breaker whose window opens at [Now]; a nil policy is
// the preset. A bad policy is a Status naming the field (ErrBreakerK, ...).
func NewBreaker(policy *BreakerPolicy) (*Breaker, error) { return NewBreakerAt(policy, Now()) }

// NewBreakerAt is NewBreaker with the window opening at now.
func NewBreakerAt(policy *BreakerPolicy, now time.Duration) (*Breaker, error) {
	var cp *C.weir_breaker_policy
	var c C.weir_breaker_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	var p *C.weir_breaker
	if err := check(C.weir_breaker_new(cp, ns(now), &p)); err != nil {
		return nil, err
	}
	b := &Breaker{p: p}
	runtime.SetFinalizer(b, finalize[*Breaker])
	return b, nil
}

// Close frees the breaker. A second Close does nothing; any other use
// after it answers ErrClosed. Not concurrent with any other use.
func (b *Breaker) Close() error {
	if b.p != nil {
		C.weir_breaker_free(b.p)
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

// BreakerTicket is a call the breaker let through, to be settled once with
// Pass or Fail; a second settle answers ErrSettled and changes nothing.
// Settle the value Allow returned, not a copy (a copy settles on its own,
// as weir_breaker_ticket says). The zero BreakerTicket is settled already.
type BreakerTicket struct {
	b      *Breaker
	ticket C.weir_breaker_ticket
}

// Allow asks to make one call at [Now], rolling the refusal draw from
// math/rand/v2. Nil error: go ahead, and settle the call. ErrRefused:
// the breaker refused (recorded as a drop). ErrClosed after Close.
func (b *Breaker) Allow() (BreakerTicket, error) { return b.AllowAt(Now(), rand.Float64()) }

// AllowAt asks at now with the caller's draw roll from [0, 1) (clamped;
// NaN counts as 0): the form tests and simulations drive.
func (b *Breaker) AllowAt(now time.Duration, roll float64) (BreakerTicket, error) {
	call := BreakerTicket{b: b}
	if b.p == nil {
		return call, ErrClosed
	}
	ok := C.weir_breaker_allow(b.p, ns(now), C.double(roll), &call.ticket)
	runtime.KeepAlive(b)
	if !ok {
		return call, ErrRefused
	}
	return call, nil
}

// Pass settles the call as a success at [Now].
func (c *BreakerTicket) Pass() error { return c.PassAt(Now()) }

// Fail settles the call as a failure at [Now].
func (c *BreakerTicket) Fail() error { return c.FailAt(Now()) }

// PassAt settles the call as a success finishing at now.
func (c *BreakerTicket) PassAt(now time.Duration) error {
	if c.b == nil {
		return ErrSettled
	}
	if c.b.p == nil {
		return ErrClosed
	}
	err := check(C.weir_breaker_pass(c.b.p, &c.ticket, ns(now)))
	runtime.KeepAlive(c.b)
	return err
}

// FailAt settles the call as a failure finishing at now.
func (c *BreakerTicket) FailAt(now time.Duration) error {
	if c.b == nil {
		return ErrSettled
	}
	if c.b.p == nil {
		return ErrClosed
	}
	err := check(C.weir_breaker_fail(c.b.p, &c.ticket, ns(now)))
	runtime.KeepAlive(c.b)
	return err
}

// Settle passes the call when err is nil and fails it otherwise.
func (c *BreakerTicket) Settle(err error) error {
	if err != nil {
		return c.Fail()
	}
	return c.Pass()
}

// Do runs fn if the breaker lets the call through and records how it
// went: a nil error passes, any other fails. It answers ctx's error
// without asking when ctx is already done, ErrRefused when refused,
// otherwise fn's error (or, when fn succeeded, the settle's, which only a
// Close racing Do gives).
func (b *Breaker) Do(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	call, err := b.Allow()
	if err != nil {
		return err
	}
	ferr := fn()
	serr := call.Settle(ferr)
	if ferr != nil {
		return ferr
	}
	return serr
}

// Ratio is the fraction of calls the breaker would refuse at [Now], in
// [0, 1], never above the policy's MaxRejectionProbability; 0 after
// Close.
func (b *Breaker) Ratio() float64 { return b.RatioAt(Now()) }

// Reconfigure gives the breaker a new policy in place (nil: the default;
// weir_breaker_reconfigure): its window is kept when its buckets keep their
// layout (the same Size and Window / Size), and resampled otherwise (the
// old window's sums in one bucket of the new one, aging out together); its
// tickets in flight still settle, and its counts carry over. The policy's
// errors as NewBreaker answers them, ErrNoMemory, ErrClosed,
// ErrRegionUnsupported for a shared breaker (OpenSharedBreakerFile: its
// policy is the file's); an error changes nothing. Safe beside other use (not Close): a call racing it is
// judged by the old policy or the new one, wholly.
func (b *Breaker) Reconfigure(policy *BreakerPolicy) error {
	if b.p == nil {
		return ErrClosed
	}
	var cp *C.weir_breaker_policy
	var c C.weir_breaker_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	err := check(C.weir_breaker_reconfigure(b.p, cp))
	runtime.KeepAlive(b)
	return err
}

// RatioAt is Ratio at now. A reading: it changes nothing.
func (b *Breaker) RatioAt(now time.Duration) float64 {
	if b.p == nil {
		return 0
	}
	r := float64(C.weir_breaker_ratio(b.p, ns(now)))
	runtime.KeepAlive(b)
	return r
}

// BreakerTally counts the outcomes in a breaker's window: Total = Success +
// Failure + Drop.
type BreakerTally struct {
	Total, Success, Failure, Drop int64
}

// TallyAt is the outcomes in the window at now. A reading.
func (b *Breaker) TallyAt(now time.Duration) (BreakerTally, error) {
	if b.p == nil {
		return BreakerTally{}, ErrClosed
	}
	var t C.weir_breaker_tally
	err := check(C.weir_breaker_read_tally(b.p, ns(now), &t))
	runtime.KeepAlive(b)
	return BreakerTally{int64(t.total), int64(t.success), int64(t.failure), int64(t.drop)}, err
}
