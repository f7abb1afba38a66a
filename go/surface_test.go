package weir

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Go face covers weir.h: every function the header declares for a
// hosted build is called (C.weir_x) by the package's own code, so a type
// added to the header without a Go face fails here, naming it. Skips
// outside a weir checkout, like TestStatusGenIsCurrent.
func TestSurfaceCoversHeader(t *testing.T) {
	header, err := os.ReadFile(filepath.Join("..", "include", "weir.h"))
	if err != nil {
		t.Skip("no ../include/weir.h: not inside a weir checkout")
	}
	// The firmware SDK's hooks, which a host never calls, and the C11
	// inline fast paths (the Go words are the Go fast paths).
	skip := map[string]bool{"weir_critical_enter": true, "weir_critical_exit": true,
		"weir_rate_allow_inline": true, "weir_rate_next_inline": true}
	declared := regexp.MustCompile(`(?m)^[a-z][a-z0-9_ *]*\b(weir_[a-z0-9_]+)\(`)
	files, _ := filepath.Glob("*.go")
	var code strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "genstatus.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		code.Write(b)
	}
	for _, m := range declared.FindAllStringSubmatch(string(header), -1) {
		name := m[1]
		if skip[name] || strings.HasPrefix(name, "weir_hosted_only_") || strings.Contains(name, "_inline") {
			continue
		}
		if !strings.Contains(code.String(), "C."+name+"(") {
			t.Errorf("%s: declared in weir.h, not called by the Go package", name)
		}
	}
}
