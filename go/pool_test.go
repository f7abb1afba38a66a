package weir

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

// The pool's 0.2 limits and calls through the Go face: jittered lives,
// make-ahead, the making cap, generations, and bad input changing nothing.
func TestPoolJitteredLife(t *testing.T) {
	pl, err := NewPool[string](&PoolPolicy{Size: 4, Idle: 4, Life: 100 * time.Second, LifeJitter: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	make1 := func(name string, draw uint64) PoolLent[string] {
		if k := pl.Take(0).Kind; k != PoolTakeMake {
			t.Fatalf("take for %s: %v", name, k)
		}
		l, err := pl.MadeJittered(name, 0, draw)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	// A draw of 0 lives all 100 s; the largest draw cuts just under 50 s
	// (floor(50 s × (2^64 − 1) / 2^64) = 50 s − 1 ns).
	whole, cut := make1("whole", 0), make1("cut", math.MaxUint64)
	if kept, err := pl.Give(cut, 50*time.Second+1); kept || err != nil {
		t.Fatalf("cut at 50 s + 1 ns: kept %v, %v", kept, err)
	}
	if kept, err := pl.Give(whole, 99*time.Second); !kept || err != nil {
		t.Fatalf("whole at 99 s: kept %v, %v", kept, err)
	}
	if got := pl.Evict(100 * time.Second); fmt.Sprint(got) != "[whole]" {
		t.Fatalf("evict at 100 s: %v", got)
	}
	// Without a reservation, MadeJittered is refused and holds nothing.
	if _, err := pl.MadeJittered("x", 0, 7); !errors.Is(err, ErrPoolNoReservation) {
		t.Fatalf("no reservation: %v", err)
	}
	if len(pl.items) != 0 {
		t.Fatalf("a refused make left %d values", len(pl.items))
	}
}

func TestPoolMakeAheadAndMaxMaking(t *testing.T) {
	pl, err := NewPool[int](&PoolPolicy{Size: 5, Idle: 5, MinIdle: 3, MaxMaking: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	// Three wanted ready, at most two made at once.
	if n := pl.MakeAhead(); n != 2 {
		t.Fatalf("make ahead: %d, want 2", n)
	}
	if k := pl.Take(0).Kind; k != PoolTakeWait {
		t.Fatalf("take past max making: %v", k)
	}
	for i := 0; i < 2; i++ {
		if kept, err := pl.AddIdle(i, 0); !kept || err != nil {
			t.Fatalf("add idle %d: %v %v", i, kept, err)
		}
	}
	if n := pl.MakeAhead(); n != 1 {
		t.Fatalf("make ahead again: %d, want 1", n)
	}
	if err := pl.Unmade(); err != nil {
		t.Fatal(err)
	}
	// No reservation open: refused, and the pool does not hold the value.
	if kept, err := pl.AddIdle(99, 0); kept || !errors.Is(err, ErrPoolNotLent) {
		t.Fatalf("add idle with no reservation: %v %v", kept, err)
	}
	if c := pl.Counts(); c != (PoolCounts{Live: 2, Idle: 2}) {
		t.Fatalf("counts %+v", c)
	}
	if tk := pl.Take(0); tk.Kind != PoolTakeReady || tk.Item != 1 {
		t.Fatalf("take: %+v", tk)
	}
}

func TestPoolMarkOld(t *testing.T) {
	pl, err := NewPool[string](&PoolPolicy{Size: 4, Idle: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	var lent []PoolLent[string]
	for _, n := range []string{"a", "b", "c"} {
		pl.Take(0)
		l, err := pl.Made(n, 0)
		if err != nil {
			t.Fatal(err)
		}
		lent = append(lent, l)
	}
	pl.Give(lent[0], 0)
	pl.Give(lent[1], 0)
	if n := pl.MarkOld(); n != 3 {
		t.Fatalf("marked %d, want 3", n)
	}
	// The old idle ones leave first, whatever their age; a new one made
	// after the mark stays; an old lent one is not kept.
	if got := pl.Evict(1); fmt.Sprint(got) != "[a b]" {
		t.Fatalf("evict old: %v", got)
	}
	if k := pl.Take(1).Kind; k != PoolTakeMake {
		t.Fatalf("take after evict: %v", k)
	}
	d, err := pl.Made("d", 1)
	if err != nil {
		t.Fatal(err)
	}
	if kept, _ := pl.Give(lent[2], 1); kept {
		t.Fatal("an old resource was kept")
	}
	if kept, _ := pl.Give(d, 1); !kept {
		t.Fatal("a new resource was not kept")
	}
	st, err := pl.Stats()
	if err != nil || st.Retired != 3 || st.Made != 4 {
		t.Fatalf("stats %+v %v", st, err)
	}
}

func TestPoolNewCallsAfterClose(t *testing.T) {
	pl, err := NewPool[int](&PoolPolicy{Size: 2, MinIdle: 1, Idle: 1})
	if err != nil {
		t.Fatal(err)
	}
	pl.Close()
	if _, err := pl.MadeJittered(1, 0, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("made jittered after close: %v", err)
	}
	if kept, err := pl.AddIdle(1, 0); kept || !errors.Is(err, ErrClosed) {
		t.Fatalf("add idle after close: %v %v", kept, err)
	}
	if pl.MakeAhead() != 0 || pl.MarkOld() != 0 {
		t.Fatal("make ahead or mark old after close")
	}
}

func TestDefaultPoolPolicyNewFields(t *testing.T) {
	l := DefaultPoolPolicy()
	if l.LifeJitter != 0 || l.MinIdle != 0 || l.MaxMaking != 0 || l.Size != 10 {
		t.Fatalf("%+v", l)
	}
}

// A pool's limits changed in place: every value kept, above a smaller size
// too, nothing made until under it; a larger size grows the table with
// every value still found; bad limits change nothing.
func TestPoolReconfigure(t *testing.T) {
	pl, err := NewPool[string](&PoolPolicy{Size: 4, Idle: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	var lent []PoolLent[string]
	for _, name := range []string{"a", "b", "c"} {
		if k := pl.Take(0).Kind; k != PoolTakeMake {
			t.Fatalf("take for %s: %v", name, k)
		}
		l, err := pl.Made(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		lent = append(lent, l)
	}
	if kept, err := pl.Give(lent[2], 1); !kept || err != nil {
		t.Fatalf("give c: %v %v", kept, err)
	}
	if err := pl.Reconfigure(&PoolPolicy{Size: 0, Idle: 4}); !errors.Is(err, ErrPoolSize) {
		t.Fatalf("size 0: %v", err)
	}
	if err := pl.Reconfigure(&PoolPolicy{Size: 2, Idle: 1}); err != nil {
		t.Fatal(err)
	}
	if c := pl.Counts(); c != (PoolCounts{Live: 3, Idle: 1, Busy: 2}) {
		t.Fatalf("after size 2: %+v", c)
	}
	if got := pl.Take(2); got.Kind != PoolTakeReady || got.Item != "c" {
		t.Fatalf("take after size 2: %+v", got)
	}
	if k := pl.Take(2).Kind; k != PoolTakeWait {
		t.Fatalf("three live, size 2: %v", k)
	}
	if err := pl.Reconfigure(&PoolPolicy{Size: 100, Idle: 100}); err != nil {
		t.Fatal(err)
	}
	for _, l := range lent {
		if kept, err := pl.Give(l, 3); !kept || err != nil {
			t.Fatalf("give %s after size 100: %v %v", l.Item, kept, err)
		}
	}
	if c := pl.Counts(); c != (PoolCounts{Live: 3, Idle: 3}) {
		t.Fatalf("after size 100: %+v", c)
	}
	if err := pl.Reconfigure(nil); err != nil {
		t.Fatal(err)
	}
	pl.Close()
	if err := pl.Reconfigure(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}
