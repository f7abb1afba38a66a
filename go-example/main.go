// A Go server's use of weir through cgo, on simulated traffic:
//
//  1. per-client rate limiting keyed by the client's address, for any
//     number of clients in fixed memory (weir_bloom);
//  2. a breaker in front of a backend that fails most calls for 15 s, then
//     recovers (weir_breaker);
//  3. weir's status codes as Go errors (weir_status_str).
//
// weir reads no clock and draws no random numbers. Here time is a
// simulated monotonic clock in int64 nanoseconds and the draws come from
// math/rand with a fixed seed, so every run prints the same; a server
// passes time.Since(start) and its own draws instead.
//
// The first half is a thin Go face over the parts of weir used here. Every
// C call takes only values, handles weir made, and pointers to Go memory
// that holds no Go pointers, which weir reads during the call and never
// keeps: the cgo pointer rules hold. The library is the static one cargo
// builds (cargo build --release --lib, from the repository's root).
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#cgo LDFLAGS: ${SRCDIR}/../target/release/libweir.a -lpthread -ldl -lm
#include "weir.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"time"
	"unsafe"
)

// Status is a weir_status other than WEIR_OK, as a Go error. It is a
// comparable value, so errors.Is(err, StatusRateBurst) works.
type Status int32

// A few of weir's codes, for errors.Is.
const (
	StatusRateBurst Status = C.WEIR_ERR_RATE_BURST
	StatusRateZero  Status = C.WEIR_ERR_RATE_ZERO
)

// Error is weir's own description of the code; weir_status_str answers
// every value, a code it does not define included, with a static string
// that Go copies and never frees.
func (s Status) Error() string {
	return "weir: " + C.GoString(C.weir_status_str(C.int32_t(s)))
}

// check turns a weir_status into nil or a Status error.
func check(s C.weir_status) error {
	if s == C.WEIR_OK {
		return nil
	}
	return Status(s)
}

// emptyKey gives a zero-length key a non-NULL address: weir refuses a
// NULL key, but a zero-length key at any valid address is a key (the
// empty one), and &b[0] of an empty slice would panic.
var emptyKey [1]byte

// keyPtr is the address and length weir reads a key from, only during
// the call it is passed to.
func keyPtr(key []byte) (unsafe.Pointer, C.size_t) {
	if len(key) == 0 {
		return unsafe.Pointer(&emptyKey[0]), 0
	}
	return unsafe.Pointer(&key[0]), C.size_t(len(key))
}

// ClientLimiter limits each key (a client address) to a rate with a burst,
// for any number of keys in fixed memory: a weir_bloom of 2^sizeLog2
// one-word limiters, hashes of them per key. Lock-free: share one between
// goroutines. Close it when done.
type ClientLimiter struct {
	bloom *C.weir_bloom
}

// NewClientLimiter makes a limiter of perSecond events a second in bursts
// of up to burst per key. seed0 and seed1 key the hash; a server draws
// them once at start-up (crypto/rand) so that clients cannot pick
// addresses that collide.
func NewClientLimiter(perSecond float64, burst int64, sizeLog2, hashes uint32, seed0, seed1 uint64) (*ClientLimiter, error) {
	var limit C.weir_rate_limit
	if err := check(C.weir_rate_limit_new(C.double(perSecond), C.int64_t(burst), &limit)); err != nil {
		return nil, err
	}
	var bloom *C.weir_bloom
	err := check(C.weir_bloom_new(C.uint32_t(sizeLog2), C.uint32_t(hashes), &limit,
		C.uint64_t(seed0), C.uint64_t(seed1), &bloom))
	if err != nil {
		return nil, err
	}
	return &ClientLimiter{bloom: bloom}, nil
}

// Allow reports whether key may have one request at now (nanoseconds of
// a monotonic clock), and charges it if so. weir reads the key during the
// call and keeps no pointer to it. After Close it refuses.
func (l *ClientLimiter) Allow(now int64, key []byte) bool {
	p, n := keyPtr(key)
	return bool(C.weir_bloom_allow(l.bloom, C.int64_t(now), p, n))
}

// RetryAfter is how long from now until key would be allowed; 0 if it
// would be now.
func (l *ClientLimiter) RetryAfter(now int64, key []byte) time.Duration {
	p, n := keyPtr(key)
	return time.Duration(C.weir_bloom_next(l.bloom, C.int64_t(now), p, n))
}

// Close frees the limiter once no goroutine is using it; a second Close
// does nothing.
func (l *ClientLimiter) Close() {
	C.weir_bloom_free(l.bloom)
	l.bloom = nil
}

// ErrRefused is what Breaker.Do answers when the breaker refuses a call.
var ErrRefused = errors.New("breaker: call refused")

// Breaker sits in front of a backend and refuses a growing fraction of
// calls while they fail (a weir_breaker with the preset policy: a 10 s
// window, a probe after 1 s with nothing let through). Safe to share
// between goroutines (each call takes a short lock inside weir). Close it
// when done.
type Breaker struct {
	b     *C.weir_breaker
	clock func() int64
}

// NewBreaker makes a breaker that reads time from clock (nanoseconds of a
// monotonic clock; a server passes time.Since of its start) and whose
// window opens now.
func NewBreaker(clock func() int64) (*Breaker, error) {
	var b *C.weir_breaker
	if err := check(C.weir_breaker_new(nil, C.int64_t(clock()), &b)); err != nil {
		return nil, err
	}
	return &Breaker{b: b, clock: clock}, nil
}

// Do asks the breaker, with roll a draw from [0, 1), whether to make the
// call; if so it runs call and records the outcome when call returns.
// ErrRefused if refused; otherwise call's error, or weir's if recording
// a success failed (only a closed breaker does that).
func (b *Breaker) Do(roll float64, call func() error) error {
	// The ticket holds the call until it is settled, exactly once.
	var ticket C.weir_breaker_ticket
	if !C.weir_breaker_allow(b.b, C.int64_t(b.clock()), C.double(roll), &ticket) {
		return ErrRefused
	}
	err := call()
	var recorded error
	if err != nil {
		recorded = check(C.weir_breaker_fail(b.b, &ticket, C.int64_t(b.clock())))
	} else {
		recorded = check(C.weir_breaker_pass(b.b, &ticket, C.int64_t(b.clock())))
	}
	if err == nil {
		err = recorded
	}
	return err
}

// Ratio is the fraction of calls the breaker would refuse now: the
// standing throttle a dashboard shows.
func (b *Breaker) Ratio() float64 {
	return float64(C.weir_breaker_ratio(b.b, C.int64_t(b.clock())))
}

// Close frees the breaker once no goroutine is using it; a second Close
// does nothing.
func (b *Breaker) Close() {
	C.weir_breaker_free(b.b)
	b.b = nil
}

// Version is the linked library's version. It must be the header's
// (WEIR_VERSION): a mismatch means a header and a library from different
// releases.
func Version() (string, error) {
	lib := C.GoString(C.weir_version())
	if lib != C.WEIR_VERSION {
		return lib, fmt.Errorf("weir: library %s, header %s", lib, C.WEIR_VERSION)
	}
	return lib, nil
}

// ---- The simulated server ----

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
	limiter, err := NewClientLimiter(5, 10, 16, 3, seed0, seed1)
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
			if limiter.Allow(now, key) {
				allowed[i]++
				continue
			}
			if refused[i] == 0 {
				firstRefusal[i] = tick
				retryAfter[i] = limiter.RetryAfter(now, key)
			}
			refused[i]++
		}
		// A client never seen before every 10 ms: no table grows.
		if tick%(10*time.Millisecond) == 0 {
			oneOff++
			addr := fmt.Sprintf("10.%d.%d.%d:443", oneOff>>16&255, oneOff>>8&255, oneOff&255)
			if !limiter.Allow(now, clientKey(addr)) {
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
	breaker, err := NewBreaker(clock.Now)
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
			err := breaker.Do(rng.Float64(), backend(down))
			switch {
			case errors.Is(err, ErrRefused):
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
		fmt.Fprintf(w, "   %2d-%-2d    %-7s  %7d  %6d  %7d  %.3f\n", span*5, span*5+5, state, through, failed, refused, breaker.Ratio())
	}
	fmt.Fprintln(w)
	return nil
}

// statusErrors shows weir's status codes as Go errors.
func statusErrors(w io.Writer) error {
	fmt.Fprintln(w, "3. weir's status codes as Go errors (weir_status_str)")
	_, err := NewClientLimiter(5, 5000, 16, 3, seed0, seed1)
	fmt.Fprintf(w, "   a burst of 5000:  %v (errors.Is StatusRateBurst: %t)\n", err, errors.Is(err, StatusRateBurst))
	if !errors.Is(err, StatusRateBurst) {
		return fmt.Errorf("a burst of 5000 gave %v", err)
	}
	_, err = NewClientLimiter(0, 10, 16, 3, seed0, seed1)
	fmt.Fprintf(w, "   a rate of 0:      %v\n", err)
	fmt.Fprintf(w, "   code 9999:        %v\n", Status(9999))
	return nil
}

func run(w io.Writer) error {
	version, err := Version()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "weir %s from Go, through cgo\n\n", version)
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
