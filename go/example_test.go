package weir_test

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	weir "github.com/weir-rs/weir/go"
)

// A breaker's call settles once; a second settle is an error.
func ExampleBreaker() {
	b, err := weir.NewBreakerAt(nil, 0)
	if err != nil {
		panic(err)
	}
	defer b.Close()
	call, err := b.AllowAt(time.Millisecond, 0.5)
	if err != nil {
		panic(err)
	}
	fmt.Println(call.PassAt(2*time.Millisecond), errors.Is(call.Fail(), weir.ErrSettled))
	// Output: <nil> true
}

// Do runs the call through the breaker and records its outcome.
func ExampleBreaker_Do() {
	b, _ := weir.NewBreaker(nil)
	defer b.Close()
	err := b.Do(context.Background(), func() error { return nil })
	fmt.Println(err)
	// Output: <nil>
}

// The shedder takes the CPU reading from the caller (or a CPUReader).
func ExampleShedder() {
	s, _ := weir.NewShedderAt(nil, 0)
	defer s.Close()
	call, err := s.AllowAt(time.Millisecond, 950)
	fmt.Println(err, s.Flying())
	call.PassAt(3 * time.Millisecond)
	fmt.Println(s.Flying())
	// Output:
	// <nil> 1
	// 0
}

// A bucket of 10 a second in bursts of 2; Reserve says how long to wait.
func ExampleBucket_Reserve() {
	b, _ := weir.NewBucketAt(10, 2, 0)
	defer b.Close()
	fmt.Println(b.AllowAt(0), b.AllowAt(0), b.AllowAt(0))
	wait, err := b.Reserve(0, 1)
	fmt.Println(wait, err)
	// Output:
	// true true false
	// 100ms weir: refused
}

// Per-client limits keyed by address, in fixed memory.
func ExampleBloom() {
	limit, _ := weir.NewRateLimit(5, 2)
	b, _ := weir.NewBloom(16, 3, limit)
	defer b.Close()
	for i := 0; i < 3; i++ {
		fmt.Print(b.AllowStringAt(0, "203.0.113.7"), " ")
	}
	fmt.Println(b.AllowStringAt(0, "198.51.100.23"))
	// Output: true true false true
}

// The same with token buckets (GCRA words): a client's burst, then one
// event per interval, rather than a whole window's at once.
func ExampleNewGCRABloom() {
	limit, _ := weir.NewGCRALimit(1, 2) // 1 a second, bursts of 2
	b, _ := weir.NewGCRABloom(16, 3, limit)
	defer b.Close()
	fmt.Println(b.AllowStringAt(0, "a"), b.AllowStringAt(0, "a"), b.AllowStringAt(0, "a"))
	fmt.Println(b.NextString(0, "a"), b.AllowStringAt(time.Second, "a"), b.AllowStringAt(time.Second, "a"))
	// Output:
	// true true false
	// 1s true false
}

// Exact per-client limits in fixed memory: a table sized for the clients
// active at once, each with a token bucket of its own. Seed it with
// secret random values; Decide says what decided.
func ExampleKeyed() {
	buckets, _ := weir.KeyedBucketsFor(10_000, 1e-9) // 128 bytes a bucket
	limit, _ := weir.NewGCRALimit(1, 2)              // 1 a second, bursts of 2
	var seed [16]byte
	rand.Read(seed[:])
	k, err := weir.NewKeyed(buckets, limit, weir.KeyedOverflowRefuse,
		binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:]))
	if err != nil {
		panic(err)
	}
	defer k.Close()
	fmt.Println(buckets, k.AllowStringAt(0, "203.0.113.7"), k.AllowStringAt(0, "203.0.113.7"))
	d, _ := k.DecideString(0, "203.0.113.7", 1)
	wait, _ := k.NextString(0, "203.0.113.7")
	other, _ := k.DecideString(0, "198.51.100.23", 2)
	fmt.Println(d, wait, other)
	// Output:
	// 2031 true true
	// refused 1s allowed
}

// Every weir_status is an error errors.Is matches.
func ExampleStatus() {
	_, err := weir.NewRateLimit(5, 5000)
	fmt.Println(err)
	fmt.Println(errors.Is(err, weir.ErrRateBurst))
	// Output:
	// weir: rate burst is outside 1..1023
	// true
}

// Retry with draws from a seeded source: the same seed, the same waits.
func ExampleBackoff_Retry() {
	b := weir.DefaultBackoff()
	b.Base, b.Cap = time.Microsecond, time.Millisecond
	tries := 0
	err := b.Retry(context.Background(), func(context.Context) error {
		tries++
		if tries < 3 {
			return errors.New("busy")
		}
		return nil
	})
	fmt.Println(tries, err)
	// Output: 3 <nil>
}

// A pool of Go values: weir sees only identities the Pool assigns.
func ExamplePool() {
	p, _ := weir.NewPool[string](nil)
	defer p.Close()
	if p.Take(0).Kind == weir.PoolTakeMake {
		lent, _ := p.Made("conn-1", 0)
		p.Give(lent, time.Millisecond)
	}
	t := p.Take(2 * time.Millisecond)
	fmt.Println(t.Kind == weir.PoolTakeReady, t.Item)
	// Output: true conn-1
}

// Deadlines to and from contexts.
func ExampleDeadline() {
	d := weir.StartDeadline(time.Second, 0)
	left, _ := d.Remaining(250 * time.Millisecond)
	fmt.Println(left, d.Expired(time.Second))
	// Output: 750ms true
}

// A token bucket of one 64-bit word through the C path.
func ExampleGCRAAllowC() {
	limit, _ := weir.NewGCRALimit(100, 1)
	var word uint64
	fmt.Println(weir.GCRAAllowC(&word, &limit, 0), weir.GCRAAllowC(&word, &limit, 0), weir.GCRANextC(&word, &limit, 0))
	// Output: true false 10ms
}

// An organisation's limit, a team's and a user's, charged all or nothing:
// the user's refusal spends neither the team's nor the organisation's.
func ExampleChargeAll() {
	org, _ := weir.NewGCRALimit(100, 100)
	team, _ := weir.NewGCRALimit(10, 10)
	user, _ := weir.NewGCRALimit(1, 2)
	var orgWord, teamWord, userWord weir.GCRAWord
	now := time.Second
	for i := 0; i < 3; i++ {
		r, err := weir.ChargeAll(now,
			weir.ChargeGCRA(&userWord, user, 1), // the likeliest to refuse, first
			weir.ChargeGCRA(&teamWord, team, 1),
			weir.ChargeGCRA(&orgWord, org, 1))
		if err != nil {
			panic(err)
		}
		fmt.Println(r.Admitted, r.Index, r.Wait)
	}
	fmt.Println("team room", teamWord.RoomAt(team, now), "org room", orgWord.RoomAt(org, now))
	// Output:
	// true 3 0s
	// true 3 0s
	// false 0 1s
	// team room 8 org room 98
}

// A shadow beside the real limit: the candidate policy is asked on every
// call and counted, never enforced; then it goes live in place, the real
// bucket keeping the tokens it holds (up to the new burst) and its counts.
// (A breaker's or a shedder's shadow is asked only for the calls the real
// one let through: only those run, so only those have an outcome.)
func ExampleBucket_Reconfigure() {
	real, _ := weir.NewBucketAt(20, 10, 0)
	defer real.Close()
	shadow, _ := weir.NewBucketAt(10, 5, 0)
	defer shadow.Close()
	_ = real.StartCounting()
	_ = shadow.StartCounting()
	now := time.Duration(0)
	for ; now < 3*time.Second; now += 60 * time.Millisecond {
		if real.AllowAt(now) {
			// serve the call
		}
		shadow.AllowAt(now) // counted, never enforced
	}
	r, _ := real.ReadCounts()
	s, _ := shadow.ReadCounts()
	fmt.Println("real:", r.Admitted, "served,", r.Refused, "refused")
	fmt.Println("shadow: would have served", s.Admitted, "refused", s.Refused)
	fmt.Printf("tokens before: %.2f\n", real.Tokens(now))
	if err := real.Reconfigure(10, 5, now); err != nil {
		panic(err)
	}
	fmt.Printf("tokens after: %.2f\n", real.Tokens(now))
	// Output:
	// real: 50 served, 0 refused
	// shadow: would have served 34 refused 16
	// tokens before: 10.00
	// tokens after: 5.00
}
