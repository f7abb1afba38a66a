package weir

// The conformance traces (../traces/README.md) replayed through the Go
// package: this file reads them and replays the types the cgo handles and
// C word calls carry; traces_words_test.go replays the pure-Go words. Every
// answer is compared exactly; a failure names the trace file and line.

import (
	"bufio"
	"encoding/hex"
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
	want string
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

// key is a bytes argument: "x" and two hex digits a byte.
func (c *traceCall) key() []byte {
	a := c.arg()
	if !strings.HasPrefix(a, "x") {
		c.err = "not a key: " + a
		return nil
	}
	k, err := hex.DecodeString(a[1:])
	if err != nil {
		c.err = err.Error()
	}
	return k
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
			c := &traceCall{op: words[0], args: words[1:], want: want}
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
	lease     *Lease
	deadline  Deadline
	window    *Window
	conc      *Concurrency
	concT     []ConcurrencyTicket
	shedder   *Shedder
	shedderT  []ShedderTicket
	breaker   *Breaker
	breakerT  []BreakerTicket
	limiter   Limiter
	bloom     *CBloom
	backoff   Backoff
	budget    *Budget
	keyed     *Keyed
}

// limiterReading replays one of the three C anchor readings (last_refill,
// window_start, cooldown_end) through Limiter.Anchor, which answers the
// anchor of the limiter's own kind: for a limiter of that kind, Anchor's
// error and anchor; for another kind, the C reading's refusal is what
// Kind() says (ErrLimiterWrongVariant, or ErrLimiterCorrupt for a value no
// constructor made), and nothing is written.
func (c *traceCall) limiterReading(l *Limiter, kind LimiterKind, now time.Duration) {
	switch k := l.Kind(); {
	case k == kind:
		anchor, _, _, err := l.Anchor(now)
		c.oErr(err)
		if err != nil {
			anchor = 0
		}
		c.oDur(anchor)
	case k == LimiterCorrupt:
		c.oErr(ErrLimiterCorrupt)
		c.oI64(0)
	default:
		c.oErr(ErrLimiterWrongVariant)
		c.oI64(0)
	}
}

// limiterMade keeps a constructor's limiter only on success, as a failed C
// constructor leaves the value untouched.
func (c *traceCall) limiterMade(h *cgoHeld, l Limiter, err error) {
	c.oErr(err)
	if err == nil {
		h.limiter = l
	}
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
	if h.lease != nil {
		h.lease.Close()
	}
	if h.window != nil {
		h.window.Close()
	}
	if h.conc != nil {
		h.conc.Close()
	}
	if h.shedder != nil {
		h.shedder.Close()
	}
	if h.breaker != nil {
		h.breaker.Close()
	}
	if h.bloom != nil {
		h.bloom.Close()
	}
	if h.budget != nil {
		h.budget.Close()
	}
	if h.keyed != nil {
		h.keyed.Close()
	}
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
		case "bucket_reconfigure":
			rate, burst := c.f64(), c.f64()
			c.oErr(h.bucket.Reconfigure(rate, burst, c.dur()))
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
		case "sliding_reconfigure":
			q := c.i64()
			c.oErr(h.sliding.Reconfigure(q, c.dur()))
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
		case "period_reconfigure":
			q, p := c.i64(), c.dur()
			c.oErr(h.period.Reconfigure(q, p, c.i64() != 0))
		// lease
		case "lease_new":
			p := LeasePolicy{Interval: c.dur(), TTL: c.dur(), Burst: c.i64(), Share: c.f64()}
			if h.lease != nil {
				h.lease.Close()
				h.lease = nil
			}
			var err error
			h.lease, err = NewLease(&p, c.dur())
			c.oErr(err)
		case "lease_take":
			now := c.dur()
			a, err := h.lease.Take(now, c.i64())
			c.oErr(err)
			c.oI64(int64(a.Verdict))
			c.oI64(a.Ask)
			c.oDur(a.RetryAfter)
		case "lease_reconfigure":
			p := LeasePolicy{Interval: c.dur(), TTL: c.dur(), Burst: c.i64(), Share: c.f64()}
			c.oErr(h.lease.Reconfigure(&p))
		case "lease_grant":
			now, granted, until := c.dur(), c.i64(), c.dur()
			c.oErr(h.lease.Grant(now, granted, until, c.dur()))
		case "lease_release":
			c.oI64(h.lease.Release(c.dur()))
		case "lease_unspent":
			c.oI64(h.lease.Unspent(c.dur()))
		case "lease_expires":
			c.oDur(h.lease.Expires(c.dur()))
		case "lease_cap":
			c.oI64(h.lease.Cap())
		case "lease_read_stats":
			st, err := h.lease.StatsAt(c.dur())
			c.oErr(err)
			for _, v := range []uint64{st.Asks, st.Granted, st.Spent, st.Expired, st.Released, st.Held, st.RateMilli} {
				c.oU64(v)
			}
			c.oDur(st.RTT)
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
		case "gate_reconfigure":
			c.oErr(h.gate.Reconfigure(c.i64()))
		// window: Buckets reads them all; with room for cap, C writes the newest cap
		case "window_new":
			size, width := int32(c.i64()), c.dur()
			if h.window != nil {
				h.window.Close()
			}
			var err error
			h.window, err = NewWindow(size, width, c.dur())
			c.oErr(err)
		case "window_add":
			now := c.dur()
			c.oErr(h.window.Add(now, c.i64()))
		case "window_read_total":
			now := c.dur()
			tot, err := h.window.Total(now, c.i64() != 0)
			c.oErr(err)
			c.oI64(tot.Sum)
			c.oI64(tot.Count)
		case "window_read_buckets":
			now := c.dur()
			current := c.i64() != 0
			cap := int(c.u64())
			all := h.window.Buckets(now, current)
			if len(all) > cap {
				all = all[len(all)-cap:]
			}
			c.oU64(uint64(len(all)))
			for i := 0; i < len(all) && i < cap; i++ {
				c.oI64(all[i].Sum)
				c.oI64(all[i].Count)
			}
		case "window_size":
			c.oI64(int64(h.window.Size()))
		case "window_width":
			c.oDur(h.window.Width())
		case "window_reconfigure":
			size, width := int32(c.i64()), c.dur()
			c.oErr(h.window.Reconfigure(size, width, c.dur()))
		// concurrency: a refused Enter is ErrRefused, the C call's false
		case "concurrency_new":
			p := ConcurrencyPolicy{InitialLimit: int32(c.i64()), MinLimit: int32(c.i64()), MaxLimit: int32(c.i64()),
				QueueSize: int32(c.i64()), Smoothing: c.f64(), Tolerance: c.f64(), LongWindow: int32(c.i64()), Warmup: int32(c.i64())}
			if h.conc != nil {
				h.conc.Close()
			}
			var err error
			h.conc, err = NewConcurrency(&p)
			c.oErr(err)
		case "concurrency_reconfigure":
			p := ConcurrencyPolicy{InitialLimit: int32(c.i64()), MinLimit: int32(c.i64()), MaxLimit: int32(c.i64()),
				QueueSize: int32(c.i64()), Smoothing: c.f64(), Tolerance: c.f64(), LongWindow: int32(c.i64()), Warmup: int32(c.i64())}
			c.oErr(h.conc.Reconfigure(&p))
		case "concurrency_new_partitioned":
			p := ConcurrencyPolicy{InitialLimit: int32(c.i64()), MinLimit: int32(c.i64()), MaxLimit: int32(c.i64()),
				QueueSize: int32(c.i64()), Smoothing: c.f64(), Tolerance: c.f64(), LongWindow: int32(c.i64()), Warmup: int32(c.i64())}
			count := int(c.i64())
			var parts []ConcurrencyPartition
			for i := 0; i < 2; i++ {
				parts = append(parts, ConcurrencyPartition{Share: c.f64(), Borrow: c.i64()})
			}
			if count < 0 || count > 2 {
				c.err = "the Go replay passes 0 to 2 partitions"
				return true
			}
			if h.conc != nil {
				h.conc.Close()
			}
			var err error
			h.conc, err = NewConcurrencyPartitioned(&p, parts[:count])
			c.oErr(err)
		case "concurrency_enter_partition":
			part := int32(c.i64())
			tk, err := h.conc.EnterPartition(part, c.dur())
			h.concT = append(h.concT, tk)
			if errors.Is(err, ErrRefused) {
				c.oErr(nil)
			} else {
				c.oErr(err)
			}
			c.oBool(err == nil)
		case "concurrency_leave_partition":
			part := int32(c.i64())
			k := c.u64()
			now := c.dur()
			if k >= uint64(len(h.concT)) || !h.concT[k].partitioned || h.concT[k].part != part {
				c.err = "no such ticket slot in that partition"
				return true
			}
			c.oErr(h.concT[k].Leave(now, false))
		case "concurrency_partition_flying":
			c.oI64(h.conc.PartitionFlying(int32(c.i64())))
		case "concurrency_partition_room":
			c.oI64(h.conc.PartitionRoom(int32(c.i64())))
		case "concurrency_enter":
			tk, err := h.conc.Enter(c.dur())
			h.concT = append(h.concT, tk)
			c.oBool(err == nil)
		case "concurrency_leave":
			k := c.u64()
			now := c.dur()
			dropped := c.i64() != 0
			if k >= uint64(len(h.concT)) {
				c.err = "no such ticket slot"
				return true
			}
			c.oErr(h.concT[k].Leave(now, dropped))
		case "concurrency_limit":
			c.oI64(h.conc.Limit())
		case "concurrency_flying":
			c.oI64(h.conc.Flying())
		case "concurrency_long_rtt":
			// LongRTT is a time.Duration: the C reading's double, truncated
			// to whole ns. Compare it so; the fraction has no Go form.
			bits, _ := strconv.ParseUint(strings.TrimPrefix(c.want, "0x"), 16, 64)
			if got := h.conc.LongRTT(); got == time.Duration(math.Float64frombits(bits)) {
				c.got = append(c.got, c.want)
			} else {
				c.oI64(int64(got))
			}
		// shedder
		case "shedder_new":
			p := ShedderPolicy{Size: int32(c.i64()), CPU: int32(c.i64()), Window: c.dur(), Latency: c.dur(),
				Beta: c.f64(), Cool: c.dur(), Floor: c.f64()}
			if h.shedder != nil {
				h.shedder.Close()
			}
			var err error
			h.shedder, err = NewShedderAt(&p, c.dur())
			c.oErr(err)
		case "shedder_reconfigure":
			p := ShedderPolicy{Size: int32(c.i64()), CPU: int32(c.i64()), Window: c.dur(), Latency: c.dur(),
				Beta: c.f64(), Cool: c.dur(), Floor: c.f64()}
			c.oErr(h.shedder.Reconfigure(&p))
		case "shedder_allow":
			now := c.dur()
			tk, err := h.shedder.AllowAt(now, int32(c.i64()))
			h.shedderT = append(h.shedderT, tk)
			c.oBool(err == nil)
		case "shedder_allow_class":
			now := c.dur()
			cpu := int32(c.i64())
			tk, err := h.shedder.AllowClassAt(now, cpu, Criticality(c.i64()))
			h.shedderT = append(h.shedderT, tk)
			if errors.Is(err, ErrRefused) {
				c.oErr(nil)
			} else {
				c.oErr(err)
			}
			c.oBool(err == nil)
		case "shedder_pass", "shedder_fail":
			k := c.u64()
			if k >= uint64(len(h.shedderT)) {
				c.err = "no such ticket slot"
				return true
			}
			if c.op == "shedder_pass" {
				c.oErr(h.shedderT[k].PassAt(c.dur()))
			} else {
				c.oErr(h.shedderT[k].Fail())
			}
		case "shedder_flying":
			c.oI64(h.shedder.Flying())
		case "shedder_read_stats":
			st, err := h.shedder.StatsAt(c.dur())
			c.oErr(err)
			c.oI64(st.Flying)
			c.oF64(st.Average)
			c.oF64(st.Capacity)
			c.oF64(st.Limit)
			c.oI64(int64(st.CPU))
			c.oBool(st.Hot)
		// limiter
		case "limiter_bucket":
			capacity, amount, interval, last, initial := c.u64(), c.u64(), c.dur(), c.dur(), c.u64()
			l, err := NewLimiterBucket(capacity, amount, interval, last, initial, c.dur())
			c.limiterMade(h, l, err)
		case "limiter_fixed_window":
			capacity, window, start, initial := c.u64(), c.dur(), c.dur(), c.u64()
			l, err := NewLimiterWindow(capacity, window, start, initial, c.dur())
			c.limiterMade(h, l, err)
		case "limiter_cooldown":
			capacity, cooldown, end, initial := c.u64(), c.dur(), c.dur(), c.u64()
			l, err := NewLimiterCooldown(capacity, cooldown, end, initial, c.dur())
			c.limiterMade(h, l, err)
		case "limiter_try_consume":
			now := c.dur()
			c.oBool(h.limiter.Allow(now, c.u64()))
		case "limiter_consume":
			now := c.dur()
			c.oErr(h.limiter.Consume(now, c.u64()))
		case "limiter_refund":
			now, at := c.dur(), c.dur()
			c.oErr(h.limiter.Refund(now, at, c.u64()))
		case "limiter_available":
			c.oU64(h.limiter.Available(c.dur()))
		case "limiter_capacity":
			c.oU64(h.limiter.Capacity())
		case "limiter_last_refill":
			c.limiterReading(&h.limiter, LimiterBucket, c.dur())
		case "limiter_window_start":
			c.limiterReading(&h.limiter, LimiterWindow, c.dur())
		case "limiter_cooldown_end":
			// A cooldown's deadline does not depend on now.
			c.limiterReading(&h.limiter, LimiterCooldown, 0)
		// backoff
		case "backoff_preset", "backoff_full_jitter":
			if c.op == "backoff_preset" {
				h.backoff = DefaultBackoff()
			} else {
				h.backoff = FullJitterBackoff()
			}
			b := &h.backoff
			c.oDur(b.Base)
			c.oF64(b.Factor)
			c.oDur(b.Cap)
			c.oI64(int64(b.Attempts))
			c.oI64(int64(b.BackoffJitter))
			c.oF64(b.Spread)
		case "backoff_set":
			h.backoff = Backoff{Base: c.dur(), Factor: c.f64(), Cap: c.dur(), Attempts: int32(c.i64()),
				BackoffJitter: BackoffJitter(c.i64()), Spread: c.f64()}
		case "backoff_check":
			c.oErr(h.backoff.Check())
		case "backoff_more":
			c.oBool(h.backoff.More(int32(c.i64())))
		case "backoff_delay":
			retry, random := int32(c.i64()), c.f64()
			c.oDur(h.backoff.Delay(retry, random, c.dur()))
		case "backoff_ceiling":
			c.oDur(h.backoff.Ceiling(int32(c.i64())))
		case "backoff_schedule":
			// Schedule returns the whole run; the C call writes the first
			// min(cap, run) of it and returns that count.
			capacity, n := c.u64(), c.u64()
			draws := make([]float64, n)
			for i := range draws {
				draws[i] = c.f64()
			}
			ds := h.backoff.Schedule(draws)
			if uint64(len(ds)) > capacity {
				ds = ds[:capacity]
			}
			c.oU64(uint64(len(ds)))
			for _, d := range ds {
				c.oDur(d)
			}
		// all-or-nothing charging over the held words, bucket and bloom
		case "charge_all":
			// The held words, as Go words of their own (cgo pins an item's
			// word, which must be an object of its own), copied back after.
			rate, gcra := new(RateWord), new(GCRAWord)
			rate.state.Store(h.rate)
			gcra.state.Store(h.gcra)
			now, n := c.dur(), c.u64()
			items := make([]ChargeItem, 0, n)
			for i := uint64(0); i < n; i++ {
				kind, reserved, cost, key := c.u64(), c.u64(), c.f64(), c.key()
				whole := int64(cost)
				if reserved != 0 || (kind != 3 && float64(whole) != cost) {
					c.err = "a ChargeItem has no reserved field and counts whole tokens but for a bucket"
					return true
				}
				switch kind {
				case 1:
					items = append(items, ChargeGCRA(gcra, h.gcraLimit, whole))
				case 2:
					items = append(items, ChargeRate(rate, h.rateLimit, whole))
				case 3:
					items = append(items, ChargeBucket(h.bucket, cost))
				case 4:
					if len(key) == 0 {
						key = nil // an empty key is passed as NULL
					}
					items = append(items, ChargeCBloom(h.bloom, key, whole))
				default:
					c.err = "no ChargeItem of kind " + strconv.FormatUint(kind, 10)
					return true
				}
			}
			r, err := ChargeAll(now, items...)
			h.rate, h.gcra = rate.state.Load(), gcra.state.Load()
			c.oErr(err)
			c.oBool(r.Admitted)
			c.oDur(r.Wait)
			c.oI64(int64(r.Index))
			c.oI64(int64(r.Kept))
			c.oU64(h.rate)
			c.oU64(h.gcra)
		// retry budget
		case "budget_new":
			p := BudgetPolicy{Form: BudgetForm(c.i64()), MaxTokens: int32(c.i64()), TokenRatio: c.f64(), TTL: c.dur(),
				MinPerS: int32(c.i64())}
			if c.i64() != 0 {
				c.err = "BudgetPolicy has no reserved field"
				return true
			}
			p.Percent = c.f64()
			if h.budget != nil {
				h.budget.Close()
			}
			var err error
			h.budget, err = NewBudget(&p, c.dur())
			c.oErr(err)
		case "budget_reconfigure":
			p := BudgetPolicy{Form: BudgetForm(c.i64()), MaxTokens: int32(c.i64()), TokenRatio: c.f64(), TTL: c.dur(),
				MinPerS: int32(c.i64())}
			if c.i64() != 0 {
				c.err = "BudgetPolicy has no reserved field"
				return true
			}
			p.Percent = c.f64()
			c.oErr(h.budget.Reconfigure(&p, c.dur()))
		case "budget_deposit":
			h.budget.Deposit(c.dur())
		case "budget_withdraw":
			c.oBool(h.budget.Withdraw(c.dur()))
		case "budget_left":
			c.oI64(h.budget.Left(c.dur()))
		case "budget_tokens":
			c.oI64(h.budget.Tokens(c.dur()))
		// bloom (the C handle)
		case "bloom_new", "bloom_new_gcra":
			size, hashes, seed0, seed1 := uint32(c.u64()), uint32(c.u64()), c.u64(), c.u64()
			if h.bloom != nil {
				h.bloom.Close()
			}
			var err error
			if c.op == "bloom_new" {
				h.bloom, err = NewCBloom(size, hashes, h.rateLimit, seed0, seed1)
			} else {
				h.bloom, err = NewGCRACBloom(size, hashes, h.gcraLimit, seed0, seed1)
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
		// keyed table (through cgo: Go has no 16-byte compare-and-swap)
		case "keyed_new", "keyed_new_rate":
			buckets, overflow, seed0, seed1 := c.u64(), KeyedOverflow(c.u64()), c.u64(), c.u64()
			if h.keyed != nil {
				h.keyed.Close()
			}
			var err error
			if c.op == "keyed_new" {
				h.keyed, err = NewKeyed(buckets, h.gcraLimit, overflow, seed0, seed1)
			} else {
				h.keyed, err = NewKeyedRate(buckets, h.rateLimit, overflow, seed0, seed1)
			}
			c.oErr(err)
		case "keyed_allow", "keyed_decide", "keyed_next", "keyed_read", "keyed_reconfigure", "keyed_reconfigure_rate":
			if h.keyed == nil {
				c.err = "no keyed table (the C replay's NULL table has no Go form)"
				return true
			}
			switch c.op {
			case "keyed_reconfigure":
				c.oErr(h.keyed.Reconfigure(h.gcraLimit))
				return true
			case "keyed_reconfigure_rate":
				c.oErr(h.keyed.ReconfigureRate(h.rateLimit))
				return true
			}
			if c.op == "keyed_read" {
				r, err := h.keyed.Read()
				c.oErr(err)
				for _, v := range []uint64{r.Buckets, r.Slots, r.Occupied, r.Overflows, uint64(r.Kind), uint64(r.Overflow)} {
					c.oU64(v)
				}
				return true
			}
			now, key := c.dur(), c.key()
			switch c.op {
			case "keyed_allow":
				c.oBool(h.keyed.AllowAt(now, key))
			case "keyed_decide":
				d, err := h.keyed.Decide(now, key, c.i64())
				c.oErr(err)
				c.oU64(uint64(d))
			default:
				// A wait, as C writes it (INT64_MAX: never), and 0 when
				// C writes nothing.
				wait, err := h.keyed.Next(now, key)
				c.oErr(err)
				if err != nil {
					c.oI64(0)
				} else {
					c.oDur(wait)
				}
			}
		case "keyed_buckets_for":
			b, err := KeyedBucketsFor(c.u64(), c.f64())
			c.oErr(err)
			c.oU64(b)
		case "keyed_overflow_chance":
			keys := c.f64()
			c.oF64(KeyedOverflowChance(keys, c.f64()))
		// breaker
		case "breaker_new":
			p := BreakerPolicy{K: c.f64(), Floor: c.f64(), Protection: c.f64(), Probe: c.dur(), Size: int32(c.i64())}
			switch c.i64() {
			case 0:
			case 1:
				p.SkipRefusals = true
			default:
				c.err = "BreakerPolicy.SkipRefusals is a bool"
			}
			p.Window, p.MaxRejectionProbability, p.RPSThreshold, p.Aggression = c.dur(), c.f64(), c.f64(), c.f64()
			if h.breaker != nil {
				h.breaker.Close()
			}
			var err error
			h.breaker, err = NewBreakerAt(&p, c.dur())
			c.oErr(err)
		case "breaker_reconfigure":
			p := BreakerPolicy{K: c.f64(), Floor: c.f64(), Protection: c.f64(), Probe: c.dur(), Size: int32(c.i64())}
			switch c.i64() {
			case 0:
			case 1:
				p.SkipRefusals = true
			default:
				c.err = "BreakerPolicy.SkipRefusals is a bool"
			}
			p.Window, p.MaxRejectionProbability, p.RPSThreshold, p.Aggression = c.dur(), c.f64(), c.f64(), c.f64()
			c.oErr(h.breaker.Reconfigure(&p))
		case "breaker_allow":
			now := c.dur()
			tk, err := h.breaker.AllowAt(now, c.f64())
			h.breakerT = append(h.breakerT, tk)
			c.oBool(err == nil)
		case "breaker_pass", "breaker_fail":
			k := c.u64()
			if k >= uint64(len(h.breakerT)) {
				c.err = "no such ticket slot"
				return true
			}
			if c.op == "breaker_pass" {
				c.oErr(h.breakerT[k].PassAt(c.dur()))
			} else {
				c.oErr(h.breakerT[k].FailAt(c.dur()))
			}
		case "breaker_ratio":
			c.oF64(h.breaker.RatioAt(c.dur()))
		case "breaker_read_tally":
			x, err := h.breaker.TallyAt(c.dur())
			c.oErr(err)
			c.oI64(x.Total)
			c.oI64(x.Success)
			c.oI64(x.Failure)
			c.oI64(x.Drop)
		default:
			return false
		}
		return true
	}, (*cgoHeld).close)
}
