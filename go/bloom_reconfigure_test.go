package weir

import (
	"errors"
	"testing"
	"time"
)

// bloomFaces is the pure-Go array and the C one over the same calls.
type bloomFace interface {
	AllowAt(now time.Duration, key []byte) bool
	Next(now time.Duration, key []byte) time.Duration
	Reconfigure(limit RateLimit) error
	ReconfigureGCRA(limit GCRALimit) error
	Close() error
}

func TestBloomReconfigure(t *testing.T) {
	gcra := func(rate float64, burst int64) GCRALimit {
		l, err := NewGCRALimit(rate, burst)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	rate := func(perS float64, burst int64) RateLimit {
		l, err := NewRateLimit(perS, burst)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	key := []byte("k")
	// GCRA words: a key that spent 10/s burst 5 owes 0.5 s; under 2/s
	// burst 1 it takes again once that debt is gone, at 0.5 s.
	goBloom, err := NewGCRABloomSeeded(10, 1, gcra(10, 5), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	cBloom, err := NewGCRACBloom(10, 1, gcra(10, 5), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]bloomFace{"Bloom": goBloom, "CBloom": cBloom} {
		for i := 0; i < 5; i++ {
			if !b.AllowAt(0, key) {
				t.Fatalf("%s: take %d refused", name, i)
			}
		}
		if err := b.ReconfigureGCRA(gcra(2, 1)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.AllowAt(0, key) || b.Next(0, key) != 500*time.Millisecond {
			t.Fatalf("%s: the debt did not carry over (next %v)", name, b.Next(0, key))
		}
		if !b.AllowAt(500*time.Millisecond, key) {
			t.Fatalf("%s: refused once the debt was repaid", name)
		}
		if err := b.Reconfigure(rate(1, 1)); !errors.Is(err, ErrBloomKindChange) {
			t.Fatalf("%s: another kind: %v", name, err)
		}
		if err := b.ReconfigureGCRA(gcra(1e9, 5)); !errors.Is(err, ErrBloomTickChange) {
			t.Fatalf("%s: another tick: %v", name, err)
		}
		if err := b.ReconfigureGCRA(GCRALimit{}); !errors.Is(err, ErrGCRALimitInvalid) {
			t.Fatalf("%s: a zero limit: %v", name, err)
		}
		b.Close()
		if err := b.ReconfigureGCRA(gcra(2, 1)); !errors.Is(err, ErrClosed) {
			t.Fatalf("%s: after Close: %v", name, err)
		}
	}
	// Rate words: the window's count carries over against the new burst,
	// and the window ends count × the new interval after its start.
	goRate, err := NewBloomSeeded(10, 1, rate(10, 5), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	cRate, err := NewCBloom(10, 1, rate(10, 5), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]bloomFace{"Bloom": goRate, "CBloom": cRate} {
		for i := 0; i < 4; i++ {
			if !b.AllowAt(time.Duration(i), key) {
				t.Fatalf("%s: event %d refused", name, i)
			}
		}
		if err := b.Reconfigure(rate(20, 3)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.AllowAt(4, key) {
			t.Fatalf("%s: 4 events, new burst 3, yet admitted", name)
		}
		if !b.AllowAt(200*time.Millisecond, key) {
			t.Fatalf("%s: the window did not end at 4 × 50 ms", name)
		}
		if err := b.ReconfigureGCRA(gcra(1, 1)); !errors.Is(err, ErrBloomKindChange) {
			t.Fatalf("%s: another kind: %v", name, err)
		}
		b.Close()
	}
}
