package weir

import "unsafe"

// statusNull and statusMisaligned are WEIR_ERR_NULL and
// WEIR_ERR_MISALIGNED.
const (
	statusNull       = 1
	statusMisaligned = 11
)

// wordAt is the 8 bytes of mem at offset, if they are in bounds and
// 8-byte aligned.
func wordAt(mem []byte, offset int) (unsafe.Pointer, error) {
	if offset < 0 || offset > len(mem)-8 {
		return nil, statusError(statusNull)
	}
	p := unsafe.Pointer(&mem[offset])
	if uintptr(p)%8 != 0 {
		return nil, statusError(statusMisaligned)
	}
	return p, nil
}

// RateWordAt is the rate word held in the 8 bytes of mem at offset: memory
// shared with C (a weir_rate) or with other processes (a file mapped with
// syscall.Mmap and MAP_SHARED), which Go and C then decide over alike. The
// bytes must lie within mem (else WEIR_ERR_NULL's error) and be 8-byte
// aligned (else WEIR_ERR_MISALIGNED's). The word is used in place: mem
// must outlive it and stay mapped. Zero bytes are a ready word.
func RateWordAt(mem []byte, offset int) (*RateWord, error) {
	p, err := wordAt(mem, offset)
	if err != nil {
		return nil, err
	}
	// RateWord is one atomic.Uint64: its size, layout and alignment.
	return (*RateWord)(p), nil
}

// GcraWordAt is the GCRA word held in the 8 bytes of mem at offset, as
// RateWordAt is the rate word's (a weir_gcra in memory shared with C or
// other processes). Zero bytes are a full bucket.
func GcraWordAt(mem []byte, offset int) (*GcraWord, error) {
	p, err := wordAt(mem, offset)
	if err != nil {
		return nil, err
	}
	return (*GcraWord)(p), nil
}
