package weir

import (
	"errors"
	"math"
	"testing"
	"time"
)

// failing drives a breaker of policy through n failed calls at time 0 and
// answers its refusal ratio then.
func failing(t *testing.T, policy BreakerPolicy, n int) float64 {
	t.Helper()
	b, err := NewBreakerAt(&policy, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := 0; i < n; i++ {
		if call, err := b.AllowAt(0, 0.999999); err == nil {
			call.FailAt(0)
		}
	}
	return b.RatioAt(0)
}

// Envoy's limits through the Go face: each changes the ratio as weir.h
// gives it, and the preset's values change nothing.
func TestBreakerEnvoyLimits(t *testing.T) {
	base := DefaultBreakerPolicy()
	if base.MaxRejectionProbability != 1 || base.RPSThreshold != 0 || base.Aggression != 1 || base.SkipRefusals {
		t.Fatalf("preset %+v", base)
	}
	classic := failing(t, base, 50)
	if classic <= 0.3 || classic >= 1 {
		t.Fatalf("50 failures: ratio %v", classic)
	}
	capped := base
	capped.MaxRejectionProbability = 0.3
	if r := failing(t, capped, 50); r != 0.3 {
		t.Errorf("capped at 0.3: %v", r)
	}
	// Aggression 2 is the square root of the drop without it (all calls fail,
	// so the refusals among them count the same either way only with
	// SkipRefusals; compare at one failure count with refusals skipped).
	skip := base
	skip.SkipRefusals = true
	plain := failing(t, skip, 50)
	aggressive := skip
	aggressive.Aggression = 2
	if r := failing(t, aggressive, 50); math.Abs(r-math.Sqrt(plain)) > 1e-9 {
		t.Errorf("aggression 2: %v, want sqrt(%v) = %v", r, plain, math.Sqrt(plain))
	}
	// A floor above the traffic (50 calls in 10 s is 5 a second) refuses
	// nothing.
	floored := base
	floored.RPSThreshold = 6
	if r := failing(t, floored, 50); r != 0 {
		t.Errorf("under the rps floor: %v", r)
	}
	floored.RPSThreshold = 4
	if r := failing(t, floored, 50); r != classic {
		t.Errorf("over the rps floor: %v, want the preset's %v", r, classic)
	}
}

func TestBucketRefund(t *testing.T) {
	b, err := NewBucketAt(1, 2, 0) // 1 token a second, burst 2
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Refund(0, 0, 1); !errors.Is(err, ErrRefundFull) {
		t.Fatalf("refund to a full bucket: %v", err)
	}
	if !b.AllowN(0, 2) || b.Tokens(0) != 0 {
		t.Fatal("take 2")
	}
	for _, tc := range []struct {
		name         string
		now, takenAt time.Duration
		n            float64
		want         error
	}{
		{"zero", 0, 0, 0, ErrLimiterInvalidAmount},
		{"negative", 0, 0, -1, ErrLimiterInvalidAmount},
		{"NaN", 0, 0, math.NaN(), ErrLimiterInvalidAmount},
		{"above the burst", 0, 0, 3, ErrLimiterInvalidAmount},
		{"taken in the future", 0, time.Second, 1, ErrRefundFuture},
		{"made good by refill", 2 * time.Second, 0, 1, ErrRefundExpired},
	} {
		if err := b.Refund(tc.now, tc.takenAt, tc.n); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if got := b.Tokens(0); got != 0 {
			t.Fatalf("%s: an error changed the bucket (%v tokens)", tc.name, got)
		}
	}
	// At the take's own now a refund undoes it exactly; half a second
	// later it gives back what refill has not made good.
	if err := b.Refund(0, 0, 1); err != nil || b.Tokens(0) != 1 {
		t.Fatalf("refund at the take's now: %v, %v tokens", err, b.Tokens(0))
	}
	if err := b.Refund(500*time.Millisecond, 0, 1); err != nil {
		t.Fatal(err)
	}
	if got := b.Tokens(500 * time.Millisecond); math.Abs(got-2) > 1e-9 {
		t.Fatalf("after a partial refund: %v tokens, want 2 (1 + 0.5 refill + 0.5 back)", got)
	}
	b.Close()
	if err := b.Refund(0, 0, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
