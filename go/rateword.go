package weir

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/weir-rs/weir/go/internal/cref"
)

// The rate word's frozen encoding (weir_rate in weir.h, weir-core's
// rate.rs): the window's start / 512 ns in the top 54 bits, the count in
// the low 10.
const (
	rateCountBits = 10
	rateCountMask = 1<<rateCountBits - 1
	rateTimeShift = 9
	// RateMaxNow is the latest `now` a rate word tells apart (2^63 − 512
	// ns); a later one counts as it. WEIR_RATE_MAX_NOW.
	RateMaxNow int64 = math.MaxInt64 - (1<<rateTimeShift - 1)
	// RateMaxBurst is the largest burst of a rate word. WEIR_RATE_MAX_BURST.
	RateMaxBurst = rateCountMask
	// Never is what Next answers for an instant that never comes
	// (INT64_MAX ns).
	Never = time.Duration(math.MaxInt64)
)

// RateLimit is a rate word's policy: the interval (1 / limit, rounded up
// to 2^-32 ns) and the burst, checked once when it is made. A plain value:
// copy it and share it freely. The zero RateLimit is no limit: a word
// refuses under it.
type RateLimit struct {
	intervalNs   uint64
	intervalFrac uint32
	burst        uint32
	// full is span(burst), the window a full count spans: kept so that a
	// refusal, the commonest answer under load, needs no multiply.
	full uint64
}

// NewRateLimit is a limit of perSecond events a second in windows of
// burst events, checked by the C library's weir_rate_limit_new (called
// once, here), so Go accepts exactly the limits C accepts and makes the
// same fields.
func NewRateLimit(perSecond float64, burst int) (RateLimit, error) {
	l, status := cref.RateLimitNew(perSecond, int64(burst))
	if status != 0 {
		return RateLimit{}, statusError(status)
	}
	return rateLimit(l.IntervalNs, l.IntervalFrac, l.Burst), nil
}

func rateLimit(intervalNs uint64, intervalFrac, burst uint32) RateLimit {
	l := RateLimit{intervalNs: intervalNs, intervalFrac: intervalFrac, burst: burst}
	l.full = l.span(uint64(burst))
	return l
}

// RateLimitFromParts rebuilds a limit from the fields weir_rate_limit
// holds (Parts gives them), checking them as C does: burst 1..1023 and a
// window ceil(burst × interval) from 51200 ns to 2^63 − 1 ns.
func RateLimitFromParts(intervalNs uint64, intervalFrac, burst uint32) (RateLimit, error) {
	l := rateLimit(intervalNs, intervalFrac, burst)
	if burst < 1 || burst > RateMaxBurst {
		return RateLimit{}, statusError(statusRateLimitInvalid)
	}
	if w := l.full; w < rateMinWindowNs || w > math.MaxInt64 {
		return RateLimit{}, statusError(statusRateLimitInvalid)
	}
	return l, nil
}

const rateMinWindowNs = 100 << rateTimeShift

// Parts are weir_rate_limit's fields: whole ns of the interval, its
// fraction in units of 2^-32 ns, and the burst.
func (l RateLimit) Parts() (intervalNs uint64, intervalFrac, burst uint32) {
	return l.intervalNs, l.intervalFrac, l.burst
}

// Burst is the events a window admits.
func (l RateLimit) Burst() int { return int(l.burst) }

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

// Allow reports whether the word admits one event at now (ns on the
// caller's clock, shared by everyone using the word), charging it if so.
// A negative now and a zero limit are refused; a refusal writes nothing.
// The same answer and the same write as weir_rate_allow.
func (w *RateWord) Allow(limit RateLimit, now int64) bool {
	// A full window still open, the commonest refusal under load, is
	// refused first, before the checks of now: sound for every now (a
	// negative one is refused either way, and one past RateMaxNow is
	// refused here only if its clamped self would be).
	current := w.state.Load()
	if current&rateCountMask == uint64(limit.burst) && uint64(now) < current>>rateCountBits<<rateTimeShift+limit.full {
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

// Next is how long from now until the word admits an event: 0 if it would
// now, Never for a negative now, a zero limit, or a window that ends past
// RateMaxNow. Reads the word only. The same answer as weir_rate_next.
func (w *RateWord) Next(limit RateLimit, now int64) time.Duration {
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
