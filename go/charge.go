package weir

/*
#cgo noescape weir_charge_all
#cgo nocallback weir_charge_all
#include "weir.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// ChargeMaxItems is the most items one ChargeAll or ChargeWords judges
// (WEIR_CHARGE_MAX_ITEMS).
const ChargeMaxItems = C.WEIR_CHARGE_MAX_ITEMS

// The kinds of weir_charge_item.
const (
	chargeGCRA     = C.WEIR_CHARGE_GCRA
	chargeRate     = C.WEIR_CHARGE_RATE
	chargeBucket   = C.WEIR_CHARGE_BUCKET
	chargeCBloom   = C.WEIR_CHARGE_BLOOM
	chargeBloomIn  = C.WEIR_CHARGE_BLOOM_IN
	chargeKindNone = 0
)

// ChargeItem is one limit for [ChargeAll] (or, for words, [ChargeWords])
// and what the call costs it: made by ChargeGCRA, ChargeRate,
// ChargeBucket, ChargeCBloom and ChargeBloomRegion. It points at the
// limit, which must stay alive and in place while the item is used; the
// key it names is read during the call and not kept. The zero ChargeItem
// names no limit (ErrUnknownKind).
type ChargeItem struct {
	kind  uint32
	word  *atomic.Uint64 // a GCRA or rate word
	gcra  GCRALimit
	rate  RateLimit
	owner any // the *Bucket, *CBloom or *BloomRegion charged
	// For a region: 0 judges by its header's limit; chargeGCRA or
	// chargeRate by the item's gcra or rate.
	judgedBy uint32
	key      unsafe.Pointer
	klen     int
	cost     float64
}

// ChargeGCRA names a GCRA word and its limit, cost whole tokens (a
// GCRAWord in Go memory, or one of [GCRAWordAt] and [GCRAWordOf] in
// memory shared with C or other processes).
func ChargeGCRA(word *GCRAWord, limit GCRALimit, cost int64) ChargeItem {
	return ChargeItem{kind: chargeGCRA, word: wordState(unsafe.Pointer(word)), gcra: limit, cost: float64(cost)}
}

// ChargeRate names a rate word and its limit, cost whole events (as that
// many AllowAt calls at one instant).
func ChargeRate(word *RateWord, limit RateLimit, cost int64) ChargeItem {
	return ChargeItem{kind: chargeRate, word: wordState(unsafe.Pointer(word)), rate: limit, cost: float64(cost)}
}

// wordState is the atomic word of a GCRAWord or RateWord (one
// atomic.Uint64 each), nil for nil.
func wordState(p unsafe.Pointer) *atomic.Uint64 { return (*atomic.Uint64)(p) }

// ChargeBucket names a bucket, cost tokens (fractions allowed).
func ChargeBucket(b *Bucket, cost float64) ChargeItem {
	return ChargeItem{kind: chargeBucket, owner: b, cost: cost}
}

// ChargeCBloom names a key of a C bloom array, cost whole events on each
// of its words that takes them.
func ChargeCBloom(b *CBloom, key []byte, cost int64) ChargeItem {
	k, n := bytesPtr(key)
	return ChargeItem{kind: chargeCBloom, owner: b, key: k, klen: int(n), cost: float64(cost)}
}

// ChargeCBloomString is ChargeCBloom for a string key (not copied).
func ChargeCBloomString(b *CBloom, key string, cost int64) ChargeItem {
	k, n := stringPtr(key)
	return ChargeItem{kind: chargeCBloom, owner: b, key: k, klen: int(n), cost: float64(cost)}
}

// ChargeBloomRegion names a key of a bloom array laid in memory the
// caller owns (a MAP_SHARED mapping: the nginx module's zones are such).
func ChargeBloomRegion(r *BloomRegion, key []byte, cost int64) ChargeItem {
	k, n := bytesPtr(key)
	return ChargeItem{kind: chargeBloomIn, owner: r, key: k, klen: int(n), cost: float64(cost)}
}

// ChargeBloomRegionGCRA is ChargeBloomRegion judged by limit instead of
// the limit in the region's header (which is left alone): a region of GCRA
// words whose rate or burst changed (a reload) keeps its words, each
// caller bringing its own limit; a word keeps what it decided under the
// old limit (a key's debt carries over as time). A limit of another tick
// than the region's (Shift differs: only rates above 7,812,500 a second
// have one above 0) would misread the words: ErrGCRALimitInvalid, as is a
// region of rate words (weir_charge_item.limit).
func ChargeBloomRegionGCRA(r *BloomRegion, key []byte, limit GCRALimit, cost int64) ChargeItem {
	it := ChargeBloomRegion(r, key, cost)
	it.judgedBy, it.gcra = chargeGCRA, limit
	return it
}

// ChargeBloomRegionRate is ChargeBloomRegionGCRA for a region of rate
// words (the window kind), judged by limit.
func ChargeBloomRegionRate(r *BloomRegion, key []byte, limit RateLimit, cost int64) ChargeItem {
	it := ChargeBloomRegion(r, key, cost)
	it.judgedBy, it.rate = chargeRate, limit
	return it
}

// ChargeBloomRegionString is ChargeBloomRegion for a string key.
func ChargeBloomRegionString(r *BloomRegion, key string, cost int64) ChargeItem {
	k, n := stringPtr(key)
	return ChargeItem{kind: chargeBloomIn, owner: r, key: k, klen: int(n), cost: float64(cost)}
}

// ChargeResult is what ChargeAll or ChargeWords answered
// (weir_charge_result).
type ChargeResult struct {
	// Admitted: every item was charged its cost.
	Admitted bool
	// Index is the item that refused, or the one at fault with an error;
	// the number of items when admitted.
	Index int
	// Wait is how long from now until items[Index] would take its cost
	// (a Retry-After): 0 when admitted, [Never] if it never will.
	Wait time.Duration
	// Kept counts the charges before the refusal that could not be given
	// back, each still charged as if admitted (the slack: see ChargeAll).
	Kept int
}

// ChargeAll charges every item its cost at now, or none: an organisation's
// limit, a team's and a user's, so that a refusal by one spends none of
// the others (weir_charge_all). Every item is read first and a refusal
// there charges nothing; then each is charged in order by its own atomic
// step, and if one refuses (another call spent it in between) the ones
// charged are given back, last first, each put back to its value before
// the charge only while the word still holds what the charge wrote.
//
// No limit ever admits beyond its own bound, under any interleaving of
// goroutines and processes. The slack a refusal may leave: a charge given
// back was visible while this call ran, so another call may have been
// refused for it (a false refusal, never an over-admit); and a charge that
// another call charged over before it was given back is kept, as if this
// call had been admitted by that limit (Kept counts them; the limit's
// refill brings it back). Put first the item likeliest to refuse.
//
// A refusal is a nil error with Admitted false. Errors charge nothing and
// name the item at fault in Index: ErrChargeTooMany (more than
// ChargeMaxItems), ErrClosed (a closed Bucket or CBloom), ErrUnknownKind
// (a zero ChargeItem), ErrChargeCost (a cost NaN, infinite, not positive,
// or not whole for a word or key), ErrNull, ErrMisaligned, the limits' and
// regions' own errors.
//
// Words alone are decided in pure Go ([ChargeWords]: the same answers and
// writes). With a bucket or a bloom key the call crosses into C, and the
// words go with it, pinned for the call (runtime.Pinner, which allocates a
// little): cgo's pointer rules then ask that a word not share its
// allocation with other Go pointers (a GCRAWord of its own, an array of
// words, or memory outside the Go heap all do).
func ChargeAll(now time.Duration, items ...ChargeItem) (ChargeResult, error) {
	for i := range items {
		if k := items[i].kind; k != chargeGCRA && k != chargeRate {
			return chargeC(now, items)
		}
	}
	return ChargeWords(now, items...)
}

// chargeLimits holds the items' limits for C: plain integers, so that the
// memory C reads them from holds no Go pointer.
type chargeLimits [ChargeMaxItems][3]uint64

// chargeC is ChargeAll through weir_charge_all, whatever the items.
func chargeC(now time.Duration, items []ChargeItem) (ChargeResult, error) {
	n := len(items)
	if n > ChargeMaxItems {
		return ChargeResult{Index: n}, ErrChargeTooMany
	}
	var cs [ChargeMaxItems]C.weir_charge_item
	limits := new(chargeLimits)
	var pins runtime.Pinner
	defer pins.Unpin()
	pins.Pin(limits)
	for i := range items {
		it, c := &items[i], &cs[i]
		c.kind = C.uint32_t(it.kind)
		c.cost = C.double(it.cost)
		switch it.kind {
		case chargeGCRA, chargeRate:
			if it.word != nil {
				pins.Pin(it.word)
				c.target = unsafe.Pointer(it.word)
			}
			if it.kind == chargeGCRA {
				*(*GCRALimit)(unsafe.Pointer(&limits[i])) = it.gcra
			} else {
				*(*RateLimit)(unsafe.Pointer(&limits[i])) = it.rate
			}
			c.limit = unsafe.Pointer(&limits[i])
		case chargeBucket:
			b, _ := it.owner.(*Bucket)
			if b == nil || b.p == nil {
				return ChargeResult{Index: i}, ErrClosed
			}
			c.target = unsafe.Pointer(b.p)
		case chargeCBloom:
			b, _ := it.owner.(*CBloom)
			if b == nil || b.p == nil {
				return ChargeResult{Index: i}, ErrClosed
			}
			c.target = unsafe.Pointer(b.p)
		case chargeBloomIn:
			r, _ := it.owner.(*BloomRegion)
			if r == nil {
				return ChargeResult{Index: i}, ErrNull
			}
			m, mn := r.region()
			if m != nil {
				pins.Pin(m)
			}
			c.target, c.target_len = m, mn
			// The header names the words' kind (its third 64-bit word, low
			// half: 1 window, 2 gcra); C cannot tell a limit's type from
			// its pointer, so a limit of the other kind stops here.
			if it.judgedBy != 0 && m != nil && mn >= 64 {
				kind := uint32(*(*uint64)(unsafe.Add(m, 16)))
				if it.judgedBy == chargeGCRA && kind != 2 {
					return ChargeResult{Index: i}, ErrGCRALimitInvalid
				}
				if it.judgedBy == chargeRate && kind != 1 {
					return ChargeResult{Index: i}, ErrRateLimitInvalid
				}
			}
			switch it.judgedBy {
			case chargeGCRA:
				*(*GCRALimit)(unsafe.Pointer(&limits[i])) = it.gcra
				c.limit = unsafe.Pointer(&limits[i])
			case chargeRate:
				*(*RateLimit)(unsafe.Pointer(&limits[i])) = it.rate
				c.limit = unsafe.Pointer(&limits[i])
			}
		}
		if it.key != nil {
			pins.Pin(it.key)
			c.key, c.key_len = it.key, C.size_t(it.klen)
		}
	}
	var out C.weir_charge_result
	err := check(C.weir_charge_all(&cs[0], C.size_t(n), ns(now), &out))
	runtime.KeepAlive(items)
	r := ChargeResult{Admitted: bool(out.admitted), Index: int(out.index), Wait: dur(out.wait), Kept: int(out.kept)}
	return r, err
}
