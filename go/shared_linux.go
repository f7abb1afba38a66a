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
	if err := check(C.weir_breaker_recoveries(b.p, &out)); err != nil {
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
