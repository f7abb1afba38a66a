package weir

import (
	"errors"
	"testing"
	"time"
)

// TestKeyedReconfigure: a new limit in place keeps every key's word (a
// GCRA word its arrival time, a rate word its window's start and count),
// judged by the new limit from then on; the other kind, another tick and
// an invalid limit are refused and change nothing.
func TestKeyedReconfigure(t *testing.T) {
	k := newKeyedT(t, 64, keyedGCRA(t, 10, 5), KeyedOverflowRefuse)
	for i := 0; i < 5; i++ {
		if !k.AllowStringAt(0, "k") {
			t.Fatalf("take %d refused", i)
		}
	}
	if !k.AllowStringAt(0, "other") {
		t.Fatal("another key refused")
	}
	// 10/s burst 5 spent at 0: 0.5 s owed. Under 2/s burst 1 the key takes
	// again once that debt is gone, at 0.5 s; the other key owes 0.1 s.
	if err := k.Reconfigure(keyedGCRA(t, 2, 1)); err != nil {
		t.Fatal(err)
	}
	if k.AllowStringAt(0, "k") {
		t.Fatal("the debt did not carry over")
	}
	for key, want := range map[string]time.Duration{"k": 500 * time.Millisecond, "other": 100 * time.Millisecond} {
		if wait, err := k.NextString(0, key); err != nil || wait != want {
			t.Fatalf("%s: Next %v %v, want %v", key, wait, err, want)
		}
	}
	if d, err := k.DecideString(500*time.Millisecond, "k", 2); !errors.Is(err, ErrKeyedCount) || d != KeyedRefused {
		t.Fatalf("2 tokens under a burst of 1: %v %v", d, err)
	}
	if !k.AllowStringAt(500*time.Millisecond, "k") {
		t.Fatal("refused once the debt was repaid")
	}
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"another kind", k.ReconfigureRate(keyedRate(t, 1, 1)), ErrKeyedKindChange},
		{"another tick", k.Reconfigure(keyedGCRA(t, 1e9, 5)), ErrKeyedTickChange},
		{"a zero limit", k.Reconfigure(GCRALimit{}), ErrGCRALimitInvalid},
	} {
		if !errors.Is(c.err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if k.AllowStringAt(500*time.Millisecond, "k") {
		t.Fatal("a refused change changed the limit")
	}
	if r, err := k.Read(); err != nil || r.Kind != KeyedKindGCRA || r.Occupied != 2 {
		t.Fatalf("reading %+v %v", r, err)
	}

	k.Close()
	if err := k.Reconfigure(keyedGCRA(t, 2, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if err := k.ReconfigureRate(keyedRate(t, 2, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}

	// Rate words: the window's count carries over against the new burst,
	// and the window ends count × the new interval after its start.
	r, err := NewKeyedRate(64, keyedRate(t, 10, 5), KeyedOverflowRefuse, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := 0; i < 4; i++ {
		if !r.AllowStringAt(time.Duration(i), "k") {
			t.Fatalf("event %d refused", i)
		}
	}
	if err := r.ReconfigureRate(keyedRate(t, 20, 3)); err != nil {
		t.Fatal(err)
	}
	if r.AllowStringAt(4, "k") {
		t.Fatal("4 events, new burst 3, yet admitted")
	}
	if wait, err := r.NextString(4, "k"); err != nil || wait != 200*time.Millisecond-4 {
		t.Fatalf("Next %v %v, want the window's end at 4 × 50 ms", wait, err)
	}
	if !r.AllowStringAt(200*time.Millisecond, "k") {
		t.Fatal("the window did not end at 4 × 50 ms")
	}
	if err := r.Reconfigure(keyedGCRA(t, 1, 1)); !errors.Is(err, ErrKeyedKindChange) {
		t.Fatalf("another kind: %v", err)
	}
	if err := r.ReconfigureRate(RateLimit{}); !errors.Is(err, ErrRateLimitInvalid) {
		t.Fatalf("a zero limit: %v", err)
	}
}
