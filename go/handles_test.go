package weir

import (
	"context"
	"errors"
	"math"
	"runtime"
	"testing"
	"time"
)

func TestBreakerTicketSettlesOnce(t *testing.T) {
	b, err := NewBreakerAt(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	call, err := b.AllowAt(time.Millisecond, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if err := call.PassAt(2 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for _, settle := range []func() error{call.Pass, call.Fail, func() error { return call.PassAt(3 * time.Millisecond) }} {
		if err := settle(); !errors.Is(err, ErrSettled) {
			t.Fatalf("second settle: %v, want ErrSettled", err)
		}
	}
	var zero BreakerTicket
	if err := zero.Pass(); !errors.Is(err, ErrSettled) {
		t.Fatalf("zero call: %v", err)
	}
	tally, err := b.TallyAt(3 * time.Millisecond)
	if err != nil || tally != (BreakerTally{Total: 1, Success: 1}) {
		t.Fatalf("tally %+v %v", tally, err)
	}
}

func TestBreakerPolicyErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*BreakerPolicy)
		want   error
	}{
		{"preset", func(*BreakerPolicy) {}, nil},
		{"floor below 1", func(p *BreakerPolicy) { p.Floor = 0.5 }, ErrBreakerFloor},
		{"k below floor", func(p *BreakerPolicy) { p.K = 1 }, ErrBreakerK},
		{"NaN k", func(p *BreakerPolicy) { p.K = math.NaN() }, ErrBreakerK},
		{"negative protection", func(p *BreakerPolicy) { p.Protection = -1 }, ErrBreakerProtection},
		{"zero probe", func(p *BreakerPolicy) { p.Probe = 0 }, ErrBreakerProbe},
		{"zero window", func(p *BreakerPolicy) { p.Window = 0 }, ErrBreakerWindow},
		{"huge size", func(p *BreakerPolicy) { p.Size = 1 << 21 }, ErrBreakerSize},
	} {
		p := DefaultBreakerPolicy()
		tc.change(&p)
		b, err := NewBreakerAt(&p, 0)
		if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if err == nil {
			b.Close()
		} else if b != nil {
			t.Errorf("%s: a handle with an error", tc.name)
		}
	}
}

func TestBreakerDo(t *testing.T) {
	b, err := NewBreaker(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	boom := errors.New("boom")
	if err := b.Do(context.Background(), func() error { return boom }); err != boom {
		t.Fatalf("Do: %v", err)
	}
	if err := b.Do(context.Background(), func() error { return nil }); err != nil {
		t.Fatalf("Do: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	if err := b.Do(ctx, func() error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("Do on a done context: %v ran=%v", err, ran)
	}
}

func TestShedderTicketSettlesOnce(t *testing.T) {
	s, err := NewShedderAt(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	call, err := s.AllowAt(time.Millisecond, 950)
	if err != nil {
		t.Fatal(err)
	}
	if s.Flying() != 1 {
		t.Fatalf("flying %d", s.Flying())
	}
	if err := call.PassAt(2 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := call.Fail(); !errors.Is(err, ErrSettled) {
		t.Fatalf("second settle: %v", err)
	}
	st, err := s.StatsAt(2 * time.Millisecond)
	if err != nil || st.Flying != 0 || st.CPU != 950 {
		t.Fatalf("stats %+v %v", st, err)
	}
	p := DefaultShedderPolicy()
	p.CPU = 1000
	if _, err := NewShedderAt(&p, 0); !errors.Is(err, ErrShedderCPU) {
		t.Fatalf("cpu 1000: %v", err)
	}
}

// Three calls in flight and an average of three against a limit of 4:
// at half the CPU threshold only sheddable calls are refused.
func TestShedderClasses(t *testing.T) {
	p := ShedderPolicy{Size: 4, CPU: 800, Window: 20 * time.Millisecond, Latency: 20 * time.Millisecond, Beta: 0, Cool: 0, Floor: 1}
	s, err := NewShedderAt(&p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var open []ShedderTicket
	for i := 0; i < 4; i++ {
		call, err := s.AllowAt(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, call)
	}
	if err := open[0].Fail(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AllowClassAt(0, 400, Sheddable); !errors.Is(err, ErrRefused) {
		t.Fatalf("sheddable at 400: %v", err)
	}
	for _, class := range []Criticality{SheddablePlus, Critical, CriticalPlus} {
		call, err := s.AllowClassAt(0, 999, class)
		if err != nil {
			t.Fatalf("class %d at 999: %v", class, err)
		}
		if err := call.Fail(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AllowClassAt(0, 0, Criticality(7)); !errors.Is(err, ErrShedderClass) {
		t.Fatalf("class 7: %v", err)
	}
}

// Two halves of a fixed limit of 4: partition 1 borrows partition 0's idle
// room up to its cap; an unknown partition is an error.
func TestConcurrencyPartitions(t *testing.T) {
	p := DefaultConcurrencyPolicy()
	p.InitialLimit, p.MinLimit, p.MaxLimit, p.QueueSize = 4, 4, 4, 0
	l, err := NewConcurrencyPartitioned(&p, []ConcurrencyPartition{{Share: 0.5, Borrow: 0}, {Share: 0.5, Borrow: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var held []ConcurrencyTicket
	for i := 0; i < 3; i++ {
		f, err := l.EnterPartition(1, 0)
		if err != nil {
			t.Fatalf("enter %d: %v", i, err)
		}
		held = append(held, f)
	}
	if _, err := l.EnterPartition(1, 0); !errors.Is(err, ErrRefused) {
		t.Fatalf("past the cap: %v", err)
	}
	if _, err := l.EnterPartition(2, 0); !errors.Is(err, ErrConcurrencyPartition) {
		t.Fatalf("partition 2: %v", err)
	}
	if l.PartitionFlying(1) != 3 || l.PartitionRoom(0) != 2 {
		t.Fatalf("flying %d room %d", l.PartitionFlying(1), l.PartitionRoom(0))
	}
	for i := range held {
		if err := held[i].Leave(time.Millisecond, false); err != nil {
			t.Fatal(err)
		}
	}
	if l.Flying() != 0 {
		t.Fatalf("flying %d", l.Flying())
	}
	if _, err := NewConcurrencyPartitioned(&p, nil); !errors.Is(err, ErrConcurrencyPartitions) {
		t.Fatalf("no partitions: %v", err)
	}
}

func TestBucketTable(t *testing.T) {
	for _, tc := range []struct {
		rate, burst float64
		want        error
	}{
		{10, 5, nil}, {0, 3, nil}, {math.NaN(), 1, ErrNotFinite}, {math.Inf(1), 1, ErrNotFinite},
		{-1, 1, ErrNegative}, {0, 1e12, ErrTooLarge},
	} {
		b, err := NewBucketAt(tc.rate, tc.burst, 0)
		if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
			t.Errorf("NewBucket(%v, %v): %v, want %v", tc.rate, tc.burst, err, tc.want)
		}
		if b != nil {
			b.Close()
		}
	}
	b, err := NewBucketAt(10, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := 0; i < 5; i++ {
		if !b.AllowAt(0) {
			t.Fatalf("take %d of a burst of 5 refused", i+1)
		}
	}
	if b.AllowAt(0) {
		t.Fatal("a sixth take at one instant passed")
	}
	d, err := b.Reserve(0, 1)
	if !errors.Is(err, ErrRefused) || d != 100*time.Millisecond {
		t.Fatalf("Reserve: %v %v, want 100ms", d, err)
	}
	if !b.AllowAt(d) {
		t.Fatal("refused after the delay Reserve gave")
	}
	for _, n := range []float64{0, -1, math.NaN(), math.Inf(1), 6} {
		if b.AllowN(time.Hour, n) || b.Delay(time.Hour, n) != Never {
			t.Errorf("cost %v: admitted or given a finite delay", n)
		}
	}
	if got := b.Tokens(time.Hour); got != 5 {
		t.Fatalf("tokens after an hour %v", got)
	}
}

func TestBucketWait(t *testing.T) {
	b, err := NewBucket(1e6, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for i := 0; i < 3; i++ { // a microsecond each: bounded, not a fixed sleep
		if err := b.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	never, _ := NewBucket(0, 1)
	defer never.Close()
	never.Allow()
	if err := never.Wait(context.Background()); !errors.Is(err, ErrRefused) {
		t.Fatalf("Wait on a bucket that never refills: %v", err)
	}
	slow, _ := NewBucket(0.001, 1)
	defer slow.Close()
	slow.Allow()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := slow.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait past the deadline: %v", err)
	}
}

func TestBloomKeys(t *testing.T) {
	limit, err := NewRateLimit(5, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBloomSeeded(10, 2, limit, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !b.AllowAt(0, []byte("a")) || !b.AllowStringAt(0, "a") {
		t.Fatal("a burst of 2 refused")
	}
	if b.AllowAt(0, []byte("a")) || b.AllowStringAt(0, "a") {
		t.Fatal("a third event passed")
	}
	if b.Next(0, []byte("a")) == 0 || b.NextString(0, "a") != b.Next(0, []byte("a")) {
		t.Fatal("Next disagrees between []byte and string")
	}
	if !b.AllowAt(0, nil) || !b.AllowStringAt(0, "") || b.AllowAt(0, []byte{}) {
		t.Fatal("the empty key is not one key")
	}
	if b.AllowAt(-1, []byte("z")) || b.Next(-1, []byte("z")) != Never {
		t.Fatal("a negative now was judged")
	}
	for _, tc := range []struct {
		size, hashes uint32
		want         error
	}{{33, 1, ErrBloomSize}, {10, 0, ErrBloomHashes}, {10, 9, ErrBloomHashes}, {0, 2, ErrBloomTooFewWords}, {2, 1, ErrBloomTooFewWords}} {
		if _, err := NewBloomSeeded(tc.size, tc.hashes, limit, 1, 2); !errors.Is(err, tc.want) {
			t.Errorf("NewBloom(%d, %d): %v, want %v", tc.size, tc.hashes, err, tc.want)
		}
	}
	if _, err := NewBloom(10, 1, RateLimit{}); !errors.Is(err, ErrRateLimitInvalid) {
		t.Errorf("zero limit: %v", err)
	}
}

// Every handle answers a use after Close with an error or a refusal, and
// a second Close does nothing.
func TestUseAfterClose(t *testing.T) {
	br, _ := NewBreaker(nil)
	call, _ := br.AllowAt(0, 0)
	br.Close()
	br.Close()
	if _, err := br.Allow(); !errors.Is(err, ErrClosed) {
		t.Errorf("breaker Allow: %v", err)
	}
	if err := call.Pass(); !errors.Is(err, ErrClosed) {
		t.Errorf("breaker call Pass: %v", err)
	}
	if br.Ratio() != 0 {
		t.Error("breaker Ratio")
	}
	if _, err := br.TallyAt(0); !errors.Is(err, ErrClosed) {
		t.Errorf("breaker BreakerTally: %v", err)
	}
	sh, _ := NewShedder(nil)
	sc, _ := sh.Allow(0)
	sh.Close()
	sh.Close()
	if _, err := sh.Allow(0); !errors.Is(err, ErrClosed) {
		t.Errorf("shedder Allow: %v", err)
	}
	if err := sc.Fail(); !errors.Is(err, ErrClosed) {
		t.Errorf("shedder call Fail: %v", err)
	}
	if _, err := sh.StatsAt(0); !errors.Is(err, ErrClosed) || sh.Flying() != 0 {
		t.Errorf("shedder Stats: %v", err)
	}
	bu, _ := NewBucket(1, 1)
	bu.Close()
	bu.Close()
	if bu.Allow() || bu.Delay(0, 1) != Never || bu.Tokens(0) != 0 {
		t.Error("bucket after Close")
	}
	if err := bu.Wait(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("bucket Wait: %v", err)
	}
	limit, _ := NewRateLimit(1, 1)
	bl, _ := NewBloom(4, 1, limit)
	bl.Close()
	bl.Close()
	if bl.Allow([]byte("k")) || bl.AllowString("k") || bl.Next(0, nil) != Never || bl.NextString(0, "") != Never {
		t.Error("bloom after Close")
	}
}

// A handle nobody closes is freed by its finalizer.
func TestFinalizerFreesUnclosedHandles(t *testing.T) {
	before := finalized.Load()
	limit, _ := NewRateLimit(1, 1)
	glimit, _ := NewGCRALimit(1, 1)
	for i := 0; i < 10; i++ {
		NewBreaker(nil)
		NewShedder(nil)
		NewBucket(1, 1)
		NewBloom(4, 1, limit)
		NewKeyed(1, glimit, KeyedOverflowRefuse, 1, 2)
	}
	for i := 0; i < 50 && finalized.Load()-before < 50; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond) // let the finalizer goroutine run; bounded poll
	}
	if got := finalized.Load() - before; got < 50 {
		t.Fatalf("%d of 50 unclosed handles finalized", got)
	}
}
