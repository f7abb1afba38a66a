package weir

import (
	"math"
	"sync/atomic"
	"time"
)

// The rate word's frozen encoding (weir_rate in weir.h, weir-core's
// rate.rs): the window's start / 512 ns in the top 54 bits, the count in
// the low 10.
const (
	rateCountBits = 10
	rateCountMask = 1<<rateCountBits - 1
	rateTimeShift = 9
	// RateMaxNow is the latest now a rate word tells apart (2^63 − 512
	// ns, WEIR_RATE_MAX_NOW); a later one counts as it.
	RateMaxNow = time.Duration(math.MaxInt64 - (1<<rateTimeShift - 1))

	rateMinWindowNs = 100 << rateTimeShift
)

// RateLimitFromParts rebuilds a limit from the fields weir_rate_limit
// holds (Interval and Burst give them), checking them as C checks them
// on every call: burst 1..1023 and a window ceil(burst × interval) from
// 51,200 ns to 2^63 − 1 ns. ErrRateLimitInvalid otherwise.
func RateLimitFromParts(intervalNs uint64, intervalFrac, burst uint32) (RateLimit, error) {
	l := RateLimit{intervalNs: intervalNs, intervalFrac: intervalFrac, burst: burst}
	if burst < 1 || burst > rateCountMask {
		return RateLimit{}, ErrRateLimitInvalid
	}
	if w := l.span(uint64(burst)); w < rateMinWindowNs || w > math.MaxInt64 {
		return RateLimit{}, ErrRateLimitInvalid
	}
	return l, nil
}

// fullSpan is span(burst), the window of a full count, for a limit
// NewRateLimit made (or the zero one): its window is checked to fit, so
// no saturation is needed, and a refusal, the commonest answer under load,
// costs two multiplies and no branch.
func (l *RateLimit) fullSpan() uint64 {
	burst := uint64(l.burst)
	return burst*l.intervalNs + (burst*uint64(l.intervalFrac)+(1<<32-1))>>32
}

// span is ceil(count × interval) ns, saturating (count < 2^10).
func (l *RateLimit) span(count uint64) uint64 {
	fraction := (count*uint64(l.intervalFrac) + (1<<32 - 1)) >> 32
	whole := count * l.intervalNs
	// An interval under 2^54 ns cannot overflow with count < 2^10.
	if l.intervalNs>>54 != 0 && count != 0 && l.intervalNs > math.MaxUint64/count {
		return math.MaxUint64
	}
	sum := whole + fraction
	if sum < whole {
		return math.MaxUint64
	}
	return sum
}

// RateWord is the rate word: a fixed-window limiter whose whole state is
// one 64-bit word, in weir_rate's frozen encoding, decided in pure Go with
// sync/atomic (no cgo crossing). A Go word and a C weir_rate over the same
// 8 bytes (memory shared with C, or between processes) agree on every
// decision. The zero RateWord is ready. Safe for concurrent use; do not
// copy one in use.
type RateWord struct {
	state atomic.Uint64
}

// Allow is AllowAt at [Now].
func (w *RateWord) Allow(limit RateLimit) bool { return w.AllowAt(limit, Now()) }

// AllowAt reports whether the word admits one event at now (on the clock
// everyone using the word reads: [MonotonicNow] for a word shared between
// processes), charging it if so. A negative now and a zero limit are
// refused; a refusal writes nothing. The same answer and the same write as
// weir_rate_allow ([RateAllowC]).
func (w *RateWord) AllowAt(limit RateLimit, now time.Duration) bool {
	// A full window still open, the commonest refusal under load, is
	// refused first, before the checks of now: sound for every now (a
	// negative one is refused either way, and one past RateMaxNow is
	// refused here only if its clamped self would be).
	current := w.state.Load()
	if current&rateCountMask == uint64(limit.burst) && uint64(now) < current>>rateCountBits<<rateTimeShift+limit.fullSpan() {
		return false
	}
	if now < 0 || limit.burst == 0 {
		return false
	}
	t := uint64(now)
	if now > RateMaxNow {
		t = uint64(RateMaxNow)
	}
	burst := uint64(limit.burst)
	for {
		count := current & rateCountMask
		start := (current >> rateCountBits) << rateTimeShift
		var next uint64
		// An earlier now than the start is no time passing.
		var passed uint64
		if t > start {
			passed = t - start
		}
		switch {
		case passed >= limit.span(count):
			// Expired (or never opened): a new window opens, its start
			// rounded up to the grid so that it cannot read as expired
			// before t + span.
			next = (t+(1<<rateTimeShift-1))>>rateTimeShift<<rateCountBits | 1
		case count < burst:
			next = current + 1
		default:
			return false
		}
		if w.state.CompareAndSwap(current, next) {
			return true
		}
		current = w.state.Load()
	}
}

// Next is NextAt at [Now].
func (w *RateWord) Next(limit RateLimit) time.Duration { return w.NextAt(limit, Now()) }

// NextAt is how long from now until the word admits an event: 0 if it
// would now, [Never] for a negative now, a zero limit, or a window that
// ends past RateMaxNow. Reads the word only. The same answer as
// weir_rate_next ([RateNextC]).
func (w *RateWord) NextAt(limit RateLimit, now time.Duration) time.Duration {
	if now < 0 || limit.burst == 0 {
		return Never
	}
	t := uint64(now)
	if now > RateMaxNow {
		t = uint64(RateMaxNow)
	}
	current := w.state.Load()
	count := current & rateCountMask
	start := (current >> rateCountBits) << rateTimeShift
	expiry := start + limit.span(count)
	if expiry < start {
		expiry = math.MaxUint64
	}
	if t >= expiry || count < uint64(limit.burst) {
		return 0
	}
	if expiry > uint64(RateMaxNow) {
		return Never
	}
	return time.Duration(expiry - t)
}

// Word is the word's raw value, in the frozen encoding (for a snapshot or
// a test; decisions never need it).
func (w *RateWord) Word() uint64 { return w.state.Load() }
