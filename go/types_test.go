package weir

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"
	"unsafe"
)

// Table tests of the constructors' bad input: a clear error, no handle.
func TestConstructorErrors(t *testing.T) {
	p := func(f func(*ConcurrencyPolicy)) *ConcurrencyPolicy { g := DefaultConcurrencyPolicy(); f(&g); return &g }
	bp := func(f func(*BudgetPolicy)) *BudgetPolicy { b := DefaultBudgetPolicy(); f(&b); return &b }
	sre := func(f func(*BreakerPolicy)) *BreakerPolicy { s := DefaultBreakerPolicy(); f(&s); return &s }
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"sliding quota 0", second(NewSliding(0, time.Second)), ErrQuota},
		{"sliding window 0", second(NewSliding(1, 0)), ErrSlidingWindow},
		{"sliding huge", second(NewSliding(math.MaxInt64, time.Second)), ErrTooLarge},
		{"period quota 0", second(NewPeriod(0, time.Second, false)), ErrQuota},
		{"window span 0", second(NewWindow(4, 0, 0)), ErrWindowSpan},
		{"window size", second(NewWindow(1<<21, time.Second, 0)), ErrWindowSize},
		{"budget form", second(NewBudget(bp(func(b *BudgetPolicy) { b.Form = 7 }), 0)), ErrUnknownKind},
		{"budget tokens", second(NewBudget(bp(func(b *BudgetPolicy) { b.Form = BudgetTokens; b.MaxTokens = 0 }), 0)), ErrBudgetMaxTokens},
		{"budget ttl", second(NewBudget(bp(func(b *BudgetPolicy) { b.TTL = 0 }), 0)), ErrBudgetTTL},
		{"budget percent", second(NewBudget(bp(func(b *BudgetPolicy) { b.Percent = -1 }), 0)), ErrBudgetPercent},
		{"concurrency limits", second(NewConcurrency(p(func(g *ConcurrencyPolicy) { g.MinLimit = 0 }))), ErrConcurrencyLimits},
		{"concurrency smoothing", second(NewConcurrency(p(func(g *ConcurrencyPolicy) { g.Smoothing = 0 }))), ErrConcurrencySmoothing},
		{"breaker cap NaN", second(NewBreakerAt(sre(func(s *BreakerPolicy) { s.MaxRejectionProbability = math.NaN() }), 0)), ErrBreakerCap},
		{"breaker cap above 1", second(NewBreakerAt(sre(func(s *BreakerPolicy) { s.MaxRejectionProbability = 1.5 }), 0)), ErrBreakerCap},
		{"breaker cap negative", second(NewBreakerAt(sre(func(s *BreakerPolicy) { s.MaxRejectionProbability = -0.1 }), 0)), ErrBreakerCap},
		{"breaker rps negative", second(NewBreakerAt(sre(func(s *BreakerPolicy) { s.RPSThreshold = -1 }), 0)), ErrBreakerRPS},
		{"breaker rps infinite", second(NewBreakerAt(sre(func(s *BreakerPolicy) { s.RPSThreshold = math.Inf(1) }), 0)), ErrBreakerRPS},
		{"breaker aggression 0", second(NewBreakerAt(sre(func(s *BreakerPolicy) { s.Aggression = 0 }), 0)), ErrBreakerAggression},
		{"breaker aggression NaN", second(NewBreakerAt(sre(func(s *BreakerPolicy) { s.Aggression = math.NaN() }), 0)), ErrBreakerAggression},
		{"breaker aggression negative", second(NewBreakerAt(sre(func(s *BreakerPolicy) { s.Aggression = -2 }), 0)), ErrBreakerAggression},
		{"pool size", second(NewPool[int](&PoolPolicy{Size: 0})), ErrPoolSize},
		{"pool idle", second(NewPool[int](&PoolPolicy{Size: 1, Idle: -1})), ErrPoolIdle},
		{"pool keep", second(NewPool[int](&PoolPolicy{Size: 1, Keep: -1})), ErrPoolKeep},
		{"pool life", second(NewPool[int](&PoolPolicy{Size: 1, Life: -1})), ErrPoolLife},
		{"pool jitter NaN", second(NewPool[int](&PoolPolicy{Size: 1, LifeJitter: math.NaN()})), ErrPoolJitter},
		{"pool jitter above 1", second(NewPool[int](&PoolPolicy{Size: 1, LifeJitter: 1.5})), ErrPoolJitter},
		{"pool jitter negative", second(NewPool[int](&PoolPolicy{Size: 1, LifeJitter: -0.1})), ErrPoolJitter},
		{"pool min idle", second(NewPool[int](&PoolPolicy{Size: 1, MinIdle: -1})), ErrPoolMinIdle},
		{"pool max making", second(NewPool[int](&PoolPolicy{Size: 1, MaxMaking: -1})), ErrPoolMaxMaking},
		{"pool first wrong field", second(NewPool[int](&PoolPolicy{Size: 1, Life: -1, MaxMaking: -1})), ErrPoolLife},
		{"rate zero", second(NewRateLimit(0, 1)), ErrRateZero},
		{"rate NaN", second(NewRateLimit(math.NaN(), 1)), ErrNotFinite},
		{"rate too fast", second(NewRateLimit(1e9, 1)), ErrRateTooFast},
		{"gcra burst", second(NewGCRALimit(1, 0)), ErrGCRABurst},
		{"gcra zero", second(NewGCRALimit(0, 1)), ErrGCRAZero},
		{"gcra too fast", second(NewGCRALimit(1e12, 1)), ErrGCRATooFast},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	for _, b := range []Backoff{
		{Base: -1, Factor: 2, Attempts: 1},
		{Factor: 0.5, Attempts: 1},
		{Factor: 2, Cap: -1, Attempts: 1},
		{Factor: 2},
		{Factor: 2, Attempts: 1, BackoffJitter: 9},
		{Factor: 2, Attempts: 1, Spread: 2},
	} {
		if b.Check() == nil || b.Ceiling(1) != -1 || b.Delay(1, 0, 0) != -1 || b.More(0) {
			t.Errorf("%+v: accepted", b)
		}
		if err := b.Retry(context.Background(), func(context.Context) error { return nil }); err == nil {
			t.Errorf("%+v: Retry ran with a bad policy", b)
		}
	}
}

func TestLayouts(t *testing.T) {
	if unsafe.Sizeof(RateLimit{}) != 16 || unsafe.Sizeof(GCRALimit{}) != 24 || unsafe.Sizeof(Limiter{}) != 48 {
		t.Fatal("a Go mirror of a C struct has another size")
	}
}

func TestGCRAWordC(t *testing.T) {
	l, err := NewGCRALimit(10, 5)
	if err != nil || l.Burst() != 5 || l.PerToken() == 0 {
		t.Fatal(l, err)
	}
	var w uint64
	if GCRARoomC(&w, &l, 0) != 5 || !GCRAAllowNC(&w, &l, 0, 5) || GCRAAllowC(&w, &l, 0) {
		t.Fatal("burst of 5")
	}
	if d := GCRANextC(&w, &l, 0); d != 100*time.Millisecond || !GCRAAllowC(&w, &l, d) {
		t.Fatalf("next %v", d)
	}
	if GCRAAllowC(&w, &l, -1) || GCRAAllowC(nil, &l, 0) || GCRAAllowNC(&w, &l, time.Hour, 6) {
		t.Fatal("bad input admitted")
	}
	var zero GCRALimit
	if GCRAAllowC(&w, &zero, time.Hour) || RateAllowC(&w, &RateLimit{}, time.Hour) {
		t.Fatal("an invalid limit admitted")
	}
}

func TestGateDeadlineConcurrencyBudget(t *testing.T) {
	g, _ := NewGate(2)
	defer g.Close()
	if !g.Enter() || !g.Enter() || g.Enter() || g.Held() != 2 {
		t.Fatal("gate of 2")
	}
	if err := g.Do(context.Background(), func() error { return nil }); !errors.Is(err, ErrRefused) {
		t.Fatal(err)
	}
	g.Leave()
	g.Leave()
	g.Leave()
	if g.Held() != 0 {
		t.Fatal("leave below zero")
	}

	d := StartDeadline(time.Second, 10*time.Second)
	if d.Expired(10*time.Second+999*ms) || !d.Expired(11*time.Second) {
		t.Fatal("deadline")
	}
	if left, ok := d.Remaining(10500 * ms); !ok || left != 500*ms {
		t.Fatal(left, ok)
	}
	if _, ok := StartDeadline(0, 0).Remaining(0); ok {
		t.Fatal("no budget has a remainder")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	cd, ok := DeadlineFromContext(ctx, Now())
	if left, _ := cd.Remaining(Now()); !ok || left < 59*time.Minute {
		t.Fatal("from context", left)
	}
	c2, cancel2 := cd.Context(context.Background())
	defer cancel2()
	if dl, ok := c2.Deadline(); !ok || time.Until(dl) < 59*time.Minute {
		t.Fatal("to context")
	}
	if _, ok := DeadlineFromContext(context.Background(), 0); ok {
		t.Fatal("a context without a deadline")
	}

	c, _ := NewConcurrency(nil)
	defer c.Close()
	f, err := c.Enter(0)
	if err != nil || c.Flying() != 1 {
		t.Fatal(err)
	}
	if f.Leave(10*ms, false) != nil || !errors.Is(f.Leave(10*ms, false), ErrSettled) {
		t.Fatal("flight leaves once")
	}
	if c.Limit() != 20 || c.LongRTT() != 10*ms {
		t.Fatal(c.Limit(), c.LongRTT())
	}

	bt := DefaultBudgetPolicy()
	bt.Form = BudgetTokens
	b, _ := NewBudget(&bt, 0)
	defer b.Close()
	if b.Tokens(0) != 10000 {
		t.Fatal(b.Tokens(0))
	}
	for b.Withdraw(0) {
	}
	if b.Left(0) != 0 {
		t.Fatal("left")
	}
	b.Deposit(0)
}

func TestWindowAndLimiterAnchor(t *testing.T) {
	w, _ := NewWindow(4, 4*time.Second, 0)
	defer w.Close()
	w.Add(0, 5)
	w.Add(time.Second, 7)
	if tot, _ := w.Total(time.Second, true); tot != (WindowTotal{12, 2}) {
		t.Fatal(tot)
	}
	if len(w.Buckets(time.Second, true)) != 4 || w.Size() != 4 || w.Width() != time.Second {
		t.Fatal("buckets")
	}
	l, _ := NewLimiterBucket(10, 1, ms, 0, 5, 0)
	if a, p, m, err := l.Anchor(0); err != nil || a != 0 || p != ms || m != 1 || l.Kind() != LimiterBucket {
		t.Fatal(a, p, m, err)
	}
	var zero Limiter
	if zero.Kind() != LimiterCorrupt || !errors.Is(zero.Consume(0, 1), ErrLimiterCorrupt) {
		t.Fatal("a zero Limiter is not a limiter")
	}
}

func TestBackoffRetry(t *testing.T) {
	b := DefaultBackoff()
	b.Rand = rand.New(rand.NewPCG(1, 1))
	calls := 0
	var slept []time.Duration
	err := b.retry(context.Background(), func(context.Context) error { calls++; return errors.New("no") },
		func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil })
	if calls != 3 || len(slept) != 2 || err == nil {
		t.Fatal(calls, slept, err)
	}
	perm := errors.New("permanent")
	calls = 0
	if err := b.Retry(context.Background(), func(context.Context) error { calls++; return Permanent(perm) }); err != perm || calls != 1 {
		t.Fatal(err, calls)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if err := b.Retry(ctx, func(context.Context) error { return errors.New("x") }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
}

func TestCPUReaderCgroupV2(t *testing.T) {
	fsys := fstest.MapFS{
		"proc/self/cgroup":                               {Data: []byte("0::/kubepods/pod1\n")},
		"sys/fs/cgroup/cgroup.controllers":               {Data: []byte("cpu\n")},
		"sys/fs/cgroup/kubepods/cpu.max":                 {Data: []byte("400000 100000\n")},
		"sys/fs/cgroup/kubepods/pod1/cgroup.controllers": {Data: []byte("cpu\n")},
		"sys/fs/cgroup/kubepods/pod1/cpu.max":            {Data: []byte("150000 100000\n")},
		"sys/fs/cgroup/kubepods/pod1/cpu.stat":           {Data: []byte("usage_usec 1000000\nuser_usec 1\n")},
	}
	var wall time.Duration
	r := newCPUReader(fsys, 8, func() time.Duration { return wall })
	if r.Capacity() != 1.5 || !r.Cgroup() {
		t.Fatalf("capacity %v cgroup %v, want 1.5 from the tightest cpu.max", r.Capacity(), r.Cgroup())
	}
	wall = time.Second
	fsys["sys/fs/cgroup/kubepods/pod1/cpu.stat"] = &fstest.MapFile{Data: []byte("usage_usec 1750000\n")}
	if got := r.Read(); got != 500 {
		t.Fatalf("0.75 s of CPU in 1 s on 1.5 CPUs: %d‰, want 500", got)
	}
	// No cgroup v2: the process's own CPU over NumCPU.
	r2 := newCPUReader(fstest.MapFS{}, 4, func() time.Duration { return wall })
	if r2.Cgroup() || r2.Capacity() != 4 {
		t.Fatal("fallback")
	}
	if v := NewCPUReader().Read(); v < 0 || v > 1000 {
		t.Fatal(v)
	}
}

func TestBloomFileShared(t *testing.T) {
	limit, _ := NewRateLimit(10, 2)
	path := filepath.Join(t.TempDir(), "bloom")
	a, err := OpenBloomFile(path, 8, 1, limit, 5, 6)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenBloomFile(path, 8, 1, limit, 0, 0) // attaches: the header wins
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !a.AllowStringAt(0, "k") || !b.AllowAt(0, []byte("k")) || a.AllowAt(0, []byte("k")) || b.AllowStringAt(0, "k") {
		t.Fatal("two mappings do not share one limit")
	}
	if a.Next(0, []byte("k")) != b.NextString(0, "k") || a.Next(0, []byte("k")) == 0 {
		t.Fatal("next")
	}
	if !a.Allow([]byte("fresh")) || !b.AllowString("fresh2") {
		t.Fatal("MonotonicNow forms")
	}
	mem := alignedRegion(64) // regions are 64-byte aligned, or ErrMisaligned
	if _, err := AttachBloom(mem); !errors.Is(err, ErrBloomForeign) {
		t.Fatal(err)
	}
	if _, err := LayBloom(mem, 8, 1, limit, 0, 0); !errors.Is(err, ErrBloomTooSmall) {
		t.Fatal(err)
	}
	b.Close()
	if b.AllowStringAt(time.Hour, "k") || b.Next(0, nil) != Never {
		t.Fatal("a closed region admitted")
	}
}

// A file of GCRA words: the second opener attaches whatever its rate
// limit argument, and the pure-Go words over a mapping share it too.
func TestGCRABloomFileShared(t *testing.T) {
	limit, _ := NewGCRALimit(1, 2)
	path := filepath.Join(t.TempDir(), "gcra-bloom")
	a, err := OpenGCRABloomFile(path, 6, 2, limit, 5, 6)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	window, _ := NewRateLimit(10, 2)
	b, err := OpenBloomFile(path, 6, 2, window, 0, 0) // attaches: the header's kind wins
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	words, err := NewBloomWords(b.mem)
	if err != nil {
		t.Fatal(err)
	}
	if !a.AllowAt(0, []byte("k")) || !words.AllowAt(0, []byte("k")) || b.AllowAt(0, []byte("k")) {
		t.Fatal("a burst of 2 across two mappings and the Go words")
	}
	if d := words.NextAt(0, []byte("k")); d != time.Second || b.Next(0, []byte("k")) != d {
		t.Fatalf("next %v: one token a second", d)
	}
	if !b.AllowAt(time.Second, []byte("k")) || a.AllowAt(time.Second, []byte("k")) {
		t.Fatal("one token back after a second, not the burst")
	}
	if _, err := OpenGCRABloomFile(filepath.Join(t.TempDir(), "bad"), 6, 9, limit, 1, 2); !errors.Is(err, ErrBloomHashes) {
		t.Fatalf("9 hashes: %v", err)
	}
}
