//go:build linux

package weir

import (
	"fmt"
	"os"
	"syscall"
)

// OpenBloomFile maps path (created if missing) MAP_SHARED as a bloom
// region: the first opener lays the array, later ones, in this process or
// any other, Go or C, attach to it and share its limit. An flock on the
// file keeps two first openers from both laying it. A file that holds an
// array of another shape is attached as it is (its header wins); one that
// holds no array answers ErrBloomForeign.
func OpenBloomFile(path string, sizeLog2, hashes uint32, limit RateLimit, seed0, seed1 uint64) (*BloomRegion, error) {
	return openBloomFile(path, sizeLog2, func(mem []byte) (*BloomRegion, error) {
		return LayBloom(mem, sizeLog2, hashes, limit, seed0, seed1)
	})
}

// OpenGCRABloomFile is OpenBloomFile for an array of GCRA words: a first
// opener lays it with LayGCRABloom; later ones attach to whatever kind
// the file's header names.
func OpenGCRABloomFile(path string, sizeLog2, hashes uint32, limit GCRALimit, seed0, seed1 uint64) (*BloomRegion, error) {
	return openBloomFile(path, sizeLog2, func(mem []byte) (*BloomRegion, error) {
		return LayGCRABloom(mem, sizeLog2, hashes, limit, seed0, seed1)
	})
}

func openBloomFile(path string, sizeLog2 uint32, lay func(mem []byte) (*BloomRegion, error)) (*BloomRegion, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("weir: lock %s: %w", path, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	fresh := info.Size() == 0
	size := info.Size()
	if fresh {
		size = int64(BloomFootprint(sizeLog2))
		if size == 0 {
			return nil, ErrBloomSize
		}
		if err := f.Truncate(size); err != nil {
			return nil, err
		}
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("weir: mmap %s: %w", path, err)
	}
	var r *BloomRegion
	if fresh {
		r, err = lay(mem)
	} else {
		r, err = AttachBloom(mem)
	}
	if err != nil {
		_ = syscall.Munmap(mem)
		if fresh {
			_ = f.Truncate(0)
		}
		return nil, err
	}
	r.unmap = syscall.Munmap
	return r, nil
}
