package redislease

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	weir "github.com/weir-rs/weir/go"
)

// server starts redis-server with the module WEIR_REDIS_MODULE names on a
// free port of 127.0.0.1, its files in a temp dir, waits for it by
// polling (at most 10 s) and stops it by its pid when the test ends.
func server(t *testing.T) *redis.Client {
	module := os.Getenv("WEIR_REDIS_MODULE")
	if module == "" {
		t.Skip("WEIR_REDIS_MODULE names no module (the redis stage sets it)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1",
		"--dir", t.TempDir(), "--save", "", "--loadmodule", module)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	t.Cleanup(func() { rdb.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for rdb.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer in 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return rdb
}

// Four limiters on one key of burst 400 that refills once in 1000 s,
// 16 goroutines, 1200 requests: at most 400 admitted, and after Close the
// bucket holds exactly what was not admitted (the refunds came back).
func TestFleetAdmitsNoMoreThanTheBucketAndRefundsTheRest(t *testing.T) {
	rdb := server(t)
	ctx := context.Background()
	policy := weir.DefaultLeasePolicy()
	policy.TTL = 60 * time.Second
	var limiters []*Limiter
	for i := 0; i < 4; i++ {
		l, err := New(rdb, "tenant:7", 0.001, 400, policy)
		if err != nil {
			t.Fatal(err)
		}
		limiters = append(limiters, l)
	}
	var admitted, commands int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(l *Limiter) {
			defer wg.Done()
			n := int64(0)
			for i := 0; i < 75; i++ {
				ok, err := l.Allow(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					n++
				}
			}
			mu.Lock()
			admitted += n
			mu.Unlock()
		}(limiters[g%4])
	}
	wg.Wait()
	for _, l := range limiters {
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		commands += int64(l.Commands())
	}
	if admitted > 400 || admitted == 0 {
		t.Fatalf("admitted %d of a burst of 400", admitted)
	}
	peek, err := rdb.Do(ctx, "WEIR.BUCKET.PEEK", "tenant:7", "0.001", 400).Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	if peek[2] != 400-admitted {
		t.Fatalf("the bucket holds %d after %d admitted: the refunds did not all come back", peek[2], admitted)
	}
	if commands >= admitted {
		t.Fatalf("%d commands for %d admitted", commands, admitted)
	}
	t.Logf("admitted %d of 1200 with %d commands", admitted, commands)
}

// A dead Redis is an error, and the lease asks again only an interval later.
func TestAFailedAskIsAnError(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer rdb.Close()
	l, err := New(rdb, "k", 10, 10, weir.DefaultLeasePolicy())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if ok, err := l.Allow(ctx); ok || err == nil {
		t.Fatalf("%v %v", ok, err)
	}
	if ok, err := l.Allow(ctx); ok || err != nil {
		t.Fatalf("asked again at once: %v %v", ok, err)
	}
	if l.Commands() != 1 {
		t.Fatalf("%d commands", l.Commands())
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
