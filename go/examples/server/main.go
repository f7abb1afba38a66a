// A Go server's use of weir, on simulated traffic:
//
//  1. per-client rate limiting keyed by the client's address, for any
//     number of clients in fixed memory (weir.Bloom);
//  2. a breaker in front of a backend that fails most calls for 15 s, then
//     recovers (weir.Breaker);
//  3. weir's status codes as Go errors.
//
// Time is a simulated monotonic clock and the draws come from math/rand
// with a fixed seed, so every run prints the same; a server passes
// weir.Now() (the short forms Allow, Do, ... do) and its own draws.
//
// Run it from go/: go run ./examples/server
package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"time"

	weir "github.com/weir-rs/weir/go"
)

// Clock is a simulated monotonic clock: nanoseconds since the server
// started, moved on by hand instead of by sleeping.
type Clock struct{ ns int64 }

// Now is the clock's reading in nanoseconds.
func (c *Clock) Now() int64 { return c.ns }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.ns += int64(d) }

// AdvanceTo moves the clock on to t since the start; never back.
func (c *Clock) AdvanceTo(t time.Duration) {
	if int64(t) > c.ns {
		c.ns = int64(t)
	}
}

// The hash seed of the client limiter. A server draws it once at start-up
// (crypto/rand) so clients cannot choose addresses that collide; fixed
// here so every run prints the same.
const seed0, seed1 = 0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9

// clientKey is the limiter's key for a request's RemoteAddr: the host
// without the port, which changes with every connection.
func clientKey(remoteAddr string) []byte {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	return []byte(host)
}

// newClientLimiter limits each client address to perSecond requests a
// second in bursts of burst: 2^16 words, 3 per address.
func newClientLimiter(perSecond float64, burst int64) (*weir.Bloom, error) {
	limit, err := weir.NewRateLimit(perSecond, burst)
	if err != nil {
		return nil, err
	}
	return weir.NewBloomSeeded(16, 3, limit, seed0, seed1)
}

// doAt is Breaker.Do on the simulated clock: ask with the draw roll, run
// call, settle it by its error when it returns.
func doAt(b *weir.Breaker, clock *Clock, roll float64, call func() error) error {
	c, err := b.AllowAt(time.Duration(clock.Now()), roll)
	if err != nil {
		return err
	}
	err = call()
	now := time.Duration(clock.Now())
	if err != nil {
		c.FailAt(now)
		return err
	}
	return c.PassAt(now)
}

// A client of the simulated server: how often it sends, from when to when.
type client struct {
	name       string
	addr       string // host only; each request comes from a new port
	every      time.Duration
	start, end time.Duration
}

// limitClients runs 10 s of requests from a few clients through a limit of
// 5 requests a second in bursts of 10 per client address.
func limitClients(w io.Writer) error {
	limiter, err := newClientLimiter(5, 10)
	if err != nil {
		return err
	}
	defer limiter.Close()

	clients := []client{
		{"steady", "203.0.113.7", 500 * time.Millisecond, 0, 10 * time.Second},
		{"burst", "192.0.2.44", 10 * time.Millisecond, 2 * time.Second, 2300 * time.Millisecond},
		{"abusive", "198.51.100.23", 25 * time.Millisecond, 0, 10 * time.Second},
	}
	allowed := make([]int, len(clients))
	refused := make([]int, len(clients))
	firstRefusal := make([]time.Duration, len(clients))
	retryAfter := make([]time.Duration, len(clients))
	oneOff, oneOffRefused := 0, 0

	var clock Clock
	port := 40000
	for tick := time.Duration(0); tick < 10*time.Second; tick += 5 * time.Millisecond {
		now := clock.Now()
		for i, c := range clients {
			if tick < c.start || tick >= c.end || (tick-c.start)%c.every != 0 {
				continue
			}
			port++
			key := clientKey(fmt.Sprintf("%s:%d", c.addr, port))
			if limiter.AllowAt(time.Duration(now), key) {
				allowed[i]++
				continue
			}
			if refused[i] == 0 {
				firstRefusal[i] = tick
				retryAfter[i] = limiter.Next(time.Duration(now), key)
			}
			refused[i]++
		}
		// A client never seen before every 10 ms: no table grows.
		if tick%(10*time.Millisecond) == 0 {
			oneOff++
			addr := fmt.Sprintf("10.%d.%d.%d:443", oneOff>>16&255, oneOff>>8&255, oneOff&255)
			if !limiter.AllowAt(time.Duration(now), clientKey(addr)) {
				oneOffRefused++
			}
		}
		clock.Advance(5 * time.Millisecond)
	}

	fmt.Fprintln(w, "1. Per-client limiting: 5 requests/s in bursts of 10 per address (weir_bloom)")
	fmt.Fprintln(w, "   2^16 words, 3 per address: 512 KiB for every address there is.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "   client   address        sending       allowed  refused  first refused  Retry-After")
	for i, c := range clients {
		first, retry := "-", "-"
		if refused[i] > 0 {
			first = fmt.Sprintf("at %v", firstRefusal[i])
			retry = retryAfter[i].Round(time.Millisecond).String()
		}
		sent := int((c.end - c.start) / c.every)
		rate := fmt.Sprintf("%d/s", time.Second/c.every)
		if c.end-c.start < time.Second {
			rate = fmt.Sprintf("%d in %v", sent, c.end-c.start)
		}
		fmt.Fprintf(w, "   %-8s %-14s %-11s %7d  %7d  %-13s  %s\n", c.name, c.addr, rate, allowed[i], refused[i], first, retry)
	}
	fmt.Fprintf(w, "   and %d one-off clients, one request each: %d refused\n\n", oneOff, oneOffRefused)
	return nil
}

// protectBackend sends 20 calls a second through a breaker to a backend
// that fails 2 % of calls, then 95 % from 10 s to 25 s, then 2 % again.
func protectBackend(w io.Writer) error {
	var clock Clock
	breaker, err := weir.NewBreakerAt(nil, time.Duration(clock.Now()))
	if err != nil {
		return err
	}
	defer breaker.Close()
	rng := rand.New(rand.NewSource(7))

	backend := func(down bool) func() error {
		return func() error {
			clock.Advance(3 * time.Millisecond) // the call's latency
			failRate := 0.02
			if down {
				failRate = 0.95
			}
			if rng.Float64() < failRate {
				return errors.New("backend: 503")
			}
			return nil
		}
	}

	fmt.Fprintln(w, "2. A breaker in front of a flaky backend, 20 calls/s (weir_breaker)")
	fmt.Fprintln(w, "   The backend fails 2 % of calls, 95 % from 10 s to 25 s, then 2 % again.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "   seconds  backend  through  failed  refused  ratio at end")
	const step = 50 * time.Millisecond
	for span := 0; span < 8; span++ {
		through, failed, refused := 0, 0, 0
		down := span >= 2 && span < 5
		for call := 0; call < 100; call++ {
			start := time.Duration(span)*5*time.Second + time.Duration(call)*step
			clock.AdvanceTo(start)
			err := doAt(breaker, &clock, rng.Float64(), backend(down))
			switch {
			case errors.Is(err, weir.ErrRefused):
				refused++
			case err != nil:
				through++
				failed++
			default:
				through++
			}
		}
		clock.AdvanceTo(time.Duration(span+1) * 5 * time.Second)
		state := "up"
		if down {
			state = "down"
		}
		fmt.Fprintf(w, "   %2d-%-2d    %-7s  %7d  %6d  %7d  %.3f\n", span*5, span*5+5, state, through, failed, refused, breaker.RatioAt(time.Duration(clock.Now())))
	}
	fmt.Fprintln(w)
	return nil
}

// statusErrors shows weir's status codes as Go errors.
func statusErrors(w io.Writer) error {
	fmt.Fprintln(w, "3. weir's status codes as Go errors (weir_status_str)")
	_, err := newClientLimiter(5, 5000)
	fmt.Fprintf(w, "   a burst of 5000:  %v (errors.Is ErrRateBurst: %t)\n", err, errors.Is(err, weir.ErrRateBurst))
	if !errors.Is(err, weir.ErrRateBurst) {
		return fmt.Errorf("a burst of 5000 gave %v", err)
	}
	_, err = newClientLimiter(0, 10)
	fmt.Fprintf(w, "   a rate of 0:      %v\n", err)
	fmt.Fprintf(w, "   code 9999:        %v\n", weir.Status(9999))
	return nil
}

func run(w io.Writer) error {
	version, err := weir.Version()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "weir %s from Go\n\n", version)
	for _, part := range []func(io.Writer) error{limitClients, protectBackend, statusErrors} {
		if err := part(w); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
