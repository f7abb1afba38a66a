//go:build linux

package weir

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// sharedCase is one shared handle type as the tests below drive it: open
// lays or attaches the file, step makes one call that leaves a mark in the
// shared state, used reads how many marks the state holds (it may spend
// what is left: it is called last), reconfigure changes the policy.
type sharedCase struct {
	kind        string
	open        func(path string) (io.Closer, error)
	step        func(h io.Closer) error
	used        func(h io.Closer) (int64, error)
	reconfigure func(h io.Closer) error // nil: the type has none
}

// sharedAt is the instant every step runs at: the windows are an hour
// long, so nothing ages out during a test.
const sharedAt = 5 * time.Nanosecond

// sharedRoom is each case's capacity: more than the steps the tests take.
const sharedRoom = 100

var sharedCases = []sharedCase{
	{
		kind: "breaker",
		open: func(path string) (io.Closer, error) { return OpenSharedBreakerFileAt(path, nil, 0) },
		step: func(h io.Closer) error {
			ticket, err := h.(*Breaker).AllowAt(sharedAt, 0.5)
			if err != nil {
				return err
			}
			return ticket.PassAt(sharedAt)
		},
		used: func(h io.Closer) (int64, error) {
			tally, err := h.(*Breaker).TallyAt(sharedAt)
			return tally.Total, err
		},
		reconfigure: func(h io.Closer) error { return h.(*Breaker).Reconfigure(nil) },
	},
	{
		kind: "shedder",
		open: func(path string) (io.Closer, error) { return OpenSharedShedderFileAt(path, nil, 0) },
		step: func(h io.Closer) error {
			_, err := h.(*Shedder).AllowAt(sharedAt, 0) // in flight, never settled
			return err
		},
		used: func(h io.Closer) (int64, error) { return h.(*Shedder).Flying(), nil },
	},
	{
		kind: "bucket",
		open: func(path string) (io.Closer, error) { return OpenSharedBucketFileAt(path, 0, sharedRoom, 0) },
		step: func(h io.Closer) error {
			if !h.(*Bucket).AllowN(sharedAt, 1) {
				return ErrRefused
			}
			return nil
		},
		used: func(h io.Closer) (int64, error) {
			left := int64(0)
			for h.(*Bucket).AllowN(sharedAt, 1) {
				left++
			}
			return sharedRoom - left, nil
		},
		reconfigure: func(h io.Closer) error { return h.(*Bucket).Reconfigure(1, 1, sharedAt) },
	},
	{
		kind: "window",
		open: func(path string) (io.Closer, error) { return OpenSharedWindowFile(path, 10, time.Hour, 0) },
		step: func(h io.Closer) error { return h.(*Window).Add(sharedAt, 3) },
		used: func(h io.Closer) (int64, error) {
			total, err := h.(*Window).Total(sharedAt, true)
			if err == nil && total.Sum != 3*total.Count {
				return 0, fmt.Errorf("window total %+v: sum not 3 a value", total)
			}
			return total.Count, err
		},
		reconfigure: func(h io.Closer) error { return h.(*Window).Reconfigure(20, time.Hour, sharedAt) },
	},
	{
		kind: "sliding",
		open: func(path string) (io.Closer, error) { return OpenSharedSlidingFile(path, sharedRoom, time.Hour) },
		step: func(h io.Closer) error {
			if !h.(*Sliding).AllowAt(sharedAt) {
				return ErrRefused
			}
			return nil
		},
		used:        func(h io.Closer) (int64, error) { return sharedRoom - h.(*Sliding).Left(sharedAt), nil },
		reconfigure: func(h io.Closer) error { return h.(*Sliding).Reconfigure(2*sharedRoom, time.Hour) },
	},
	{
		kind: "period",
		open: func(path string) (io.Closer, error) {
			return OpenSharedPeriodFile(path, sharedRoom, time.Hour, false)
		},
		step: func(h io.Closer) error {
			if !h.(*Period).TakeAt(sharedAt).Admitted() {
				return ErrRefused
			}
			return nil
		},
		used: func(h io.Closer) (int64, error) { return sharedRoom - h.(*Period).Left(sharedAt), nil },
		reconfigure: func(h io.Closer) error {
			return h.(*Period).Reconfigure(2*sharedRoom, time.Hour, false)
		},
	},
	{
		kind: "gate",
		open: func(path string) (io.Closer, error) { return OpenSharedGateFile(path, sharedRoom) },
		step: func(h io.Closer) error {
			if !h.(*Gate).Enter() { // never left
				return ErrRefused
			}
			return nil
		},
		used:        func(h io.Closer) (int64, error) { return h.(*Gate).Held(), nil },
		reconfigure: func(h io.Closer) error { return h.(*Gate).Reconfigure(2 * sharedRoom) },
	},
	{
		kind: "budget",
		open: func(path string) (io.Closer, error) {
			policy := DefaultBudgetPolicy()
			policy.Form, policy.MaxTokens, policy.TokenRatio = BudgetTokens, sharedRoom, 0.1
			return OpenSharedBudgetFile(path, &policy, 0)
		},
		step: func(h io.Closer) error {
			if !h.(*Budget).Withdraw(sharedAt) {
				return ErrRefused
			}
			return nil
		},
		// Tokens are counted in thousandths; each withdrawal spends one.
		used: func(h io.Closer) (int64, error) { return sharedRoom - h.(*Budget).Tokens(sharedAt)/1000, nil },
	},
	{
		kind: "concurrency",
		open: func(path string) (io.Closer, error) {
			policy := DefaultConcurrencyPolicy()
			policy.InitialLimit, policy.MinLimit, policy.MaxLimit = sharedRoom, 1, 2*sharedRoom
			return OpenSharedConcurrencyFile(path, &policy)
		},
		step: func(h io.Closer) error {
			_, err := h.(*Concurrency).Enter(sharedAt) // in flight, never left
			return err
		},
		used: func(h io.Closer) (int64, error) { return h.(*Concurrency).Flying(), nil },
	},
	{
		kind: "keyed",
		open: func(path string) (io.Closer, error) {
			// A token every 1,000 s: nothing refills during a test.
			limit, err := NewGCRALimit(0.001, sharedRoom)
			if err != nil {
				return nil, err
			}
			return OpenSharedKeyedFile(path, 4, limit, KeyedOverflowRefuse, 11, 12)
		},
		step: func(h io.Closer) error {
			d, err := h.(*Keyed).DecideString(sharedAt, "one key", 1)
			if err == nil && d != KeyedAllowed {
				return fmt.Errorf("keyed: %v", d)
			}
			return err
		},
		// The key's tokens left, spent one by one; a reading first.
		used: func(h io.Closer) (int64, error) {
			k := h.(*Keyed)
			if r, err := k.Read(); err != nil || r.Occupied != 1 || r.Kind != KeyedKindGCRA || r.Buckets != 4 {
				return 0, fmt.Errorf("keyed reading %+v %v", r, err)
			}
			left := int64(0)
			for k.AllowStringAt(sharedAt, "one key") {
				left++
			}
			return sharedRoom - left, nil
		},
	},
}

// steps makes n calls on h.
func steps(h io.Closer, c sharedCase, n int) error {
	for i := 0; i < n; i++ {
		if err := c.step(h); err != nil {
			return fmt.Errorf("%s step %d: %w", c.kind, i, err)
		}
	}
	return nil
}

// childSteps is how many calls the child process makes on the file.
const childSteps = 5

// TestSharedFilesAreOneHandle opens every shared type's file twice in this
// process and once in a child process (this test binary run again): the
// calls through all three land in one state. A shared handle's
// Reconfigure is refused with ErrRegionUnsupported and changes nothing
// (the keyed table, whose limit lives in the file, takes one: see
// TestSharedKeyedFile).
func TestSharedFilesAreOneHandle(t *testing.T) {
	for _, c := range sharedCases {
		t.Run(c.kind, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.kind)
			a, err := c.open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := c.open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if err := steps(a, c, 3); err != nil {
				t.Fatal(err)
			}
			if err := steps(b, c, 4); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestSharedFileChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "WEIR_GO_SHARED_FILE="+c.kind+":"+path)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			if c.reconfigure != nil {
				if err := c.reconfigure(b); !errors.Is(err, ErrRegionUnsupported) {
					t.Fatalf("a shared %s reconfigured: %v", c.kind, err)
				}
			}
			// The file's state, read through the first mapping.
			if used, err := c.used(a); err != nil || used != 3+4+childSteps {
				t.Fatalf("%s: %d marks through three mappings (%v), want %d", c.kind, used, err, 3+4+childSteps)
			}
			if r, ok := a.(interface {
				Recoveries() (uint64, uint64, error)
			}); ok {
				recovered, reset, err := r.Recoveries()
				if err != nil || recovered != 0 || reset != 0 {
					t.Fatalf("recoveries %d %d %v", recovered, reset, err)
				}
			}
		})
	}
}

// TestSharedFileChild is the child process of TestSharedFilesAreOneHandle
// (run only as a child): it attaches to the file and makes its calls.
func TestSharedFileChild(t *testing.T) {
	kind, path, ok := strings.Cut(os.Getenv("WEIR_GO_SHARED_FILE"), ":")
	if !ok {
		t.Skip("a child of TestSharedFilesAreOneHandle")
	}
	for _, c := range sharedCases {
		if c.kind != kind {
			continue
		}
		h, err := c.open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		if err := steps(h, c, childSteps); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no shared case %q", kind)
}

// weir_region_header's size (WEIR_REGION_HEADER_BYTES) and its fields'
// offsets, as weir.h lays them out.
const (
	headerBytes  = 256
	headerLayout = 8
	headerBuild  = 24
	headerCheck  = 48
)

// reseal writes the header's checksum (FNV-1a over its bytes with the
// checksum zero), so that a test changing one field meets that field's
// check and not the checksum's.
func reseal(region []byte) {
	binary.LittleEndian.PutUint64(region[headerCheck:], 0)
	h := fnv.New64a()
	h.Write(region[:headerBytes])
	binary.LittleEndian.PutUint64(region[headerCheck:], h.Sum64())
}

// TestSharedFilesRefuseOtherRegions hands each type's opener a file laid
// as another type, of another layout version or build, shorter than its
// header says, or random bytes: each answers its Status and opens nothing.
func TestSharedFilesRefuseOtherRegions(t *testing.T) {
	dir := t.TempDir()
	laid := make([][]byte, len(sharedCases))
	for i, c := range sharedCases {
		path := filepath.Join(dir, c.kind)
		h, err := c.open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
		if laid[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(i*131 + i/7)
	}
	for i, c := range sharedCases {
		other := laid[(i+1)%len(laid)]
		layout := bytes.Clone(laid[i])
		binary.LittleEndian.PutUint32(layout[headerLayout:], 2) // WEIR_REGION_LAYOUT is 1
		reseal(layout)
		build := bytes.Clone(laid[i])
		build[headerBuild] ^= 1
		reseal(build)
		damaged := bytes.Clone(laid[i])
		damaged[headerBuild] ^= 1 // not resealed
		short := laid[i][:len(laid[i])-64]
		for _, bad := range []struct {
			name  string
			bytes []byte
			want  Status
		}{
			{"another type's", other, ErrRegionKind},
			{"another layout's", layout, ErrRegionLayout},
			{"another build's", build, ErrRegionBuild},
			{"a damaged header's", damaged, ErrRegionForeign},
			{"a short", short, ErrRegionSize},
			{"random bytes'", random, ErrRegionForeign},
		} {
			path := filepath.Join(dir, c.kind+"-bad")
			if err := os.WriteFile(path, bad.bytes, 0o600); err != nil {
				t.Fatal(err)
			}
			h, err := c.open(path)
			if !errors.Is(err, bad.want) {
				if h != nil {
					h.Close()
				}
				t.Errorf("%s over %s file: %v, want %v", c.kind, bad.name, err, bad.want)
			}
			// A refusal leaves the file as it was.
			if kept, _ := os.ReadFile(path); !bytes.Equal(kept, bad.bytes) {
				t.Errorf("%s over %s file changed it", c.kind, bad.name)
			}
		}
	}
}

// A shared keyed table: an attacher takes the file's kind and shape
// whatever its own arguments; a refused first opener leaves the file
// empty for the next; the short forms read MonotonicNow; a new limit
// through one mapping is every mapping's.
func TestSharedKeyedFile(t *testing.T) {
	if !KeyedLockFree() {
		path := filepath.Join(t.TempDir(), "keyed")
		if _, err := OpenSharedKeyedFile(path, 4, keyedGCRA(t, 1, 1), KeyedOverflowRefuse, 1, 2); !errors.Is(err, ErrWordsNotShareable) {
			t.Fatalf("a shared table without 16-byte atomics: %v", err)
		}
		t.Skip("keyed tables are not shareable here")
	}
	path := filepath.Join(t.TempDir(), "keyed")
	if _, err := OpenSharedKeyedFile(path, 0, keyedGCRA(t, 1, 1), KeyedOverflowRefuse, 1, 2); !errors.Is(err, ErrKeyedBuckets) {
		t.Fatalf("0 buckets: %v", err)
	}
	if _, err := OpenSharedKeyedRateFile(path, 2, keyedRate(t, 1, 1), 5, 1, 2); !errors.Is(err, ErrKeyedOverflow) {
		t.Fatalf("an unknown policy: %v", err)
	}
	if info, err := os.Stat(path); err != nil || info.Size() != 0 {
		t.Fatalf("a refused lay left the file %v %v", info, err)
	}
	a, err := OpenSharedKeyedRateFile(path, 2, keyedRate(t, 0.001, 3), KeyedOverflowShared, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenSharedKeyedFile(path, 9, keyedGCRA(t, 1, 1), KeyedOverflowRefuse, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	want := KeyedReading{Buckets: 2, Slots: 16, Kind: KeyedKindRate, Overflow: KeyedOverflowShared}
	if r, err := b.Read(); err != nil || r != want {
		t.Fatalf("the attacher reads %+v %v, want the file's %+v", r, err, want)
	}
	// One window of 3 across both mappings, the attacher's seed unread.
	got := 0
	for range 4 {
		for _, k := range []*Keyed{a, b} {
			if k.AllowString("one key") {
				got++
			}
		}
	}
	if got != 3 {
		t.Fatalf("two mappings admitted %d, want the window's 3", got)
	}
	if wait, err := b.NextString(MonotonicNow(), "one key"); err != nil || wait <= 0 || wait == Never {
		t.Fatalf("the short forms charged at another clock: Next %v %v", wait, err)
	}
	// A new limit through one mapping is the file's: the other mapping's
	// window, read under it, admits two more.
	if err := a.ReconfigureRate(keyedRate(t, 0.001, 5)); err != nil {
		t.Fatal(err)
	}
	got = 0
	for range 3 {
		if b.AllowString("one key") {
			got++
		}
	}
	if got != 2 {
		t.Fatalf("the other mapping admitted %d under the new burst of 5, want 2", got)
	}
	if err := b.Reconfigure(keyedGCRA(t, 1, 1)); !errors.Is(err, ErrKeyedKindChange) {
		t.Fatalf("a shared table of rate words given a GCRA limit: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if !b.AllowString("another key") {
		t.Fatal("the other mapping after one closed")
	}
}
