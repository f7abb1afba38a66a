package weir

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// status_gen.go is what `go generate` writes from the repository's weir.h.
// Outside a weir checkout (a module fetched from a proxy) there is no
// header beside the module and the test skips; the C comparison below
// runs everywhere.
func TestStatusGenIsCurrent(t *testing.T) {
	header := filepath.Join("..", "include", "weir.h")
	if _, err := os.Stat(header); err != nil {
		t.Skip("no ../include/weir.h: not inside a weir checkout")
	}
	out := filepath.Join(t.TempDir(), "status_gen.go")
	cmd := exec.Command("go", "run", "genstatus.go", "-header", header, "-out", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run genstatus.go: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("status_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("status_gen.go is stale: run `go generate` in go/")
	}
}

func TestStatusMatchesHeader(t *testing.T) {
	if bad := statusMismatches(); len(bad) != 0 {
		t.Fatalf("constants differ from the header cgo compiled against: %v", bad)
	}
	for _, s := range statusCodes {
		if got := s.Error(); got == "weir: unknown status code" {
			t.Errorf("%s (%d): the library does not know it", s.name, s.Code())
		}
	}
}

func TestStatusErrors(t *testing.T) {
	if got, want := Status(9999).Error(), "weir: unknown status code"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	_, err := NewRateLimit(5, 5000)
	if !errors.Is(err, ErrRateBurst) || errors.Is(err, ErrRateZero) {
		t.Fatalf("burst 5000: %v, want ErrRateBurst", err)
	}
	var s Status
	if !errors.As(err, &s) || s.Code() != 400 {
		t.Fatalf("errors.As: %v %d", err, s.Code())
	}
	if err := check(0); err != nil {
		t.Fatalf("WEIR_OK is %v", err)
	}
	if v, err := Version(); err != nil || v != HeaderVersion {
		t.Fatalf("Version %q %v", v, err)
	}
	if err := WordsShareable(); err != nil {
		t.Fatalf("WordsShareable on this host: %v", err)
	}
}
