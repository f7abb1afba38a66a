package weir

/*
#include "weir.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"time"
)

// PoolPolicy is a pool's policy (weir_pool_policy): Size live at most, Idle
// kept idle at most, closed after Keep idle or Life alive (0: no limit).
// LifeJitter (0..1) is the most of Life that MadeJittered's draw may cut,
// so resources made together do not retire together; MinIdle is how many
// idle ones MakeAhead keeps ready; MaxMaking caps the makes outstanding at
// once (0: up to Size). The zero value of the last three is 0.1's pool.
type PoolPolicy struct {
	Size, Idle int64
	Keep, Life time.Duration
	LifeJitter float64
	MinIdle    int64
	MaxMaking  int64
}

// DefaultPoolPolicy is weir_pool_policy_preset: 10 live, 10 idle, 30 minutes
// idle, no maximum age, no jitter, nothing made ahead, no making cap.
func DefaultPoolPolicy() PoolPolicy {
	l := C.weir_pool_policy_preset()
	return PoolPolicy{Size: int64(l.size), Idle: int64(l.idle), Keep: time.Duration(l.keep_ns), Life: time.Duration(l.life_ns),
		LifeJitter: float64(l.life_jitter), MinIdle: int64(l.min_idle), MaxMaking: int64(l.max_making)}
}

// Pool is weir's pool bookkeeping (weir_pool) over Go values: it never
// makes, closes or waits; each call says what the caller does. weir knows
// each value only by a small integer the Pool assigns (an index into a
// table of Go values held here), so no Go pointer ever reaches C. Safe
// for many goroutines; Close is not concurrent with use.
type Pool[T any] struct {
	p     *C.weir_pool
	mu    sync.Mutex
	items map[uintptr]T
	next  uintptr
	free  []uintptr
}

// c writes the limits to *out and answers out, or nil for nil limits (the
// preset).
func (limits *PoolPolicy) c(out *C.weir_pool_policy) (cp *C.weir_pool_policy) {
	if limits == nil {
		return nil
	}
	*out = C.weir_pool_policy{size: C.int64_t(limits.Size), idle: C.int64_t(limits.Idle), keep_ns: ns(limits.Keep), life_ns: ns(limits.Life),
		life_jitter: C.double(limits.LifeJitter), min_idle: C.int64_t(limits.MinIdle), max_making: C.int64_t(limits.MaxMaking)}
	return out
}

// NewPool makes an empty pool; nil limits are the preset. ErrPoolSize,
// ErrPoolIdle, ErrPoolKeep, ErrPoolLife, ErrPoolJitter, ErrPoolMinIdle,
// ErrPoolMaxMaking for bad limits (the first wrong field's).
func NewPool[T any](limits *PoolPolicy) (*Pool[T], error) {
	var c C.weir_pool_policy
	var p *C.weir_pool
	if err := check(C.weir_pool_new(limits.c(&c), &p)); err != nil {
		return nil, err
	}
	pl := &Pool[T]{p: p, items: map[uintptr]T{}}
	runtime.SetFinalizer(pl, finalize[*Pool[T]])
	return pl, nil
}

// Reconfigure gives the pool new limits in place (weir_pool_reconfigure;
// nil is the preset), from the next call: every value idle or lent is kept,
// more than the new Size too (Take answers PoolTakeWait until fewer are
// live), with its birth and idle time, and so are the makes outstanding and
// the stats. More idle than the new idle cap stay idle, lent first, and a
// Give keeps nothing until fewer are idle. The live values are never more
// than the larger of those live at the change and the new Size. Bad limits
// change nothing (the errors of NewPool); ErrNoMemory if the larger table
// cannot be allocated, changing nothing. ErrClosed after Close. Safe
// beside other use (not Close): a call racing it sees the old limits or
// the new ones.
func (pl *Pool[T]) Reconfigure(limits *PoolPolicy) error {
	if pl.p == nil {
		return ErrClosed
	}
	var c C.weir_pool_policy
	err := check(C.weir_pool_reconfigure(pl.p, limits.c(&c)))
	runtime.KeepAlive(pl)
	return err
}

// Close frees the bookkeeping; it hands back nothing (call Shutdown
// first and close what it returns). Not concurrent with use.
func (pl *Pool[T]) Close() error {
	if pl.p != nil {
		C.weir_pool_free(pl.p)
		pl.p = nil
		runtime.SetFinalizer(pl, nil)
	}
	return nil
}

// PoolTaken says what Take answers: Kind is one of the Take* values; Item is
// the resource for PoolTakeReady and PoolTakeStale.
type PoolTaken[T any] struct {
	Kind PoolTakeKind
	Item T
	id   uintptr
}

// PoolTakeKind is weir_pool_taken's kind.
type PoolTakeKind int32

// The WEIR_POOL_TAKEN_* kinds.
const (
	PoolTakeReady PoolTakeKind = C.WEIR_POOL_TAKEN_READY // an idle resource, now lent
	PoolTakeStale PoolTakeKind = C.WEIR_POOL_TAKEN_STALE // out of the pool: close Item and take again
	PoolTakeMake  PoolTakeKind = C.WEIR_POOL_TAKEN_MAKE  // room reserved: make one, then Made (or Unmade)
	PoolTakeWait  PoolTakeKind = C.WEIR_POOL_TAKEN_WAIT  // no room, or closed
)

func (pl *Pool[T]) lookup(id uintptr, forget bool) T {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	v := pl.items[id]
	if forget {
		pl.forgetLocked(id)
	}
	return v
}

func (pl *Pool[T]) forgetLocked(id uintptr) {
	if _, ok := pl.items[id]; !ok {
		return
	}
	delete(pl.items, id)
	pl.free = append(pl.free, id)
}

// Take asks for a resource at now.
func (pl *Pool[T]) Take(now time.Duration) PoolTaken[T] {
	if pl.p == nil {
		return PoolTaken[T]{Kind: PoolTakeWait}
	}
	t := C.weir_pool_take(pl.p, ns(now))
	runtime.KeepAlive(pl)
	out := PoolTaken[T]{Kind: PoolTakeKind(t.kind), id: uintptr(t.item)}
	switch out.Kind {
	case PoolTakeReady:
		out.Item = pl.lookup(out.id, false)
	case PoolTakeStale:
		out.Item = pl.lookup(out.id, true)
	}
	return out
}

// Made registers v, made after a PoolTakeMake, as lent and born at now, and
// answers the PoolLent to give back. ErrPoolNoReservation without a MAKE.
func (pl *Pool[T]) Made(v T, now time.Duration) (PoolLent[T], error) {
	return pl.register(v, func(id C.uintptr_t) C.weir_status { return C.weir_pool_made(pl.p, id, ns(now)) })
}

// MadeJittered is Made with v's life cut by up to LifeJitter × Life,
// in proportion to draw (uniform over all uint64 values, from the
// caller's own generator, e.g. rand.Uint64): resources made together then
// retire spread out. A draw of 0, or no LifeJitter or Life, is Made.
func (pl *Pool[T]) MadeJittered(v T, now time.Duration, draw uint64) (PoolLent[T], error) {
	return pl.register(v, func(id C.uintptr_t) C.weir_status {
		return C.weir_pool_made_jittered(pl.p, id, ns(now), C.uint64_t(draw))
	})
}

// register gives v an identity, lets call tell weir about it, and forgets
// it again if weir refused.
func (pl *Pool[T]) register(v T, call func(id C.uintptr_t) C.weir_status) (PoolLent[T], error) {
	if pl.p == nil {
		return PoolLent[T]{}, ErrClosed
	}
	id := pl.remember(v)
	err := check(call(C.uintptr_t(id)))
	runtime.KeepAlive(pl)
	if err != nil {
		pl.lookup(id, true)
		return PoolLent[T]{}, err
	}
	return PoolLent[T]{Item: v, id: id}, nil
}

// remember holds v under a fresh identity (a freed one first).
func (pl *Pool[T]) remember(v T) uintptr {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	var id uintptr
	if n := len(pl.free); n > 0 {
		id, pl.free = pl.free[n-1], pl.free[:n-1]
	} else {
		pl.next++
		id = pl.next
	}
	pl.items[id] = v
	return id
}

// MakeAhead reserves room for the resources to make so that MinIdle stay
// ready, and answers how many: make each and hand it in with AddIdle (or
// call Unmade if making failed). 0 with MinIdle 0, or once closed. Call it
// after a take, give or evict, or on a timer.
func (pl *Pool[T]) MakeAhead() int {
	if pl.p == nil {
		return 0
	}
	defer runtime.KeepAlive(pl)
	return int(C.weir_pool_make_ahead(pl.p))
}

// AddIdle hands in v, made for a reservation (MakeAhead's, or a PoolTakeMake),
// to sit idle from now; kept false: the caller closes v (enough were idle,
// or the pool is closed). ErrPoolNotLent with no reservation open, and
// then the pool does not hold v.
func (pl *Pool[T]) AddIdle(v T, now time.Duration) (kept bool, err error) {
	if pl.p == nil {
		return false, ErrClosed
	}
	id := pl.remember(v)
	var k C.bool
	err = check(C.weir_pool_give(pl.p, C.uintptr_t(id), ns(now), &k))
	runtime.KeepAlive(pl)
	if err != nil || !bool(k) {
		pl.lookup(id, true)
	}
	return err == nil && bool(k), err
}

// MarkOld marks every resource the pool holds, idle or lent, as old (after
// a password or DNS change, say) and answers how many: Evict hands the
// idle old ones back first, Take answers an old one PoolTakeStale, and a Give
// of one answers kept false. Resources made afterwards are new.
func (pl *Pool[T]) MarkOld() int {
	if pl.p == nil {
		return 0
	}
	defer runtime.KeepAlive(pl)
	return int(C.weir_pool_mark_old(pl.p))
}

// PoolLent is a resource the pool lent: Give it back or Drop it, once.
type PoolLent[T any] struct {
	Item T
	id   uintptr
}

// PoolLent is the handle of a Ready take.
func (t PoolTaken[T]) Lent() PoolLent[T] { return PoolLent[T]{Item: t.Item, id: t.id} }

// Unmade releases a MAKE's room because making failed.
func (pl *Pool[T]) Unmade() error {
	if pl.p == nil {
		return ErrClosed
	}
	err := check(C.weir_pool_unmade(pl.p))
	runtime.KeepAlive(pl)
	return err
}

// Give hands a lent resource back at now. kept false: the caller closes
// it. ErrPoolItemIdle, ErrPoolNotLent change nothing.
func (pl *Pool[T]) Give(l PoolLent[T], now time.Duration) (kept bool, err error) {
	if pl.p == nil {
		return false, ErrClosed
	}
	var k C.bool
	err = check(C.weir_pool_give(pl.p, C.uintptr_t(l.id), ns(now), &k))
	runtime.KeepAlive(pl)
	if err == nil && !bool(k) {
		pl.lookup(l.id, true)
	}
	return bool(k), err
}

// Drop says a lent resource broke; the caller closes it.
func (pl *Pool[T]) Drop(l PoolLent[T]) error {
	if pl.p == nil {
		return ErrClosed
	}
	err := check(C.weir_pool_drop(pl.p, C.uintptr_t(l.id)))
	runtime.KeepAlive(pl)
	if err == nil {
		pl.lookup(l.id, true)
	}
	return err
}

func (pl *Pool[T]) drain(call func(out *C.uintptr_t, n C.size_t) C.size_t) []T {
	var out []T
	var buf [32]C.uintptr_t
	for {
		n := int(call(&buf[0], C.size_t(len(buf))))
		for _, id := range buf[:n] {
			out = append(out, pl.lookup(uintptr(id), true))
		}
		if n < len(buf) {
			return out
		}
	}
}

// Evict removes the idle resources due at now and answers them to close.
func (pl *Pool[T]) Evict(now time.Duration) []T {
	if pl.p == nil {
		return nil
	}
	defer runtime.KeepAlive(pl)
	return pl.drain(func(out *C.uintptr_t, n C.size_t) C.size_t { return C.weir_pool_evict(pl.p, ns(now), out, n) })
}

// Shutdown closes the pool and answers every idle resource to close;
// later takes wait and gives keep nothing.
func (pl *Pool[T]) Shutdown() []T {
	if pl.p == nil {
		return nil
	}
	defer runtime.KeepAlive(pl)
	return pl.drain(func(out *C.uintptr_t, n C.size_t) C.size_t { return C.weir_pool_close(pl.p, out, n) })
}

// PoolCounts is how many resources exist, sit idle, and are lent or
// being made.
type PoolCounts struct{ Live, Idle, Busy int64 }

// Counts reads the pool's counts.
func (pl *Pool[T]) Counts() PoolCounts {
	if pl.p == nil {
		return PoolCounts{}
	}
	defer runtime.KeepAlive(pl)
	return PoolCounts{int64(C.weir_pool_live(pl.p)), int64(C.weir_pool_idle(pl.p)), int64(C.weir_pool_busy(pl.p))}
}

// NextExpiry is how long from now until an idle resource is due (0: one
// is; Never: none will be).
func (pl *Pool[T]) NextExpiry(now time.Duration) time.Duration {
	if pl.p == nil {
		return Never
	}
	defer runtime.KeepAlive(pl)
	return dur(C.weir_pool_next_expiry(pl.p, ns(now)))
}

// PoolStats is weir_pool_stats: running totals since the pool was made.
type PoolStats struct {
	Made, Reused, Stale, EvictedIdle, EvictedAge, Dropped, Refused, Waits, Unmade, Closed uint64
	Retired                                                                               uint64 // marked old, then handed back by Evict or not kept by Give
}

// Stats reads the running totals.
func (pl *Pool[T]) Stats() (PoolStats, error) {
	if pl.p == nil {
		return PoolStats{}, ErrClosed
	}
	var c C.weir_pool_stats
	err := check(C.weir_pool_read_stats(pl.p, &c))
	runtime.KeepAlive(pl)
	return PoolStats{uint64(c.made), uint64(c.reused), uint64(c.stale), uint64(c.evicted_idle), uint64(c.evicted_age),
		uint64(c.dropped), uint64(c.refused), uint64(c.waits), uint64(c.unmade), uint64(c.closed),
		uint64(c.retired)}, err
}
