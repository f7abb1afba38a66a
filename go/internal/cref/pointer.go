package cref

import "unsafe"

// unsafePointer is w as a C pointer: a uint64 is 8-aligned on every host
// weir's words are lock-free on, which is what the C calls check.
func unsafePointer(w *uint64) unsafe.Pointer { return unsafe.Pointer(w) }
