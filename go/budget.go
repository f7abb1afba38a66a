package weir

/*
#cgo noescape weir_concurrency_enter
#cgo nocallback weir_concurrency_enter
#cgo noescape weir_concurrency_leave
#cgo nocallback weir_concurrency_leave
#cgo noescape weir_concurrency_enter_partition
#cgo nocallback weir_concurrency_enter_partition
#cgo noescape weir_concurrency_leave_partition
#cgo nocallback weir_concurrency_leave_partition
#include "weir.h"
*/
import "C"

import (
	"context"
	"runtime"
	"time"
)

// BudgetForm chooses a retry budget's accounting.
type BudgetForm int32

// The two forms: gRPC A6's tokens and Finagle's percent.
const (
	BudgetTokens  BudgetForm = C.WEIR_BUDGET_TOKENS
	BudgetPercent BudgetForm = C.WEIR_BUDGET_PERCENT
)

// BudgetPolicy is a retry budget's policy (weir_budget_policy); only the
// chosen form's fields are read. Start from [DefaultBudgetPolicy].
type BudgetPolicy struct {
	Form       BudgetForm
	MaxTokens  int32         // tokens: the most, and the start; 1..1000
	TokenRatio float64       // tokens: what a success gives back
	TTL        time.Duration // percent: how long credit lives; 1 s..60 s
	MinPerS    int32         // percent: retries a second always allowed
	Percent    float64       // percent: share of requests retried, 0.2 a fifth
}

// DefaultBudgetPolicy is weir_budget_policy_preset: Finagle's default
// (20 % of the last 10 s plus 10 a second), A6's 10 tokens and 0.1.
func DefaultBudgetPolicy() BudgetPolicy {
	p := C.weir_budget_policy_preset()
	return BudgetPolicy{BudgetForm(p.form), int32(p.max_tokens), float64(p.token_ratio), time.Duration(p.ttl_ns), int32(p.min_per_s), float64(p.percent)}
}

func (p *BudgetPolicy) c() C.weir_budget_policy {
	return C.weir_budget_policy{form: C.int32_t(p.Form), max_tokens: C.int32_t(p.MaxTokens),
		token_ratio: C.double(p.TokenRatio), ttl_ns: ns(p.TTL), min_per_s: C.int32_t(p.MinPerS),
		percent: C.double(p.Percent)}
}

// Budget holds retries to a share of real traffic (weir_budget). Safe for
// many goroutines; Close is not concurrent with use.
type Budget struct {
	p *C.weir_budget
	// unmap releases the mapped file of a shared budget
	// (OpenSharedBudgetFile); nil for a heap one.
	unmap func() error
}

// NewBudget makes a budget at now; nil is the preset. A bad policy is a
// Status naming the field (ErrUnknownKind, ErrBudgetMaxTokens, ...).
func NewBudget(policy *BudgetPolicy, now time.Duration) (*Budget, error) {
	var cp *C.weir_budget_policy
	var c C.weir_budget_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	var p *C.weir_budget
	if err := check(C.weir_budget_new(cp, ns(now), &p)); err != nil {
		return nil, err
	}
	b := &Budget{p: p}
	runtime.SetFinalizer(b, finalize[*Budget])
	return b, nil
}

// Close frees the budget; later withdrawals refuse.
func (b *Budget) Close() error {
	if b.p != nil {
		C.weir_budget_free(b.p)
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

// Deposit counts one request as traffic at now (tokens: a success;
// percent: a request that is not a retry).
func (b *Budget) Deposit(now time.Duration) {
	if b.p == nil {
		return
	}
	C.weir_budget_deposit(b.p, ns(now))
	runtime.KeepAlive(b)
}

// Withdraw asks for one retry at now: true means send it.
func (b *Budget) Withdraw(now time.Duration) bool {
	if b.p == nil {
		return false
	}
	ok := bool(C.weir_budget_withdraw(b.p, ns(now)))
	runtime.KeepAlive(b)
	return ok
}

// Left is how many withdrawals in a row would pass at now.
func (b *Budget) Left(now time.Duration) int64 {
	if b.p == nil {
		return 0
	}
	n := int64(C.weir_budget_left(b.p, ns(now)))
	runtime.KeepAlive(b)
	return n
}

// Tokens is the raw count at now (tokens: thousandths; percent: Finagle's units).
func (b *Budget) Tokens(now time.Duration) int64 {
	if b.p == nil {
		return 0
	}
	n := int64(C.weir_budget_tokens(b.p, ns(now)))
	runtime.KeepAlive(b)
	return n
}

// Reconfigure gives the budget a new policy at now, in place (nil: the
// default; weir_budget_reconfigure): a token count is kept up to the new
// MaxTokens; percent credit is kept at the worth in retries its own policy
// gave it, laid on the new TTL's slices so that a deposit ages out no later
// and a withdrawal no sooner than under the new policy; a change of Form
// keeps nothing. The policy's errors as NewBudget answers them, ErrClosed;
// an error changes nothing. Safe beside other use (not Close): a call
// racing it is judged by the old policy or the new one, wholly.
func (b *Budget) Reconfigure(policy *BudgetPolicy, now time.Duration) error {
	if b.p == nil {
		return ErrClosed
	}
	var cp *C.weir_budget_policy
	var c C.weir_budget_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	err := check(C.weir_budget_reconfigure(b.p, cp, ns(now)))
	runtime.KeepAlive(b)
	return err
}

// ConcurrencyPolicy is the adaptive limit's controller (weir_concurrency_policy,
// Gradient2). Start from [DefaultConcurrencyPolicy].
type ConcurrencyPolicy struct {
	InitialLimit, MinLimit, MaxLimit, QueueSize int32
	Smoothing, Tolerance                        float64
	LongWindow, Warmup                          int32
}

// DefaultConcurrencyPolicy is weir_concurrency_policy_preset.
func DefaultConcurrencyPolicy() ConcurrencyPolicy {
	p := C.weir_concurrency_policy_preset()
	return ConcurrencyPolicy{int32(p.initial_limit), int32(p.min_limit), int32(p.max_limit), int32(p.queue_size),
		float64(p.smoothing), float64(p.tolerance), int32(p.long_window), int32(p.warmup)}
}

func (p *ConcurrencyPolicy) c() C.weir_concurrency_policy {
	return C.weir_concurrency_policy{initial_limit: C.int32_t(p.InitialLimit), min_limit: C.int32_t(p.MinLimit),
		max_limit: C.int32_t(p.MaxLimit), queue_size: C.int32_t(p.QueueSize), smoothing: C.double(p.Smoothing),
		tolerance: C.double(p.Tolerance), long_window: C.int32_t(p.LongWindow), warmup: C.int32_t(p.Warmup)}
}

// Concurrency is an adaptive concurrency limit whose ceiling follows the
// latency it measures (weir_concurrency). Safe for many goroutines; Close
// is not concurrent with use.
type Concurrency struct {
	p *C.weir_concurrency
	// unmap releases the mapped file of a shared limit
	// (OpenSharedConcurrencyFile); nil for a heap one.
	unmap func() error
}

// NewConcurrency makes a limit at its initial value; nil is the preset.
func NewConcurrency(policy *ConcurrencyPolicy) (*Concurrency, error) {
	var cp *C.weir_concurrency_policy
	var c C.weir_concurrency_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	var p *C.weir_concurrency
	if err := check(C.weir_concurrency_new(cp, &p)); err != nil {
		return nil, err
	}
	l := &Concurrency{p: p}
	runtime.SetFinalizer(l, finalize[*Concurrency])
	return l, nil
}

// Close frees the limit; later Enters refuse.
func (l *Concurrency) Close() error {
	if l.p != nil {
		C.weir_concurrency_free(l.p)
		l.p = nil
		runtime.SetFinalizer(l, nil)
		if l.unmap != nil {
			err := l.unmap()
			l.unmap = nil
			return err
		}
	}
	return nil
}

// ConcurrencyTicket is a call the limit let in, to be left once (a second Leave
// answers ErrSettled). Leave the value Enter returned, not a copy.
type ConcurrencyTicket struct {
	l *Concurrency
	f C.weir_concurrency_ticket
	// The partition it entered, when it entered one.
	partitioned bool
	part        int32
}

// Enter asks to start a call at now: ErrRefused when the limit is full.
func (l *Concurrency) Enter(now time.Duration) (ConcurrencyTicket, error) {
	fl := ConcurrencyTicket{l: l}
	if l.p == nil {
		return fl, ErrClosed
	}
	ok := C.weir_concurrency_enter(l.p, ns(now), &fl.f)
	runtime.KeepAlive(l)
	if !ok {
		return fl, ErrRefused
	}
	return fl, nil
}

// Leave ends the call at now; dropped says it timed out or was refused
// downstream rather than answered.
func (f *ConcurrencyTicket) Leave(now time.Duration, dropped bool) error {
	if f.l == nil {
		return ErrSettled
	}
	if f.l.p == nil {
		return ErrClosed
	}
	var err error
	if f.partitioned {
		err = check(C.weir_concurrency_leave_partition(f.l.p, C.int32_t(f.part), &f.f, ns(now), C.bool(dropped)))
	} else {
		err = check(C.weir_concurrency_leave(f.l.p, &f.f, ns(now), C.bool(dropped)))
	}
	runtime.KeepAlive(f.l)
	return err
}

// ConcurrencyPartition is one partition's terms (weir_concurrency_partition).
type ConcurrencyPartition struct {
	// Share of the limit, in [0, 1]; all shares sum to at most 1.
	Share float64
	// Calls past its own room it may borrow from room others are not using.
	Borrow int64
}

// NewConcurrencyPartitioned makes a limit split into len(parts) partitions,
// numbered by their index (weir_concurrency_new_partitioned): each owns
// ⌊⌊limit⌋ × Share⌋, may borrow up to Borrow past it while no owner claims
// its room back, and the calls in flight never exceed the limit. nil is the
// preset policy. Errors: ErrConcurrencyPartitions, ErrConcurrencyShare,
// ErrConcurrencyBorrow, or the policy's.
func NewConcurrencyPartitioned(policy *ConcurrencyPolicy, parts []ConcurrencyPartition) (*Concurrency, error) {
	var cp *C.weir_concurrency_policy
	var c C.weir_concurrency_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	cparts := make([]C.weir_concurrency_partition, len(parts)+1)
	for i, p := range parts {
		cparts[i] = C.weir_concurrency_partition{share: C.double(p.Share), borrow: C.int64_t(p.Borrow)}
	}
	count := C.int32_t(len(parts))
	if len(parts) > 1<<20 {
		count = -1
	}
	var p *C.weir_concurrency
	if err := check(C.weir_concurrency_new_partitioned(cp, &cparts[0], count, &p)); err != nil {
		return nil, err
	}
	l := &Concurrency{p: p}
	runtime.SetFinalizer(l, finalize[*Concurrency])
	return l, nil
}

// EnterPartition asks to start a call of partition part at now:
// ErrRefused when there is no room for it, ErrConcurrencyPartition when
// there is no such partition. Leave the ticket as any other.
func (l *Concurrency) EnterPartition(part int32, now time.Duration) (ConcurrencyTicket, error) {
	fl := ConcurrencyTicket{l: l, partitioned: true, part: part}
	if l.p == nil {
		return fl, ErrClosed
	}
	err := check(C.weir_concurrency_enter_partition(l.p, C.int32_t(part), ns(now), &fl.f))
	runtime.KeepAlive(l)
	if err != nil {
		return fl, err
	}
	if fl.f.flying != 1 {
		return fl, ErrRefused
	}
	return fl, nil
}

// PartitionFlying is how many calls of partition part are in flight.
func (l *Concurrency) PartitionFlying(part int32) int64 {
	if l.p == nil {
		return 0
	}
	n := int64(C.weir_concurrency_partition_flying(l.p, C.int32_t(part)))
	runtime.KeepAlive(l)
	return n
}

// PartitionRoom is the room partition part owns now.
func (l *Concurrency) PartitionRoom(part int32) int64 {
	if l.p == nil {
		return 0
	}
	n := int64(C.weir_concurrency_partition_room(l.p, C.int32_t(part)))
	runtime.KeepAlive(l)
	return n
}

// Do runs fn inside the limit on the Now clock; fn's error is the answer
// (a context error counts as dropped).
func (l *Concurrency) Do(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fl, err := l.Enter(Now())
	if err != nil {
		return err
	}
	ferr := fn()
	_ = fl.Leave(Now(), ctx.Err() != nil)
	return ferr
}

// Reconfigure gives the limit a new policy in place (nil: the default;
// weir_concurrency_reconfigure): the limit reached is kept, held to the new
// MinLimit..MaxLimit, with the calls in flight (calls beyond a lower limit
// stay; none enters until enough have left), the latency averages and the
// partitions. The policy's errors as NewConcurrency answers them,
// ErrClosed; an error changes nothing. Safe beside other use (not Close):
// a call racing it is judged by the old policy or the new one, wholly.
func (l *Concurrency) Reconfigure(policy *ConcurrencyPolicy) error {
	if l.p == nil {
		return ErrClosed
	}
	var cp *C.weir_concurrency_policy
	var c C.weir_concurrency_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	err := check(C.weir_concurrency_reconfigure(l.p, cp))
	runtime.KeepAlive(l)
	return err
}

// Limit is the current ceiling.
func (l *Concurrency) Limit() int64 {
	if l.p == nil {
		return 0
	}
	n := int64(C.weir_concurrency_limit(l.p))
	runtime.KeepAlive(l)
	return n
}

// Flying is how many calls are in flight.
func (l *Concurrency) Flying() int64 {
	if l.p == nil {
		return 0
	}
	n := int64(C.weir_concurrency_flying(l.p))
	runtime.KeepAlive(l)
	return n
}

// LongRTT is the long-term latency average (0 before any sample).
func (l *Concurrency) LongRTT() time.Duration {
	if l.p == nil {
		return 0
	}
	d := time.Duration(C.weir_concurrency_long_rtt(l.p))
	runtime.KeepAlive(l)
	return d
}
