// Package weir is the Go face of weir, a library of "should this call go
// ahead?" decisions: circuit breaking, load shedding, token buckets,
// sliding and fixed windows, concurrency ceilings, retry budgets and
// backoff, deadlines, resource-pool bookkeeping, and one-word rate
// limiters that processes share through memory.
//
// # Linking
//
// The package links the static library of an installed weir through
// pkg-config (`#cgo pkg-config: weir-static`), so a binary needs no
// LD_LIBRARY_PATH. Install weir with CMake and point PKG_CONFIG_PATH at
// the prefix's lib/pkgconfig (the repository's README, "From Go").
//
// # Time
//
// weir reads no clock. Every decision has a form that takes now, a
// time.Duration on a monotonic clock, and a short form that reads [Now],
// the time since this package was initialised (time.Since of a reading
// taken at start-up, so it is monotonic). Durations are time.Duration.
// Words shared with other processes must read one clock for all of them:
// [MonotonicNow] is CLOCK_MONOTONIC.
//
// # Errors
//
// Every weir_status other than WEIR_OK is a [Status], an error that
// [errors.Is] matches against the exported Err* values (generated from
// weir.h by `go generate`). [ErrClosed] answers any use of a handle after
// its Close; [ErrRefused] a decision that said no where an error is the
// answer (Do, Wait).
//
// # Handles
//
// Types made by a New function own memory in weir. Close frees it; a
// finalizer frees a handle that was never closed, so a leak is bounded by
// the garbage collector. Every method may be called from many goroutines
// at once, but Close must not run concurrently with any other use of the
// same handle: the decision paths take no lock of their own, so the caller
// closes a handle only once nothing else can reach it. A use after Close
// returns ErrClosed (or a refusal, for a method that answers a bool),
// never a crash.
//
// # Pointers
//
// The cgo pointer rules hold: C receives only weir's own handles, values,
// and pointers to Go memory that holds no Go pointers (keys, tickets,
// out-values), which weir reads or writes during the call and never keeps.
package weir

/*
#cgo pkg-config: weir-static
#include <time.h>
#include "weir.h"

static int64_t weir_go_monotonic(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
*/
import "C"

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"
)

// start is the reading Now counts from: time.Since keeps Go's monotonic
// clock, so Now never goes backwards.
var start = time.Now()

// Now is the time since this package was initialised, on Go's monotonic
// clock: the now every short-form method (Allow, Pass, ...) passes.
func Now() time.Duration { return time.Since(start) }

// MonotonicNow is CLOCK_MONOTONIC, the clock every process on the machine
// reads alike: pass it to words and bloom regions shared with other
// processes (a C program reading clock_gettime(CLOCK_MONOTONIC) agrees).
func MonotonicNow() time.Duration { return time.Duration(C.weir_go_monotonic()) }

// HeaderVersion is the version of the weir.h this package was compiled
// against.
const HeaderVersion = C.WEIR_VERSION

// Version is the linked library's version. It returns an error when it is
// not the header's: a header and a library from different releases.
func Version() (string, error) {
	lib := C.GoString(C.weir_version())
	if lib != HeaderVersion {
		return lib, fmt.Errorf("weir: library %s, header %s", lib, HeaderVersion)
	}
	return lib, nil
}

// WordsShareable reports whether this build's words (rate words, GCRA
// words, bloom regions) may be shared with other processes: nil where
// word updates are lock-free 64-bit atomics, ErrWordsNotShareable where
// they take a lock inside this program.
func WordsShareable() error { return check(C.weir_words_shareable()) }

// ns is d as weir's int64 nanoseconds.
func ns(d time.Duration) C.int64_t { return C.int64_t(d) }

// dur is weir's nanoseconds as a Duration; INT64_MAX ("never") stays the
// largest Duration.
func dur(v C.int64_t) time.Duration { return time.Duration(v) }

// Never is the Duration weir answers for a wait that never ends (INT64_MAX
// nanoseconds).
const Never = time.Duration(math.MaxInt64)

// emptyKey gives a zero-length key a non-NULL address: weir refuses a
// NULL key, but a zero-length key at a valid address is the empty key.
var emptyKey [1]byte

// bytesPtr is the address and length weir reads a key from, only during
// the call it is passed to.
func bytesPtr(key []byte) (unsafe.Pointer, C.size_t) {
	if len(key) == 0 {
		return unsafe.Pointer(&emptyKey[0]), 0
	}
	return unsafe.Pointer(unsafe.SliceData(key)), C.size_t(len(key))
}

// stringPtr is bytesPtr for a string, without copying it: weir only reads.
func stringPtr(key string) (unsafe.Pointer, C.size_t) {
	if len(key) == 0 {
		return unsafe.Pointer(&emptyKey[0]), 0
	}
	return unsafe.Pointer(unsafe.StringData(key)), C.size_t(len(key))
}

// finalized counts handles freed by their finalizer: handles that were
// never closed (the tests read it).
var finalized atomic.Int64

// finalize is every handle's finalizer: it frees a handle nobody closed.
func finalize[T interface{ Close() error }](h T) {
	finalized.Add(1)
	_ = h.Close()
}
