package weir

import "unsafe"

// wordAt is the 8 bytes of mem at offset, if they are in bounds and
// 8-byte aligned.
func wordAt(mem []byte, offset int) (unsafe.Pointer, error) {
	if offset < 0 || offset > len(mem)-8 {
		return nil, ErrNull
	}
	p := unsafe.Pointer(&mem[offset])
	if uintptr(p)%8 != 0 {
		return nil, ErrMisaligned
	}
	return p, nil
}

// RateWordAt is the rate word held in the 8 bytes of mem at offset: memory
// shared with C (a weir_rate) or with other processes (a file mapped with
// syscall.Mmap and MAP_SHARED), which Go and C then decide over alike. The
// bytes must lie within mem (else ErrNull) and be 8-byte
// aligned (else ErrMisaligned). The word is used in place: mem
// must outlive it and stay mapped. Zero bytes are a ready word.
func RateWordAt(mem []byte, offset int) (*RateWord, error) {
	p, err := wordAt(mem, offset)
	if err != nil {
		return nil, err
	}
	// RateWord is one atomic.Uint64: its size, layout and alignment.
	return (*RateWord)(p), nil
}

// GCRAWordAt is the GCRA word held in the 8 bytes of mem at offset, as
// RateWordAt is the rate word's (a weir_gcra in memory shared with C or
// other processes). Zero bytes are a full bucket.
func GCRAWordAt(mem []byte, offset int) (*GCRAWord, error) {
	p, err := wordAt(mem, offset)
	if err != nil {
		return nil, err
	}
	return (*GCRAWord)(p), nil
}

// RateWordOf is the rate word held at word: one of [SharedWords]' Words,
// or any uint64 that C also passes to weir_rate_allow. ErrNull for nil,
// ErrMisaligned for an address that is not 8-byte aligned (a uint64 can
// be 4-aligned on 32-bit hosts).
func RateWordOf(word *uint64) (*RateWord, error) {
	p, err := wordOf(word)
	return (*RateWord)(p), err
}

// GCRAWordOf is the GCRA word held at word, as RateWordOf is the rate
// word's.
func GCRAWordOf(word *uint64) (*GCRAWord, error) {
	p, err := wordOf(word)
	return (*GCRAWord)(p), err
}

func wordOf(word *uint64) (unsafe.Pointer, error) {
	if word == nil {
		return nil, ErrNull
	}
	if uintptr(unsafe.Pointer(word))%8 != 0 {
		return nil, ErrMisaligned
	}
	return unsafe.Pointer(word), nil
}
