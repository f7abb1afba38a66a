package weir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand"
	"testing"
	"time"
	"unsafe"
)

// alignedRegion is a Go byte region of n bytes, 64-byte aligned as a
// bloom region must be.
func alignedRegion(n int) []byte {
	words := make([]uint64, (n+7)/8+7)
	skip := (64 - int(uintptr(unsafe.Pointer(&words[0]))%64)) % 64 / 8
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[skip])), n)
}

// bloomShape is one array of the cross tests: its size, hashes and the
// limit of either kind.
type bloomShape struct {
	sizeLog2, hashes uint32
	perSecond        float64
	burst            int64
	gcra             bool
}

var bloomShapes = []bloomShape{
	{4, 1, 10, 3, false}, {6, 3, 100, 10, false}, {10, 8, 1e4, 2, false}, {3, 8, 1, 1, false}, {12, 2, 1e6, 100, false},
	{4, 1, 10, 3, true}, {6, 3, 100, 10, true}, {10, 8, 1e4, 2, true}, {3, 8, 1, 1, true}, {12, 2, 1e6, 100, true},
	{3, 5, 3e6, 7, true}, {5, 4, 1e4, 1, false},
}

// lay lays the shape into mem (seed 0x1234, 0xfeed) and answers its step
// for the trace: about one word's interval.
func (sh bloomShape) lay(t *testing.T, mem []byte) (*BloomRegion, int64) {
	t.Helper()
	if sh.gcra {
		limit, err := NewGCRALimit(sh.perSecond, sh.burst)
		if err != nil {
			t.Fatal(err)
		}
		r, err := LayGCRABloom(mem, sh.sizeLog2, sh.hashes, limit, 0x1234, 0xfeed)
		if err != nil {
			t.Fatal(err)
		}
		return r, int64(1e9/sh.perSecond) + 1
	}
	limit, err := NewRateLimit(sh.perSecond, sh.burst)
	if err != nil {
		t.Fatal(err)
	}
	r, err := LayBloom(mem, sh.sizeLog2, sh.hashes, limit, 0x1234, 0xfeed)
	if err != nil {
		t.Fatal(err)
	}
	return r, int64(limit.fullSpan())/sh.burst + 1
}

// The pure-Go words and C's over the same random traces, both kinds: on
// separate regions (they must end byte for byte equal) and on one shared
// region written by both; and the heap forms, Bloom (Go memory, pure Go)
// against CBloom (C's heap), on the same seed.
func TestBloomWordsAgreeWithC(t *testing.T) {
	steps := traceSteps()
	rng := rand.New(rand.NewSource(21))
	for _, shape := range bloomShapes {
		size := BloomFootprint(shape.sizeLog2)
		goMem, cMem, sharedMem := alignedRegion(size), alignedRegion(size), alignedRegion(size)
		var regions [3]*BloomRegion
		var step int64
		for i, mem := range [][]byte{goMem, cMem, sharedMem} {
			regions[i], step = shape.lay(t, mem)
		}
		goWords, err := NewBloomWords(goMem)
		if err != nil {
			t.Fatal(err)
		}
		sharedWords, err := NewBloomWords(sharedMem)
		if err != nil {
			t.Fatal(err)
		}
		var heap *Bloom
		var cHeap *CBloom
		if shape.gcra {
			limit, _ := NewGCRALimit(shape.perSecond, shape.burst)
			heap, err = NewGCRABloomSeeded(shape.sizeLog2, shape.hashes, limit, 0x1234, 0xfeed)
			if err == nil {
				cHeap, err = NewGCRACBloom(shape.sizeLog2, shape.hashes, limit, 0x1234, 0xfeed)
			}
		} else {
			limit, _ := NewRateLimit(shape.perSecond, shape.burst)
			heap, err = NewBloomSeeded(shape.sizeLog2, shape.hashes, limit, 0x1234, 0xfeed)
			if err == nil {
				cHeap, err = NewCBloom(shape.sizeLog2, shape.hashes, limit, 0x1234, 0xfeed)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		keys := make([][]byte, 40)
		for i := range keys {
			keys[i] = []byte(fmt.Sprintf("key-%d-%s", i, "0123456789abcdef"[:i%17]))
		}
		keys[0] = []byte{}
		tr := trace{rng: rng, now: 1 << 40, step: step}
		admitted := 0
		for i := 0; i < steps/2; i++ {
			now := time.Duration(tr.next())
			key := keys[rng.Intn(len(keys))]
			if rng.Intn(8) == 0 {
				g, c, h, ch := goWords.NextAt(now, key), regions[1].Next(now, key), heap.NextString(now, string(key)), cHeap.Next(now, key)
				if g != c || h != ch || g != h {
					t.Fatalf("shape %+v step %d now %d key %q: Next go %d, C %d, heap %d, C heap %d", shape, i, now, key, g, c, h, ch)
				}
			}
			g, c := goWords.AllowAt(now, key), regions[1].AllowAt(now, key)
			var s bool
			if rng.Intn(2) == 0 {
				s = sharedWords.AllowStringAt(now, string(key))
			} else {
				s = regions[2].AllowAt(now, key)
			}
			h, ch := heap.AllowAt(now, key), cHeap.AllowStringAt(now, string(key))
			if g != c || c != s || h != ch || g != h {
				t.Fatalf("shape %+v step %d now %d key %q: Allow go %v, C %v, shared %v, heap %v, C heap %v", shape, i, now, key, g, c, s, h, ch)
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
		heap.Close()
		cHeap.Close()
		if admitted < steps/200 || admitted > steps/2-steps/200 {
			t.Errorf("shape %+v: %d of %d admitted; the trace tests too little", shape, admitted, steps/2)
		}
	}
}

// The probe is weir's: SipHash-1-3's published 64-bit vector, and each
// key's words are hashes distinct words of one line.
func TestBloomProbe(t *testing.T) {
	// SipHash-1-3-64 of the empty input under the key 00 01 ... 0f, as the
	// siphasher crate's own tests give it (0xabac0158050fc4dc).
	// And of the one byte 00: 0xc9f49bf37d57ca93.
	if got := sip13(0x0706050403020100, 0x0f0e0d0c0b0a0908, nil); got != 0xabac0158050fc4dc {
		t.Fatalf("sip13 of the empty input: %#x", got)
	}
	if got := sip13(0x0706050403020100, 0x0f0e0d0c0b0a0908, []byte{0}); got != 0xc9f49bf37d57ca93 {
		t.Fatalf("sip13 of 00: %#x", got)
	}
	limit, _ := NewRateLimit(1, 1)
	for hashes := uint32(1); hashes <= 8; hashes++ {
		mem := alignedRegion(BloomFootprint(9))
		if _, err := LayBloom(mem, 9, hashes, limit, uint64(hashes), 7); err != nil {
			t.Fatal(err)
		}
		b, _ := NewBloomWords(mem)
		for k := 0; k < 500; k++ {
			base, mask := b.probe([]byte(fmt.Sprint(k)))
			if bits.OnesCount8(mask) != int(hashes) || base%8 != 0 || base >= 8<<6 {
				t.Fatalf("hashes %d key %d: line at %d, mask %08b", hashes, k, base, mask)
			}
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
	if _, err := NewBloomWords(mem[8:]); err != ErrMisaligned {
		t.Errorf("an 8-byte aligned region: %v", err)
	}
	if _, err := NewBloomWords(nil); err != ErrNull {
		t.Errorf("nil: %v", err)
	}
	// Each header field spoilt alone answers what weir_bloom_check_in does.
	for _, tc := range []struct {
		name  string
		word  int
		value uint64
		want  error
	}{
		{"version 1 (weir 0.1)", 1, 1, ErrBloomVersion},
		{"version 3", 1, 3, ErrBloomVersion},
		{"a kind weir does not know", 2, 3 | 64<<32, ErrBloomKind},
		{"lines of 128 bytes", 2, 1 | 128<<32, ErrBloomLineSize},
		{"a window word with a shift", 3, 4 | 2<<8 | 1<<16, ErrBloomForeign},
		{"bits above the shift", 3, 4 | 2<<8 | 1<<24, ErrBloomForeign},
		{"2 words", 3, 1 | 2<<8, ErrBloomForeign},
		{"9 hashes", 3, 4 | 9<<8, ErrBloomForeign},
		{"0 hashes", 3, 4, ErrBloomForeign},
		{"larger than the region", 3, 5 | 2<<8, ErrBloomTooSmall},
		{"a zero burst", 5, 0, ErrBloomForeign},
	} {
		spoilt := alignedRegion(len(mem))
		copy(spoilt, mem)
		binary.LittleEndian.PutUint64(spoilt[8*tc.word:], tc.value)
		_, err := NewBloomWords(spoilt)
		_, cerr := AttachBloom(spoilt)
		if err != tc.want || !errors.Is(cerr, tc.want) {
			t.Errorf("%s: Go %v, C %v, want %v", tc.name, err, cerr, tc.want)
		}
	}
	glimit, _ := NewGCRALimit(10, 3)
	if _, err := LayGCRABloom(mem, 4, 2, glimit, 1, 2); err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(mem[40:], 0) // a zero per_token
	if _, err := NewBloomWords(mem); err != ErrBloomForeign {
		t.Errorf("a GCRA header with a bad limit: %v", err)
	}
}
