package weir

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"
)

// The bloom region's layout, version 2 (weir_bloom_init_in, weir-core's
// bloom.rs): a 64-byte header line, then 2^size_log2 words in 64-byte
// lines of 8; a key's words are k of one line.
const (
	bloomMagic       = 0x6d6c623a72696577 // "weir:blm", little-endian
	bloomVersion     = 2
	bloomLineWords   = 8
	bloomLineBytes   = 8 * bloomLineWords
	bloomHeaderWords = bloomLineWords
	bloomMinSizeLog2 = 3
	bloomMaxSizeLog2 = 32
	bloomMaxHashes   = bloomLineWords
	bloomKindWindow  = 1
	bloomKindGCRA    = 2
)

// bloomSubsets holds every non-empty subset of a line's 8 words as a bit
// mask, by size, then by value: the C(8, k) masks of k bits start at
// bloomSubsetStart[k] (weir-core's SUBSETS).
var bloomSubsets = func() (out [255]uint8) {
	n := 0
	for k := 1; k <= 8; k++ {
		for mask := 1; mask < 256; mask++ {
			if bits.OnesCount8(uint8(mask)) == k {
				out[n] = uint8(mask)
				n++
			}
		}
	}
	return out
}()

// C(8, k), and where the masks of k bits start in bloomSubsets.
var (
	bloomSubsetCount = [9]uint64{1, 8, 28, 56, 70, 56, 28, 8, 1}
	bloomSubsetStart = [9]uint16{0, 0, 8, 36, 92, 162, 218, 246, 254}
)

// BloomWords decides in pure Go over the words of a bloom region that
// [LayBloom] or [LayGCRABloom] (or C's weir_bloom_init_in /
// weir_bloom_init_gcra_in, in any process) laid: the same keyed
// SipHash-1-3 probe and the same rate or GCRA words, so it answers and
// writes what [BloomRegion.AllowAt] does over the same memory, without a
// cgo crossing. Its shape is read once, when it is made, from the
// region's header; the region must not be laid again while it is in use,
// and must outlive it. Safe for many goroutines.
type BloomWords struct {
	words     []uint64 // the lines after the header, 8 words each
	lineMask  uint64
	subsets   uint64 // C(8, k)
	start     uint16 // where the k-bit masks start in bloomSubsets
	gcra      bool   // the word kind: GCRA words, else rate words
	rate      RateLimit
	gcraLimit GCRALimit
	seed0     uint64
	seed1     uint64
}

// NewBloomWords reads the header of the region in mem (64-byte aligned,
// as WEIR_BLOOM_ALIGN): ErrMisaligned, ErrBloomTooSmall, ErrBloomForeign,
// ErrBloomVersion, ErrBloomLineSize or ErrBloomKind as
// weir_bloom_check_in answers them.
func NewBloomWords(mem []byte) (*BloomWords, error) {
	p := unsafe.Pointer(unsafe.SliceData(mem))
	if p == nil {
		return nil, ErrNull
	}
	if uintptr(p)%bloomLineBytes != 0 {
		return nil, ErrMisaligned
	}
	lines := len(mem) / bloomLineBytes
	if lines == 0 {
		return nil, ErrBloomTooSmall
	}
	region := unsafe.Slice((*atomic.Uint64)(p), lines*bloomLineWords)
	if region[0].Load() != bloomMagic {
		return nil, ErrBloomForeign
	}
	field := func(i int) uint64 { return region[i].Load() }
	if field(1) != bloomVersion {
		return nil, ErrBloomVersion
	}
	kind, lineBytes := field(2)&0xffffffff, field(2)>>32
	if lineBytes != bloomLineBytes {
		return nil, ErrBloomLineSize
	}
	sizes := field(3)
	sizeLog2, hashes, shift := sizes&0xff, sizes>>8&0xff, sizes>>16&0xff
	if sizes>>24 != 0 {
		return nil, ErrBloomForeign
	}
	b := &BloomWords{seed0: field(6), seed1: field(7)}
	a, c := field(4), field(5)
	var err error
	switch {
	case kind == bloomKindWindow && shift == 0:
		b.rate, err = RateLimitFromParts(a, uint32(c), uint32(c>>32))
	case kind == bloomKindGCRA:
		b.gcra = true
		b.gcraLimit, err = GCRALimitFromParts(a, int64(c), uint32(shift))
	case kind == bloomKindWindow:
		err = ErrBloomForeign
	default:
		return nil, ErrBloomKind
	}
	if err != nil {
		return nil, ErrBloomForeign
	}
	if sizeLog2 < bloomMinSizeLog2 || sizeLog2 > bloomMaxSizeLog2 || hashes == 0 || hashes > bloomMaxHashes {
		return nil, ErrBloomForeign
	}
	n := uint64(1) << (sizeLog2 - bloomMinSizeLog2)
	if uint64(lines-1) < n {
		return nil, ErrBloomTooSmall
	}
	b.words = unsafe.Slice((*uint64)(p), (1+n)*bloomLineWords)[bloomHeaderWords:]
	b.lineMask = n - 1
	b.subsets = bloomSubsetCount[hashes]
	b.start = bloomSubsetStart[hashes]
	return b, nil
}

// probe is key's first word's index and its words in that line as a bit
// mask: the hash's low bits pick the line, hash × C(8, k) / 2^64 the subset.
func (b *BloomWords) probe(key []byte) (int, uint8) {
	h := sip13(b.seed0, b.seed1, key)
	pick, _ := bits.Mul64(h, b.subsets)
	return int(h&b.lineMask) * bloomLineWords, bloomSubsets[uint64(b.start)+pick]
}

// AllowAt reports whether key may have one event at now: true when any of
// its words allows, each word that allows being charged. A negative now is
// refused. The same answer and writes as weir_bloom_allow_in.
func (b *BloomWords) AllowAt(now time.Duration, key []byte) bool {
	if now < 0 {
		return false
	}
	base, mask := b.probe(key)
	line := (*[bloomLineWords]uint64)(b.words[base : base+bloomLineWords])
	allowed := false
	if b.gcra {
		for ; mask != 0; mask &= mask - 1 {
			w := (*GCRAWord)(unsafe.Pointer(&line[bits.TrailingZeros8(mask)]))
			allowed = w.AllowAt(b.gcraLimit, now) || allowed
		}
		return allowed
	}
	for ; mask != 0; mask &= mask - 1 {
		w := (*RateWord)(unsafe.Pointer(&line[bits.TrailingZeros8(mask)]))
		allowed = w.AllowAt(b.rate, now) || allowed
	}
	return allowed
}

// AllowStringAt is AllowAt for a string key, without copying it.
func (b *BloomWords) AllowStringAt(now time.Duration, key string) bool {
	return b.AllowAt(now, unsafe.Slice(unsafe.StringData(key), len(key)))
}

// NextAt is how long from now until key would be allowed: the soonest any
// of its words frees up, [Never] for a negative now. Reads only. The same
// answer as weir_bloom_next_in.
func (b *BloomWords) NextAt(now time.Duration, key []byte) time.Duration {
	if now < 0 {
		return Never
	}
	base, mask := b.probe(key)
	line := (*[bloomLineWords]uint64)(b.words[base : base+bloomLineWords])
	soonest := Never
	for ; mask != 0; mask &= mask - 1 {
		p := unsafe.Pointer(&line[bits.TrailingZeros8(mask)])
		if b.gcra {
			soonest = min(soonest, (*GCRAWord)(p).NextAt(b.gcraLimit, now))
		} else {
			soonest = min(soonest, (*RateWord)(p).NextAt(b.rate, now))
		}
	}
	return soonest
}

// NextStringAt is NextAt for a string key, without copying it.
func (b *BloomWords) NextStringAt(now time.Duration, key string) time.Duration {
	return b.NextAt(now, unsafe.Slice(unsafe.StringData(key), len(key)))
}

// sipRound is one SipRound.
func sipRound(v0, v1, v2, v3 uint64) (uint64, uint64, uint64, uint64) {
	v0 += v1
	v1 = bits.RotateLeft64(v1, 13) ^ v0
	v0 = bits.RotateLeft64(v0, 32)
	v2 += v3
	v3 = bits.RotateLeft64(v3, 16) ^ v2
	v0 += v3
	v3 = bits.RotateLeft64(v3, 21) ^ v0
	v2 += v1
	v1 = bits.RotateLeft64(v1, 17) ^ v2
	v2 = bits.RotateLeft64(v2, 32)
	return v0, v1, v2, v3
}

// sip13 is SipHash-1-3 with its 64-bit output, keyed by (k0, k1): weir's
// bloom hash (the siphasher crate's sip::SipHasher13, new_with_keys).
func sip13(k0, k1 uint64, data []byte) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	n := len(data)
	for len(data) >= 8 {
		m := binary.LittleEndian.Uint64(data)
		v3 ^= m
		v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
		v0 ^= m
		data = data[8:]
	}
	last := uint64(n) << 56
	for i, c := range data {
		last |= uint64(c) << (8 * i)
	}
	v3 ^= last
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0 ^= last
	v2 ^= 0xff
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	return v0 ^ v1 ^ v2 ^ v3
}
