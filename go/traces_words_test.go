package weir

// The conformance traces replayed through the pure-Go words (RateWord,
// GCRAWord): the same answers, bit for bit, as the C ABI gave when the
// traces were written. The reader is in traces_test.go.

import "testing"

type wordsHeld struct {
	rate      RateWord
	rateLimit RateLimit
	gcra      GCRAWord
	gcraLimit GCRALimit
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
		default:
			return false
		}
		return true
	}, func(*wordsHeld) {})
}
