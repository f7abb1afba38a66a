package weir

import (
	"math"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/weir-rs/weir/go/internal/cref"
)

// The pure-Go words against the C library over the same random traces:
// every decision, every Next and Room, and the word itself after every
// call must be the same.

// raw is the word's 8 bytes as the C calls take them.
func raw(w *atomic.Uint64) *uint64 { return (*uint64)(unsafe.Pointer(w)) }

// trace makes the instants of a random trace: near multiples of 512 ns
// (on, one off either side, 511 past), runs of calls at one instant,
// small steps back, jumps of many windows, and now and then a negative
// instant. A trace with an end (the word's last instant) runs up to it
// and past it, where the clock stands still.
type trace struct {
	rng  *rand.Rand
	now  int64
	step int64
	end  int64 // 0: keep away from the clock's end
}

func (t *trace) next() int64 {
	add := func(d int64) {
		if t.now > math.MaxInt64-d {
			t.now = math.MaxInt64
		} else {
			t.now += d
		}
	}
	r := t.rng.Intn(100)
	switch {
	case r < 45: // another call at the same instant
	case r < 80: // forward, landing near the grid
		add(t.rng.Int63n(4*t.step + 1))
		if t.now < math.MaxInt64-1024 {
			t.now = t.now&^511 + []int64{0, 1, -1, 511, 2, 256}[t.rng.Intn(6)]
		}
	case r < 90: // back a little
		t.now -= t.rng.Int63n(t.step + 1)
	case r < 95: // a jump of many windows
		add(t.rng.Int63n(1000*t.step + 1))
	default: // the edges
		edges := []int64{-1, -512, math.MinInt64, 0, 511, 512}
		if t.end != 0 {
			edges = []int64{-1, t.end - 1, t.end, t.end + 1, math.MaxInt64}
		}
		return edges[t.rng.Intn(len(edges))]
	}
	if t.now < 0 {
		t.now = t.rng.Int63n(512)
	}
	if t.end == 0 && t.now > math.MaxInt64/4 {
		t.now = 1 << 40
	}
	return t.now
}

// traces are the two traces each limit runs: one in the clock's middle,
// and one that starts shortly before its end.
func traces(rng *rand.Rand, step, end int64) []*trace {
	step = max(step, 1)
	return []*trace{
		{rng: rng, now: rng.Int63n(1 << 40), step: step},
		{rng: rng, now: end - min(end/2, 50*step), step: step, end: end},
	}
}

// traceSteps is how many calls a trace makes: a tenth with -short or
// under the race detector, where each cgo call costs far more.
func traceSteps() int {
	if testing.Short() || raceBuild {
		return 10_000
	}
	return 100_000
}

// rateLimits are limits at the word's extremes: intervals under, at and
// just over 512 ns, fractional ones, the shortest and longest windows.
var rateLimits = []struct {
	perSecond float64
	burst     int
}{
	{1, 3}, {3, 1}, {19e6, 1023}, {1953125, 100}, {1953124, 101}, {977517, 100},
	{1e6, 100}, {1e4, 1}, {7.5, 1023}, {1e9 / 51200, 1}, {1.0 / 3600, 1023}, {333333.3, 18},
}

func TestRateWordAgreesWithC(t *testing.T) {
	steps := traceSteps()
	rng := rand.New(rand.NewSource(17))
	for _, lc := range rateLimits {
		limit, err := NewRateLimit(lc.perSecond, int64(lc.burst))
		if err != nil {
			t.Fatalf("NewRateLimit(%v, %d): %v", lc.perSecond, lc.burst, err)
		}
		cl := limit
		inline := cref.RateLimit{IntervalNs: limit.intervalNs, IntervalFrac: limit.intervalFrac, Burst: limit.burst}
		step := int64(limit.span(uint64(limit.burst))) / int64(limit.burst)
		for _, tr := range traces(rng, step, int64(RateMaxNow)) {
			var goWord RateWord
			var cWord, inlineWord atomic.Uint64
			// One word that every call takes a random implementation to.
			var shared RateWord
			admitted := 0
			for i := 0; i < steps; i++ {
				now := tr.next()
				if rng.Intn(8) == 0 {
					g, c, in := goWord.NextAt(limit, time.Duration(now)), int64(RateNextC(raw(&cWord), &cl, time.Duration(now))), cref.RateNextInline(raw(&inlineWord), inline, now)
					if int64(g) != c || c != in {
						t.Fatalf("limit %+v step %d now %d: Next go %d, C %d, inline %d", limit, i, now, g, c, in)
					}
				}
				g := goWord.AllowAt(limit, time.Duration(now))
				c := RateAllowC(raw(&cWord), &cl, time.Duration(now))
				in := cref.RateAllowInline(raw(&inlineWord), inline, now)
				var s bool
				switch rng.Intn(3) {
				case 0:
					s = shared.AllowAt(limit, time.Duration(now))
				case 1:
					s = RateAllowC(raw(&shared.state), &cl, time.Duration(now))
				default:
					s = cref.RateAllowInline(raw(&shared.state), inline, now)
				}
				if g != c || c != in || in != s {
					t.Fatalf("limit %+v step %d now %d: Allow go %v, C %v, inline %v, shared %v", limit, i, now, g, c, in, s)
				}
				if g {
					admitted++
				}
				if w := goWord.Word(); w != cWord.Load() || w != inlineWord.Load() || w != shared.Word() {
					t.Fatalf("limit %+v step %d now %d: words go %#x, C %#x, inline %#x, shared %#x",
						limit, i, now, w, cWord.Load(), inlineWord.Load(), shared.Word())
				}
			}
			// The trace must test both answers, not only one (at the clock's
			// end the word stops admitting once a window outlasts it).
			if tr.end == 0 && (admitted < steps/100 || admitted > steps-steps/100) {
				t.Errorf("limit %+v: %d of %d admitted; the trace tests too little", limit, admitted, steps)
			}
		}
	}
	if !cref.HasInline() {
		t.Log("weir.h has no inline rate path here: the inline column is weir_rate_allow")
	}
}

func TestRateWordFromRandomBitsAgreesWithC(t *testing.T) {
	steps := traceSteps()
	// Words C never writes (any 64 bits), limits from random parts (most
	// invalid): the Go checks refuse exactly what C refuses.
	rng := rand.New(rand.NewSource(18))
	valid := 0
	for i := 0; i < 2*steps; i++ {
		ns := rng.Uint64() >> rng.Intn(64)
		frac := rng.Uint32()
		burst := uint32(rng.Intn(1100))
		if rng.Intn(2) == 0 {
			// A limit C makes, so that the decisions are compared too.
			made, err := NewRateLimit(1e9/float64(rng.Int63n(1<<uint(rng.Intn(50)+1))+1), rng.Int63n(1024))
			if err == nil {
				ns, frac, burst = made.intervalNs, made.intervalFrac, made.burst
				valid++
			}
		}
		now := int64(rng.Uint64() >> rng.Intn(64))
		if rng.Intn(4) == 0 {
			now = -now
		}
		cl := RateLimit{intervalNs: ns, intervalFrac: frac, burst: burst}
		limit, err := RateLimitFromParts(ns, frac, burst)
		var probe atomic.Uint64
		if valid := RateAllowC(raw(&probe), &cl, time.Duration(0)); valid != (err == nil) {
			t.Fatalf("parts %+v: C accepts %v, Go's error %v", cl, valid, err)
		}
		bits := rng.Uint64()
		var goWord RateWord
		goWord.state.Store(bits)
		var cWord atomic.Uint64
		cWord.Store(bits)
		if g, c := int64(goWord.NextAt(limit, time.Duration(now))), int64(RateNextC(raw(&cWord), &cl, time.Duration(now))); g != c {
			t.Fatalf("word %#x limit %+v now %d: Next go %d, C %d", bits, cl, now, g, c)
		}
		if err != nil {
			continue
		}
		if g, c := goWord.AllowAt(limit, time.Duration(now)), RateAllowC(raw(&cWord), &cl, time.Duration(now)); g != c || goWord.Word() != cWord.Load() {
			t.Fatalf("word %#x limit %+v now %d: Allow go %v, C %v", bits, cl, now, g, c)
		}
	}
	if valid < steps/2 {
		t.Fatalf("only %d valid limits", valid)
	}
}

func TestRateWordZeroLimitRefuses(t *testing.T) {
	var w RateWord
	if w.AllowAt(RateLimit{}, 0) || w.NextAt(RateLimit{}, 0) != Never || w.Word() != 0 {
		t.Fatal("the zero limit admitted or wrote")
	}
	if _, err := NewRateLimit(2e6, 100); err == nil {
		t.Fatal("a window under 51200 ns was accepted")
	}
	if _, err := NewRateLimit(math.NaN(), 1); err == nil {
		t.Fatal("NaN was accepted")
	}
}

// racedAdmissions races 8 goroutines, 500 calls each, on one fresh word at
// one instant per round, half through Go's allow and half through C's,
// and answers each round's admissions.
func racedAdmissions(rounds int, allow func(word *atomic.Uint64, now time.Duration, viaC bool) bool) []int64 {
	var counts []int64
	for round := 0; round < rounds; round++ {
		var word atomic.Uint64
		var admitted atomic.Int64
		var wg sync.WaitGroup
		now := time.Duration(1<<40 + round*511)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(viaC bool) {
				defer wg.Done()
				for i := 0; i < 500; i++ {
					if allow(&word, now, viaC) {
						admitted.Add(1)
					}
				}
			}(g%2 == 0)
		}
		wg.Wait()
		counts = append(counts, admitted.Load())
	}
	return counts
}

func TestRateWordSharedWithCUnderContention(t *testing.T) {
	// Exactly the burst is admitted, however Go and C interleave.
	limit, err := NewRateLimit(10, 1000)
	if err != nil {
		t.Fatal(err)
	}
	counts := racedAdmissions(20, func(word *atomic.Uint64, now time.Duration, viaC bool) bool {
		if viaC {
			return RateAllowC(raw(word), &limit, now)
		}
		return (*RateWord)(unsafe.Pointer(word)).AllowAt(limit, now)
	})
	for round, got := range counts {
		if got != 1000 {
			t.Fatalf("round %d: %d admitted, want the burst 1000", round, got)
		}
	}
}
