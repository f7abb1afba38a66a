package weir

/*
#cgo noescape weir_keyed_allow
#cgo nocallback weir_keyed_allow
#cgo noescape weir_keyed_decide
#cgo nocallback weir_keyed_decide
#cgo noescape weir_keyed_next
#cgo nocallback weir_keyed_next
#cgo noescape weir_keyed_read
#cgo nocallback weir_keyed_read
#include "weir.h"
*/
import "C"

import (
	"runtime"
	"strconv"
	"time"
)

// A keyed table's shape, from weir.h.
const (
	// KeyedSlots is the slots of a keyed table's bucket.
	KeyedSlots = C.WEIR_KEYED_SLOTS
	// KeyedBucketBytes is the bytes of a bucket, and its alignment.
	KeyedBucketBytes = C.WEIR_KEYED_BUCKET_BYTES
	// KeyedMaxBuckets is the most buckets a table may have (2^32, 512 GiB).
	KeyedMaxBuckets = C.WEIR_KEYED_MAX_BUCKETS
)

// KeyedOverflow is a keyed table's overflow policy: what answers a call
// for a new key when all 16 of its candidate slots hold active keys.
type KeyedOverflow uint32

const (
	// KeyedOverflowRefuse refuses a call that overflows.
	KeyedOverflowRefuse KeyedOverflow = C.WEIR_KEYED_OVERFLOW_REFUSE
	// KeyedOverflowAdmit admits a call that overflows.
	KeyedOverflowAdmit KeyedOverflow = C.WEIR_KEYED_OVERFLOW_ADMIT
	// KeyedOverflowShared decides a call that overflows on one word of the
	// table's limit that every overflowing key shares.
	KeyedOverflowShared KeyedOverflow = C.WEIR_KEYED_OVERFLOW_SHARED
)

// String names the policy as weir.h does ("refuse", "admit", "shared").
func (o KeyedOverflow) String() string {
	switch o {
	case KeyedOverflowRefuse:
		return "refuse"
	case KeyedOverflowAdmit:
		return "admit"
	case KeyedOverflowShared:
		return "shared"
	}
	return "KeyedOverflow(" + strconv.FormatUint(uint64(o), 10) + ")"
}

// KeyedDecision is what decided a keyed table's call ([Keyed.Decide]): the
// key's own word, or, when the table had no room for a new key, its
// overflow policy.
type KeyedDecision uint32

const (
	// KeyedRefused: the key's own word refused.
	KeyedRefused KeyedDecision = C.WEIR_KEYED_REFUSED
	// KeyedAllowed: the key's own word admitted, and was charged.
	KeyedAllowed KeyedDecision = C.WEIR_KEYED_ALLOWED
	// KeyedOverflowAdmitted: no room for the key; the policy admitted.
	KeyedOverflowAdmitted KeyedDecision = C.WEIR_KEYED_OVERFLOW_ADMITTED
	// KeyedOverflowRefused: no room for the key; the policy refused.
	KeyedOverflowRefused KeyedDecision = C.WEIR_KEYED_OVERFLOW_REFUSED
)

// Admitted reports whether the call may go ahead: KeyedAllowed or
// KeyedOverflowAdmitted.
func (d KeyedDecision) Admitted() bool { return d == KeyedAllowed || d == KeyedOverflowAdmitted }

// Overflowed reports whether the overflow policy decided, not the key's
// own word: KeyedOverflowAdmitted or KeyedOverflowRefused.
func (d KeyedDecision) Overflowed() bool {
	return d == KeyedOverflowAdmitted || d == KeyedOverflowRefused
}

// String names the decision ("allowed", "refused", "overflow admitted",
// "overflow refused").
func (d KeyedDecision) String() string {
	switch d {
	case KeyedRefused:
		return "refused"
	case KeyedAllowed:
		return "allowed"
	case KeyedOverflowAdmitted:
		return "overflow admitted"
	case KeyedOverflowRefused:
		return "overflow refused"
	}
	return "KeyedDecision(" + strconv.FormatUint(uint64(d), 10) + ")"
}

// KeyedKind is the kind of a keyed table's words.
type KeyedKind uint32

const (
	// KeyedKindRate: rate words (fixed windows, [NewKeyedRate]).
	KeyedKindRate KeyedKind = C.WEIR_KEYED_KIND_RATE
	// KeyedKindGCRA: GCRA words (token buckets, [NewKeyed], the default).
	KeyedKindGCRA KeyedKind = C.WEIR_KEYED_KIND_GCRA
)

// KeyedReading is a keyed table's shape and fill ([Keyed.Read]).
type KeyedReading struct {
	Buckets uint64 // the table's buckets
	Slots   uint64 // its slots: KeyedSlots × Buckets
	// Occupied is the slots holding a key (or a claim in progress); an idle
	// word counts until a new key replaces it.
	Occupied uint64
	// Overflows is the calls that overflowed since the table was laid,
	// whatever the policy answered (in every process, for a shared table).
	Overflows uint64
	Kind      KeyedKind
	Overflow  KeyedOverflow
}

// Keyed is a keyed table (weir_keyed): one exact limiter word per key, for
// millions of keys in fixed memory. Where [Bloom] lets keys share words,
// and so now and then refuses a key for another's traffic, this table
// gives each key a word of its own, found by the key's 63-bit fingerprint
// among 16 candidate slots (SipHash-1-3 under the caller's seed), and
// makes room for a new key only by forgetting an idle one, whose word at
// rest would decide every later call as a fresh word does. So a key's
// admits are a lone word's, exactly, for as long as the table does not
// overflow: a new key overflows when all its candidates hold active keys,
// with the chance [KeyedOverflowChance] gives ([KeyedBucketsFor] sizes a
// table for it), and the table's [KeyedOverflow] policy answers then.
// Its words are GCRA words ([NewKeyed], token buckets) or rate words
// ([NewKeyedRate], fixed windows). docs/keyed.md has the layout and the
// bounds.
//
// Decided through cgo, not in pure Go: a slot is one 16-byte atomic (the
// fingerprint and the word), claimed, charged and replaced by a 16-byte
// compare-and-swap, and Go's sync/atomic has none, so Go cannot follow the
// table's slot protocol beside C's (the bloom's 8-byte words it can, and
// [BloomWords] decides them in pure Go). Every call is one cgo crossing
// into weir_keyed_*, and the table lives outside the Go heap: C's heap
// ([NewKeyed]) or a mapped file ([OpenSharedKeyedFile]).
//
// Lock-free and safe for many goroutines where [KeyedLockFree] is true
// (x86_64 with cmpxchg16b, arm64); elsewhere each slot update takes a lock
// in C, and a table cannot be shared between processes. Close is not
// concurrent with use. Keys are hashed during the call and not kept.
type Keyed struct {
	p *C.weir_keyed
	// clock is what the short forms (Allow, AllowString) read: Now, or
	// MonotonicNow for a table shared between processes.
	clock func() time.Duration
	// unmap releases the mapped file of a shared table
	// (OpenSharedKeyedFile); nil for a heap one.
	unmap func() error
}

// NewKeyed makes a keyed table of buckets buckets ([KeyedSlots] slots
// each) of GCRA words, each key's limited by limit, a call that finds no
// room answered by overflow, keyed by (seed0, seed1): pass secret random
// values (crypto/rand), or clients can pick keys that crowd one bucket.
// Size it with [KeyedBucketsFor]. ErrGCRALimitInvalid for a zero
// GCRALimit, ErrKeyedOverflow for an unknown policy, ErrKeyedBuckets for
// 0 buckets or more than [KeyedMaxBuckets], ErrNoMemory, in that order.
// The table (128 bytes a bucket) is in C's heap; Close frees it, and a
// finalizer frees one never closed.
func NewKeyed(buckets uint64, limit GCRALimit, overflow KeyedOverflow, seed0, seed1 uint64) (*Keyed, error) {
	var p *C.weir_keyed
	err := check(C.weir_keyed_new(C.uint64_t(buckets), limit.c(), C.uint32_t(overflow),
		C.uint64_t(seed0), C.uint64_t(seed1), &p))
	return newKeyed(p, err, Now, nil)
}

// NewKeyedRate is NewKeyed with rate words (fixed windows), each key's
// limited by limit: ErrRateLimitInvalid for a zero RateLimit, the rest as
// NewKeyed.
func NewKeyedRate(buckets uint64, limit RateLimit, overflow KeyedOverflow, seed0, seed1 uint64) (*Keyed, error) {
	var p *C.weir_keyed
	err := check(C.weir_keyed_new_rate(C.uint64_t(buckets), limit.c(), C.uint32_t(overflow),
		C.uint64_t(seed0), C.uint64_t(seed1), &p))
	return newKeyed(p, err, Now, nil)
}

func newKeyed(p *C.weir_keyed, err error, clock func() time.Duration, unmap func() error) (*Keyed, error) {
	if err != nil {
		return nil, err
	}
	k := &Keyed{p: p, clock: clock, unmap: unmap}
	runtime.SetFinalizer(k, finalize[*Keyed])
	return k, nil
}

// Close frees the table (a shared one: unmaps this opener's mapping and
// frees nothing shared). A second Close does nothing; after it every key
// is refused and the other calls answer ErrClosed. Not concurrent with
// other use.
func (k *Keyed) Close() error {
	if k.p == nil {
		return nil
	}
	C.weir_keyed_free(k.p)
	k.p = nil
	runtime.SetFinalizer(k, nil)
	if k.unmap != nil {
		err := k.unmap()
		k.unmap = nil
		return err
	}
	return nil
}

// Reconfigure gives every key's GCRA word a new limit, in place and at
// once (weir_keyed_reconfigure): one publication that every call reads
// whole, old limit or new, without waiting for it. Each word keeps its
// arrival time, so a key's debt carries over as time and is repaid at the
// new rate; whose slot is at rest, and the shared overflow word, follow
// the new limit. Over judged instants in [a, c) a key keeps the old
// limit's bound and in [c, b] the new one's (the debt carried over only
// lowering it). A shared table ([OpenSharedKeyedFile]) takes it too: the
// limit lives in the file, so every process that opened it decides by the
// new one. The buckets, policy and seed never change. ErrGCRALimitInvalid,
// ErrKeyedKindChange for a table of rate words, ErrKeyedTickChange for a
// limit on another tick than the table's (every rate up to 7,812,500 a
// second has tick 0), ErrClosed; an error changes nothing. Safe beside the
// table's other calls (not Close).
func (k *Keyed) Reconfigure(limit GCRALimit) error {
	if k.p == nil {
		return ErrClosed
	}
	err := check(C.weir_keyed_reconfigure(k.p, limit.c()))
	runtime.KeepAlive(k)
	return err
}

// ReconfigureRate gives every key's rate word a new limit, in place and at
// once (weir_keyed_reconfigure_rate), as [Keyed.Reconfigure] does: each
// word keeps its window's start and count, read under the new limit, so it
// admits while the count is under the new burst and ends count × the new
// interval after its start (a slot is at rest once that end has passed).
// ErrRateLimitInvalid, ErrKeyedKindChange for a table of GCRA words,
// ErrClosed; an error changes nothing. Safe beside the table's other calls
// (not Close).
func (k *Keyed) ReconfigureRate(limit RateLimit) error {
	if k.p == nil {
		return ErrClosed
	}
	err := check(C.weir_keyed_reconfigure_rate(k.p, limit.c()))
	runtime.KeepAlive(k)
	return err
}

// Allow reports whether key may have one event now, charging its word if
// so: admitted by its own word or by the overflow policy. Now is [Now]
// for a table of this process, [MonotonicNow] for a shared one.
func (k *Keyed) Allow(key []byte) bool { return k.AllowAt(k.now(), key) }

// AllowString is Allow for a string key (not copied).
func (k *Keyed) AllowString(key string) bool { return k.AllowStringAt(k.now(), key) }

func (k *Keyed) now() time.Duration {
	if k.clock == nil {
		return Now()
	}
	return k.clock()
}

// AllowAt is Allow at now (weir_keyed_allow): false for a negative now
// or after Close, and such a refusal changes nothing.
func (k *Keyed) AllowAt(now time.Duration, key []byte) bool {
	if k.p == nil {
		return false
	}
	p, n := bytesPtr(key)
	ok := bool(C.weir_keyed_allow(k.p, ns(now), p, n))
	runtime.KeepAlive(k)
	return ok
}

// AllowStringAt is AllowString at now.
func (k *Keyed) AllowStringAt(now time.Duration, key string) bool {
	if k.p == nil {
		return false
	}
	p, n := stringPtr(key)
	ok := bool(C.weir_keyed_allow(k.p, ns(now), p, n))
	runtime.KeepAlive(k)
	return ok
}

// Decide asks for n events for key at now, all or nothing, charging its
// word if they are admitted, and answers what decided
// (weir_keyed_decide): KeyedAllowed or KeyedRefused (the key's own word),
// KeyedOverflowAdmitted or KeyedOverflowRefused (no room for a new key).
// A key without a slot takes one (a free one, or one whose word is at
// rest); a call its word would refuse whatever it held takes none.
// ErrNegative for a negative now, ErrKeyedCount for an n outside
// 1..burst, ErrClosed after Close; an error answers KeyedRefused and
// changes nothing.
func (k *Keyed) Decide(now time.Duration, key []byte, n int64) (KeyedDecision, error) {
	if k.p == nil {
		return KeyedRefused, ErrClosed
	}
	p, kn := bytesPtr(key)
	var d C.uint32_t
	err := check(C.weir_keyed_decide(k.p, ns(now), p, kn, C.int64_t(n), &d))
	runtime.KeepAlive(k)
	if err != nil {
		return KeyedRefused, err
	}
	return KeyedDecision(d), nil
}

// DecideString is Decide for a string key (not copied).
func (k *Keyed) DecideString(now time.Duration, key string, n int64) (KeyedDecision, error) {
	if k.p == nil {
		return KeyedRefused, ErrClosed
	}
	p, kn := stringPtr(key)
	var d C.uint32_t
	err := check(C.weir_keyed_decide(k.p, ns(now), p, kn, C.int64_t(n), &d))
	runtime.KeepAlive(k)
	if err != nil {
		return KeyedRefused, err
	}
	return KeyedDecision(d), nil
}

// Next is how long from now until key's own word would admit one event:
// 0 if it would now, [Never] if never. It charges nothing and takes no
// slot; a key the table does not hold answers 0, as a fresh word would
// (whether it would find room or overflow is not foreseen). A wait, as
// [Bloom.Next] and [GCRAWord.NextAt] answer, and as weir_keyed_next
// writes. ErrNegative for a negative now, ErrClosed after Close; an error
// answers Never.
func (k *Keyed) Next(now time.Duration, key []byte) (time.Duration, error) {
	if k.p == nil {
		return Never, ErrClosed
	}
	p, n := bytesPtr(key)
	var wait C.int64_t
	err := check(C.weir_keyed_next(k.p, ns(now), p, n, &wait))
	runtime.KeepAlive(k)
	return keyedWait(wait, err)
}

// NextString is Next for a string key (not copied).
func (k *Keyed) NextString(now time.Duration, key string) (time.Duration, error) {
	if k.p == nil {
		return Never, ErrClosed
	}
	p, n := stringPtr(key)
	var wait C.int64_t
	err := check(C.weir_keyed_next(k.p, ns(now), p, n, &wait))
	runtime.KeepAlive(k)
	return keyedWait(wait, err)
}

// keyedWait is weir_keyed_next's wait, or Never with its error.
func keyedWait(wait C.int64_t, err error) (time.Duration, error) {
	if err != nil {
		return Never, err
	}
	return time.Duration(wait), nil
}

// Read answers the table's shape and fill (weir_keyed_read). Occupied
// scans every slot, a cost in proportion to the table's size (about a
// millisecond for 26 MB): read it for a dashboard, not on every request.
// ErrClosed after Close.
func (k *Keyed) Read() (KeyedReading, error) {
	if k.p == nil {
		return KeyedReading{}, ErrClosed
	}
	var r C.weir_keyed_reading
	err := check(C.weir_keyed_read(k.p, &r))
	runtime.KeepAlive(k)
	if err != nil {
		return KeyedReading{}, err
	}
	return KeyedReading{
		Buckets:   uint64(r.buckets),
		Slots:     uint64(r.slots),
		Occupied:  uint64(r.occupied),
		Overflows: uint64(r.overflows),
		Kind:      KeyedKind(r.kind),
		Overflow:  KeyedOverflow(r.overflow_policy),
	}, nil
}

// KeyedLockFree reports whether a keyed table's slots are the CPU's own
// 16-byte compare-and-swap here (weir_keyed_lock_free: x86_64 with
// cmpxchg16b, arm64): its calls are then lock-free and a table may be
// shared between processes. Where it is false each slot update takes a
// lock in C, and [OpenSharedKeyedFile] answers ErrWordsNotShareable.
func KeyedLockFree() bool { return bool(C.weir_keyed_lock_free()) }

// KeyedBucketsFor is the fewest buckets for which a new key overflows a
// table holding keys active keys with chance at most chance
// (weir_keyed_buckets_for): 203,090 for 10^6 keys at 1e-9, 26 MB.
// ErrKeyedSizing for a chance that is NaN, not above 0 or above 1, or for
// keys that would need more than [KeyedMaxBuckets].
func KeyedBucketsFor(keys uint64, chance float64) (uint64, error) {
	var b C.uint64_t
	if err := check(C.weir_keyed_buckets_for(C.uint64_t(keys), C.double(chance), &b)); err != nil {
		return 0, err
	}
	return uint64(b), nil
}

// KeyedOverflowChance is the chance that a new key overflows a table of
// slots slots ([KeyedSlots] a bucket) holding keys active keys
// (weir_keyed_overflow_chance): 2.8e-20 half full, 1.9e-9 at 62 %, 0.77 %
// at 80 %. 1 for fewer than 8 slots; NaN when keys or slots is NaN,
// infinite or negative.
func KeyedOverflowChance(keys, slots float64) float64 {
	return float64(C.weir_keyed_overflow_chance(C.double(keys), C.double(slots)))
}
