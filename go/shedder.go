package weir

/*
#cgo noescape weir_shedder_allow
#cgo nocallback weir_shedder_allow
#cgo noescape weir_shedder_allow_class
#cgo nocallback weir_shedder_allow_class
#cgo noescape weir_shedder_pass
#cgo nocallback weir_shedder_pass
#cgo noescape weir_shedder_fail
#cgo nocallback weir_shedder_fail
#cgo noescape weir_shedder_read_stats
#cgo nocallback weir_shedder_read_stats
#include "weir.h"
*/
import "C"

import (
	"context"
	"runtime"
	"time"
)

// ShedderPolicy is the shedder's policy (weir_shedder_policy). Start from
// [DefaultShedderPolicy].
type ShedderPolicy struct {
	// Buckets in the window (below one counts as one).
	Size int32
	// CPU use in thousandths at or above which the server is hot; in
	// [0, 1000).
	CPU int32
	// How far back the window reaches.
	Window time.Duration
	// Response time assumed while no complete bucket holds a pass.
	Latency time.Duration
	// Weight of the old value in the moving average of calls in flight; in
	// [0, 1).
	Beta float64
	// How long the server stays hot after the CPU falls, if it has refused
	// since.
	Cool time.Duration
	// The least share of capacity admitted however hot; in (0, 1].
	Floor float64
}

// DefaultShedderPolicy is weir_shedder_policy_preset: 50 buckets over 5 s, hot at
// 900‰, 1 s assumed latency, beta 0.9, 1 s to cool, floor 0.1.
func DefaultShedderPolicy() ShedderPolicy {
	p := C.weir_shedder_policy_preset()
	return ShedderPolicy{Size: int32(p.size), CPU: int32(p.cpu), Window: time.Duration(p.window_ns),
		Latency: time.Duration(p.latency_ns), Beta: float64(p.beta), Cool: time.Duration(p.cool_ns), Floor: float64(p.floor)}
}

func (p *ShedderPolicy) c() C.weir_shedder_policy {
	return C.weir_shedder_policy{size: C.int32_t(p.Size), cpu: C.int32_t(p.CPU), window_ns: ns(p.Window),
		latency_ns: ns(p.Latency), beta: C.double(p.Beta), cool_ns: ns(p.Cool), floor: C.double(p.Floor)}
}

// Shedder refuses calls only when the server is both hot (the CPU reading
// the caller passes) and full (more in flight than it has shown it can
// hold): weir_shedder. [CPUReader] reads a process's CPU right inside
// containers. Safe for many goroutines; Close is not concurrent with use.
type Shedder struct {
	p *C.weir_shedder
	// unmap releases the mapped file of a shared shedder
	// (OpenSharedShedderFile); nil for a heap one.
	unmap func() error
}

// NewShedder makes a shedder whose window opens at [Now]; a nil policy is
// the preset. A bad policy is a Status naming the field (ErrShedderCPU, ...).
func NewShedder(policy *ShedderPolicy) (*Shedder, error) { return NewShedderAt(policy, Now()) }

// NewShedderAt is NewShedder with the window opening at now.
func NewShedderAt(policy *ShedderPolicy, now time.Duration) (*Shedder, error) {
	var cp *C.weir_shedder_policy
	var c C.weir_shedder_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	var p *C.weir_shedder
	if err := check(C.weir_shedder_new(cp, ns(now), &p)); err != nil {
		return nil, err
	}
	s := &Shedder{p: p}
	runtime.SetFinalizer(s, finalize[*Shedder])
	return s, nil
}

// Close frees the shedder. A second Close does nothing; any other use
// after it answers ErrClosed. Not concurrent with any other use.
func (s *Shedder) Close() error {
	if s.p != nil {
		C.weir_shedder_free(s.p)
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

// ShedderTicket is a call the shedder let through, to be settled once with
// Pass or Fail (a second settle answers ErrSettled). Settle the value
// Allow returned, not a copy. The zero ShedderTicket is settled already.
type ShedderTicket struct {
	s      *Shedder
	ticket C.weir_shedder_ticket
}

// Allow asks to start one call at [Now] with the CPU at cpuPermille
// thousandths (clamped into [0, 1000]). Nil: go ahead and settle the
// call; ErrRefused: shed it; ErrClosed after Close.
func (s *Shedder) Allow(cpuPermille int32) (ShedderTicket, error) {
	return s.AllowAt(Now(), cpuPermille)
}

// AllowAt is Allow at now.
func (s *Shedder) AllowAt(now time.Duration, cpuPermille int32) (ShedderTicket, error) {
	call := ShedderTicket{s: s}
	if s.p == nil {
		return call, ErrClosed
	}
	ok := C.weir_shedder_allow(s.p, ns(now), C.int32_t(cpuPermille), &call.ticket)
	runtime.KeepAlive(s)
	if !ok {
		return call, ErrRefused
	}
	return call, nil
}

// Criticality is a call's class for [Shedder.AllowClass]: the lower the
// class, the earlier it is refused. The zero value is Critical.
type Criticality int32

// The four classes (weir.h's WEIR_SHEDDER_* class constants).
const (
	// Critical is the default: decided exactly as Allow decides.
	Critical Criticality = C.WEIR_SHEDDER_CRITICAL
	// CriticalPlus is refused last: only with the CPU over the threshold
	// now and the load over the limit by a quarter.
	CriticalPlus Criticality = C.WEIR_SHEDDER_CRITICAL_PLUS
	// SheddablePlus is refused from three quarters of the CPU threshold and
	// of the limit.
	SheddablePlus Criticality = C.WEIR_SHEDDER_SHEDDABLE_PLUS
	// Sheddable is refused first: from half the CPU threshold and half the
	// limit.
	Sheddable Criticality = C.WEIR_SHEDDER_SHEDDABLE
)

// AllowClass is Allow for a call of class class, at [Now]. Nil: go ahead
// and settle the call; ErrRefused: shed it; ErrShedderClass for a class
// that is none of the four; ErrClosed after Close.
func (s *Shedder) AllowClass(cpuPermille int32, class Criticality) (ShedderTicket, error) {
	return s.AllowClassAt(Now(), cpuPermille, class)
}

// AllowClassAt is AllowClass at now.
func (s *Shedder) AllowClassAt(now time.Duration, cpuPermille int32, class Criticality) (ShedderTicket, error) {
	call := ShedderTicket{s: s}
	if s.p == nil {
		return call, ErrClosed
	}
	err := check(C.weir_shedder_allow_class(s.p, ns(now), C.int32_t(cpuPermille), C.int32_t(class), &call.ticket))
	runtime.KeepAlive(s)
	if err != nil {
		return call, err
	}
	if call.ticket.flying != 1 {
		return call, ErrRefused
	}
	return call, nil
}

// Pass settles the call as answered at [Now]: its response time counts.
func (c *ShedderTicket) Pass() error { return c.PassAt(Now()) }

// PassAt settles the call as answered at now.
func (c *ShedderTicket) PassAt(now time.Duration) error {
	if c.s == nil {
		return ErrSettled
	}
	if c.s.p == nil {
		return ErrClosed
	}
	err := check(C.weir_shedder_pass(c.s.p, &c.ticket, ns(now)))
	runtime.KeepAlive(c.s)
	return err
}

// Fail settles the call as failed: it leaves flight, feeding neither the
// pass count nor the response times.
func (c *ShedderTicket) Fail() error {
	if c.s == nil {
		return ErrSettled
	}
	if c.s.p == nil {
		return ErrClosed
	}
	err := check(C.weir_shedder_fail(c.s.p, &c.ticket))
	runtime.KeepAlive(c.s)
	return err
}

// Do runs fn if the shedder admits it at the CPU reading cpuPermille and
// settles the call by fn's error. It answers ctx's error without asking
// when ctx is done, ErrRefused when shed, otherwise fn's error.
func (s *Shedder) Do(ctx context.Context, cpuPermille int32, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	call, err := s.Allow(cpuPermille)
	if err != nil {
		return err
	}
	if ferr := fn(); ferr != nil {
		_ = call.Fail() // fn's error is the answer; Fail fails only after Close
		return ferr
	}
	return call.Pass()
}

// Reconfigure gives the shedder a new policy in place (nil: the default;
// weir_shedder_reconfigure): its calls in flight, their moving average and
// its hot state are kept; its window is kept when its buckets keep their
// layout (the same Size and Window / Size) and opens empty otherwise, the
// capacity then the new policy's until a bucket completes. The policy's
// errors as NewShedder answers them, ErrNoMemory, ErrClosed; an error
// changes nothing. Safe beside other use (not Close): a call racing it is
// judged by the old policy or the new one, wholly.
func (s *Shedder) Reconfigure(policy *ShedderPolicy) error {
	if s.p == nil {
		return ErrClosed
	}
	var cp *C.weir_shedder_policy
	var c C.weir_shedder_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	err := check(C.weir_shedder_reconfigure(s.p, cp))
	runtime.KeepAlive(s)
	return err
}

// Flying is how many calls are in flight; 0 after Close.
func (s *Shedder) Flying() int64 {
	if s.p == nil {
		return 0
	}
	n := int64(C.weir_shedder_flying(s.p))
	runtime.KeepAlive(s)
	return n
}

// ShedderStats is what a shedder knows at a moment (weir_shedder_stats).
type ShedderStats struct {
	Flying   int64   // calls in flight
	Average  float64 // moving average of calls in flight
	Capacity float64 // calls the server has shown it holds at once
	Limit    float64 // Capacity scaled by the last CPU reading
	CPU      int32   // the last CPU reading, thousandths
	Hot      bool    // whether the shedder counts as hot
}

// StatsAt is what the shedder knows at now. A reading: it changes nothing.
func (s *Shedder) StatsAt(now time.Duration) (ShedderStats, error) {
	if s.p == nil {
		return ShedderStats{}, ErrClosed
	}
	var st C.weir_shedder_stats
	err := check(C.weir_shedder_read_stats(s.p, ns(now), &st))
	runtime.KeepAlive(s)
	return ShedderStats{int64(st.flying), float64(st.average), float64(st.capacity), float64(st.limit), int32(st.cpu), st.hot != 0}, err
}
