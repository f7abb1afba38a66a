package weir

import (
	"errors"
	"testing"
	"time"
)

func TestLeaseAsksSpendsAndReleases(t *testing.T) {
	p := DefaultLeasePolicy()
	p.Burst, p.Share = 40, 0.5
	l, err := NewLease(&p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Cap() != 20 {
		t.Fatalf("cap %d", l.Cap())
	}
	a, err := l.Take(0, 1)
	if err != nil || a.Verdict != LeaseAsk || a.Ask != 1 {
		t.Fatalf("%+v %v", a, err)
	}
	if err := l.Grant(time.Millisecond, 3, time.Second, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if a, _ := l.Take(2*time.Millisecond, 2); a.Verdict != LeaseGo {
		t.Fatalf("%+v", a)
	}
	s, err := l.StatsAt(2 * time.Millisecond)
	if err != nil || s.Spent != 2 || s.RTT != time.Millisecond || s.Held != 1 {
		t.Fatalf("%+v %v", s, err)
	}
	if l.Unspent(0) != 1 || l.Expires(0) != time.Second {
		t.Fatal("readings")
	}
	if n := l.Release(2 * time.Millisecond); n != 1 {
		t.Fatalf("released %d", n)
	}
	if _, err := l.Take(0, 0); !errors.Is(err, ErrLeaseCost) {
		t.Fatal(err)
	}
	if err := l.Grant(0, -1, 0, 0); !errors.Is(err, ErrLeaseGrant) {
		t.Fatal(err)
	}
	bad := p
	bad.Share = 2
	if _, err := NewLease(&bad, 0); !errors.Is(err, ErrLeaseShare) {
		t.Fatal(err)
	}
	l.Close()
	if _, err := l.Take(0, 1); !errors.Is(err, ErrClosed) {
		t.Fatal(err)
	}
}
