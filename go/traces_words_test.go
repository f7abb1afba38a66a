package weir

// The conformance traces replayed through the pure-Go words (RateWord,
// GCRAWord, and the Bloom, whose array weir_bloom_init_in lays in Go
// memory and BloomWords decides in pure Go): the same answers, bit for
// bit, as the C ABI gave when the traces were written. The reader is in traces_test.go; the limit lines
// below serve the cgo replay too.

import "testing"

func rateLimitOut(c *traceCall, l RateLimit) {
	ns, frac := l.Interval()
	c.oU64(ns)
	c.oU64(uint64(frac))
	c.oU64(uint64(l.Burst()))
}

func gcraLimitOut(c *traceCall, l GCRALimit) {
	c.oU64(l.perToken)
	c.oI64(l.tolerance)
	c.oU64(uint64(l.shift))
	c.oU64(uint64(l.reserved))
}

// limitOps are the limit lines both word faces share: a failed
// constructor leaves the held limit as it was, as the C ABI's `*out`.
func limitOps(c *traceCall, rl *RateLimit, gl *GCRALimit) bool {
	switch c.op {
	case "rate_limit_new":
		l, err := NewRateLimit(c.f64(), c.i64())
		if err == nil {
			*rl = l
		}
		c.oErr(err)
		rateLimitOut(c, *rl)
	case "rate_limit_set":
		*rl = RateLimit{intervalNs: c.u64(), intervalFrac: uint32(c.u64()), burst: uint32(c.u64())}
	case "gcra_limit_new":
		l, err := NewGCRALimit(c.f64(), c.i64())
		if err == nil {
			*gl = l
		}
		c.oErr(err)
		gcraLimitOut(c, *gl)
	case "gcra_limit_set":
		*gl = GCRALimit{perToken: c.u64(), tolerance: c.i64(), shift: uint32(c.u64()), reserved: uint32(c.u64())}
	default:
		return false
	}
	return true
}

type wordsHeld struct {
	rate      RateWord
	rateLimit RateLimit
	gcra      GCRAWord
	gcraLimit GCRALimit
	bloom     *Bloom
}

func TestTracesWords(t *testing.T) {
	replayTraces(t, "go-words", func() *wordsHeld { return &wordsHeld{} }, func(c *traceCall, h *wordsHeld) bool {
		if limitOps(c, &h.rateLimit, &h.gcraLimit) {
			return true
		}
		switch c.op {
		case "rate_set":
			h.rate.state.Store(c.u64())
		case "rate_allow":
			c.oBool(h.rate.AllowAt(h.rateLimit, c.dur()))
			c.oU64(h.rate.Word())
		case "rate_next":
			c.oDur(h.rate.NextAt(h.rateLimit, c.dur()))
		case "gcra_set":
			h.gcra.state.Store(c.u64())
		case "gcra_allow":
			c.oBool(h.gcra.AllowAt(h.gcraLimit, c.dur()))
			c.oU64(h.gcra.Word())
		case "gcra_allow_n":
			now := c.dur()
			c.oBool(h.gcra.AllowNAt(h.gcraLimit, now, c.i64()))
			c.oU64(h.gcra.Word())
		case "gcra_next":
			c.oDur(h.gcra.NextAt(h.gcraLimit, c.dur()))
		case "gcra_room":
			c.oI64(h.gcra.RoomAt(h.gcraLimit, c.dur()))
		// the bloom, seeded as the trace says, over the held limit
		case "bloom_new", "bloom_new_gcra":
			size, hashes, seed0, seed1 := uint32(c.u64()), uint32(c.u64()), c.u64(), c.u64()
			if h.bloom != nil {
				h.bloom.Close()
			}
			var err error
			if c.op == "bloom_new" {
				h.bloom, err = NewBloomSeeded(size, hashes, h.rateLimit, seed0, seed1)
			} else {
				h.bloom, err = NewGCRABloomSeeded(size, hashes, h.gcraLimit, seed0, seed1)
			}
			c.oErr(err)
		case "bloom_reconfigure":
			c.oErr(h.bloom.Reconfigure(h.rateLimit))
		case "bloom_reconfigure_gcra":
			c.oErr(h.bloom.ReconfigureGCRA(h.gcraLimit))
		case "bloom_allow":
			now := c.dur()
			c.oBool(h.bloom.AllowAt(now, c.key()))
		case "bloom_next":
			now := c.dur()
			c.oDur(h.bloom.Next(now, c.key()))
		default:
			return false
		}
		return true
	}, func(h *wordsHeld) {
		if h.bloom != nil {
			h.bloom.Close()
		}
	})
}
