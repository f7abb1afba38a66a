package bench

import (
	"os"
	_ "unsafe" // for go:linkname

	"github.com/zeromicro/go-zero/core/breaker"
	"github.com/zeromicro/go-zero/core/load"
	"github.com/zeromicro/go-zero/core/logx"
)

// go-zero's sides: its public breaker (core/breaker) and adaptive shedder
// (core/load), called as a go-zero service calls them.

// systemOverloadChecker is go-zero's own hook (a variable, "for unit
// test"): whether the CPU reading is over the threshold. The refusal row
// sets it, as weir's shedder is handed a hot CPU reading, since a
// benchmark cannot make the machine hot on cue.
//
//go:linkname systemOverloadChecker github.com/zeromicro/go-zero/core/load.systemOverloadChecker
var systemOverloadChecker func(int64) bool

func init() {
	// go-zero logs every refusal and its CPU stats once a minute; the
	// formatting still runs (and is measured), the writing does not.
	logx.Disable()
	load.DisableLog()
	_ = os.Stderr
}

func zeroBreakerAllowPass() func(int) {
	b := breaker.NewBreaker()
	return func(n int) {
		for i := 0; i < n; i++ {
			p, err := b.Allow()
			if err == nil {
				p.Accept()
				sink++
			}
		}
	}
}

func zeroShedderAllowPass() func(int) {
	s := load.NewAdaptiveShedder()
	return func(n int) {
		for i := 0; i < n; i++ {
			p, err := s.Allow()
			if err == nil {
				p.Pass()
				sink++
			}
		}
	}
}

// zeroShedderRefuse: the CPU over its threshold and more calls in flight
// than the shedder's estimate of the server's capacity, so every call is
// refused.
func zeroShedderRefuse() func(int) {
	s := load.NewAdaptiveShedder()
	var flying []load.Promise
	for i := 0; i < 200; i++ {
		p, err := s.Allow()
		if err != nil {
			panic(err)
		}
		flying = append(flying, p)
	}
	// A finished call updates the moving average of calls in flight.
	flying[0].Fail()
	systemOverloadChecker = func(int64) bool { return true }
	if _, err := s.Allow(); err == nil {
		panic("go-zero's shedder admitted a call while hot and full")
	}
	return func(n int) {
		for i := 0; i < n; i++ {
			if _, err := s.Allow(); err != nil {
				sink++
			}
		}
	}
}
