package weir

import (
	"math"
	"math/rand"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// gcraLimits span every tick (shift 0..4), bursts of one to huge, and
// rates whose per-token ticks round.
var gcraLimits = []struct {
	perSecond float64
	burst     int64
}{
	{1, 1}, {1, 3}, {3, 7}, {7.5, 1023}, {1e6, 100}, {7.8e6, 5}, {1.25e8, 2}, {3e8, 9},
	{1e9, 1000}, {7.5e8, 3}, {16e9, 1}, {16e9, 1 << 20}, {0.001, 2}, {333333.3, 17},
}

func TestGCRAWordAgreesWithC(t *testing.T) {
	steps := traceSteps()
	rng := rand.New(rand.NewSource(19))
	for _, lc := range gcraLimits {
		limit, err := NewGCRALimit(lc.perSecond, lc.burst)
		if err != nil {
			t.Fatalf("NewGCRALimit(%v, %d): %v", lc.perSecond, lc.burst, err)
		}
		cl := limit
		step := int64(limit.perToken>>limit.shift) + 1
		for _, tr := range traces(rng, step, gcraMaxNow(limit)) {
			var goWord, shared GCRAWord
			var cWord atomic.Uint64
			admitted := 0
			for i := 0; i < steps; i++ {
				now := tr.next()
				if rng.Intn(8) == 0 {
					g, c := goWord.NextAt(limit, time.Duration(now)), int64(GCRANextC(raw(&cWord), &cl, time.Duration(now)))
					gr, cr := goWord.RoomAt(limit, time.Duration(now)), GCRARoomC(raw(&cWord), &cl, time.Duration(now))
					if int64(g) != c || gr != cr {
						t.Fatalf("limit %+v step %d now %d: Next go %d, C %d; Room go %d, C %d", limit, i, now, g, c, gr, cr)
					}
				}
				// Mostly single tokens; sometimes n, in and out of 1..burst.
				n := int64(1)
				if rng.Intn(4) == 0 {
					n = []int64{0, -1, 2, 3, lc.burst, lc.burst + 1, math.MaxInt64, rng.Int63n(lc.burst) + 1}[rng.Intn(8)]
				}
				var g, c, s bool
				if n == 1 && rng.Intn(2) == 0 {
					g, c = goWord.AllowAt(limit, time.Duration(now)), GCRAAllowC(raw(&cWord), &cl, time.Duration(now))
				} else {
					g, c = goWord.AllowNAt(limit, time.Duration(now), n), GCRAAllowNC(raw(&cWord), &cl, time.Duration(now), n)
				}
				if rng.Intn(2) == 0 {
					s = shared.AllowNAt(limit, time.Duration(now), n)
				} else {
					s = GCRAAllowNC(raw(&shared.state), &cl, time.Duration(now), n)
				}
				if g != c || c != s {
					t.Fatalf("limit %+v step %d now %d n %d: Allow go %v, C %v, shared %v", limit, i, now, n, g, c, s)
				}
				if g {
					admitted++
				}
				if w := goWord.Word(); w != cWord.Load() || w != shared.Word() {
					t.Fatalf("limit %+v step %d now %d: words go %#x, C %#x, shared %#x", limit, i, now, w, cWord.Load(), shared.Word())
				}
			}
			if tr.end == 0 && (admitted < steps/100 || admitted > steps-steps/100) {
				t.Errorf("limit %+v: %d of %d admitted; the trace tests too little", limit, admitted, steps)
			}
		}
	}
}

func TestGCRAWordFromRandomBitsAgreesWithC(t *testing.T) {
	steps := traceSteps()
	rng := rand.New(rand.NewSource(20))
	valid := 0
	for i := 0; i < 2*steps; i++ {
		perToken := rng.Uint64() >> rng.Intn(64)
		tolerance := int64(rng.Uint64() >> rng.Intn(65))
		if rng.Intn(3) == 0 {
			tolerance = int64(perToken) * rng.Int63n(1000)
		}
		shift := uint32(rng.Intn(7))
		if rng.Intn(2) == 0 {
			made, err := NewGCRALimit(1e9/float64(rng.Int63n(1<<uint(rng.Intn(60)+1))+1)*16, rng.Int63n(1<<uint(rng.Intn(40)+1)))
			if err == nil {
				perToken, tolerance, shift = made.perToken, made.tolerance, made.shift
				valid++
			}
		}
		now := int64(rng.Uint64() >> rng.Intn(64))
		if rng.Intn(4) == 0 {
			now = -now
		}
		cl := GCRALimit{perToken: perToken, tolerance: tolerance, shift: shift}
		limit, err := GCRALimitFromParts(perToken, tolerance, shift)
		var probe atomic.Uint64
		if valid := GCRAAllowC(raw(&probe), &cl, time.Duration(0)); valid != (err == nil) {
			t.Fatalf("parts %+v: C accepts %v, Go's error %v", cl, valid, err)
		}
		bits := rng.Uint64() >> rng.Intn(3)
		var goWord GCRAWord
		goWord.state.Store(bits)
		var cWord atomic.Uint64
		cWord.Store(bits)
		if g, c := int64(goWord.NextAt(limit, time.Duration(now))), int64(GCRANextC(raw(&cWord), &cl, time.Duration(now))); g != c {
			t.Fatalf("word %#x limit %+v now %d: Next go %d, C %d", bits, cl, now, g, c)
		}
		if g, c := goWord.RoomAt(limit, time.Duration(now)), GCRARoomC(raw(&cWord), &cl, time.Duration(now)); g != c {
			t.Fatalf("word %#x limit %+v now %d: Room go %d, C %d", bits, cl, now, g, c)
		}
		n := rng.Int63n(4) + 1
		if g, c := goWord.AllowNAt(limit, time.Duration(now), n), GCRAAllowNC(raw(&cWord), &cl, time.Duration(now), n); g != c || goWord.Word() != cWord.Load() {
			t.Fatalf("word %#x limit %+v now %d n %d: AllowN go %v, C %v", bits, cl, now, n, g, c)
		}
	}
	if valid < steps/2 {
		t.Fatalf("only %d valid limits", valid)
	}
}

func TestGCRAWordRefusals(t *testing.T) {
	var w GCRAWord
	if w.AllowAt(GCRALimit{}, 0) || w.AllowNAt(GCRALimit{}, 0, 1) || w.NextAt(GCRALimit{}, 0) != Never ||
		w.RoomAt(GCRALimit{}, 0) != 0 || w.Word() != 0 {
		t.Fatal("the zero limit admitted or wrote")
	}
	for _, bad := range []struct {
		rate  float64
		burst int64
	}{{1, 0}, {0, 1}, {-1, 1}, {math.NaN(), 1}, {math.Inf(1), 1}, {17e9, 1}, {1e-12, 1 << 40}} {
		if _, err := NewGCRALimit(bad.rate, bad.burst); err == nil {
			t.Errorf("NewGCRALimit(%v, %d) accepted", bad.rate, bad.burst)
		}
	}
}

func TestGCRAWordSharedWithCUnderContention(t *testing.T) {
	limit, err := NewGCRALimit(10, 1000)
	if err != nil {
		t.Fatal(err)
	}
	counts := racedAdmissions(20, func(word *atomic.Uint64, now time.Duration, viaC bool) bool {
		if viaC {
			return GCRAAllowC(raw(word), &limit, now)
		}
		return (*GCRAWord)(unsafe.Pointer(word)).AllowAt(limit, now)
	})
	for round, got := range counts {
		if got != 1000 {
			t.Fatalf("round %d: %d admitted, want the burst 1000", round, got)
		}
	}
}
