package weir

import (
	"testing"
	"time"
)

// A breaker's shadow is asked only for the calls the real one let through
// (only those run, so only those have an outcome to settle), with the real
// one's draw: its admitted and refused add up to those calls, a stricter
// one would have refused some, and the real one answers as it does alone.
func TestShadowBreakerSeesOnlyTheCallsTheRealOneLetThrough(t *testing.T) {
	strict := DefaultBreakerPolicy()
	strict.K, strict.Floor, strict.Aggression = 1.1, 1, 4
	real, _ := NewBreakerAt(nil, 0)
	alone, _ := NewBreakerAt(nil, 0)
	shadow, err := NewBreakerAt(&strict, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	defer alone.Close()
	defer shadow.Close()
	_ = real.StartCounting()
	_ = shadow.StartCounting()
	x := uint64(36)
	var through uint64
	for now := time.Duration(0); now < 20*time.Second; now += 10 * time.Millisecond {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		roll := float64(x>>11) / (1 << 53)
		call, err := real.AllowAt(now, roll)
		lone, loneErr := alone.AllowAt(now, roll)
		if (err == nil) != (loneErr == nil) {
			t.Fatalf("at %v the real breaker answered %v beside a shadow, %v alone", now, err, loneErr)
		}
		if err != nil {
			continue // refused: no call, no outcome for the shadow
		}
		through++
		seen, shadowErr := shadow.AllowAt(now, roll)
		_ = call.FailAt(now + time.Millisecond) // the backend fails every call
		_ = lone.FailAt(now + time.Millisecond)
		if shadowErr == nil {
			_ = seen.FailAt(now + time.Millisecond)
		}
	}
	r, _ := real.ReadCounts()
	s, _ := shadow.ReadCounts()
	if r.Admitted != through || s.Admitted+s.Refused != through {
		t.Fatalf("let through %d; real %+v, shadow %+v", through, r, s)
	}
	if s.Refused == 0 || s.Admitted >= r.Admitted {
		t.Fatalf("the stricter shadow refused nothing more: real %+v, shadow %+v", r, s)
	}
}
