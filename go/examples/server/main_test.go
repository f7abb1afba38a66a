package main

import (
	"bytes"
	"strings"
	"testing"
)

// The simulation prints the same every run, and its checks pass.
func TestRun(t *testing.T) {
	var a, b bytes.Buffer
	if err := run(&a); err != nil {
		t.Fatal(err)
	}
	if err := run(&b); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatal("two runs printed differently")
	}
	for _, want := range []string{"abusive", "errors.Is ErrRateBurst: true", "unknown status code"} {
		if !strings.Contains(a.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}
