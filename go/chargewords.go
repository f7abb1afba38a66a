package weir

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// ChargeWords is ChargeAll decided in pure Go, over words only (items from
// ChargeGCRA and ChargeRate): no cgo crossing, no allocation. The same
// answers and the same writes as weir_charge_all over the same words, so
// Go and C callers may charge one hierarchy of shared words together.
// ErrUnknownKind names an item of another kind; the other errors are
// ChargeAll's for words.
func ChargeWords(now time.Duration, items ...ChargeItem) (ChargeResult, error) {
	n := len(items)
	if n > ChargeMaxItems {
		return ChargeResult{Index: n}, ErrChargeTooMany
	}
	for i := range items {
		if err := items[i].checkWord(); err != nil {
			return ChargeResult{Index: i}, err
		}
	}
	// Read every item first: a refusal there charges nothing.
	for i := range items {
		if wait := items[i].waitAt(now); wait > 0 {
			return ChargeResult{Index: i, Wait: wait}, nil
		}
	}
	return chargeFrom(items, 0, now), nil
}

// checkWord is nil for a word item with a limit weir made and a whole
// positive cost, else the error weir_charge_all answers for it.
func (it *ChargeItem) checkWord() error {
	switch it.kind {
	case chargeGCRA:
		if it.word == nil {
			return ErrNull
		}
		if _, err := GCRALimitFromParts(it.gcra.perToken, it.gcra.tolerance, it.gcra.shift); err != nil ||
			it.gcra.reserved != 0 {
			return ErrGCRALimitInvalid
		}
	case chargeRate:
		if it.word == nil {
			return ErrNull
		}
		if _, err := RateLimitFromParts(it.rate.intervalNs, it.rate.intervalFrac, it.rate.burst); err != nil {
			return ErrRateLimitInvalid
		}
	default:
		return ErrUnknownKind
	}
	if !(it.cost > 0) || math.IsInf(it.cost, 0) || it.cost != math.Trunc(it.cost) {
		return ErrChargeCost
	}
	return nil
}

// units is the whole cost, INT64_MAX for a larger one.
func (it *ChargeItem) units() int64 {
	if it.cost >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(it.cost)
}

// chargeFrom charges items[i:] and gives items[i]'s charge back when a
// later one refuses.
func chargeFrom(items []ChargeItem, i int, now time.Duration) ChargeResult {
	if i == len(items) {
		return ChargeResult{Admitted: true, Index: i}
	}
	it := &items[i]
	before, after, ok := it.take(now)
	if !ok {
		return ChargeResult{Index: i, Wait: it.waitAt(now)}
	}
	r := chargeFrom(items, i+1, now)
	if !r.Admitted && !restore(it.word, before, after) {
		r.Kept++
	}
	return r
}

// restore puts word back to before if it still holds after (what a charge
// wrote): every charge moves a word strictly up, so a word that still
// holds it has seen since only charges given back the same way.
func restore(word *atomic.Uint64, before, after uint64) bool {
	return word.CompareAndSwap(after, before)
}

// take is the item's own charge at now: the word before and after it.
func (it *ChargeItem) take(now time.Duration) (before, after uint64, ok bool) {
	if now < 0 {
		return 0, 0, false
	}
	if it.kind == chargeGCRA {
		cost, fits := gcraCost(&it.gcra, it.units())
		if !fits {
			return 0, 0, false
		}
		return gcraTake(it.word, &it.gcra, it.gcra.ticks(int64(now)), cost)
	}
	n := it.units()
	if n < 1 || n > int64(it.rate.burst) {
		return 0, 0, false
	}
	return rateTakeN(it.word, &it.rate, rateAxis(now), uint64(n))
}

// waitAt is how long from now until the item would take its cost: 0 if
// it would now, [Never] if it never will.
func (it *ChargeItem) waitAt(now time.Duration) time.Duration {
	if now < 0 {
		return Never
	}
	if it.kind == chargeGCRA {
		cost, fits := gcraCost(&it.gcra, it.units())
		if !fits {
			return Never
		}
		return gcraWait(it.word.Load(), &it.gcra, now, cost)
	}
	n := it.units()
	if n < 1 || n > int64(it.rate.burst) {
		return Never
	}
	return rateWaitN(it.word.Load(), &it.rate, rateAxis(now), uint64(n))
}

// gcraCost is the ticks n tokens cost, if n is 1..burst.
func gcraCost(l *GCRALimit, n int64) (int64, bool) {
	if n < 1 {
		return 0, false
	}
	hi, cost := bits.Mul64(l.perToken, uint64(n))
	if hi != 0 || cost > uint64(l.tolerance) {
		return 0, false
	}
	return int64(cost), true
}

// gcraTake is GCRAWord.take answering the word before and after.
func gcraTake(word *atomic.Uint64, l *GCRALimit, t, cost int64) (uint64, uint64, bool) {
	current := word.Load()
	for {
		next := addSat(max(tatOf(current), t), cost)
		if next > t+l.tolerance {
			return 0, 0, false
		}
		if word.CompareAndSwap(current, uint64(next)) {
			return current, uint64(next), true
		}
		current = word.Load()
	}
}

// gcraWait is GCRAWord.NextAt for a take of cost ticks.
func gcraWait(word uint64, l *GCRALimit, now time.Duration, cost int64) time.Duration {
	t := l.ticks(int64(now))
	due := addSat(tatOf(word), cost) - l.tolerance
	if due <= t {
		return 0
	}
	if last := int64(gcraHorizon) >> l.shift << l.shift; due > last {
		return Never
	}
	ns := -(-due >> l.shift)
	return time.Duration(ns) - now
}

// rateAxis is now (≥ 0) on the rate word's axis, which stands still at
// RateMaxNow.
func rateAxis(now time.Duration) uint64 {
	if now > RateMaxNow {
		return uint64(RateMaxNow)
	}
	return uint64(now)
}

// rateStepN is the word after n events (1..burst) at t, all or nothing:
// what n AllowAt calls at t write one after another, or false when the
// last of them would be refused.
func rateStepN(current uint64, l *RateLimit, t, n uint64) (uint64, bool) {
	count := current & rateCountMask
	start := (current >> rateCountBits) << rateTimeShift
	var passed uint64
	if t > start {
		passed = t - start
	}
	switch {
	case passed >= l.span(count):
		return (t+(1<<rateTimeShift-1))>>rateTimeShift<<rateCountBits | n, true
	case count+n <= uint64(l.burst):
		return current + n, true
	default:
		return 0, false
	}
}

// rateTakeN charges n events at t: the word before and after.
func rateTakeN(word *atomic.Uint64, l *RateLimit, t, n uint64) (uint64, uint64, bool) {
	current := word.Load()
	for {
		next, ok := rateStepN(current, l, t, n)
		if !ok {
			return 0, 0, false
		}
		if word.CompareAndSwap(current, next) {
			return current, next, true
		}
		current = word.Load()
	}
}

// rateWaitN is RateWord.NextAt for n events at once.
func rateWaitN(current uint64, l *RateLimit, t, n uint64) time.Duration {
	count := current & rateCountMask
	start := (current >> rateCountBits) << rateTimeShift
	expiry := start + l.span(count)
	if expiry < start {
		expiry = math.MaxUint64
	}
	if t >= expiry || count+n <= uint64(l.burst) {
		return 0
	}
	if expiry > uint64(RateMaxNow) {
		return Never
	}
	return time.Duration(expiry - t)
}
