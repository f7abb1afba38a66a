package weir

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"
)

func TestWordsAtAreCheckedAndShared(t *testing.T) {
	mem := make([]byte, 64)
	base := int((8 - uintptr(unsafe.Pointer(&mem[0]))%8) % 8)
	if _, err := RateWordAt(mem, base+1); err == nil {
		t.Error("a misaligned word was accepted")
	}
	for _, off := range []int{-1, len(mem) - 7, len(mem)} {
		if _, err := GCRAWordAt(mem, off); err == nil {
			t.Errorf("offset %d was accepted", off)
		}
	}
	// A file mapped twice, as two processes would: a word charged through
	// one mapping by Go is seen, and charged, through the other by C.
	path := filepath.Join(t.TempDir(), "words")
	if err := os.WriteFile(path, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	mapping := func() []byte {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Munmap(m) })
		return m
	}
	a, b := mapping(), mapping()
	limit, err := NewRateLimit(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	word, err := RateWordAt(a, 64)
	if err != nil {
		t.Fatal(err)
	}
	other := (*uint64)(unsafe.Pointer(&b[64]))
	if !word.AllowAt(limit, 1e9) || !word.AllowAt(limit, 1e9) || !RateAllowC(other, &limit, 1e9) {
		t.Fatal("the burst was refused")
	}
	if word.AllowAt(limit, 1e9) || RateAllowC(other, &limit, 1e9) {
		t.Fatal("a fourth event passed a burst of three shared through the file")
	}
	gl, err := NewGCRALimit(10, 2)
	if err != nil {
		t.Fatal(err)
	}
	g, err := GCRAWordAt(a, 128)
	if err != nil {
		t.Fatal(err)
	}
	if !g.AllowNAt(gl, 5e9, 2) || g.AllowAt(gl, 5e9) {
		t.Fatal("the GCRA word's burst of two was wrong")
	}
	if GCRARoomC((*uint64)(unsafe.Pointer(&b[128])), &gl, 5e9) != 0 {
		t.Fatal("C saw room the Go word had spent")
	}
}

func TestWordsOfSharedWords(t *testing.T) {
	if _, err := RateWordOf(nil); err != ErrNull {
		t.Errorf("nil: %v", err)
	}
	shared, err := OpenSharedWords(filepath.Join(t.TempDir(), "w"), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	limit, _ := NewRateLimit(1, 2)
	word, err := RateWordOf(&shared.Words[1])
	if err != nil {
		t.Fatal(err)
	}
	if !word.AllowAt(limit, 5e9) || !RateAllowC(&shared.Words[1], &limit, 5e9) || word.AllowAt(limit, 5e9) {
		t.Fatal("Go and C did not share the word's burst of two")
	}
	gl, _ := NewGCRALimit(1, 1)
	g, err := GCRAWordOf(&shared.Words[2])
	if err != nil {
		t.Fatal(err)
	}
	if !g.AllowAt(gl, 5e9) || GCRAAllowC(&shared.Words[2], &gl, 5e9) {
		t.Fatal("Go and C did not share the GCRA word's burst of one")
	}
}
