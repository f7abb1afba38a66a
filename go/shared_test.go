//go:build linux

package weir

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestSharedBreakerFileIsOneBreaker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "breaker")
	first, err := OpenSharedBreakerFileAt(path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	// A second mapping of the file, as another process would make.
	second, err := OpenSharedBreakerFileAt(path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		ticket, err := second.AllowAt(5, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if err := ticket.PassAt(5); err != nil {
			t.Fatal(err)
		}
	}
	tally, err := first.TallyAt(5)
	if err != nil {
		t.Fatal(err)
	}
	if tally.Success != 10 || tally.Total != 10 {
		t.Fatalf("tally %+v, want 10 successes through two mappings", tally)
	}
	recovered, reset, err := first.Recoveries()
	if err != nil || recovered != 0 || reset != 0 {
		t.Fatalf("recoveries %d %d %v", recovered, reset, err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	// The other mapping still works after one closes.
	if _, err := first.AllowAt(6, 0.5); err != nil {
		t.Fatal(err)
	}
	// Another type's file is refused.
	if _, err := OpenSharedBucketFileAt(path, 1, 1, 0); !errors.Is(err, ErrRegionKind) {
		t.Fatalf("a breaker's file opened as a bucket: %v", err)
	}
}

func TestSharedBucketFileHoldsItsBurstAcrossMappings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bucket")
	a, err := OpenSharedBucketFileAt(path, 1, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenSharedBucketFileAt(path, 1000, 1000, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := 0
	for i := 0; i < 20; i++ {
		if a.AllowN(1, 1) {
			got++
		}
		if b.AllowN(1, 1) {
			got++
		}
	}
	if got != 10 {
		t.Fatalf("two mappings took %d, want the first opener's burst of 10", got)
	}
}
