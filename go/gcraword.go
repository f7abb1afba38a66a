package weir

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// The GCRA word's frozen encoding (weir_gcra in weir.h, weir-core's
// gcra.rs and tat.rs): the theoretical arrival time (TAT) as a count of
// ticks of 2^-shift ns, tick 0 at now = 0.
const (
	gcraMaxShift     = 4
	gcraHorizon      = math.MaxInt64 / 2
	gcraMaxTolerance = math.MaxInt64 / 4
)

// GCRALimitFromParts rebuilds a limit from the fields weir_gcra_limit
// holds (PerToken, Tolerance and Shift give them), checking them as C
// checks them on every call: shift 0..4, perToken at least 1, tolerance
// from perToken to 2^61 − 1. ErrGCRALimitInvalid otherwise.
func GCRALimitFromParts(perToken uint64, tolerance int64, shift uint32) (GCRALimit, error) {
	if shift > gcraMaxShift || perToken < 1 || tolerance < 0 || perToken > uint64(tolerance) ||
		tolerance > gcraMaxTolerance {
		return GCRALimit{}, ErrGCRALimitInvalid
	}
	return GCRALimit{perToken: perToken, tolerance: tolerance, shift: shift}, nil
}

// gcraMaxNow is the latest now (ns) a word under l tells apart: 2^62 >>
// shift; a later one counts as it.
func gcraMaxNow(l GCRALimit) int64 { return gcraHorizon >> l.shift }

// ticks is now (≥ 0) on the word's clock, which stands still at MaxNow.
func (l *GCRALimit) ticks(now int64) int64 {
	if last := int64(gcraHorizon) >> l.shift; now > last {
		now = last
	}
	return now << l.shift
}

// addSat is a + b for b ≥ 0, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

// tatOf is the TAT a word holds: a value above math.MaxInt64 (never written
// by weir) reads as a word that never admits.
func tatOf(word uint64) int64 {
	if word > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(word)
}

// GCRAWord is the GCRA word: a token bucket whose whole state is one
// 64-bit word, in weir_gcra's frozen encoding, decided in pure Go with
// sync/atomic (no cgo crossing). A Go word and a C weir_gcra over the same
// 8 bytes agree on every decision. The zero GCRAWord is a full bucket.
// Safe for concurrent use; do not copy one in use.
type GCRAWord struct {
	state atomic.Uint64
}

// Allow is AllowAt at [Now].
func (w *GCRAWord) Allow(limit GCRALimit) bool { return w.AllowAt(limit, Now()) }

// AllowAt reports whether the word admits one token at now (on the clock
// everyone using the word reads: [MonotonicNow] for a word shared between
// processes), charging it if so. A negative now and a zero limit are
// refused; a refusal writes nothing. The same answer and write as
// weir_gcra_allow ([GCRAAllowC]).
func (w *GCRAWord) AllowAt(limit GCRALimit, now time.Duration) bool {
	if now < 0 || limit.perToken == 0 {
		return false
	}
	return w.take(&limit, limit.ticks(int64(now)), int64(limit.perToken))
}

// AllowN is AllowNAt at [Now].
func (w *GCRAWord) AllowN(limit GCRALimit, n int64) bool { return w.AllowNAt(limit, Now(), n) }

// AllowNAt reports whether the word admits n tokens at now, all or
// nothing, charging them if so; n outside 1..burst is refused. The same
// answer and write as weir_gcra_allow_n ([GCRAAllowNC]).
func (w *GCRAWord) AllowNAt(limit GCRALimit, now time.Duration, n int64) bool {
	if now < 0 || n < 1 || limit.perToken == 0 {
		return false
	}
	hi, cost := bits.Mul64(limit.perToken, uint64(n))
	if hi != 0 || cost > uint64(limit.tolerance) {
		return false
	}
	return w.take(&limit, limit.ticks(int64(now)), int64(cost))
}

// take is the GCRA's step at t ticks: passes iff max(TAT, t) + cost ≤
// t + tolerance, and then the word becomes max(TAT, t) + cost.
func (w *GCRAWord) take(limit *GCRALimit, t, cost int64) bool {
	current := w.state.Load()
	for {
		next := addSat(max(tatOf(current), t), cost)
		if next > t+limit.tolerance {
			return false
		}
		if w.state.CompareAndSwap(current, uint64(next)) {
			return true
		}
		current = w.state.Load()
	}
}

// Next is NextAt at [Now].
func (w *GCRAWord) Next(limit GCRALimit) time.Duration { return w.NextAt(limit, Now()) }

// NextAt is how long from now until the word admits one token: 0 if it
// would now, [Never] for a negative now, a zero limit, or an instant past
// the word's clock (2^62 >> shift ns). Reads the word only. The same answer
// as weir_gcra_next ([GCRANextC]).
func (w *GCRAWord) NextAt(limit GCRALimit, now time.Duration) time.Duration {
	if now < 0 || limit.perToken == 0 {
		return Never
	}
	t := limit.ticks(int64(now))
	due := addSat(tatOf(w.state.Load()), int64(limit.perToken)) - limit.tolerance
	if due <= t {
		return 0
	}
	if last := int64(gcraHorizon) >> limit.shift << limit.shift; due > last {
		return Never
	}
	// The first whole ns at which the clock reads due (due > t ≥ 0).
	ns := -(-due >> limit.shift)
	return time.Duration(ns) - now
}

// Room is RoomAt at [Now].
func (w *GCRAWord) Room(limit GCRALimit) int64 { return w.RoomAt(limit, Now()) }

// RoomAt is the whole tokens the word would admit at now, 0 to burst (0
// for a negative now or a zero limit). Reads the word only. The same
// answer as weir_gcra_room ([GCRARoomC]).
func (w *GCRAWord) RoomAt(limit GCRALimit, now time.Duration) int64 {
	if now < 0 || limit.perToken == 0 {
		return 0
	}
	owed := tatOf(w.state.Load()) - limit.ticks(int64(now))
	if owed < 0 {
		owed = 0
	}
	room := limit.tolerance - owed
	if room < 0 {
		return 0
	}
	return room / int64(limit.perToken)
}

// Word is the word's raw value, in the frozen encoding.
func (w *GCRAWord) Word() uint64 { return w.state.Load() }
