// Package redislease admits requests against a limit a fleet shares in
// Redis, asking Redis about once an interval instead of once a request:
// a [Limiter] spends units leased with the weir module's WEIR.LEASE
// command (docs/redis.md, "Leases"), and weir's Lease decides when to ask
// and how many. It is its own Go module so that the weir package needs no
// Redis client: it depends on go-redis (v9) and on weir's Go package.
//
// Every admitted request was charged in Redis before it was admitted, so
// the fleet never admits more than the key's bucket allows (over any
// window, at most its burst plus its rate times the window and the
// lease's TTL). Units a client holds unspent are the cost: at most its
// cap (Share × Burst) each. Close gives them back with WEIR.REFUND.
package redislease

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	weir "github.com/weir-rs/weir/go"
)

// Limiter admits requests on one Redis key (a WEIR.BUCKET bucket of Rate
// and Burst) from units leased in batches. Safe for many goroutines; Close
// is not concurrent with use.
type Limiter struct {
	rdb      redis.UniversalClient
	key      string
	rate     string
	burst    int64
	ttl      time.Duration
	interval time.Duration
	lease    *weir.Lease
	asking   sync.Mutex
	ahead    sync.WaitGroup
	commands atomic.Uint64
}

// New makes a limiter for key, limited in Redis to rate units a second
// (a decimal, as WEIR.BUCKET takes it) with burst. policy sets the
// interval, the lease's TTL (whole milliseconds) and the share of burst
// one client may hold; its Burst is set to burst.
func New(rdb redis.UniversalClient, key string, rate float64, burst int64, policy weir.LeasePolicy) (*Limiter, error) {
	policy.Burst = burst
	if policy.TTL%time.Millisecond != 0 {
		return nil, errors.New("redislease: the TTL is whole milliseconds (WEIR.LEASE's ttl_ms)")
	}
	lease, err := weir.NewLease(&policy, weir.Now())
	if err != nil {
		return nil, err
	}
	return &Limiter{rdb: rdb, key: key, rate: strconv.FormatFloat(rate, 'f', -1, 64), burst: burst,
		ttl: policy.TTL, interval: policy.Interval, lease: lease}, nil
}

// ask sends WEIR.LEASE for n units and records the answer.
func (l *Limiter) ask(ctx context.Context, n int64) error {
	sent := weir.Now()
	reply, err := l.rdb.Do(ctx, "WEIR.LEASE", l.key, l.rate, l.burst, n, l.ttl.Milliseconds()).Int64Slice()
	l.commands.Add(1)
	at := weir.Now()
	if err == nil && len(reply) != 3 {
		err = fmt.Errorf("redislease: WEIR.LEASE answered %v", reply)
	}
	if err != nil {
		// A failed ask is a grant of nothing; try again in an interval.
		_ = l.lease.Grant(at, 0, at, at+l.interval)
		return err
	}
	// The lease ends its TTL after the ask was sent: no later than in Redis.
	return l.lease.Grant(at, reply[0], sent+time.Duration(reply[1])*time.Millisecond,
		at+time.Duration(reply[2])*time.Millisecond)
}

// Allow asks for one request now: true means go ahead.
func (l *Limiter) Allow(ctx context.Context) (bool, error) { return l.AllowN(ctx, 1) }

// AllowN asks for a request of cost units now. It waits for Redis only
// when the units held cannot cover it and no ask is travelling; an ask
// ahead (the units held run low) goes in the background.
func (l *Limiter) AllowN(ctx context.Context, cost int64) (bool, error) {
	for tries := 0; tries < 2; tries++ {
		a, err := l.lease.Take(weir.Now(), cost)
		if err != nil {
			return false, err
		}
		switch a.Verdict {
		case weir.LeaseGo:
			if a.Ask > 0 {
				l.ahead.Add(1)
				go func() {
					defer l.ahead.Done()
					ctx, cancel := context.WithTimeout(context.Background(), l.ttl)
					defer cancel()
					_ = l.ask(ctx, a.Ask)
				}()
			}
			return true, nil
		case weir.LeaseRefuse:
			return false, nil
		}
		if err := l.ask(ctx, a.Ask); err != nil {
			return false, err
		}
	}
	return false, nil
}

// Commands is how many commands this limiter has sent to Redis.
func (l *Limiter) Commands() uint64 { return l.commands.Load() }

// Stats is the lease's reading now.
func (l *Limiter) Stats() (weir.LeaseStats, error) { return l.lease.StatsAt(weir.Now()) }

// Close waits for an ask ahead, gives the units still held back with
// WEIR.REFUND and frees the lease.
func (l *Limiter) Close(ctx context.Context) error {
	l.ahead.Wait()
	back := l.lease.Release(weir.Now())
	var err error
	if back > 0 {
		err = l.rdb.Do(ctx, "WEIR.REFUND", l.key, back).Err()
		l.commands.Add(1)
	}
	_ = l.lease.Close()
	return err
}
