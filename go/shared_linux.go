//go:build linux

package weir

/*
#include "weir.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// openRegionFile maps path (created if missing) MAP_SHARED as a shared
// handle's region: when the file is empty it is sized to bytes and laid
// with lay, otherwise the region in it is attached with attach, which
// checks its header. An flock on the file keeps two first openers from
// both laying it. Answers the mapping, which the handle keeps until Close.
func openRegionFile(path string, bytes C.size_t, lay, attach func(mem unsafe.Pointer, n C.size_t) C.weir_status) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("weir: lock %s: %w", path, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	fresh := info.Size() == 0
	size := info.Size()
	if fresh {
		size = int64(bytes)
		if err := f.Truncate(size); err != nil {
			return nil, err
		}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("weir: mmap %s: %w", path, err)
	}
	// The mapping is not Go memory: C may keep pointers into it.
	at := unsafe.Pointer(unsafe.SliceData(mem))
	var status C.weir_status
	if fresh {
		status = lay(at, C.size_t(len(mem)))
	} else {
		status = attach(at, C.size_t(len(mem)))
	}
	if err := check(status); err != nil {
		_ = syscall.Munmap(mem)
		if fresh {
			_ = f.Truncate(0)
		}
		return nil, err
	}
	return mem, nil
}

// OpenSharedBreakerFile maps path (created if missing) MAP_SHARED as a
// breaker that processes share (weir_breaker_init_shared): the first
// opener lays it with policy (nil: the preset) and its window opening at
// [Now]; later ones, in this process or any other, Go or C, attach to it
// (weir_breaker_attach) and every call works on the one breaker. A file
// that holds another region, or another build's, is refused with a Status
// (ErrRegionForeign, ErrRegionKind, ErrRegionBuild, ...); a call that
// finds the lock's last holder killed answers ErrRegionRecovered once (see
// [Breaker.Recoveries]). Close frees nothing shared: it unmaps this
// opener's mapping.
func OpenSharedBreakerFile(path string, policy *BreakerPolicy) (*Breaker, error) {
	return OpenSharedBreakerFileAt(path, policy, Now())
}

// OpenSharedBreakerFileAt is OpenSharedBreakerFile with the window opening
// at now when this call lays the breaker.
func OpenSharedBreakerFileAt(path string, policy *BreakerPolicy, now time.Duration) (*Breaker, error) {
	var cp *C.weir_breaker_policy
	var c C.weir_breaker_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	var bytes, align C.size_t
	if err := check(C.weir_breaker_shared_footprint(cp, &bytes, &align)); err != nil {
		return nil, err
	}
	var p *C.weir_breaker
	mem, err := openRegionFile(path, bytes,
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_breaker_init_shared(at, n, cp, ns(now), &p)
		},
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_breaker_attach(at, n, &p)
		})
	if err != nil {
		return nil, err
	}
	b := &Breaker{p: p, unmap: func() error { return syscall.Munmap(mem) }}
	runtime.SetFinalizer(b, finalize[*Breaker])
	return b, nil
}

// Recoveries reads how often a shared breaker's lock was taken over from
// a killed holder (weir_breaker_recoveries): recovered in all, and of
// those, reset. Zero for a breaker that is not shared.
func (b *Breaker) Recoveries() (recovered, reset uint64, err error) {
	if b.p == nil {
		return 0, 0, ErrClosed
	}
	var out C.weir_recoveries
	status := C.weir_breaker_recoveries(b.p, &out)
	runtime.KeepAlive(b)
	return recoveries(status, &out)
}

// recoveries is a weir_X_recoveries call's answer: recovered and reset,
// or zeros and the error.
func recoveries(status C.weir_status, out *C.weir_recoveries) (recovered, reset uint64, err error) {
	if err := check(status); err != nil {
		return 0, 0, err
	}
	return uint64(out.recovered), uint64(out.reset), nil
}

// OpenSharedBucketFile maps path (created if missing) MAP_SHARED as a
// bucket that processes share (weir_bucket_init_shared): the first opener
// lays it, full at [Now], with rate and burst; later ones attach to it
// (their rate and burst are the file's) and take from the one bucket. A
// file that holds another region is refused with a Status. Close unmaps
// this opener's mapping.
func OpenSharedBucketFile(path string, rate, burst float64) (*Bucket, error) {
	return OpenSharedBucketFileAt(path, rate, burst, Now())
}

// OpenSharedBucketFileAt is OpenSharedBucketFile, full at now when this
// call lays the bucket.
func OpenSharedBucketFileAt(path string, rate, burst float64, now time.Duration) (*Bucket, error) {
	var bytes, align C.size_t
	if err := check(C.weir_bucket_shared_footprint(&bytes, &align)); err != nil {
		return nil, err
	}
	var p *C.weir_bucket
	mem, err := openRegionFile(path, bytes,
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_bucket_init_shared(at, n, C.double(rate), C.double(burst), ns(now), &p)
		},
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_bucket_attach(at, n, &p)
		})
	if err != nil {
		return nil, err
	}
	b := &Bucket{p: p, unmap: func() error { return syscall.Munmap(mem) }}
	runtime.SetFinalizer(b, finalize[*Bucket])
	return b, nil
}

// OpenSharedShedderFile maps path (created if missing) MAP_SHARED as a
// shedder that processes share (weir_shedder_init_shared): the first
// opener lays it with policy (nil: the preset) and its window opening at
// [Now]; later ones attach to it (weir_shedder_attach; their policy is the
// file's) and every call sees the one window and the calls in flight in
// every process. Refusals and recoveries as [OpenSharedBreakerFile] (see
// [Shedder.Recoveries]). Close unmaps this opener's mapping.
func OpenSharedShedderFile(path string, policy *ShedderPolicy) (*Shedder, error) {
	return OpenSharedShedderFileAt(path, policy, Now())
}

// OpenSharedShedderFileAt is OpenSharedShedderFile with the window opening
// at now when this call lays the shedder.
func OpenSharedShedderFileAt(path string, policy *ShedderPolicy, now time.Duration) (*Shedder, error) {
	var cp *C.weir_shedder_policy
	var c C.weir_shedder_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	var bytes, align C.size_t
	if err := check(C.weir_shedder_shared_footprint(cp, &bytes, &align)); err != nil {
		return nil, err
	}
	var p *C.weir_shedder
	mem, err := openRegionFile(path, bytes,
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_shedder_init_shared(at, n, cp, ns(now), &p)
		},
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_shedder_attach(at, n, &p)
		})
	if err != nil {
		return nil, err
	}
	s := &Shedder{p: p, unmap: func() error { return syscall.Munmap(mem) }}
	runtime.SetFinalizer(s, finalize[*Shedder])
	return s, nil
}

// Recoveries reads how often a shared shedder's lock was taken over from
// a killed holder (weir_shedder_recoveries): recovered in all, and of
// those, reset. Zero for a shedder that is not shared.
func (s *Shedder) Recoveries() (recovered, reset uint64, err error) {
	if s.p == nil {
		return 0, 0, ErrClosed
	}
	var out C.weir_recoveries
	status := C.weir_shedder_recoveries(s.p, &out)
	runtime.KeepAlive(s)
	return recoveries(status, &out)
}

// OpenSharedWindowFile maps path (created if missing) MAP_SHARED as a
// window that processes share (weir_window_init_shared): the first opener
// lays it, size buckets over span with its first bucket opening at now;
// later ones attach to it (weir_window_attach; their size and span are the
// file's) and add to and read the one window. Refusals and recoveries as
// [OpenSharedBreakerFile] (see [Window.Recoveries]). Close unmaps this
// opener's mapping.
func OpenSharedWindowFile(path string, size int32, span, now time.Duration) (*Window, error) {
	var bytes, align C.size_t
	if err := check(C.weir_window_shared_footprint(C.int32_t(size), ns(span), &bytes, &align)); err != nil {
		return nil, err
	}
	var p *C.weir_window
	mem, err := openRegionFile(path, bytes,
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_window_init_shared(at, n, C.int32_t(size), ns(span), ns(now), &p)
		},
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_window_attach(at, n, &p)
		})
	if err != nil {
		return nil, err
	}
	w := &Window{p: p, unmap: func() error { return syscall.Munmap(mem) }}
	runtime.SetFinalizer(w, finalize[*Window])
	return w, nil
}

// Recoveries reads how often a shared window's lock was taken over from a
// killed holder (weir_window_recoveries): recovered in all, and of those,
// reset. Zero for a window that is not shared.
func (w *Window) Recoveries() (recovered, reset uint64, err error) {
	if w.p == nil {
		return 0, 0, ErrClosed
	}
	var out C.weir_recoveries
	status := C.weir_window_recoveries(w.p, &out)
	runtime.KeepAlive(w)
	return recoveries(status, &out)
}

// OpenSharedSlidingFile maps path (created if missing) MAP_SHARED as an
// exact sliding window that processes share (weir_sliding_init_shared):
// the first opener lays it empty with quota and window; later ones attach
// to it (weir_sliding_attach; their quota and window are the file's) and
// every process counts against the one quota. Refusals and recoveries as
// [OpenSharedBreakerFile] (see [Sliding.Recoveries]). Close unmaps this
// opener's mapping.
func OpenSharedSlidingFile(path string, quota int64, window time.Duration) (*Sliding, error) {
	var bytes, align C.size_t
	if err := check(C.weir_sliding_shared_footprint(C.int64_t(quota), ns(window), &bytes, &align)); err != nil {
		return nil, err
	}
	var p *C.weir_sliding
	mem, err := openRegionFile(path, bytes,
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_sliding_init_shared(at, n, C.int64_t(quota), ns(window), &p)
		},
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_sliding_attach(at, n, &p)
		})
	if err != nil {
		return nil, err
	}
	s := &Sliding{p: p, unmap: func() error { return syscall.Munmap(mem) }}
	runtime.SetFinalizer(s, finalize[*Sliding])
	return s, nil
}

// Recoveries reads how often a shared sliding window's lock was taken over
// from a killed holder (weir_sliding_recoveries): recovered in all, and of
// those, reset. Zero for a window that is not shared.
func (s *Sliding) Recoveries() (recovered, reset uint64, err error) {
	if s.p == nil {
		return 0, 0, ErrClosed
	}
	var out C.weir_recoveries
	status := C.weir_sliding_recoveries(s.p, &out)
	runtime.KeepAlive(s)
	return recoveries(status, &out)
}

// OpenSharedPeriodFile maps path (created if missing) MAP_SHARED as a
// period counter that processes share (weir_period_init_shared): the
// first opener lays it with quota, period and align; later ones attach to
// it (weir_period_attach; their policy is the file's) and every process
// counts against the one quota. Refusals and recoveries as
// [OpenSharedBreakerFile] (see [Period.Recoveries]). Close unmaps this
// opener's mapping.
func OpenSharedPeriodFile(path string, quota int64, period time.Duration, align bool) (*Period, error) {
	var bytes, alignment C.size_t
	if err := check(C.weir_period_shared_footprint(&bytes, &alignment)); err != nil {
		return nil, err
	}
	var p *C.weir_period
	mem, err := openRegionFile(path, bytes,
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_period_init_shared(at, n, C.int64_t(quota), ns(period), C.bool(align), &p)
		},
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_period_attach(at, n, &p)
		})
	if err != nil {
		return nil, err
	}
	q := &Period{p: p, unmap: func() error { return syscall.Munmap(mem) }}
	runtime.SetFinalizer(q, finalize[*Period])
	return q, nil
}

// Recoveries reads how often a shared period counter's lock was taken over
// from a killed holder (weir_period_recoveries): recovered in all, and of
// those, reset. Zero for a counter that is not shared.
func (q *Period) Recoveries() (recovered, reset uint64, err error) {
	if q.p == nil {
		return 0, 0, ErrClosed
	}
	var out C.weir_recoveries
	status := C.weir_period_recoveries(q.p, &out)
	runtime.KeepAlive(q)
	return recoveries(status, &out)
}

// OpenSharedGateFile maps path (created if missing) MAP_SHARED as a gate
// that processes share (weir_gate_init_shared): the first opener lays it
// empty with limit; later ones attach to it (weir_gate_attach; their
// limit is the file's) and at most limit calls are inside across every
// process. The gate is lock-free: there is no lock to recover, so it has
// no Recoveries. A file that holds another region is refused with a
// Status. Close unmaps this opener's mapping.
func OpenSharedGateFile(path string, limit int64) (*Gate, error) {
	var bytes, align C.size_t
	if err := check(C.weir_gate_shared_footprint(&bytes, &align)); err != nil {
		return nil, err
	}
	var p *C.weir_gate
	mem, err := openRegionFile(path, bytes,
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_gate_init_shared(at, n, C.int64_t(limit), &p)
		},
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_gate_attach(at, n, &p)
		})
	if err != nil {
		return nil, err
	}
	g := &Gate{p: p, unmap: func() error { return syscall.Munmap(mem) }}
	runtime.SetFinalizer(g, finalize[*Gate])
	return g, nil
}

// OpenSharedBudgetFile maps path (created if missing) MAP_SHARED as a
// retry budget that processes share (weir_budget_init_shared): the first
// opener lays it at now with policy (nil: the preset); later ones attach
// to it (weir_budget_attach; their policy is the file's) and every
// process's deposits and withdrawals meet in the one budget. Refusals and
// recoveries as [OpenSharedBreakerFile] (see [Budget.Recoveries]). Close
// unmaps this opener's mapping.
func OpenSharedBudgetFile(path string, policy *BudgetPolicy, now time.Duration) (*Budget, error) {
	var cp *C.weir_budget_policy
	var c C.weir_budget_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	var bytes, align C.size_t
	if err := check(C.weir_budget_shared_footprint(&bytes, &align)); err != nil {
		return nil, err
	}
	var p *C.weir_budget
	mem, err := openRegionFile(path, bytes,
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_budget_init_shared(at, n, cp, ns(now), &p)
		},
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_budget_attach(at, n, &p)
		})
	if err != nil {
		return nil, err
	}
	b := &Budget{p: p, unmap: func() error { return syscall.Munmap(mem) }}
	runtime.SetFinalizer(b, finalize[*Budget])
	return b, nil
}

// Recoveries reads how often a shared budget's lock was taken over from a
// killed holder (weir_budget_recoveries): recovered in all, and of those,
// reset. Zero for a budget that is not shared.
func (b *Budget) Recoveries() (recovered, reset uint64, err error) {
	if b.p == nil {
		return 0, 0, ErrClosed
	}
	var out C.weir_recoveries
	status := C.weir_budget_recoveries(b.p, &out)
	runtime.KeepAlive(b)
	return recoveries(status, &out)
}

// OpenSharedConcurrencyFile maps path (created if missing) MAP_SHARED as
// an adaptive limit that processes share (weir_concurrency_init_shared):
// the first opener lays it at its initial limit with policy (nil: the
// preset); later ones attach to it (weir_concurrency_attach; their policy
// is the file's) and every process's calls count against, and their
// latencies move, the one limit. Refusals and recoveries as
// [OpenSharedBreakerFile] (see [Concurrency.Recoveries]). Close unmaps
// this opener's mapping.
func OpenSharedConcurrencyFile(path string, policy *ConcurrencyPolicy) (*Concurrency, error) {
	var cp *C.weir_concurrency_policy
	var c C.weir_concurrency_policy
	if policy != nil {
		c = policy.c()
		cp = &c
	}
	var bytes, align C.size_t
	if err := check(C.weir_concurrency_shared_footprint(&bytes, &align)); err != nil {
		return nil, err
	}
	var p *C.weir_concurrency
	mem, err := openRegionFile(path, bytes,
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_concurrency_init_shared(at, n, cp, &p)
		},
		func(at unsafe.Pointer, n C.size_t) C.weir_status {
			return C.weir_concurrency_attach(at, n, &p)
		})
	if err != nil {
		return nil, err
	}
	l := &Concurrency{p: p, unmap: func() error { return syscall.Munmap(mem) }}
	runtime.SetFinalizer(l, finalize[*Concurrency])
	return l, nil
}

// Recoveries reads how often a shared limit's lock was taken over from a
// killed holder (weir_concurrency_recoveries): recovered in all, and of
// those, reset. Zero for a limit that is not shared.
func (l *Concurrency) Recoveries() (recovered, reset uint64, err error) {
	if l.p == nil {
		return 0, 0, ErrClosed
	}
	var out C.weir_recoveries
	status := C.weir_concurrency_recoveries(l.p, &out)
	runtime.KeepAlive(l)
	return recoveries(status, &out)
}

// OpenSharedKeyedFile maps path (created if missing) MAP_SHARED as a
// keyed table of GCRA words that processes share
// (weir_keyed_init_shared): the first opener lays it with buckets, limit,
// overflow and the hash keys (seed0, seed1); later ones attach to it (weir_keyed_attach;
// their arguments are not read: the shape, limit, policy and seed are the
// file's) and every process decides on the one table, lock-free, as
// goroutines of one process do: a key's admits across all of them are a
// lone word's while nothing overflows. Pass [MonotonicNow] (the short
// forms read it for a shared table), or one clock every sharer reads. The
// table takes no lock, so there is nothing to recover: a process killed
// mid-call leaves it whole. ErrWordsNotShareable where [KeyedLockFree] is
// false; the constructor errors of [NewKeyed]; a file that holds another
// region is refused with a Status (ErrRegionKind, ErrRegionSize, ...).
// Close unmaps this opener's mapping.
func OpenSharedKeyedFile(path string, buckets uint64, limit GCRALimit, overflow KeyedOverflow, seed0, seed1 uint64) (*Keyed, error) {
	return openSharedKeyedFile(path, buckets, func(at unsafe.Pointer, n C.size_t, p **C.weir_keyed) C.weir_status {
		return C.weir_keyed_init_shared(at, n, C.uint64_t(buckets), limit.c(), C.uint32_t(overflow),
			C.uint64_t(seed0), C.uint64_t(seed1), p)
	})
}

// OpenSharedKeyedRateFile is OpenSharedKeyedFile with rate words
// (weir_keyed_init_shared_rate) when this call lays the table; an
// attacher takes the file's kind whichever opener it calls.
func OpenSharedKeyedRateFile(path string, buckets uint64, limit RateLimit, overflow KeyedOverflow, seed0, seed1 uint64) (*Keyed, error) {
	return openSharedKeyedFile(path, buckets, func(at unsafe.Pointer, n C.size_t, p **C.weir_keyed) C.weir_status {
		return C.weir_keyed_init_shared_rate(at, n, C.uint64_t(buckets), limit.c(), C.uint32_t(overflow),
			C.uint64_t(seed0), C.uint64_t(seed1), p)
	})
}

func openSharedKeyedFile(path string, buckets uint64, lay func(at unsafe.Pointer, n C.size_t, p **C.weir_keyed) C.weir_status) (*Keyed, error) {
	var bytes, align C.size_t
	if err := check(C.weir_keyed_shared_footprint(C.uint64_t(buckets), &bytes, &align)); err != nil {
		return nil, err
	}
	var p *C.weir_keyed
	mem, err := openRegionFile(path, bytes,
		func(at unsafe.Pointer, n C.size_t) C.weir_status { return lay(at, n, &p) },
		func(at unsafe.Pointer, n C.size_t) C.weir_status { return C.weir_keyed_attach(at, n, &p) })
	if err != nil {
		return nil, err
	}
	return newKeyed(p, nil, MonotonicNow, func() error { return syscall.Munmap(mem) })
}
