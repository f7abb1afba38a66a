package weir

import (
	"math"
	"sync/atomic"
	"testing"
	"time"
)

// Differential fuzz targets: the pure-Go words against C over any word,
// any limit fields (checked by FromParts as C checks them) and any two
// instants. Every answer and the word after each call must agree.

func FuzzRateWordAgreesWithC(f *testing.F) {
	f.Add(uint64(0), uint64(1e9), uint32(0), uint32(3), int64(0), int64(512))
	f.Add(uint64(1)<<10|3, uint64(52), uint32(1<<31), uint32(1023), int64(511), int64(math.MaxInt64))
	f.Add(uint64(math.MaxUint64), uint64(1), uint32(0), uint32(0), int64(-1), int64(1)<<62)
	f.Fuzz(func(t *testing.T, bits, intervalNs uint64, intervalFrac, burst uint32, now1, now2 int64) {
		limit, err := RateLimitFromParts(intervalNs, intervalFrac, burst)
		parts := RateLimit{intervalNs: intervalNs, intervalFrac: intervalFrac, burst: burst}
		var probe uint64
		if RateAllowC(&probe, &parts, 0) != (err == nil) {
			t.Fatalf("parts %+v: Go's check %v, C disagrees", parts, err)
		}
		var goWord RateWord
		goWord.state.Store(bits)
		var cWord atomic.Uint64
		cWord.Store(bits)
		for _, now := range []time.Duration{time.Duration(now1), time.Duration(now2), time.Duration(now2)} {
			if g, c := goWord.NextAt(limit, now), RateNextC(raw(&cWord), &parts, now); err == nil && g != c {
				t.Fatalf("Next at %d: go %d, C %d", now, g, c)
			}
			if err != nil {
				continue
			}
			if g, c := goWord.AllowAt(limit, now), RateAllowC(raw(&cWord), &parts, now); g != c || goWord.Word() != cWord.Load() {
				t.Fatalf("Allow at %d: go %v (%#x), C %v (%#x)", now, g, goWord.Word(), c, cWord.Load())
			}
		}
	})
}

func FuzzGCRAWordAgreesWithC(f *testing.F) {
	f.Add(uint64(0), uint64(1e9), int64(3e9), uint32(0), int64(0), int64(5), int64(1))
	f.Add(uint64(math.MaxUint64), uint64(1), int64(1)<<61-1, uint32(4), int64(math.MaxInt64), int64(-1), int64(2))
	f.Fuzz(func(t *testing.T, bits, perToken uint64, tolerance int64, shift uint32, now1, now2, n int64) {
		limit, err := GCRALimitFromParts(perToken, tolerance, shift)
		parts := GCRALimit{perToken: perToken, tolerance: tolerance, shift: shift}
		var probe uint64
		if GCRAAllowC(&probe, &parts, 0) != (err == nil) {
			t.Fatalf("parts %+v: Go's check %v, C disagrees", parts, err)
		}
		if err != nil {
			return
		}
		var goWord GCRAWord
		goWord.state.Store(bits)
		var cWord atomic.Uint64
		cWord.Store(bits)
		for _, now := range []time.Duration{time.Duration(now1), time.Duration(now2), time.Duration(now2)} {
			if g, c := goWord.NextAt(limit, now), GCRANextC(raw(&cWord), &parts, now); g != c {
				t.Fatalf("Next at %d: go %d, C %d", now, g, c)
			}
			if g, c := goWord.RoomAt(limit, now), GCRARoomC(raw(&cWord), &parts, now); g != c {
				t.Fatalf("Room at %d: go %d, C %d", now, g, c)
			}
			if g, c := goWord.AllowNAt(limit, now, n), GCRAAllowNC(raw(&cWord), &parts, now, n); g != c || goWord.Word() != cWord.Load() {
				t.Fatalf("AllowN(%d) at %d: go %v (%#x), C %v (%#x)", n, now, g, goWord.Word(), c, cWord.Load())
			}
		}
	})
}
