package weir

import (
	"encoding/binary"
	"math/bits"
	"time"
	"unsafe"
)

// The bloom region's layout (weir_bloom_init_in, weir-core's bloom.rs): a
// 64-byte header, then 2^size_log2 rate words.
const (
	bloomMagic       = 0x6d6c623a72696577 // "weir:blm", little-endian
	bloomVersion     = 1
	bloomHeaderWords = 8
	bloomMaxSizeLog2 = 32
	bloomMaxHashes   = 8
)

// BloomWords decides in pure Go over the words of a bloom region that
// [LayBloom] (or C's weir_bloom_init_in, in any process) laid: the same
// keyed SipHash-1-3 indexes and the same rate words, so it answers what
// [BloomRegion.AllowAt] answers over the same memory, without a cgo
// crossing. Its shape is read once, when it is made, from the region's
// header; the region must not be laid again while it is in use, and must
// outlive it. Safe for many goroutines.
type BloomWords struct {
	words  []RateWord
	mask   uint64
	hashes uint64
	limit  RateLimit
	seed0  uint64
	seed1  uint64
}

// NewBloomWords reads the header of the region in mem (8-byte aligned):
// ErrBloomTooSmall, ErrBloomForeign, ErrBloomVersion or ErrMisaligned as
// weir_bloom_check_in answers them.
func NewBloomWords(mem []byte) (*BloomWords, error) {
	if len(mem) < 8*bloomHeaderWords {
		return nil, ErrBloomTooSmall
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(mem)))%8 != 0 {
		return nil, ErrMisaligned
	}
	region := unsafe.Slice((*RateWord)(unsafe.Pointer(unsafe.SliceData(mem))), len(mem)/8)
	field := func(i int) uint64 { return region[i].state.Load() }
	if field(0) != bloomMagic {
		return nil, ErrBloomForeign
	}
	if field(1) != bloomVersion {
		return nil, ErrBloomVersion
	}
	if field(7) != 0 {
		return nil, ErrBloomForeign
	}
	sizes, packed := field(2), field(4)
	limit, err := RateLimitFromParts(field(3), uint32(packed), uint32(packed>>32))
	if err != nil {
		return nil, ErrBloomForeign
	}
	sizeLog2, hashes := uint32(sizes), uint32(sizes>>32)
	if sizeLog2 > bloomMaxSizeLog2 || hashes == 0 || hashes > bloomMaxHashes || uint64(hashes) > 1<<sizeLog2 {
		return nil, ErrBloomForeign
	}
	n := uint64(1) << sizeLog2
	if uint64(len(region)-bloomHeaderWords) < n {
		return nil, ErrBloomTooSmall
	}
	return &BloomWords{
		words:  region[bloomHeaderWords : bloomHeaderWords+n],
		mask:   n - 1,
		hashes: uint64(hashes),
		limit:  limit,
		seed0:  field(5),
		seed1:  field(6),
	}, nil
}

// AllowAt reports whether key may have one event at now: true when any of
// its words allows, each word that allows being charged. A negative now is
// refused. The same answer and writes as weir_bloom_allow_in.
func (b *BloomWords) AllowAt(now time.Duration, key []byte) bool {
	if now < 0 {
		return false
	}
	first, step := sip13(b.seed0, b.seed1, key)
	step |= 1
	allowed := false
	for i := uint64(0); i < b.hashes; i++ {
		if b.words[(first+i*step)&b.mask].AllowAt(b.limit, now) {
			allowed = true
		}
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
	first, step := sip13(b.seed0, b.seed1, key)
	step |= 1
	soonest := Never
	for i := uint64(0); i < b.hashes; i++ {
		soonest = min(soonest, b.words[(first+i*step)&b.mask].NextAt(b.limit, now))
	}
	return soonest
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

// sip13 is SipHash-1-3 with its 128-bit output as two little-endian
// halves, keyed by (k0, k1): weir's bloom hash (weir-core's siphash.rs).
func sip13(k0, k1 uint64, data []byte) (uint64, uint64) {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d ^ 0xee
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
	v2 ^= 0xee
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	low := v0 ^ v1 ^ v2 ^ v3
	v1 ^= 0xdd
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	v0, v1, v2, v3 = sipRound(v0, v1, v2, v3)
	return low, v0 ^ v1 ^ v2 ^ v3
}
