package weir

// The conformance traces (../traces/README.md) replayed through the Go
// package: this file reads them and replays the types the cgo handles and
// C word calls carry; traces_words_test.go replays the pure-Go words. Every
// answer is compared exactly; a failure names the trace file and line.

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// traceCall is one call line: its op, arguments and the answers it got.
type traceCall struct {
	op   string
	args []string
	next int
	got  []string
	err  string
}

func (c *traceCall) arg() string {
	if c.next >= len(c.args) {
		c.err = "too few arguments"
		return "0"
	}
	c.next++
	return c.args[c.next-1]
}

func (c *traceCall) i64() int64 {
	v, err := strconv.ParseInt(c.arg(), 10, 64)
	if err != nil {
		c.err = err.Error()
	}
	return v
}

func (c *traceCall) u64() uint64 {
	v, err := strconv.ParseUint(c.arg(), 10, 64)
	if err != nil {
		c.err = err.Error()
	}
	return v
}

func (c *traceCall) f64() float64 {
	v, err := strconv.ParseUint(strings.TrimPrefix(c.arg(), "0x"), 16, 64)
	if err != nil {
		c.err = err.Error()
	}
	return math.Float64frombits(v)
}

func (c *traceCall) dur() time.Duration { return time.Duration(c.i64()) }

func (c *traceCall) oI64(v int64)         { c.got = append(c.got, strconv.FormatInt(v, 10)) }
func (c *traceCall) oU64(v uint64)        { c.got = append(c.got, strconv.FormatUint(v, 10)) }
func (c *traceCall) oDur(v time.Duration) { c.oI64(int64(v)) }
func (c *traceCall) oF64(v float64) {
	c.got = append(c.got, fmt.Sprintf("0x%016x", math.Float64bits(v)))
}
func (c *traceCall) oBool(v bool) {
	if v {
		c.got = append(c.got, "1")
	} else {
		c.got = append(c.got, "0")
	}
}

// oErr writes a call's error as the C ABI's status: 0 for nil, the code
// of a Status.
func (c *traceCall) oErr(err error) {
	var s Status
	switch {
	case err == nil:
		c.oI64(0)
	case errors.As(err, &s):
		c.oI64(int64(s.Code()))
	default:
		c.err = "an error that is not a Status: " + err.Error()
	}
}

// traceSkips reads ../traces/skips.txt: the traces and types face skips.
func traceSkips(t *testing.T, face string) map[string]bool {
	text, err := os.ReadFile(filepath.Join("..", "traces", "skips.txt"))
	if err != nil {
		t.Fatal(err)
	}
	skips := map[string]bool{}
	for _, line := range strings.Split(string(text), "\n") {
		f := strings.SplitN(line, " ", 3)
		if len(f) == 3 && f[0] == face {
			skips[f[1]] = true
		}
	}
	return skips
}

// replayTraces replays every trace face does not skip; run makes one
// call on the replay's state (made fresh per file by fresh) and reports
// false for an op it does not know.
func replayTraces[S any](t *testing.T, face string, fresh func() *S, run func(c *traceCall, s *S) bool, done func(s *S)) {
	if _, err := os.Stat(filepath.Join("..", "traces")); err != nil {
		if _, err := os.Stat(filepath.Join("..", "Cargo.toml")); err != nil {
			t.Skip("the traces live in the weir repository, beside go/; this copy of the package is outside it (a module cache)")
		}
	}
	skips := traceSkips(t, face)
	index, err := os.ReadFile(filepath.Join("..", "traces", "index.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files, calls := 0, 0
	for _, name := range strings.Split(string(index), "\n") {
		if name == "" || strings.HasPrefix(name, "#") || skips[name] {
			continue
		}
		path := filepath.Join("..", "traces", name)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 8192), 8192)
		state := fresh()
		line := 0
		for sc.Scan() {
			line++
			text := sc.Text()
			if line == 1 {
				ty, ok := strings.CutPrefix(text, "weir-trace 1 ")
				if !ok {
					t.Fatalf("traces/%s:1: not a version 1 trace", name)
				}
				if skips[ty] {
					break
				}
				files++
				continue
			}
			if text == "" || text[0] == '#' {
				continue
			}
			lhs, want, ok := strings.Cut(text, " =")
			if !ok {
				t.Fatalf("traces/%s:%d: no ' ='", name, line)
			}
			want = strings.TrimPrefix(want, " ")
			words := strings.Split(lhs, " ")
			c := &traceCall{op: words[0], args: words[1:]}
			if !run(c, state) {
				t.Fatalf("traces/%s:%d: unknown op %s", name, line, c.op)
			}
			if c.err == "" && c.next != len(c.args) {
				c.err = "unused arguments"
			}
			if c.err != "" {
				t.Fatalf("traces/%s:%d: %s: %s", name, line, c.op, c.err)
			}
			if got := strings.Join(c.got, " "); got != want {
				t.Fatalf("traces/%s:%d: %s: expected %q, got %q", name, line, c.op, want, got)
			}
			calls++
		}
		f.Close()
		done(state)
		if err := sc.Err(); err != nil {
			t.Fatalf("traces/%s: %v", name, err)
		}
	}
	if files == 0 {
		t.Fatal("replayed no trace")
	}
	t.Logf("%d calls in %d traces replayed exactly", calls, files)
}

// cgoHeld is what the cgo replay holds: one of each type it replays.
type cgoHeld struct {
	rate      uint64
	rateLimit RateLimit
	gcra      uint64
	gcraLimit GCRALimit
	bucket    *Bucket
	sliding   *Sliding
	period    *Period
	gate      *Gate
	deadline  Deadline
}

func (h *cgoHeld) close() {
	if h.bucket != nil {
		h.bucket.Close()
	}
	if h.sliding != nil {
		h.sliding.Close()
	}
	if h.period != nil {
		h.period.Close()
	}
	if h.gate != nil {
		h.gate.Close()
	}
}

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

func TestTracesCgo(t *testing.T) {
	replayTraces(t, "go-cgo", func() *cgoHeld { return &cgoHeld{} }, func(c *traceCall, h *cgoHeld) bool {
		if limitOps(c, &h.rateLimit, &h.gcraLimit) {
			return true
		}
		switch c.op {
		// the words through their C calls
		case "rate_set":
			h.rate = c.u64()
		case "rate_allow":
			c.oBool(RateAllowC(&h.rate, &h.rateLimit, c.dur()))
			c.oU64(h.rate)
		case "rate_next":
			c.oDur(RateNextC(&h.rate, &h.rateLimit, c.dur()))
		case "gcra_set":
			h.gcra = c.u64()
		case "gcra_allow":
			c.oBool(GCRAAllowC(&h.gcra, &h.gcraLimit, c.dur()))
			c.oU64(h.gcra)
		case "gcra_allow_n":
			now := c.dur()
			c.oBool(GCRAAllowNC(&h.gcra, &h.gcraLimit, now, c.i64()))
			c.oU64(h.gcra)
		case "gcra_next":
			c.oDur(GCRANextC(&h.gcra, &h.gcraLimit, c.dur()))
		case "gcra_room":
			c.oI64(GCRARoomC(&h.gcra, &h.gcraLimit, c.dur()))
		// deadline: its two fields, read and written as the C struct's
		case "deadline_start":
			budget := c.dur()
			h.deadline = StartDeadline(budget, c.dur())
			f := (*[2]int64)(unsafe.Pointer(&h.deadline.d))
			c.oI64(f[0])
			c.oI64(f[1])
		case "deadline_set":
			f := (*[2]int64)(unsafe.Pointer(&h.deadline.d))
			f[0], f[1] = c.i64(), c.i64()
		case "deadline_expired":
			c.oBool(h.deadline.Expired(c.dur()))
		case "deadline_remaining":
			// The C call writes its out only when it answers true (the
			// trace's 0 is the untouched out); Go answers Never then.
			left, ok := h.deadline.Remaining(c.dur())
			c.oBool(ok)
			if !ok {
				left = 0
			}
			c.oDur(left)
		// bucket
		case "bucket_new":
			rate, burst := c.f64(), c.f64()
			if h.bucket != nil {
				h.bucket.Close()
			}
			var err error
			h.bucket, err = NewBucketAt(rate, burst, c.dur())
			c.oErr(err)
		case "bucket_take":
			now := c.dur()
			c.oBool(h.bucket.AllowN(now, c.f64()))
		case "bucket_refund":
			now, at := c.dur(), c.dur()
			c.oErr(h.bucket.Refund(now, at, c.f64()))
		case "bucket_next":
			now := c.dur()
			c.oDur(h.bucket.Delay(now, c.f64()))
		case "bucket_tokens":
			c.oF64(h.bucket.Tokens(c.dur()))
		// sliding
		case "sliding_new":
			q := c.i64()
			if h.sliding != nil {
				h.sliding.Close()
			}
			var err error
			h.sliding, err = NewSliding(q, c.dur())
			c.oErr(err)
		case "sliding_take":
			c.oBool(h.sliding.AllowAt(c.dur()))
		case "sliding_left":
			c.oI64(h.sliding.Left(c.dur()))
		case "sliding_next":
			c.oDur(h.sliding.Next(c.dur()))
		// period
		case "period_new":
			q, p := c.i64(), c.dur()
			if h.period != nil {
				h.period.Close()
			}
			var err error
			h.period, err = NewPeriod(q, p, c.i64() != 0)
			c.oErr(err)
		case "period_take":
			c.oI64(int64(h.period.TakeAt(c.dur())))
		case "period_left":
			c.oI64(h.period.Left(c.dur()))
		case "period_next":
			c.oDur(h.period.Next(c.dur()))
		// gate
		case "gate_new":
			l := c.i64()
			if h.gate != nil {
				h.gate.Close()
			}
			var err error
			h.gate, err = NewGate(l)
			c.oErr(err)
		case "gate_enter":
			c.oBool(h.gate.Enter())
		case "gate_leave":
			h.gate.Leave()
		case "gate_held":
			c.oI64(h.gate.Held())
		default:
			return false
		}
		return true
	}, (*cgoHeld).close)
}
