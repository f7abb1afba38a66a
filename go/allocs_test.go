//go:build !race

package weir

import (
	"testing"
	"time"
)

// The decision paths allocate nothing: tickets, keys and out-values stay
// on the stack (#cgo noescape), and no Go pointer is kept by C.
func TestDecisionsAllocateNothing(t *testing.T) {
	br, _ := NewBreakerAt(nil, 0)
	defer br.Close()
	sh, _ := NewShedderAt(nil, 0)
	defer sh.Close()
	bu, _ := NewBucketAt(1e9, 1e6, 0)
	defer bu.Close()
	limit, _ := NewRateLimit(1e6, 1000)
	bl, _ := NewBloomSeeded(10, 3, limit, 1, 2)
	defer bl.Close()
	glimit, _ := NewGCRALimit(1e6, 1000)
	gb, _ := NewGCRABloomSeeded(10, 3, glimit, 1, 2)
	defer gb.Close()
	cb, _ := NewCBloom(10, 3, limit, 1, 2)
	defer cb.Close()
	ke, _ := NewKeyed(64, glimit, KeyedOverflowAdmit, 1, 2)
	defer ke.Close()
	key := []byte("203.0.113.7:4000")
	var word uint64
	now := time.Duration(0)
	for name, f := range map[string]func(){
		"breaker allow+pass": func() { c, _ := br.AllowAt(now, 0.5); c.PassAt(now) },
		"shedder allow+pass": func() { c, _ := sh.AllowAt(now, 100); c.PassAt(now) },
		"bucket allow":       func() { bu.AllowAt(now) },
		"bloom allow":        func() { bl.AllowAt(now, key) },
		"bloom allow string": func() { bl.AllowStringAt(now, "203.0.113.7") },
		"gcra bloom allow":   func() { gb.AllowAt(now, key) },
		"C bloom allow":      func() { cb.AllowAt(now, key) },
		"C bloom string":     func() { cb.AllowStringAt(now, "203.0.113.7") },
		"rate word (C)":      func() { RateAllowC(&word, &limit, now) },
		"keyed allow":        func() { ke.AllowAt(now, key) },
		"keyed string":       func() { ke.AllowStringAt(now, "203.0.113.7") },
		"keyed decide":       func() { ke.Decide(now, key, 1) },
		"keyed next":         func() { ke.Next(now, key) },
	} {
		if n := testing.AllocsPerRun(200, func() { now += time.Microsecond; f() }); n != 0 {
			t.Errorf("%s: %v allocations a call", name, n)
		}
	}
}
