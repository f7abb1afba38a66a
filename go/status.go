package weir

//go:generate go run genstatus.go -header ../include/weir.h -out status_gen.go

/*
#include "weir.h"
*/
import "C"

import "errors"

// Status is a weir_status other than WEIR_OK, as a Go error. It is a
// comparable value: errors.Is(err, weir.ErrRateBurst) matches it, and a
// switch on it works too. The constants (ErrNull, ErrRateBurst, ...) are
// generated from weir.h.
type Status int32

// Error is weir's own description of the code (weir_status_str, which
// answers every value, one weir does not define included).
func (s Status) Error() string {
	return "weir: " + C.GoString(C.weir_status_str(C.int32_t(s)))
}

// Code is the weir_status value, as C sees it.
func (s Status) Code() int32 { return int32(s) }

// ErrClosed answers a use of a handle after its Close.
var ErrClosed = errors.New("weir: use after Close")

// ErrRefused answers a decision that said no where the answer is an
// error: Breaker.Do, Shedder.Do, Backoff.Retry, Gate.Do and the like.
var ErrRefused = errors.New("weir: refused")

// check turns a weir_status into nil or a Status.
func check(s C.weir_status) error {
	if s == C.WEIR_OK {
		return nil
	}
	return Status(s)
}
