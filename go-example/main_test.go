package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestClientRefusedAfterBurst(t *testing.T) {
	limiter, err := NewClientLimiter(5, 10, 10, 3, seed0, seed1)
	if err != nil {
		t.Fatal(err)
	}
	defer limiter.Close()
	abuser, other := clientKey("198.51.100.23:40001"), clientKey("203.0.113.7:40002")
	for i := 0; i < 10; i++ {
		if !limiter.Allow(0, abuser) {
			t.Fatalf("request %d of a burst of 10 refused", i+1)
		}
	}
	if limiter.Allow(0, abuser) {
		t.Fatal("the 11th request at the same instant was allowed")
	}
	wait := limiter.RetryAfter(0, abuser)
	if wait <= 0 || wait > 2*time.Second {
		t.Fatalf("Retry-After %v, want within the 2 s window", wait)
	}
	if !limiter.Allow(0, other) {
		t.Fatal("another client was refused for the abuser's burst")
	}
	if !limiter.Allow(int64(wait), abuser) {
		t.Fatalf("still refused after Retry-After (%v)", wait)
	}
}

func TestEmptyKeyIsAKey(t *testing.T) {
	limiter, err := NewClientLimiter(5, 1, 10, 1, seed0, seed1)
	if err != nil {
		t.Fatal(err)
	}
	defer limiter.Close()
	// weir refuses a NULL key, so this passes only if the empty key
	// reaches it with a valid address.
	if !limiter.Allow(0, nil) {
		t.Fatal("the empty key's first request was refused")
	}
	if limiter.Allow(0, []byte{}) {
		t.Fatal("nil and an empty slice are not the same key")
	}
	if !limiter.Allow(0, []byte("x")) {
		t.Fatal("a different key was refused")
	}
}

func TestStatusErrors(t *testing.T) {
	if got, want := Status(9999).Error(), "weir: unknown status code"; got != want {
		t.Fatalf("unknown code: %q, want %q", got, want)
	}
	_, err := NewClientLimiter(5, 5000, 10, 3, seed0, seed1)
	if !errors.Is(err, StatusRateBurst) || errors.Is(err, StatusRateZero) {
		t.Fatalf("a burst of 5000: %v, want StatusRateBurst", err)
	}
	if got, want := err.Error(), "weir: rate burst is outside 1..1023"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

func TestBreakerRefusesFailingBackend(t *testing.T) {
	var clock Clock
	breaker, err := NewBreaker(clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer breaker.Close()
	ran, refused := 0, 0
	for call := 0; call < 200; call++ {
		clock.AdvanceTo(time.Duration(call) * 50 * time.Millisecond)
		// The roll 0.5 is refused once more than half the calls would be.
		err := breaker.Do(0.5, func() error { ran++; return errors.New("down") })
		if errors.Is(err, ErrRefused) {
			refused++
		}
	}
	if refused < 100 || ran+refused != 200 {
		t.Fatalf("ran %d, refused %d of 200 calls to a dead backend", ran, refused)
	}
	if r := breaker.Ratio(); r < 0.5 || r >= 1 {
		t.Fatalf("ratio %v after 10 s of failures", r)
	}
}

func TestRunIsDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := run(&a); err != nil {
		t.Fatal(err)
	}
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("two runs differ:\n%s\n---\n%s", a.String(), b.String())
	}
	if !strings.Contains(a.String(), "198.51.100.23") {
		t.Fatalf("no client table in:\n%s", a.String())
	}
}
