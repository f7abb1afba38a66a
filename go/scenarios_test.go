package weir

// The scenarios 1–7 of docs/design.md through the Go face. Time is driven through
// now; nothing sleeps.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

const ms = time.Millisecond

// 1. Limiters under bursts.
func TestScenario1LimitersUnderBursts(t *testing.T) {
	bucket, err := NewBucketAt(20, 20, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	sliding, err := NewSliding(20, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer sliding.Close()
	period, err := NewPeriod(20, time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	defer period.Close()
	for _, burst := range []time.Duration{950 * ms, 2950 * ms, 4950 * ms, 6950 * ms} {
		var b, s, p int
		var last time.Duration
		for i := 0; i < 40; i++ {
			now := burst + time.Duration(i)*2500*time.Microsecond
			last = now
			if bucket.AllowAt(now) {
				b++
			}
			if sliding.AllowAt(now) {
				s++
			}
			if period.TakeAt(now).Admitted() {
				p++
			}
		}
		if b != 21 || s != 20 || p != 40 {
			t.Errorf("burst at %v: bucket %d sliding %d period %d, want 21 20 40", burst, b, s, p)
		}
		if d := bucket.Delay(last, 5); d < 200*ms || d > 205*ms {
			t.Errorf("burst at %v: five tokens in %v, want about 202.5ms", burst, d)
		}
	}
}

// 2. Breaker under an outage (10 s to 30 s down, a call every 50 ms).
func TestScenario2BreakerUnderOutage(t *testing.T) {
	b, err := NewBreakerAt(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	refusedBefore, throughLate, lastRefusal := 0, 0, time.Duration(0)
	var peak float64
	for now := time.Duration(0); now < 60*time.Second; now += 50 * ms {
		down := now >= 10*time.Second && now < 30*time.Second
		call, err := b.AllowAt(now, rng.Float64())
		if errors.Is(err, ErrRefused) {
			if now < 10*time.Second {
				refusedBefore++
			}
			lastRefusal = now
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if down && now >= 20*time.Second {
			throughLate++
		}
		if down {
			err = call.FailAt(now + ms)
		} else {
			err = call.PassAt(now + ms)
		}
		if err != nil {
			t.Fatal(err)
		}
		if r := b.RatioAt(now); r > peak {
			peak = r
		}
	}
	if refusedBefore != 0 {
		t.Errorf("%d refused before the outage", refusedBefore)
	}
	if peak < 0.9 {
		t.Errorf("the refusal fraction peaked at %.3f, want it near 1", peak)
	}
	if throughLate < 5 || throughLate > 40 {
		t.Errorf("%d calls through in the outage's last 10 s, want about one a second", throughLate)
	}
	if recovered := lastRefusal - 30*time.Second; recovered > 13*time.Second {
		t.Errorf("still refusing %v after recovery", recovered)
	}
}

// 3. Shedder under rising load.
func TestScenario3ShedderUnderLoad(t *testing.T) {
	s, err := NewShedderAt(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Duration(0)
	// A CPU spike with nothing queued: calls settle at once.
	for i := 0; i < 2000; i++ {
		now += ms
		call, err := s.AllowAt(now, 1000)
		if err != nil {
			t.Fatalf("spike, call %d: %v", i, err)
		}
		call.PassAt(now + 10*ms)
	}
	// A long queue on an idle CPU.
	var held []ShedderTicket
	for i := 0; i < 500; i++ {
		now += 100 * time.Microsecond
		call, err := s.AllowAt(now, 100)
		if err != nil {
			t.Fatalf("idle CPU, call %d: %v", i, err)
		}
		held = append(held, call)
	}
	// Hot and full: the queue stays long while calls complete (the
	// average of calls in flight moves on completions).
	refused := 0
	for i := 0; i < 400; i++ {
		now += 100 * time.Microsecond
		held[0].PassAt(now)
		held = held[1:]
		call, err := s.AllowAt(now, 990)
		if errors.Is(err, ErrRefused) {
			refused++
			continue
		}
		held = append(held, call)
	}
	if refused == 0 {
		t.Fatal("nothing refused while hot and full")
	}
	for i := range held {
		held[i].PassAt(now)
	}
	// Cooled: past cool_ns, nothing refused.
	now += 2 * time.Second
	for i := 0; i < 200; i++ {
		now += ms
		call, err := s.AllowAt(now, 100)
		if err != nil {
			t.Fatalf("cooled, call %d: %v", i, err)
		}
		call.PassAt(now)
	}
}

// 4. Pool.
func TestScenario4Pool(t *testing.T) {
	pl, err := NewPool[string](&PoolPolicy{Size: 3, Idle: 3, Keep: time.Second, Life: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	make3 := func(now time.Duration, names ...string) []PoolLent[string] {
		var out []PoolLent[string]
		for _, n := range names {
			if k := pl.Take(now).Kind; k != PoolTakeMake {
				t.Fatalf("take for %s: %v, want MAKE", n, k)
			}
			l, err := pl.Made(n, now)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
		}
		return out
	}
	lent := make3(0, "a", "b", "c")
	if k := pl.Take(0).Kind; k != PoolTakeWait {
		t.Fatalf("full pool: %v", k)
	}
	for i, l := range lent {
		if kept, err := pl.Give(l, time.Duration(i)*ms); !kept || err != nil {
			t.Fatal(kept, err)
		}
	}
	// Newest first.
	if tk := pl.Take(3 * ms); tk.Kind != PoolTakeReady || tk.Item != "c" {
		t.Fatalf("newest first: %+v", tk)
	} else if kept, _ := pl.Give(tk.Lent(), 3*ms); !kept {
		t.Fatal("give back")
	}
	// Evict takes exactly what sat past keep: a (idle since 0) and b (1 ms).
	got := pl.Evict(time.Second + 1*ms)
	if fmt.Sprint(got) != "[a b]" {
		t.Fatalf("evict %v, want [a b]", got)
	}
	// A stale idle item comes back STALE and leaves the count.
	if tk := pl.Take(2*time.Second + 3*ms); tk.Kind != PoolTakeStale || tk.Item != "c" {
		t.Fatalf("stale: %+v", tk)
	}
	if c := pl.Counts(); c.Live != 0 {
		t.Fatalf("counts %+v", c)
	}
	// Unmade frees the reservation.
	if pl.Take(3*time.Second).Kind != PoolTakeMake {
		t.Fatal("no MAKE")
	}
	if err := pl.Unmade(); err != nil {
		t.Fatal(err)
	}
	if c := pl.Counts(); c.Busy != 0 {
		t.Fatalf("after unmade %+v", c)
	}
	// Birth survives give: life 10 s from its making retires it.
	d := make3(3*time.Second, "d")[0]
	pl.Give(d, 4*time.Second)
	tk := pl.Take(4500 * ms)
	if tk.Kind != PoolTakeReady || tk.Item != "d" {
		t.Fatalf("%+v", tk)
	}
	if kept, _ := pl.Give(tk.Lent(), 13*time.Second); kept {
		t.Fatal("a resource past its life was kept")
	}
	if err := pl.Drop(tk.Lent()); !errors.Is(err, ErrPoolNotLent) {
		t.Fatalf("drop after give: %v", err)
	}
}

// 5. Backoff.
func TestScenario5Backoff(t *testing.T) {
	b := DefaultBackoff()
	if d1, d2 := b.Delay(1, 0.5, 0), b.Delay(2, 0.5, 0); d1 != 100*ms || d2 != 200*ms {
		t.Fatalf("preset at draws 0.5: %v %v", d1, d2)
	}
	schedule := func(seed uint64) []time.Duration {
		p := DefaultBackoff()
		p.Attempts = 6
		p.Rand = rand.New(rand.NewPCG(seed, 0))
		var out []time.Duration
		p.retry(context.Background(), func(context.Context) error { return errors.New("x") },
			func(_ context.Context, d time.Duration) error { out = append(out, d); return nil })
		return out
	}
	if got := fmt.Sprint(b.Schedule([]float64{0.5, 0.5})); got != "[100ms 200ms]" {
		t.Fatalf("Schedule: %s", got)
	}
	a, c := schedule(7), schedule(7)
	if fmt.Sprint(a) != fmt.Sprint(c) || len(a) != 5 {
		t.Fatalf("same draws, different schedules: %v %v", a, c)
	}
	for _, j := range []BackoffJitter{BackoffJitterRigid, BackoffJitterFull, BackoffJitterEqual, BackoffJitterSpread} {
		p := DefaultBackoff()
		p.BackoffJitter = j
		for r := int32(1); r <= 5; r++ {
			ceil := p.Ceiling(r)
			lo, hi := map[BackoffJitter][2]float64{BackoffJitterRigid: {1, 1}, BackoffJitterFull: {0, 1}, BackoffJitterEqual: {0.5, 1}, BackoffJitterSpread: {0.8, 1.2}}[j][0], map[BackoffJitter][2]float64{BackoffJitterRigid: {1, 1}, BackoffJitterFull: {0, 1}, BackoffJitterEqual: {0.5, 1}, BackoffJitterSpread: {0.8, 1.2}}[j][1]
			for _, u := range []float64{0, 0.25, 0.5, 0.999} {
				d := p.Delay(r, u, 0)
				if float64(d) < lo*float64(ceil)-1 || float64(d) > hi*float64(ceil)+1 {
					t.Errorf("jitter %d retry %d draw %v: %v outside [%v, %v]×%v", j, r, u, d, lo, hi, ceil)
				}
			}
		}
	}
}

// 6. Limiter.
func TestScenario6Limiter(t *testing.T) {
	l, err := NewLimiterBucket(10, 2, 100*ms, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Whole intervals only, the remainder kept.
	if l.Available(150*ms) != 2 || l.Available(200*ms) != 4 {
		t.Fatal("whole-interval refill")
	}
	if !l.Allow(150*ms, 2) || l.Available(199*ms) != 0 || l.Available(200*ms) != 2 {
		t.Fatal("the interval's remainder was not kept")
	}
	// Intervals while full are lost.
	if l.Available(10*time.Second) != 10 {
		t.Fatal("capacity")
	}
	w, _ := NewLimiterWindow(5, time.Second, 300*ms, 5, 300*ms)
	w.Consume(400*ms, 5)
	if w.Available(1299*ms) != 0 || w.Available(1300*ms) != 5 {
		t.Fatal("the window grid does not follow its anchor")
	}
	c, _ := NewLimiterCooldown(3, time.Second, 0, 3, 0)
	if err := c.Consume(0, 3); err != nil {
		t.Fatal(err)
	}
	if c.Available(time.Second-1) != 0 || c.Available(time.Second) != 3 {
		t.Fatal("cooldown release not inclusive at the deadline")
	}
	for _, tc := range []struct {
		err  error
		want error
	}{
		{second(NewLimiterBucket(0, 1, 1, 0, 0, 0)), ErrLimiterZeroCapacity},
		{second(NewLimiterBucket(1, 0, 1, 0, 0, 0)), ErrLimiterZeroRefillAmount},
		{second(NewLimiterBucket(1, 1, 0, 0, 0, 0)), ErrLimiterZeroRefillInterval},
		{second(NewLimiterBucket(1, 1, 1, 0, 2, 0)), ErrLimiterInitialAboveCapacity},
		{second(NewLimiterBucket(1, 1, 1, 5, 0, 0)), ErrLimiterBucketAnchorInFuture},
		{second(NewLimiterWindow(1, 0, 0, 0, 0)), ErrLimiterZeroWindow},
		{second(NewLimiterWindow(1, 1, 5, 0, 0)), ErrLimiterWindowAnchorInFuture},
		{second(NewLimiterCooldown(1, 0, 0, 0, 0)), ErrLimiterZeroCooldown},
		{second(NewLimiterCooldown(1, 1, 5, 1, 0)), ErrLimiterCooldownArmedWithTokens},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%v, want %v", tc.err, tc.want)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// 7. Rate and bloom, and many processes sharing one word.
func TestScenario7RateAndBloom(t *testing.T) {
	limit, err := NewRateLimit(10, 3) // windows of 300 ms
	if err != nil {
		t.Fatal(err)
	}
	var word uint64
	for i := 0; i < 3; i++ {
		if !RateAllowC(&word, &limit, 0) {
			t.Fatal("burst refused")
		}
	}
	if RateAllowC(&word, &limit, 0) {
		t.Fatal("a fourth event in the window")
	}
	if d := RateNextC(&word, &limit, 0); d != 300*ms {
		t.Fatalf("window ends in %v, want 300ms", d)
	}
	// Each allowed event pushes the expiry back by one interval.
	var w2 uint64
	RateAllowC(&w2, &limit, 0)
	RateAllowC(&w2, &limit, 0)
	if !RateAllowC(&w2, &limit, 150*ms) || RateNextC(&w2, &limit, 150*ms) != 150*ms {
		t.Fatalf("expiry not pushed: %v", RateNextC(&w2, &limit, 150*ms))
	}
	bl, _ := NewBloomSeeded(12, 2, limit, 3, 4)
	defer bl.Close()
	for i := 0; i < 3; i++ {
		bl.AllowStringAt(0, "one")
	}
	if bl.AllowStringAt(0, "one") || !bl.AllowStringAt(0, "two") {
		t.Fatal("two keys are not independent")
	}

	path := filepath.Join(t.TempDir(), "words")
	sw, err := OpenSharedWords(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	const children = 4
	var cmds []*exec.Cmd
	for i := 0; i < children; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSharedWordChild$")
		cmd.Env = append(os.Environ(), "WEIR_GO_SHARED_WORD="+path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	// The children each tried 100 allows at one instant; the word holds
	// what they were let through: exactly the burst.
	if count := sw.Words[0] & 1023; count != 3 {
		t.Fatalf("the shared word let %d through, want the burst of 3", count)
	}
}

// TestSharedWordChild is one process of scenario 7 (run only as a child).
func TestSharedWordChild(t *testing.T) {
	path := os.Getenv("WEIR_GO_SHARED_WORD")
	if path == "" {
		t.Skip("a child of TestScenario7RateAndBloom")
	}
	sw, err := OpenSharedWords(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	limit, _ := NewRateLimit(10, 3)
	n := 0
	for i := 0; i < 100; i++ {
		if RateAllowC(&sw.Words[0], &limit, time.Hour) {
			n++
		}
	}
	fmt.Fprintln(os.Stderr, "child allowed "+strconv.Itoa(n))
}
