package weir

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
	"unsafe"
)

// alignedRegion is a Go byte region of n bytes, 8-byte aligned.
func alignedRegion(n int) []byte {
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

func TestBloomWordsAgreeWithC(t *testing.T) {
	steps := traceSteps()
	rng := rand.New(rand.NewSource(21))
	for _, shape := range []struct {
		sizeLog2, hashes uint32
		perSecond        float64
		burst            int64
	}{{4, 1, 10, 3}, {6, 3, 100, 10}, {10, 8, 1e4, 2}, {3, 8, 1, 1}, {12, 2, 1e6, 100}} {
		limit, err := NewRateLimit(shape.perSecond, shape.burst)
		if err != nil {
			t.Fatal(err)
		}
		size := BloomFootprint(shape.sizeLog2)
		goMem, cMem, sharedMem := alignedRegion(size), alignedRegion(size), alignedRegion(size)
		var regions [3]*BloomRegion
		for i, mem := range [][]byte{goMem, cMem, sharedMem} {
			if regions[i], err = LayBloom(mem, shape.sizeLog2, shape.hashes, limit, 0x1234, 0xfeed); err != nil {
				t.Fatal(err)
			}
		}
		goWords, err := NewBloomWords(goMem)
		if err != nil {
			t.Fatal(err)
		}
		sharedWords, err := NewBloomWords(sharedMem)
		if err != nil {
			t.Fatal(err)
		}
		keys := make([][]byte, 40)
		for i := range keys {
			keys[i] = []byte(fmt.Sprintf("key-%d-%s", i, "0123456789abcdef"[:i%17]))
		}
		keys[0] = []byte{}
		tr := trace{rng: rng, now: 1 << 40, step: int64(limit.fullSpan())/int64(shape.burst) + 1}
		admitted := 0
		for i := 0; i < steps/2; i++ {
			now := time.Duration(tr.next())
			key := keys[rng.Intn(len(keys))]
			if rng.Intn(8) == 0 {
				if g, c := goWords.NextAt(now, key), regions[1].Next(now, key); g != c {
					t.Fatalf("shape %+v step %d now %d key %q: Next go %d, C %d", shape, i, now, key, g, c)
				}
			}
			g, c := goWords.AllowAt(now, key), regions[1].AllowAt(now, key)
			var s bool
			if rng.Intn(2) == 0 {
				s = sharedWords.AllowStringAt(now, string(key))
			} else {
				s = regions[2].AllowAt(now, key)
			}
			if g != c || c != s {
				t.Fatalf("shape %+v step %d now %d key %q: Allow go %v, C %v, shared %v", shape, i, now, key, g, c, s)
			}
			if g {
				admitted++
			}
		}
		for i := range goMem {
			if goMem[i] != cMem[i] || cMem[i] != sharedMem[i] {
				t.Fatalf("shape %+v: the regions differ at byte %d", shape, i)
			}
		}
		if admitted < steps/200 || admitted > steps/2-steps/200 {
			t.Errorf("shape %+v: %d of %d admitted; the trace tests too little", shape, admitted, steps/2)
		}
	}
}

func TestBloomWordsRefuseForeignRegions(t *testing.T) {
	limit, _ := NewRateLimit(10, 3)
	mem := alignedRegion(BloomFootprint(4))
	if _, err := NewBloomWords(mem); err != ErrBloomForeign {
		t.Errorf("a zero region: %v", err)
	}
	if _, err := LayBloom(mem, 4, 2, limit, 1, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := NewBloomWords(mem[:63]); err != ErrBloomTooSmall {
		t.Errorf("a short region: %v", err)
	}
	if _, err := NewBloomWords(mem[:len(mem)-8]); err != ErrBloomTooSmall {
		t.Errorf("a region short of its words: %v", err)
	}
	if _, err := NewBloomWords(mem[1:]); err == nil {
		t.Error("a misaligned region was accepted")
	}
	mem[8] = 2 // the version
	if _, err := NewBloomWords(mem); err != ErrBloomVersion {
		t.Errorf("another version: %v", err)
	}
}
