// Package bench measures package weir against the Go peers it replaces,
// in a module of its own so that the peers never become a dependency of
// weir's users. Everything is in the tests: run.sh runs them and writes
// the Go table of BENCHMARKS.md.
package bench
