package bench

import (
	"testing"
	"time"

	"golang.org/x/time/rate"
)

func TestSipHash24MatchesThePublishedVector(t *testing.T) {
	// SipHash-2-4-128 of the empty input under the key 00 01 ... 0f: the
	// first vector of the reference implementation's vectors.h.
	lo, hi := sip128(2, 4, 0x0706050403020100, 0x0f0e0d0c0b0a0908, nil)
	want := [16]byte{0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02, 0x93}
	var got [16]byte
	for i := 0; i < 8; i++ {
		got[i] = byte(lo >> (8 * i))
		got[8+i] = byte(hi >> (8 * i))
	}
	if got != want {
		t.Fatalf("got % x, want % x", got, want)
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
