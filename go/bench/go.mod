module github.com/weir-rs/weir/go/bench

go 1.26.0

replace github.com/weir-rs/weir/go => ../

require (
	github.com/weir-rs/weir/go v0.0.0-00010101000000-000000000000
	golang.org/x/time v0.16.0
)
