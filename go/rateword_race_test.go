//go:build race

package weir

// raceBuild shortens the cross tests' traces under the race detector,
// where every cgo call costs many times more (go test -race ./...).
const raceBuild = true
