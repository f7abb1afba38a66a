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
	f.Add(p.K, p.Floor, p.Protection, int64(p.Probe), p.Size, int64(p.Window), 0.5, int64(0))
	f.Add(math.NaN(), 0.0, -1.0, int64(-1), int32(-1), int64(0), math.Inf(1), int64(-1))
	f.Fuzz(func(t *testing.T, k, floor, protection float64, probe int64, size int32, window int64, roll float64, now int64) {
		if size > 1<<12 {
			size = 1 << 12 // keep the fuzzer's allocations small
		}
		b, err := NewBreakerAt(&BreakerPolicy{k, floor, protection, time.Duration(probe), size, time.Duration(window)}, 0)
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
		if r := b.RatioAt(time.Duration(now)); r < 0 || r >= 1 {
			t.Fatal("ratio", r)
		}
	})
}

func FuzzBloomKey(f *testing.F) {
	f.Add([]byte("203.0.113.7"), "x", int64(0))
	f.Add([]byte{}, "", int64(-1))
	limit, _ := NewRateLimit(5, 2)
	b, _ := NewBloomSeeded(8, 3, limit, 1, 2)
	f.Fuzz(func(t *testing.T, key []byte, skey string, now int64) {
		b.AllowAt(time.Duration(now), key)
		b.AllowStringAt(time.Duration(now), skey)
		if now < 0 && b.Next(time.Duration(now), key) != Never {
			t.Fatal("a negative now judged")
		}
		if b.Next(time.Duration(now), []byte(skey)) != b.NextString(time.Duration(now), skey) {
			t.Fatal("[]byte and string keys differ")
		}
	})
}

func FuzzBackoff(f *testing.F) {
	f.Add(int64(1e8), 2.0, int64(1e9), int32(3), int32(4), 0.2, int32(2), 0.5, int64(0))
	f.Add(int64(-1), math.NaN(), int64(-1), int32(0), int32(9), 2.0, int32(-1), math.Inf(-1), int64(-5))
	f.Fuzz(func(t *testing.T, base int64, factor float64, cap int64, attempts, jitter int32, spread float64, retry int32, u float64, prev int64) {
		b := Backoff{Base: time.Duration(base), Factor: factor, Cap: time.Duration(cap), Attempts: attempts, Jitter: Jitter(jitter), Spread: spread}
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
