//go:build linux

package weir

import (
	"os"
	"syscall"
	"unsafe"
)

// SharedWords is n 64-bit words in a file mapped MAP_SHARED: rate words
// and GCRA words that every process mapping the file shares, Go or C
// (a C program mmaps the same file and passes &words[i] to
// weir_rate_allow). A fresh file is zeros, which is a fresh word of
// either kind. Pass [MonotonicNow] (or one clock every sharer reads).
type SharedWords struct {
	mem   []byte
	Words []uint64 // the mapped words; use with RateAllowC, RateWord, ...
}

// OpenSharedWords maps path (created and sized to n words if shorter).
func OpenSharedWords(path string, n int) (*SharedWords, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if size := int64(n) * 8; info.Size() < size {
		if err := f.Truncate(size); err != nil {
			return nil, err
		}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, n*8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	// A page-aligned mapping: every word is 8-byte aligned.
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(mem))), n)
	return &SharedWords{mem: mem, Words: words}, nil
}

// Close unmaps the words; they must not be used after.
func (s *SharedWords) Close() error {
	mem := s.mem
	s.mem, s.Words = nil, nil
	if mem == nil {
		return nil
	}
	return syscall.Munmap(mem)
}
