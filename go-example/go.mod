module weir.example/go-example

go 1.21
