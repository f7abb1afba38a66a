package weir

import (
	"errors"
	"testing"
)

// Counting is off until StartCounting, then every handle reads its own.
func TestCounts(t *testing.T) {
	b, err := NewBucketAt(1, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.ReadCounts(); !errors.Is(err, ErrCountsOff) {
		t.Fatalf("before StartCounting: %v", err)
	}
	if err := b.StartCounting(); err != nil {
		t.Fatal(err)
	}
	b.AllowN(0, 1.5)
	b.AllowN(0, 1)
	b.AllowN(0, 0)
	c, err := b.ReadCounts()
	if err != nil || c != (Counts{Admitted: 1, Refused: 1, Errors: 1, Units: 1.5}) {
		t.Fatalf("bucket: %+v %v", c, err)
	}
	g, _ := NewGate(1)
	defer g.Close()
	if err := g.StartCounting(); err != nil {
		t.Fatal(err)
	}
	g.Enter()
	g.Enter()
	if c, _ := g.ReadCounts(); c.Admitted != 1 || c.Refused != 1 {
		t.Fatalf("gate: %+v", c)
	}
	pl, err := NewPool[int](nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := pl.StartCounting(); err != nil {
		t.Fatal(err)
	}
	pl.Take(0)
	if c, _ := pl.ReadCounts(); c.Admitted != 1 {
		t.Fatalf("pool: %+v", c)
	}
	// A keyed table: admitted and refused by the key's word, n events a
	// decide, an n past the burst an error.
	limit, _ := NewGCRALimit(1, 2)
	k, err := NewKeyed(4, limit, KeyedOverflowRefuse, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.ReadCounts(); !errors.Is(err, ErrCountsOff) {
		t.Fatalf("keyed before StartCounting: %v", err)
	}
	if err := k.StartCounting(); err != nil {
		t.Fatal(err)
	}
	_, _ = k.Decide(0, []byte("key"), 2)
	k.AllowAt(0, []byte("key"))
	_, _ = k.Decide(0, []byte("key"), 3)
	if c, err := k.ReadCounts(); err != nil || c != (Counts{Admitted: 1, Refused: 1, Errors: 1, Units: 2}) {
		t.Fatalf("keyed: %+v %v", c, err)
	}
	k.Close()
	if _, err := k.ReadCounts(); !errors.Is(err, ErrClosed) {
		t.Fatalf("keyed after Close: %v", err)
	}
	pl.Close()
	if _, err := pl.ReadCounts(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
