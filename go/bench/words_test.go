package bench

import (
	"time"

	"golang.org/x/time/rate"

	weir "github.com/weir-rs/weir/go"
)

// The words' pairs: weir's pure-Go rate word against the reference of
// storj's one-word Rate, and weir's pure-Go GCRA word against
// golang.org/x/time/rate's token bucket.

// sink keeps the compiler from dropping a decision.
var sink int

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A steady stream under the limit (a call every 1.5 µs against 1e6 a
// second): every call is admitted. The refusals: a full window or bucket,
// asked again at one instant.
const (
	streamPerSecond = 1e6
	streamBurst     = 100
	streamStepNs    = 1500
	startNs         = int64(1) << 40
)

func mustRate() weir.RateLimit {
	l, err := weir.NewRateLimit(streamPerSecond, streamBurst)
	if err != nil {
		panic(err)
	}
	return l
}

func mustGcra() weir.GCRALimit {
	l, err := weir.NewGCRALimit(streamPerSecond, streamBurst)
	if err != nil {
		panic(err)
	}
	return l
}

var start = time.Unix(0, startNs)

func init() {
	pairs = append(pairs,
		pair{row: "rate word allow", kind: "reference",
			weir: side{"RateWord.Allow (pure Go)", func() func(int) {
				limit, word, now := mustRate(), new(weir.RateWord), startNs
				return func(n int) {
					for i := 0; i < n; i++ {
						now += streamStepNs
						sink += b2i(word.AllowAt(limit, time.Duration(now)))
					}
				}
			}},
			other: side{"storj-style Rate.Allow", func() func(int) {
				word, now := new(refRate), start
				return func(n int) {
					for i := 0; i < n; i++ {
						now = now.Add(streamStepNs)
						sink += b2i(word.Allow(now, streamPerSecond, streamBurst))
					}
				}
			}}},
		pair{row: "rate word refuse", kind: "reference",
			weir: side{"RateWord.Allow (pure Go)", func() func(int) {
				limit, word := mustRate(), new(weir.RateWord)
				for word.AllowAt(limit, time.Duration(startNs)) {
				}
				return func(n int) {
					for i := 0; i < n; i++ {
						sink += b2i(word.AllowAt(limit, time.Duration(startNs)))
					}
				}
			}},
			other: side{"storj-style Rate.Allow", func() func(int) {
				word := new(refRate)
				for word.Allow(start, streamPerSecond, streamBurst) {
				}
				return func(n int) {
					for i := 0; i < n; i++ {
						sink += b2i(word.Allow(start, streamPerSecond, streamBurst))
					}
				}
			}}},
		pair{row: "GCRA word allow", kind: "peer",
			weir: side{"GCRAWord.Allow (pure Go)", func() func(int) {
				limit, word, now := mustGcra(), new(weir.GCRAWord), startNs
				return func(n int) {
					for i := 0; i < n; i++ {
						now += streamStepNs
						sink += b2i(word.AllowAt(limit, time.Duration(now)))
					}
				}
			}},
			other: side{"x/time/rate Limiter.AllowN", xRateAllow}},
		pair{row: "GCRA word refuse", kind: "peer",
			weir: side{"GCRAWord.Allow (pure Go)", func() func(int) {
				limit, word := mustGcra(), new(weir.GCRAWord)
				for word.AllowAt(limit, time.Duration(startNs)) {
				}
				return func(n int) {
					for i := 0; i < n; i++ {
						sink += b2i(word.AllowAt(limit, time.Duration(startNs)))
					}
				}
			}},
			other: side{"x/time/rate Limiter.AllowN", xRateRefuse}},
		// What the pure-Go path saves: the same refusal through cgo.
		pair{row: "rate word refuse, through cgo", kind: "for scale",
			weir: side{"weir_rate_allow (cgo)", func() func(int) {
				limit, word := mustRate(), new(weir.RateWord)
				for word.AllowAt(limit, time.Duration(startNs)) {
				}
				raw := new(uint64)
				*raw = word.Word()
				return func(n int) {
					for i := 0; i < n; i++ {
						sink += b2i(weir.RateAllowC(raw, &limit, time.Duration(startNs)))
					}
				}
			}},
			other: side{"RateWord.Allow (pure Go)", func() func(int) {
				limit, word := mustRate(), new(weir.RateWord)
				for word.AllowAt(limit, time.Duration(startNs)) {
				}
				return func(n int) {
					for i := 0; i < n; i++ {
						sink += b2i(word.AllowAt(limit, time.Duration(startNs)))
					}
				}
			}}},
	)
}

// xRateAllow is x/time/rate's side of the stream: every call admitted.
func xRateAllow() func(int) {
	limiter, now := rate.NewLimiter(streamPerSecond, streamBurst), start
	return func(n int) {
		for i := 0; i < n; i++ {
			now = now.Add(streamStepNs)
			sink += b2i(limiter.AllowN(now, 1))
		}
	}
}

// xRateRefuse is x/time/rate's side of the refusals: an empty bucket,
// asked again at one instant.
func xRateRefuse() func(int) {
	limiter := rate.NewLimiter(streamPerSecond, streamBurst)
	for limiter.AllowN(start, 1) {
	}
	return func(n int) {
		for i := 0; i < n; i++ {
			sink += b2i(limiter.AllowN(start, 1))
		}
	}
}
