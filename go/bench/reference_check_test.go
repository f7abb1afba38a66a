package bench

import (
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func TestSipHashMatchesThePublishedVectors(t *testing.T) {
	// The 64-bit SipHash of the empty input under the key 00 01 ... 0f:
	// SipHash-2-4's first vector in the reference implementation's
	// vectors.h, and SipHash-1-3's in the siphasher crate's tests.
	if got := sip64(2, 4, 0x0706050403020100, 0x0f0e0d0c0b0a0908, nil); got != 0x726fdb47dd0e0e31 {
		t.Fatalf("SipHash-2-4: %#x", got)
	}
	if got := sip64(1, 3, 0x0706050403020100, 0x0f0e0d0c0b0a0908, nil); got != 0xabac0158050fc4dc {
		t.Fatalf("SipHash-1-3: %#x", got)
	}
}

func TestReferenceRateIsAFixedWindow(t *testing.T) {
	var r refRate
	at := time.Unix(1000, 0)
	for i := 0; i < 3; i++ {
		if !r.Allow(at, 1, 3) {
			t.Fatalf("event %d refused", i)
		}
	}
	if r.Allow(at, 1, 3) || r.Allow(at.Add(2*time.Second), 1, 3) {
		t.Fatal("a full window admitted")
	}
	if !r.Allow(at.Add(3*time.Second+time.Millisecond), 1, 3) {
		t.Fatal("an expired window refused")
	}
	b := newRefBloom(10, 3, rate.Limit(1), 2, 1, 2)
	if !b.Allow(at, []byte("k")) || !b.Allow(at, []byte("k")) {
		t.Fatal("a fresh key refused")
	}
}
