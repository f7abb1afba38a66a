module github.com/weir-rs/weir/go

go 1.22
