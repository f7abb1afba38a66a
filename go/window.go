package weir

/*
#include "weir.h"
*/
import "C"

import (
	"runtime"
	"time"
)

// Window is a rolling window of sums and counts in size buckets covering
// the last span (weir_window). Safe for many goroutines; Close is not
// concurrent with use.
type Window struct {
	p *C.weir_window
	// unmap releases the mapped file of a shared window
	// (OpenSharedWindowFile); nil for a heap one.
	unmap func() error
}

// NewWindow makes an empty window whose first bucket opens at now.
// ErrWindowSpan (span ≤ 0), ErrWindowSize (over 2^20 buckets).
func NewWindow(size int32, span, now time.Duration) (*Window, error) {
	var p *C.weir_window
	if err := check(C.weir_window_new(C.int32_t(size), ns(span), ns(now), &p)); err != nil {
		return nil, err
	}
	w := &Window{p: p}
	runtime.SetFinalizer(w, finalize[*Window])
	return w, nil
}

// Close frees the window.
func (w *Window) Close() error {
	if w.p != nil {
		C.weir_window_free(w.p)
		w.p = nil
		runtime.SetFinalizer(w, nil)
		if w.unmap != nil {
			err := w.unmap()
			w.unmap = nil
			return err
		}
	}
	return nil
}

// Add adds value to the bucket now falls in.
func (w *Window) Add(now time.Duration, value int64) error {
	if w.p == nil {
		return ErrClosed
	}
	err := check(C.weir_window_add(w.p, ns(now), C.int64_t(value)))
	runtime.KeepAlive(w)
	return err
}

// WindowTotal is a sum and how many values went into it.
type WindowTotal struct{ Sum, Count int64 }

// Total sums the buckets inside the window at now, the current one
// included when current is true.
func (w *Window) Total(now time.Duration, current bool) (WindowTotal, error) {
	if w.p == nil {
		return WindowTotal{}, ErrClosed
	}
	var t C.weir_window_total
	err := check(C.weir_window_read_total(w.p, ns(now), C.bool(current), &t))
	runtime.KeepAlive(w)
	return WindowTotal{int64(t.sum), int64(t.count)}, err
}

// Buckets copies the buckets inside the window at now, oldest first.
func (w *Window) Buckets(now time.Duration, current bool) []WindowTotal {
	if w.p == nil {
		return nil
	}
	buf := make([]C.weir_window_total, int(C.weir_window_size(w.p)))
	n := int(C.weir_window_read_buckets(w.p, ns(now), C.bool(current), &buf[0], C.size_t(len(buf))))
	runtime.KeepAlive(w)
	out := make([]WindowTotal, n)
	for i := range out {
		out[i] = WindowTotal{int64(buf[i].sum), int64(buf[i].count)}
	}
	return out
}

// Size is how many buckets the window has; Width how long each covers.
func (w *Window) Size() int32 {
	if w.p == nil {
		return 0
	}
	defer runtime.KeepAlive(w)
	return int32(C.weir_window_size(w.p))
}

// Reconfigure gives the window a new size and span at now, in place
// (weir_window_reconfigure): nothing changes when the buckets keep their
// layout (the same size and span / size); otherwise it opens again at now
// with the total at now in its first bucket, so Total at now reads the
// same and those values leave together one new span later. ErrWindowSpan,
// ErrWindowSize, ErrNoMemory, ErrClosed, ErrRegionUnsupported for a shared
// window (OpenSharedWindowFile: its policy is the file's); an error
// changes nothing. Safe
// beside other use (not Close): a call racing it sees the old layout or
// the new one.
func (w *Window) Reconfigure(size int32, window, now time.Duration) error {
	if w.p == nil {
		return ErrClosed
	}
	err := check(C.weir_window_reconfigure(w.p, C.int32_t(size), ns(window), ns(now)))
	runtime.KeepAlive(w)
	return err
}

// Width is how much time one bucket covers.
func (w *Window) Width() time.Duration {
	if w.p == nil {
		return 0
	}
	defer runtime.KeepAlive(w)
	return time.Duration(C.weir_window_width(w.p))
}
