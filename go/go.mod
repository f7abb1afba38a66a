module github.com/weir-rs/weir/go

// 1.24: cgo's `#cgo noescape` and `#cgo nocallback` directives, which let
// the tickets, keys and out-values weir reads during a call stay on the
// Go stack (no allocation per decision).
go 1.24
