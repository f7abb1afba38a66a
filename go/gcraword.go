package weir

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/weir-rs/weir/go/internal/cref"
)

// The GCRA word's frozen encoding (weir_gcra in weir.h, weir-core's
// smooth.rs and gcra.rs): the theoretical arrival time (TAT) as a count of
// ticks of 2^-shift ns, tick 0 at now = 0.
const (
	gcraMaxShift     = 4
	gcraHorizon      = math.MaxInt64 / 2
	gcraMaxTolerance = math.MaxInt64 / 4
)

// GcraLimit is a GCRA word's policy: the tick (2^-shift ns), the ticks a
// token is worth and the ticks a full word holds, checked once when it is
// made. A plain value: copy it and share it freely. The zero GcraLimit is
// no limit: a word refuses under it.
type GcraLimit struct {
	perToken  uint64
	tolerance int64
	shift     uint32
}

// NewGcraLimit is a limit of perSecond tokens a second and a bucket of
// burst tokens, checked by the C library's weir_gcra_limit_new (called
// once, here: its exact tick and per-token arithmetic is then C's own), so
// Go accepts exactly the limits C accepts and makes the same fields.
func NewGcraLimit(perSecond float64, burst int64) (GcraLimit, error) {
	l, status := cref.GcraLimitNew(perSecond, burst)
	if status != 0 {
		return GcraLimit{}, statusError(status)
	}
	return GcraLimit{l.PerToken, l.Tolerance, l.Shift}, nil
}

// GcraLimitFromParts rebuilds a limit from the fields weir_gcra_limit
// holds (Parts gives them), checking them as C does: shift 0..4, perToken
// at least 1, tolerance from perToken to 2^61 − 1.
func GcraLimitFromParts(perToken uint64, tolerance int64, shift uint32) (GcraLimit, error) {
	if shift > gcraMaxShift || perToken < 1 || tolerance < 0 || perToken > uint64(tolerance) ||
		tolerance > gcraMaxTolerance {
		return GcraLimit{}, statusError(statusGcraLimitInvalid)
	}
	return GcraLimit{perToken, tolerance, shift}, nil
}

// Parts are weir_gcra_limit's fields: ticks a token is worth, ticks a full
// word holds, and the tick's shift (a tick is 2^-shift ns).
func (l GcraLimit) Parts() (perToken uint64, tolerance int64, shift uint32) {
	return l.perToken, l.tolerance, l.shift
}

// Burst is the tokens a full word admits at once.
func (l GcraLimit) Burst() int64 {
	if l.perToken == 0 {
		return 0
	}
	return l.tolerance / int64(l.perToken)
}

// MaxNow is the latest now (ns) a word under l tells apart: 2^62 >> shift.
func (l GcraLimit) MaxNow() int64 { return gcraHorizon >> l.shift }

// ticks is now (≥ 0) on the word's clock, which stands still at MaxNow.
func (l *GcraLimit) ticks(now int64) int64 {
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

// GcraWord is the GCRA word: a token bucket whose whole state is one
// 64-bit word, in weir_gcra's frozen encoding, decided in pure Go with
// sync/atomic (no cgo crossing). A Go word and a C weir_gcra over the same
// 8 bytes agree on every decision. The zero GcraWord is a full bucket.
// Safe for concurrent use; do not copy one in use.
type GcraWord struct {
	state atomic.Uint64
}

// Allow reports whether the word admits one token at now (ns), charging
// it if so. The same answer and write as weir_gcra_allow.
func (w *GcraWord) Allow(limit GcraLimit, now int64) bool {
	if now < 0 || limit.perToken == 0 {
		return false
	}
	return w.take(&limit, limit.ticks(now), int64(limit.perToken))
}

// AllowN reports whether the word admits n tokens at now, all or nothing,
// charging them if so; n outside 1..burst is refused. The same answer and
// write as weir_gcra_allow_n.
func (w *GcraWord) AllowN(limit GcraLimit, now, n int64) bool {
	if now < 0 || n < 1 || limit.perToken == 0 {
		return false
	}
	hi, cost := bits.Mul64(limit.perToken, uint64(n))
	if hi != 0 || cost > uint64(limit.tolerance) {
		return false
	}
	return w.take(&limit, limit.ticks(now), int64(cost))
}

// take is the GCRA's step at t ticks: passes iff max(TAT, t) + cost ≤
// t + tolerance, and then the word becomes max(TAT, t) + cost.
func (w *GcraWord) take(limit *GcraLimit, t, cost int64) bool {
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

// Next is how long from now until the word admits one token: 0 if it
// would now, Never for a negative now, a zero limit, or an instant past
// MaxNow. Reads the word only. The same answer as weir_gcra_next.
func (w *GcraWord) Next(limit GcraLimit, now int64) time.Duration {
	if now < 0 || limit.perToken == 0 {
		return Never
	}
	t := limit.ticks(now)
	due := addSat(tatOf(w.state.Load()), int64(limit.perToken)) - limit.tolerance
	if due <= t {
		return 0
	}
	if last := int64(gcraHorizon) >> limit.shift << limit.shift; due > last {
		return Never
	}
	// The first whole ns at which the clock reads due (due > t ≥ 0).
	ns := -(-due >> limit.shift)
	return time.Duration(ns - now)
}

// Room is the whole tokens the word would admit at now, 0 to burst (0 for
// a negative now or a zero limit). Reads the word only. The same answer as
// weir_gcra_room.
func (w *GcraWord) Room(limit GcraLimit, now int64) int64 {
	if now < 0 || limit.perToken == 0 {
		return 0
	}
	owed := tatOf(w.state.Load()) - limit.ticks(now)
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
func (w *GcraWord) Word() uint64 { return w.state.Load() }
