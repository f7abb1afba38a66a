package weir

import (
	"math"
	"testing"
	"time"
)

// Constructors and decision paths take any input: an error or a
// refusal, never a crash, and a refusal changes nothing.

func FuzzRateWordC(f *testing.F) {
	f.Add(10.0, int64(3), int64(0), int64(512), uint64(0))
	f.Add(1e6, int64(1023), int64(math.MaxInt64), int64(-1), uint64(math.MaxUint64))
	f.Add(math.NaN(), int64(0), int64(511), int64(1024), uint64(1)<<10)
	f.Fuzz(func(t *testing.T, rate float64, burst, now1, now2 int64, word uint64) {
		l, err := NewRateLimit(rate, burst)
		if err != nil {
			if l != (RateLimit{}) {
				t.Fatal("an error wrote the limit")
			}
			return
		}
		for _, now := range []time.Duration{time.Duration(now1), time.Duration(now2)} {
			before := word
			if !RateAllowC(&word, &l, now) && word != before {
				t.Fatal("a refusal wrote the word")
			}
			if d := RateNextC(&word, &l, now); d < 0 {
				t.Fatal("negative next", d)
			}
		}
	})
}

func FuzzGCRAWordC(f *testing.F) {
	f.Add(10.0, int64(3), int64(0), int64(5), uint64(0))
	f.Add(1.6e10, int64(1)<<53, int64(math.MaxInt64), int64(-1), uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, rate float64, burst, now, n int64, word uint64) {
		l, err := NewGCRALimit(rate, burst)
		if err != nil {
			return
		}
		before := word
		if !GCRAAllowNC(&word, &l, time.Duration(now), n) && word != before {
			t.Fatal("a refusal wrote the word")
		}
		if r := GCRARoomC(&word, &l, time.Duration(now)); r < 0 || r > l.Burst() {
			t.Fatal("room", r)
		}
	})
}

func FuzzBucket(f *testing.F) {
	f.Add(10.0, 5.0, int64(0), 1.0)
	f.Add(0.0, -1.0, int64(-5), math.Inf(1))
	f.Add(1e9, 0.5, int64(math.MaxInt64), 0.25)
	f.Fuzz(func(t *testing.T, rate, burst float64, now int64, n float64) {
		b, err := NewBucketAt(rate, burst, 0)
		if err != nil {
			return
		}
		defer b.Close()
		before := b.Tokens(time.Duration(now))
		if !b.AllowN(time.Duration(now), n) && b.Tokens(time.Duration(now)) != before {
			t.Fatal("a refusal took tokens")
		}
		if d := b.Delay(time.Duration(now), n); d < 0 {
			t.Fatal("negative delay")
		}
	})
}

func FuzzBreakerPolicy(f *testing.F) {
	p := DefaultBreakerPolicy()
	f.Add(p.K, p.Floor, p.Protection, int64(p.Probe), p.Size, int64(p.Window), false, 1.0, 0.0, 1.0, 0.5, int64(0))
	f.Add(p.K, p.Floor, p.Protection, int64(p.Probe), p.Size, int64(p.Window), true, 0.8, 5.0, 2.0, 0.1, int64(7))
	f.Add(math.NaN(), 0.0, -1.0, int64(-1), int32(-1), int64(0), true, math.NaN(), -1.0, 0.0, math.Inf(1), int64(-1))
	f.Fuzz(func(t *testing.T, k, floor, protection float64, probe int64, size int32, window int64,
		skip bool, maxRejection, rps, aggression, roll float64, now int64) {
		if size > 1<<12 {
			size = 1 << 12 // keep the fuzzer's allocations small
		}
		b, err := NewBreakerAt(&BreakerPolicy{K: k, Floor: floor, Protection: protection, Probe: time.Duration(probe),
			Size: size, Window: time.Duration(window), SkipRefusals: skip, MaxRejectionProbability: maxRejection,
			RPSThreshold: rps, Aggression: aggression}, 0)
		if err != nil {
			return
		}
		defer b.Close()
		call, err := b.AllowAt(time.Duration(now), roll)
		if err == nil {
			if call.FailAt(time.Duration(now)) != nil {
				t.Fatal("first settle failed")
			}
		}
		if r := b.RatioAt(time.Duration(now)); r < 0 || r >= 1 || r > maxRejection {
			t.Fatal("ratio", r)
		}
	})
}

func FuzzBloomKey(f *testing.F) {
	f.Add([]byte("203.0.113.7"), "x", int64(0))
	f.Add([]byte{}, "", int64(-1))
	limit, _ := NewRateLimit(5, 2)
	glimit, _ := NewGCRALimit(5, 2)
	b, _ := NewBloomSeeded(8, 3, limit, 1, 2)
	cb, _ := NewCBloom(8, 3, limit, 1, 2)
	g, _ := NewGCRABloomSeeded(3, 2, glimit, 3, 4)
	cg, _ := NewGCRACBloom(3, 2, glimit, 3, 4)
	// The pure-Go heap arrays and C's, fed the same calls, agree on each.
	f.Fuzz(func(t *testing.T, key []byte, skey string, now int64) {
		at := time.Duration(now)
		for _, pair := range []struct {
			name   string
			goSide *Bloom
			cSide  *CBloom
		}{{"window", b, cb}, {"gcra", g, cg}} {
			if gv, cv := pair.goSide.AllowAt(at, key), pair.cSide.AllowAt(at, key); gv != cv {
				t.Fatalf("%s: Allow Go %v, C %v", pair.name, gv, cv)
			}
			if gv, cv := pair.goSide.AllowStringAt(at, skey), pair.cSide.AllowStringAt(at, skey); gv != cv {
				t.Fatalf("%s: AllowString Go %v, C %v", pair.name, gv, cv)
			}
			if gv, cv := pair.goSide.Next(at, key), pair.cSide.NextString(at, string(key)); gv != cv {
				t.Fatalf("%s: Next Go %v, C %v", pair.name, gv, cv)
			}
			if now < 0 && pair.goSide.Next(at, key) != Never {
				t.Fatal("a negative now judged")
			}
			if pair.goSide.Next(at, []byte(skey)) != pair.goSide.NextString(at, skey) {
				t.Fatal("[]byte and string keys differ")
			}
		}
	})
}

func FuzzBackoff(f *testing.F) {
	f.Add(int64(1e8), 2.0, int64(1e9), int32(3), int32(4), 0.2, int32(2), 0.5, int64(0))
	f.Add(int64(-1), math.NaN(), int64(-1), int32(0), int32(9), 2.0, int32(-1), math.Inf(-1), int64(-5))
	f.Fuzz(func(t *testing.T, base int64, factor float64, cap int64, attempts, jitter int32, spread float64, retry int32, u float64, prev int64) {
		b := Backoff{Base: time.Duration(base), Factor: factor, Cap: time.Duration(cap), Attempts: attempts, BackoffJitter: BackoffJitter(jitter), Spread: spread}
		d := b.Delay(retry, u, time.Duration(prev))
		if b.Check() != nil {
			if d != -1 {
				t.Fatal("an invalid policy answered", d)
			}
			return
		}
		if d < 0 {
			t.Fatal("negative delay", d)
		}
	})
}

func FuzzLimiter(f *testing.F) {
	f.Add(uint8(0), uint64(10), uint64(2), int64(100), int64(0), uint64(5), int64(0), int64(150), uint64(3))
	f.Add(uint8(2), uint64(1), uint64(0), int64(-1), int64(math.MaxInt64), uint64(math.MaxUint64), int64(math.MinInt64), int64(math.MaxInt64), uint64(0))
	f.Fuzz(func(t *testing.T, kind uint8, capacity, amount uint64, period, anchor int64, available uint64, now, later int64, take uint64) {
		var l Limiter
		var err error
		switch kind % 3 {
		case 0:
			l, err = NewLimiterBucket(capacity, amount, time.Duration(period), time.Duration(anchor), available, time.Duration(now))
		case 1:
			l, err = NewLimiterWindow(capacity, time.Duration(period), time.Duration(anchor), available, time.Duration(now))
		default:
			l, err = NewLimiterCooldown(capacity, time.Duration(period), time.Duration(anchor), available, time.Duration(now))
		}
		if err != nil {
			if l != (Limiter{}) {
				t.Fatal("an error wrote the limiter")
			}
			return
		}
		before := l
		if err := l.Consume(time.Duration(later), take); err != nil && l != before {
			t.Fatal("a refused consume changed the limiter")
		}
		if l.Available(time.Duration(later)) > l.Capacity() {
			t.Fatal("more available than the capacity")
		}
	})
}

func FuzzPool(f *testing.F) {
	f.Add(int64(3), int64(2), int64(10), int64(100), 0.0, int64(0), int64(0), []byte{0, 1, 2, 3, 4, 5})
	f.Add(int64(4), int64(4), int64(0), int64(100), 0.5, int64(2), int64(1), []byte{5, 6, 7, 0, 1, 2, 6, 7, 4, 3})
	f.Fuzz(func(t *testing.T, size, idle, keep, life int64, jitter float64, minIdle, maxMaking int64, ops []byte) {
		if size > 64 {
			size = 64
		}
		pl, err := NewPool[int](&PoolPolicy{Size: size, Idle: idle, Keep: time.Duration(keep), Life: time.Duration(life),
			LifeJitter: jitter, MinIdle: minIdle, MaxMaking: maxMaking})
		if err != nil {
			return
		}
		defer pl.Close()
		var lent []PoolLent[int]
		now := time.Duration(0)
		for i, op := range ops {
			now += time.Duration(op)
			switch op % 8 {
			case 0, 1:
				switch tk := pl.Take(now); tk.Kind {
				case PoolTakeReady:
					lent = append(lent, tk.Lent())
				case PoolTakeMake:
					if op%2 == 0 {
						pl.Unmade()
					} else if l, err := pl.MadeJittered(i, now, uint64(op)<<56); err == nil {
						lent = append(lent, l)
					}
				}
			case 5:
				for n := pl.MakeAhead(); n > 0; n-- {
					pl.AddIdle(i, now)
				}
			case 6:
				pl.MarkOld()
			case 7:
				pl.AddIdle(-i, now) // no reservation open: refused
			case 2:
				if len(lent) > 0 {
					pl.Give(lent[0], now)
					lent = lent[1:]
				}
			case 3:
				if len(lent) > 0 {
					pl.Drop(lent[0])
					lent = lent[1:]
				}
			case 4:
				pl.Evict(now)
			}
			if c := pl.Counts(); c.Live > size || c.Live != c.Idle+c.Busy || int64(len(pl.items)) != c.Live {
				t.Fatalf("counts %+v with size %d", c, size)
			}
		}
		pl.Shutdown()
	})
}
