package bench

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// A reference of storj's bloomrate, written here from its documentation
// (storj.io/storj is not on the module proxy this CI reaches): a rate
// limiter in one 64-bit word, and an array of them keyed by a hash. It is
// labelled "reference" in the tables, not "peer": it is our code.

// refRate is one word: the low 10 bits count events in the open window;
// the upper 54 bits are the window's expiry in ns / 512. Each admitted
// event pushes the expiry one interval out; up to burst events pass
// before it expires, then nothing until it does.
type refRate struct {
	word atomic.Uint64
}

const (
	refCountBits = 10
	refCountMask = 1<<refCountBits - 1
	refTimeShift = 9
)

// Allow takes the limit (events a second) and burst on every call, as
// storj's Rate.Allow does: they live with the caller, not in the word.
func (r *refRate) Allow(now time.Time, limit rate.Limit, burst int) bool {
	interval := int64(float64(time.Second) / float64(limit))
	t := now.UnixNano()
	for {
		old := r.word.Load()
		count := old & refCountMask
		expiry := int64(old>>refCountBits) << refTimeShift
		var next uint64
		switch {
		case t >= expiry:
			next = uint64((t+interval)>>refTimeShift)<<refCountBits | 1
		case count < uint64(burst):
			next = uint64((expiry+interval)>>refTimeShift)<<refCountBits | (count + 1)
		default:
			return false
		}
		if r.word.CompareAndSwap(old, next) {
			return true
		}
	}
}

// refBloom is 2^size words; a key maps to `hashes` of them and passes
// when any of them allows, each that allows being charged. The indexes
// come as weir's do: SipHash-1-3 with a 128-bit output under a 128-bit
// seed gives (h1, h2), and the i-th index is h1 + i × (h2 | 1) mod 2^size.
type refBloom struct {
	words  []refRate
	mask   uint64
	hashes uint64
	seed   [2]uint64
	limit  rate.Limit
	burst  int
}

func newRefBloom(size, hashes int, limit rate.Limit, burst int, seed0, seed1 uint64) *refBloom {
	return &refBloom{
		words:  make([]refRate, 1<<size),
		mask:   1<<size - 1,
		hashes: uint64(hashes),
		seed:   [2]uint64{seed0, seed1},
		limit:  limit,
		burst:  burst,
	}
}

func (b *refBloom) Allow(now time.Time, key []byte) bool {
	h1 := sip64(1, 3, b.seed[0], b.seed[1], key)
	step := h1>>32 | 1
	allowed := false
	for i := uint64(0); i < b.hashes; i++ {
		if b.words[(h1+i*step)&b.mask].Allow(now, b.limit, b.burst) {
			allowed = true
		}
	}
	return allowed
}

// sip64 is SipHash-c-d with its 64-bit output, keyed by (k0, k1) as the
// reference implementation reads its 16-byte key.
func sip64(c, d int, k0, k1 uint64, data []byte) uint64 {
	v0 := k0 ^ 0x736f6d6570736575
	v1 := k1 ^ 0x646f72616e646f6d
	v2 := k0 ^ 0x6c7967656e657261
	v3 := k1 ^ 0x7465646279746573
	round := func() {
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
	}
	compress := func(m uint64) {
		v3 ^= m
		for i := 0; i < c; i++ {
			round()
		}
		v0 ^= m
	}
	n := len(data)
	for len(data) >= 8 {
		compress(binary.LittleEndian.Uint64(data))
		data = data[8:]
	}
	last := uint64(n) << 56
	for i, b := range data {
		last |= uint64(b) << (8 * i)
	}
	compress(last)
	v2 ^= 0xff
	for i := 0; i < d; i++ {
		round()
	}
	return v0 ^ v1 ^ v2 ^ v3
}
