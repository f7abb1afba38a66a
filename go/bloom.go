package weir

/*
#cgo noescape weir_bloom_allow
#cgo nocallback weir_bloom_allow
#cgo noescape weir_bloom_next
#cgo nocallback weir_bloom_next
#cgo noescape weir_bloom_allow_in
#cgo nocallback weir_bloom_allow_in
#cgo noescape weir_bloom_next_in
#cgo nocallback weir_bloom_next_in
#include "weir.h"
*/
import "C"

import (
	"crypto/rand"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Limits of a bloom array's shape, from weir.h.
const (
	BloomMaxSizeLog2  = C.WEIR_BLOOM_MAX_SIZE_LOG2
	BloomMinSizeLog2  = C.WEIR_BLOOM_MIN_SIZE_LOG2
	BloomMaxHashes    = C.WEIR_BLOOM_MAX_HASHES
	BloomHeaderBytes  = C.WEIR_BLOOM_HEADER_BYTES
	BloomAlign        = C.WEIR_BLOOM_ALIGN
	RateGranularityNs = C.WEIR_RATE_GRANULARITY_NS
	RateMaxBurst      = C.WEIR_RATE_MAX_BURST
)

// Bloom limits a key space too large to give each key its own limiter
// (client addresses, API keys): 2^sizeLog2 words, hashes of them per key,
// all in one 64-byte line, keys hashed with SipHash-1-3 under a secret
// seed (weir_bloom). Its words are rate words (NewBloom: a burst, then
// nothing until the window ends) or GCRA words (NewGCRABloom: a token
// bucket). The array lives in Go memory, laid by weir_bloom_init_in and
// decided in pure Go ([BloomWords]), so a decision pays no cgo crossing;
// C never keeps a pointer to it. For an array outside the Go heap see
// [CBloom]. Lock-free and safe for many goroutines; Close is not
// concurrent with use. Keys are read during the call and not kept.
type Bloom struct {
	w atomic.Pointer[BloomWords]
}

// NewBloom makes a bloom array of rate words with a seed drawn from
// crypto/rand, so that clients cannot pick keys that collide.
// ErrRateLimitInvalid, ErrBloomSize, ErrBloomTooFewWords, ErrBloomHashes.
// Its 8 × 2^sizeLog2 bytes (and 64 more) are one Go allocation, which,
// like any make, the runtime cannot answer with an error when memory runs
// out; [NewCBloom] answers ErrNoMemory instead.
func NewBloom(sizeLog2, hashes uint32, limit RateLimit) (*Bloom, error) {
	seed0, seed1 := drawSeed()
	return NewBloomSeeded(sizeLog2, hashes, limit, seed0, seed1)
}

// NewBloomSeeded is NewBloom with the caller's seed (reproducible runs;
// keep a real one secret).
func NewBloomSeeded(sizeLog2, hashes uint32, limit RateLimit, seed0, seed1 uint64) (*Bloom, error) {
	return newBloom(sizeLog2, func(mem []byte) error {
		_, err := LayBloom(mem, sizeLog2, hashes, limit, seed0, seed1)
		return err
	})
}

// NewGCRABloom makes a bloom array of GCRA words (token buckets, the
// gcra kind) with a seed drawn from crypto/rand. ErrGCRALimitInvalid,
// ErrBloomSize, ErrBloomTooFewWords, ErrBloomHashes.
func NewGCRABloom(sizeLog2, hashes uint32, limit GCRALimit) (*Bloom, error) {
	seed0, seed1 := drawSeed()
	return NewGCRABloomSeeded(sizeLog2, hashes, limit, seed0, seed1)
}

// NewGCRABloomSeeded is NewGCRABloom with the caller's seed.
func NewGCRABloomSeeded(sizeLog2, hashes uint32, limit GCRALimit, seed0, seed1 uint64) (*Bloom, error) {
	return newBloom(sizeLog2, func(mem []byte) error {
		_, err := LayGCRABloom(mem, sizeLog2, hashes, limit, seed0, seed1)
		return err
	})
}

// newBloom lays an array into fresh Go memory, 64-byte aligned: a
// []uint64, which holds no pointer, so the GC never scans it and C may
// read it for the call. A size weir refuses is laid into nothing, so the
// arguments' error is the one weir_bloom_new answers.
func newBloom(sizeLog2 uint32, lay func(mem []byte) error) (*Bloom, error) {
	var mem []byte
	if n := BloomFootprint(sizeLog2); n > 0 {
		words := make([]uint64, n/8+BloomAlign/8-1)
		skip := (BloomAlign - int(uintptr(unsafe.Pointer(&words[0]))%BloomAlign)) % BloomAlign / 8
		mem = unsafe.Slice((*byte)(unsafe.Pointer(&words[skip])), n)
	}
	if err := lay(mem); err != nil {
		return nil, err
	}
	w, err := NewBloomWords(mem)
	if err != nil {
		return nil, err
	}
	b := &Bloom{}
	b.w.Store(w)
	runtime.SetFinalizer(b, finalize[*Bloom])
	return b, nil
}

func drawSeed() (uint64, uint64) {
	var s [16]byte
	_, _ = rand.Read(s[:]) // crypto/rand.Read never fails (Go 1.24)
	return binary.LittleEndian.Uint64(s[:8]), binary.LittleEndian.Uint64(s[8:])
}

// Close lets the array go (the GC frees its memory). A second Close does
// nothing; after it every key is refused. Not concurrent with other use.
func (b *Bloom) Close() error {
	if b.w.Load() != nil {
		b.w.Store(nil)
		runtime.SetFinalizer(b, nil)
	}
	return nil
}

// bloomReconfigure holds off a second reconfiguration of one Bloom until
// the first has published.
var bloomReconfigure sync.Mutex

// Reconfigure gives every rate word of the array a new limit, in place
// (weir_bloom_reconfigure, in pure Go): one publication of the array's
// words with the new limit, so a decision racing it is judged wholly by
// the old limit or the new one. Each word keeps its window's start and
// count, read under the new limit: it admits while the count is under the
// new burst and ends count × the new interval after its start. For a key
// with one hash, the old limit's admits in [a, c) keep its bound and the
// new one's in [c, b] keep the new bound (burst' + (b − c) / interval');
// across any number of changes at most 2 × the largest burst + T / the
// shortest interval in any T. ErrRateLimitInvalid, ErrBloomKindChange
// for an array of GCRA words, ErrClosed; an error changes nothing. Safe
// beside the array's other calls (not Close).
func (b *Bloom) Reconfigure(limit RateLimit) error {
	if _, err := RateLimitFromParts(limit.intervalNs, limit.intervalFrac, limit.burst); err != nil {
		return ErrRateLimitInvalid
	}
	return b.publish(false, func(w *BloomWords) error {
		w.rate = limit
		return nil
	})
}

// ReconfigureGCRA gives every GCRA word of the array a new limit, in place
// (weir_bloom_reconfigure_gcra, in pure Go): each word keeps its arrival
// time, so a key's debt carries over as time and is repaid at the new
// rate. Over judged instants in [a, b] the admits of one word, each worth
// a token of the limit that judged it, sum to at most (b − a) plus the
// largest bucket among those limits. ErrGCRALimitInvalid,
// ErrBloomKindChange for an array of rate words, ErrBloomTickChange for a
// limit on another tick than the array's (every rate up to 7,812,500 a
// second has tick 0), ErrClosed; an error changes nothing.
func (b *Bloom) ReconfigureGCRA(limit GCRALimit) error {
	if _, err := GCRALimitFromParts(limit.perToken, limit.tolerance, limit.shift); err != nil {
		return ErrGCRALimitInvalid
	}
	return b.publish(true, func(w *BloomWords) error {
		if w.gcraLimit.shift != limit.shift {
			return ErrBloomTickChange
		}
		w.gcraLimit = limit
		return nil
	})
}

// publish stores a copy of the array's words with set applied: decisions
// load the copy whole (an atomic pointer), never a mix.
func (b *Bloom) publish(gcra bool, set func(w *BloomWords) error) error {
	bloomReconfigure.Lock()
	defer bloomReconfigure.Unlock()
	w := b.w.Load()
	if w == nil {
		return ErrClosed
	}
	if w.gcra != gcra {
		return ErrBloomKindChange
	}
	next := *w
	if err := set(&next); err != nil {
		return err
	}
	b.w.Store(&next)
	return nil
}

// Allow reports whether key may have one event at [Now], charging it if so.
func (b *Bloom) Allow(key []byte) bool { return b.AllowAt(Now(), key) }

// AllowString is Allow for a string key (not copied).
func (b *Bloom) AllowString(key string) bool { return b.AllowStringAt(Now(), key) }

// AllowAt is Allow at now; a negative now is refused.
func (b *Bloom) AllowAt(now time.Duration, key []byte) bool {
	w := b.w.Load()
	if w == nil {
		return false
	}
	return w.AllowAt(now, key)
}

// AllowStringAt is AllowString at now.
func (b *Bloom) AllowStringAt(now time.Duration, key string) bool {
	w := b.w.Load()
	if w == nil {
		return false
	}
	return w.AllowStringAt(now, key)
}

// Next is how long from now until key would be allowed: 0 if it would
// now; [Never] after Close or for a negative now. Reads only.
func (b *Bloom) Next(now time.Duration, key []byte) time.Duration {
	w := b.w.Load()
	if w == nil {
		return Never
	}
	return w.NextAt(now, key)
}

// NextString is Next for a string key.
func (b *Bloom) NextString(now time.Duration, key string) time.Duration {
	w := b.w.Load()
	if w == nil {
		return Never
	}
	return w.NextStringAt(now, key)
}

// CBloom is a bloom array in C's heap (weir_bloom_new, weir_bloom_new_gcra):
// the same decisions as [Bloom], with its words outside the Go heap (so a
// large array does not count toward the GC's pacing), at one cgo crossing
// a call. Close frees it; a finalizer frees one never closed. Safe for
// many goroutines; Close is not concurrent with use.
type CBloom struct {
	p *C.weir_bloom
}

// NewCBloom makes a C bloom array of rate words keyed by (seed0, seed1):
// pass secret random values. Errors as NewBloom's, and ErrNoMemory.
func NewCBloom(sizeLog2, hashes uint32, limit RateLimit, seed0, seed1 uint64) (*CBloom, error) {
	var p *C.weir_bloom
	err := check(C.weir_bloom_new(C.uint32_t(sizeLog2), C.uint32_t(hashes), limit.c(),
		C.uint64_t(seed0), C.uint64_t(seed1), &p))
	return newCBloom(p, err)
}

// NewGCRACBloom is NewCBloom with GCRA words. Errors as NewGCRABloom's,
// and ErrNoMemory.
func NewGCRACBloom(sizeLog2, hashes uint32, limit GCRALimit, seed0, seed1 uint64) (*CBloom, error) {
	var p *C.weir_bloom
	err := check(C.weir_bloom_new_gcra(C.uint32_t(sizeLog2), C.uint32_t(hashes), limit.c(),
		C.uint64_t(seed0), C.uint64_t(seed1), &p))
	return newCBloom(p, err)
}

func newCBloom(p *C.weir_bloom, err error) (*CBloom, error) {
	if err != nil {
		return nil, err
	}
	b := &CBloom{p: p}
	runtime.SetFinalizer(b, finalize[*CBloom])
	return b, nil
}

// Close frees the array. A second Close does nothing; after it every key
// is refused. Not concurrent with other use.
func (b *CBloom) Close() error {
	if b.p != nil {
		C.weir_bloom_free(b.p)
		b.p = nil
		runtime.SetFinalizer(b, nil)
	}
	return nil
}

// Reconfigure gives every rate word of the array a new limit in place
// (weir_bloom_reconfigure), as [Bloom.Reconfigure] does: each word keeps
// its window, read under the new limit. ErrRateLimitInvalid,
// ErrBloomKindChange for an array of GCRA words, ErrClosed. Safe beside
// the array's other calls (not Close).
func (b *CBloom) Reconfigure(limit RateLimit) error {
	if b.p == nil {
		return ErrClosed
	}
	err := check(C.weir_bloom_reconfigure(b.p, limit.c()))
	runtime.KeepAlive(b)
	return err
}

// ReconfigureGCRA gives every GCRA word of the array a new limit in place
// (weir_bloom_reconfigure_gcra), as [Bloom.ReconfigureGCRA] does: each
// word keeps its arrival time. ErrGCRALimitInvalid, ErrBloomKindChange,
// ErrBloomTickChange, ErrClosed.
func (b *CBloom) ReconfigureGCRA(limit GCRALimit) error {
	if b.p == nil {
		return ErrClosed
	}
	err := check(C.weir_bloom_reconfigure_gcra(b.p, limit.c()))
	runtime.KeepAlive(b)
	return err
}

// AllowAt reports whether key may have one event at now, charging each of
// its words that allows; a negative now is refused.
func (b *CBloom) AllowAt(now time.Duration, key []byte) bool {
	if b.p == nil {
		return false
	}
	k, n := bytesPtr(key)
	ok := bool(C.weir_bloom_allow(b.p, ns(now), k, n))
	runtime.KeepAlive(b)
	return ok
}

// AllowStringAt is AllowAt for a string key (not copied).
func (b *CBloom) AllowStringAt(now time.Duration, key string) bool {
	if b.p == nil {
		return false
	}
	k, n := stringPtr(key)
	ok := bool(C.weir_bloom_allow(b.p, ns(now), k, n))
	runtime.KeepAlive(b)
	return ok
}

// Next is how long from now until key would be allowed: 0 if it would
// now; [Never] after Close or for a negative now. Reads only.
func (b *CBloom) Next(now time.Duration, key []byte) time.Duration {
	if b.p == nil {
		return Never
	}
	k, n := bytesPtr(key)
	d := dur(C.weir_bloom_next(b.p, ns(now), k, n))
	runtime.KeepAlive(b)
	return d
}

// NextString is Next for a string key.
func (b *CBloom) NextString(now time.Duration, key string) time.Duration {
	if b.p == nil {
		return Never
	}
	k, n := stringPtr(key)
	d := dur(C.weir_bloom_next(b.p, ns(now), k, n))
	runtime.KeepAlive(b)
	return d
}

// BloomFootprint is the bytes a region for 2^sizeLog2 words needs
// (header included); 0 for a size weir cannot lay.
func BloomFootprint(sizeLog2 uint32) int { return int(C.weir_bloom_footprint(C.uint32_t(sizeLog2))) }

// BloomRegion is a bloom array laid in memory the caller owns (weir_bloom_*_in):
// typically a MAP_SHARED mapping, so that every process mapping it, Go or
// C, shares one limit. It holds no pointer; weir checks the region's
// header on every call. Use [OpenBloomFile] for a file-backed region on
// Linux.
type BloomRegion struct {
	mem   []byte
	unmap func([]byte) error
}

// LayBloom lays a fresh bloom array of rate words into mem (64-byte
// aligned, as mmap's pages are; at least BloomFootprint(sizeLog2) long)
// and answers the region over it. Laying resets any array there; lay
// once, before anyone uses it.
func LayBloom(mem []byte, sizeLog2, hashes uint32, limit RateLimit, seed0, seed1 uint64) (*BloomRegion, error) {
	p, n := bytesPtr(mem)
	err := check(C.weir_bloom_init_in(p, n, C.uint32_t(sizeLog2), C.uint32_t(hashes), limit.c(),
		C.uint64_t(seed0), C.uint64_t(seed1)))
	if err != nil {
		return nil, err
	}
	return &BloomRegion{mem: mem}, nil
}

// LayGCRABloom is LayBloom with GCRA words (token buckets, the gcra kind):
// weir_bloom_init_gcra_in. The region's header names the kind, so
// attachers, BloomWords and the *_in calls all read it from there.
func LayGCRABloom(mem []byte, sizeLog2, hashes uint32, limit GCRALimit, seed0, seed1 uint64) (*BloomRegion, error) {
	p, n := bytesPtr(mem)
	err := check(C.weir_bloom_init_gcra_in(p, n, C.uint32_t(sizeLog2), C.uint32_t(hashes), limit.c(),
		C.uint64_t(seed0), C.uint64_t(seed1)))
	if err != nil {
		return nil, err
	}
	return &BloomRegion{mem: mem}, nil
}

// AttachBloom answers the region over an array another process (or an
// earlier LayBloom) laid into mem: ErrBloomForeign, ErrBloomVersion,
// ErrBloomTooSmall, ErrMisaligned otherwise.
func AttachBloom(mem []byte) (*BloomRegion, error) {
	p, n := bytesPtr(mem)
	if err := check(C.weir_bloom_check_in(p, n)); err != nil {
		return nil, err
	}
	return &BloomRegion{mem: mem}, nil
}

// Close unmaps a region OpenBloomFile mapped (a region over the caller's
// memory only forgets it). After Close every key is refused.
func (r *BloomRegion) Close() error {
	mem, unmap := r.mem, r.unmap
	r.mem, r.unmap = nil, nil
	if unmap != nil && mem != nil {
		return unmap(mem)
	}
	return nil
}

func (r *BloomRegion) region() (unsafe.Pointer, C.size_t) {
	if len(r.mem) == 0 {
		return nil, 0
	}
	return unsafe.Pointer(unsafe.SliceData(r.mem)), C.size_t(len(r.mem))
}

// Allow reports whether key may have one event at [MonotonicNow], the
// clock every process sharing the region reads.
func (r *BloomRegion) Allow(key []byte) bool { return r.AllowAt(MonotonicNow(), key) }

// AllowString is Allow for a string key.
func (r *BloomRegion) AllowString(key string) bool { return r.AllowStringAt(MonotonicNow(), key) }

// AllowAt is Allow at now, which must be on the clock every sharer reads.
func (r *BloomRegion) AllowAt(now time.Duration, key []byte) bool {
	m, mn := r.region()
	k, kn := bytesPtr(key)
	return bool(C.weir_bloom_allow_in(m, mn, ns(now), k, kn))
}

// AllowStringAt is AllowString at now.
func (r *BloomRegion) AllowStringAt(now time.Duration, key string) bool {
	m, mn := r.region()
	k, kn := stringPtr(key)
	return bool(C.weir_bloom_allow_in(m, mn, ns(now), k, kn))
}

// Next is how long from now until key would be allowed. Reads only.
func (r *BloomRegion) Next(now time.Duration, key []byte) time.Duration {
	m, mn := r.region()
	k, kn := bytesPtr(key)
	return dur(C.weir_bloom_next_in(m, mn, ns(now), k, kn))
}

// NextString is Next for a string key.
func (r *BloomRegion) NextString(now time.Duration, key string) time.Duration {
	m, mn := r.region()
	k, kn := stringPtr(key)
	return dur(C.weir_bloom_next_in(m, mn, ns(now), k, kn))
}
