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

// A keyed table's shadow is asked on every call, whatever the real one
// answered: a smaller, stricter table (one bucket, a burst of 2, overflows
// refused) beside the real one (64 buckets, a burst of 5). Its admitted
// and refused add up to the calls, the keys it had no room for counted as
// refused, and the real table answers as a twin asked alone.
func TestShadowKeyedIsAskedOnEveryCall(t *testing.T) {
	limit, _ := NewGCRALimit(5, 5)
	strict, _ := NewGCRALimit(5, 2)
	real, err := NewKeyed(64, limit, KeyedOverflowRefuse, 7, 8)
	if err != nil {
		t.Fatal(err)
	}
	alone, _ := NewKeyed(64, limit, KeyedOverflowRefuse, 7, 8)
	shadow, err := NewKeyed(1, strict, KeyedOverflowRefuse, 7, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	defer alone.Close()
	defer shadow.Close()
	_ = real.StartCounting()
	_ = shadow.StartCounting()
	var calls, served uint64
	ask := func(now time.Duration, key uint64) {
		k := []byte{byte(key), byte(key >> 8)}
		ok := real.AllowAt(now, k)
		if ok != alone.AllowAt(now, k) {
			t.Fatalf("at %v key %d the real table answered %v beside a shadow, not alone", now, key, ok)
		}
		shadow.AllowAt(now, k) // counted, never enforced
		calls++
		if ok {
			served++
		}
	}
	// Twelve clients at once, six calls each: the real table serves five
	// of each; the shadow's eight slots hold eight clients, two calls
	// each, and the other four overflow.
	for key := uint64(0); key < 12; key++ {
		for call := 0; call < 6; call++ {
			ask(0, key)
		}
	}
	r, _ := real.ReadCounts()
	s, _ := shadow.ReadCounts()
	if r != (Counts{Admitted: 60, Refused: 12, Units: 60}) || s != (Counts{Admitted: 16, Refused: 56, Units: 16}) {
		t.Fatalf("at once: real %+v, shadow %+v", r, s)
	}
	if reading, _ := shadow.Read(); reading.Overflows != 24 {
		t.Fatalf("the shadow's overflows: %d, not 24", reading.Overflows)
	}
	// Then a stream over the twelve, a call every 10 ms.
	for now := time.Second; now < 6*time.Second; now += 10 * time.Millisecond {
		ask(now, uint64(now/(10*time.Millisecond))%12)
	}
	r, _ = real.ReadCounts()
	s, _ = shadow.ReadCounts()
	if r.Admitted != served || r.Admitted+r.Refused != calls || s.Admitted+s.Refused != calls {
		t.Fatalf("%d calls, %d served; real %+v, shadow %+v", calls, served, r, s)
	}
	if s.Refused <= r.Refused || s.Errors != 0 {
		t.Fatalf("the stricter shadow refused nothing more: real %+v, shadow %+v", r, s)
	}
}
