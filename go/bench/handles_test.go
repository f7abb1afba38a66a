package bench

import (
	"fmt"
	"time"
	"unsafe"

	weir "github.com/weir-rs/weir/go"
)

// The handles' pairs: weir's breaker, shedder, bucket and bloom (through
// cgo, as a Go user calls them, short forms reading weir.Now where the
// peer reads its own clock) against go-zero's breaker and shedder,
// x/time/rate, and the reference bloomrate.

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Keys for the keyed limiters: 4096 client addresses, each asked every
// 4096 calls. At a call a µs a key is asked 244 times a second against a
// limit of 100 a second in bursts of 10, so the answers mix.
var bloomKeys = func() [][]byte {
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	return keys
}()

const (
	bloomSizeLog2 = 16
	bloomHashes   = 3
	bloomPerS     = 100
	bloomBurst    = 10
	bloomStepNs   = 1000
)

func init() {
	pairs = append(pairs,
		pair{row: "breaker allow+pass", kind: "peer",
			weir: side{"Breaker.Allow + Pass", func() func(int) {
				b := must(weir.NewBreaker(nil))
				return func(n int) {
					for i := 0; i < n; i++ {
						call, err := b.Allow()
						if err == nil {
							_ = call.Pass()
							sink++
						}
					}
				}
			}},
			other: side{"go-zero core/breaker Allow + Accept", zeroBreakerAllowPass}},
		pair{row: "shedder allow+pass", kind: "peer",
			weir: side{"Shedder.Allow + Pass", func() func(int) {
				s := must(weir.NewShedder(nil))
				return func(n int) {
					for i := 0; i < n; i++ {
						call, err := s.Allow(100)
						if err == nil {
							_ = call.Pass()
							sink++
						}
					}
				}
			}},
			other: side{"go-zero core/load Allow + Pass", zeroShedderAllowPass}},
		pair{row: "shedder refuse", kind: "peer",
			weir: side{"Shedder.Allow (hot, full)", func() func(int) {
				s := must(weir.NewShedder(nil))
				// As go-zero's side: 200 calls in flight, one finished,
				// the CPU over the threshold.
				var flying []weir.ShedderTicket
				for i := 0; i < 200; i++ {
					flying = append(flying, must(s.Allow(100)))
				}
				_ = flying[0].Fail()
				if _, err := s.Allow(1000); err == nil {
					panic("weir's shedder admitted a call while hot and full")
				}
				return func(n int) {
					for i := 0; i < n; i++ {
						if _, err := s.Allow(1000); err != nil {
							sink++
						}
					}
				}
			}},
			other: side{"go-zero core/load Allow (hot, full)", zeroShedderRefuse}},
		pair{row: "token bucket allow", kind: "peer",
			weir: side{"Bucket.AllowAt", func() func(int) {
				b, now := must(weir.NewBucketAt(streamPerSecond, streamBurst, time.Duration(startNs))), time.Duration(startNs)
				return func(n int) {
					for i := 0; i < n; i++ {
						now += streamStepNs
						sink += b2i(b.AllowAt(now))
					}
				}
			}},
			other: side{"x/time/rate Limiter.AllowN", xRateAllow}},
		pair{row: "token bucket refuse", kind: "peer",
			weir: side{"Bucket.AllowAt", func() func(int) {
				now := time.Duration(startNs)
				b := must(weir.NewBucketAt(streamPerSecond, streamBurst, now))
				for b.AllowAt(now) {
				}
				return func(n int) {
					for i := 0; i < n; i++ {
						sink += b2i(b.AllowAt(now))
					}
				}
			}},
			other: side{"x/time/rate Limiter.AllowN", xRateRefuse}},
		pair{row: "keyed limiter (bloom)", kind: "reference",
			weir: side{"Bloom.AllowAt", func() func(int) {
				limit := must(weir.NewRateLimit(bloomPerS, bloomBurst))
				b := must(weir.NewBloomSeeded(bloomSizeLog2, bloomHashes, limit, 1, 2))
				now, i := time.Duration(startNs), 0
				return func(n int) {
					for j := 0; j < n; j++ {
						now += bloomStepNs
						i = (i + 1) & 4095
						sink += b2i(b.AllowAt(now, bloomKeys[i]))
					}
				}
			}},
			other: side{"storj-style BloomRate.Allow", refBloomSide}},
		pair{row: "keyed limiter (bloom words, pure Go)", kind: "reference",
			weir: side{"BloomWords.AllowAt over a laid region", func() func(int) {
				limit := must(weir.NewRateLimit(bloomPerS, bloomBurst))
				// A region must be 64-byte aligned: 7 spare words to align in.
				words := make([]uint64, weir.BloomFootprint(bloomSizeLog2)/8+7)
				skip := (64 - int(uintptr(unsafe.Pointer(&words[0]))%64)) % 64 / 8
				mem := unsafe.Slice((*byte)(unsafe.Pointer(&words[skip])), weir.BloomFootprint(bloomSizeLog2))
				must(weir.LayBloom(mem, bloomSizeLog2, bloomHashes, limit, 1, 2))
				b := must(weir.NewBloomWords(mem))
				now, i := time.Duration(startNs), 0
				return func(n int) {
					for j := 0; j < n; j++ {
						now += bloomStepNs
						i = (i + 1) & 4095
						sink += b2i(b.AllowAt(now, bloomKeys[i]))
					}
				}
			}},
			other: side{"storj-style BloomRate.Allow", refBloomSide}},
	)
}

func refBloomSide() func(int) {
	b := newRefBloom(bloomSizeLog2, bloomHashes, bloomPerS, bloomBurst, 1, 2)
	now, i := start, 0
	return func(n int) {
		for j := 0; j < n; j++ {
			now = now.Add(bloomStepNs)
			i = (i + 1) & 4095
			sink += b2i(b.Allow(now, bloomKeys[i]))
		}
	}
}
