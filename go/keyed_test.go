package weir

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func keyedGCRA(t *testing.T, perSecond float64, burst int64) GCRALimit {
	t.Helper()
	l, err := NewGCRALimit(perSecond, burst)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func keyedRate(t *testing.T, perSecond float64, burst int64) RateLimit {
	t.Helper()
	l, err := NewRateLimit(perSecond, burst)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func newKeyedT(t *testing.T, buckets uint64, limit GCRALimit, overflow KeyedOverflow) *Keyed {
	t.Helper()
	k, err := NewKeyed(buckets, limit, overflow, 0x5eed, 0xfeed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// The constructors check the limit, then the policy, then the buckets,
// and answer no handle with an error.
func TestKeyedConstructorErrors(t *testing.T) {
	good := keyedGCRA(t, 10, 5)
	goodRate := keyedRate(t, 10, 5)
	for _, tc := range []struct {
		name string
		make func() (*Keyed, error)
		want error
	}{
		{"gcra", func() (*Keyed, error) { return NewKeyed(4, good, KeyedOverflowRefuse, 1, 2) }, nil},
		{"rate", func() (*Keyed, error) { return NewKeyedRate(4, goodRate, KeyedOverflowShared, 1, 2) }, nil},
		{"most buckets' neighbour", func() (*Keyed, error) { return NewKeyed(KeyedMaxBuckets+1, good, KeyedOverflowAdmit, 1, 2) }, ErrKeyedBuckets},
		{"zero buckets", func() (*Keyed, error) { return NewKeyed(0, good, KeyedOverflowRefuse, 1, 2) }, ErrKeyedBuckets},
		{"unknown policy", func() (*Keyed, error) { return NewKeyed(4, good, 3, 1, 2) }, ErrKeyedOverflow},
		{"zero gcra limit", func() (*Keyed, error) { return NewKeyed(4, GCRALimit{}, KeyedOverflowRefuse, 1, 2) }, ErrGCRALimitInvalid},
		{"zero rate limit", func() (*Keyed, error) { return NewKeyedRate(4, RateLimit{}, KeyedOverflowRefuse, 1, 2) }, ErrRateLimitInvalid},
		// The order: limit, policy, buckets.
		{"limit first", func() (*Keyed, error) { return NewKeyed(0, GCRALimit{}, 9, 1, 2) }, ErrGCRALimitInvalid},
		{"policy before buckets", func() (*Keyed, error) { return NewKeyedRate(0, goodRate, 9, 1, 2) }, ErrKeyedOverflow},
	} {
		k, err := tc.make()
		if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if err == nil {
			k.Close()
		} else if k != nil {
			t.Errorf("%s: a handle with an error", tc.name)
		}
	}
}

// Decide takes n tokens all or nothing and says what decided; its errors
// change nothing.
func TestKeyedDecide(t *testing.T) {
	k := newKeyedT(t, 4, keyedGCRA(t, 1, 3), KeyedOverflowRefuse)
	key := []byte("203.0.113.9")
	at := time.Second
	for _, bad := range []struct {
		now  time.Duration
		n    int64
		want error
	}{
		{at, 0, ErrKeyedCount},
		{at, -1, ErrKeyedCount},
		{at, 4, ErrKeyedCount}, // above the burst
		{-1, 1, ErrNegative},
	} {
		d, err := k.Decide(bad.now, key, bad.n)
		if !errors.Is(err, bad.want) || d != KeyedRefused {
			t.Errorf("Decide(%v, n=%d): %v %v, want %v", bad.now, bad.n, d, err, bad.want)
		}
	}
	if r, err := k.Read(); err != nil || r.Occupied != 0 {
		t.Fatalf("errors took a slot: %+v %v", r, err)
	}
	if d, err := k.Decide(at, key, 2); err != nil || d != KeyedAllowed {
		t.Fatalf("2 of 3: %v %v", d, err)
	}
	if d, err := k.DecideString(at, string(key), 2); err != nil || d != KeyedRefused {
		t.Fatalf("2 more of 1 left: %v %v", d, err)
	}
	if !k.AllowAt(at, key) || k.AllowStringAt(at, string(key)) || k.AllowAt(-1, []byte("other")) {
		t.Fatal("the last token, then none, then a negative now")
	}
	// One token a second: the next is due a second on.
	if wait, err := k.Next(at, key); err != nil || wait != time.Second {
		t.Fatalf("Next: %v %v, want 1s", wait, err)
	}
	if wait, err := k.NextString(at+time.Second, string(key)); err != nil || wait != 0 {
		t.Fatalf("Next a second later: %v %v", wait, err)
	}
	if d, err := k.Decide(at+time.Second, key, 1); err != nil || d != KeyedAllowed {
		t.Fatalf("a second later: %v %v", d, err)
	}
	// An unknown key: a fresh word's answer.
	if wait, err := k.Next(at, []byte("never seen")); err != nil || wait != 0 {
		t.Fatalf("Next of an unknown key: %v %v", wait, err)
	}
	if wait, err := k.Next(-1, key); !errors.Is(err, ErrNegative) || wait != Never {
		t.Fatalf("Next at a negative now: %v %v", wait, err)
	}
	// The empty key is a key of its own, nil or not.
	if !k.AllowAt(at, nil) || !k.AllowAt(at, []byte{}) || !k.AllowStringAt(at, "") || k.AllowAt(at, nil) {
		t.Fatal("the empty key's burst of 3")
	}
	if d, err := k.Decide(at, []byte("e"), 3); err != nil || d != KeyedAllowed {
		t.Fatalf("a one-byte key beside the empty one: %v %v", d, err)
	}
}

func TestKeyedDecisionAndPolicyNames(t *testing.T) {
	for d, want := range map[KeyedDecision]struct {
		name                 string
		admitted, overflowed bool
	}{
		KeyedRefused:          {"refused", false, false},
		KeyedAllowed:          {"allowed", true, false},
		KeyedOverflowAdmitted: {"overflow admitted", true, true},
		KeyedOverflowRefused:  {"overflow refused", false, true},
		KeyedDecision(9):      {"KeyedDecision(9)", false, false},
	} {
		if d.String() != want.name || d.Admitted() != want.admitted || d.Overflowed() != want.overflowed {
			t.Errorf("%d: %q %v %v", d, d, d.Admitted(), d.Overflowed())
		}
	}
	for o, want := range map[KeyedOverflow]string{
		KeyedOverflowRefuse: "refuse", KeyedOverflowAdmit: "admit", KeyedOverflowShared: "shared", 7: "KeyedOverflow(7)",
	} {
		if o.String() != want {
			t.Errorf("%d: %q", o, o)
		}
	}
}

// crowd fills a one-bucket table (8 slots, every key's 16 candidates in
// it) with 8 keys whose words are active at now.
func crowd(t *testing.T, k *Keyed, now time.Duration) {
	t.Helper()
	for i := range KeyedSlots {
		if d, err := k.Decide(now, fmt.Appendf(nil, "resident %d", i), 1); err != nil || d != KeyedAllowed {
			t.Fatalf("resident %d: %v %v", i, d, err)
		}
	}
}

// A new key that finds all its candidates active overflows, and the
// policy answers; once the residents' words are at rest it takes one of
// their slots and decides on a word of its own.
func TestKeyedOverflowPolicies(t *testing.T) {
	limit := keyedGCRA(t, 1, 2) // a charged word is active for a second
	newcomer := []byte("newcomer")
	for _, tc := range []struct {
		policy KeyedOverflow
		want   []KeyedDecision
	}{
		{KeyedOverflowRefuse, []KeyedDecision{KeyedOverflowRefused, KeyedOverflowRefused, KeyedOverflowRefused}},
		{KeyedOverflowAdmit, []KeyedDecision{KeyedOverflowAdmitted, KeyedOverflowAdmitted, KeyedOverflowAdmitted}},
		// One shared word of the table's limit: its burst of 2, then no.
		{KeyedOverflowShared, []KeyedDecision{KeyedOverflowAdmitted, KeyedOverflowAdmitted, KeyedOverflowRefused}},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			k := newKeyedT(t, 1, limit, tc.policy)
			crowd(t, k, 0)
			for i, want := range tc.want {
				if d, err := k.Decide(0, newcomer, 1); err != nil || d != want {
					t.Fatalf("overflowing call %d: %v %v, want %v", i, d, err, want)
				}
			}
			if got := k.AllowAt(0, newcomer); got != (tc.policy == KeyedOverflowAdmit) {
				t.Fatalf("Allow of an overflowing key: %v", got)
			}
			r, err := k.Read()
			want := KeyedReading{Buckets: 1, Slots: 8, Occupied: 8, Overflows: 4, Kind: KeyedKindGCRA, Overflow: tc.policy}
			if err != nil || r != want {
				t.Fatalf("Read: %+v %v, want %+v", r, err, want)
			}
			// A second on, every resident's word is at rest: the newcomer
			// replaces one and has its own burst of 2.
			for i, want := range []KeyedDecision{KeyedAllowed, KeyedAllowed, KeyedRefused} {
				if d, err := k.Decide(time.Second, newcomer, 1); err != nil || d != want {
					t.Fatalf("after the residents rest, call %d: %v %v, want %v", i, d, err, want)
				}
			}
			if r, _ := k.Read(); r.Overflows != 4 || r.Occupied != 8 {
				t.Fatalf("after the replacement: %+v", r)
			}
		})
	}
}

func TestKeyedReadRateKind(t *testing.T) {
	k, err := NewKeyedRate(3, keyedRate(t, 10, 2), KeyedOverflowShared, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for i := range 5 {
		k.AllowAt(0, fmt.Appendf(nil, "k%d", i))
	}
	r, err := k.Read()
	want := KeyedReading{Buckets: 3, Slots: 24, Occupied: 5, Kind: KeyedKindRate, Overflow: KeyedOverflowShared}
	if err != nil || r != want {
		t.Fatalf("Read: %+v %v, want %+v", r, err, want)
	}
	// A window of 2 events in 200 ms; Decide takes n = 1..2.
	if d, _ := k.Decide(0, []byte("k0"), 1); d != KeyedAllowed {
		t.Fatalf("second event: %v", d)
	}
	if d, _ := k.Decide(0, []byte("k0"), 1); d != KeyedRefused {
		t.Fatalf("third event: %v", d)
	}
	if _, err := k.Decide(0, []byte("k0"), 3); !errors.Is(err, ErrKeyedCount) {
		t.Fatalf("n above the window's burst: %v", err)
	}
}

func TestKeyedClosed(t *testing.T) {
	k, err := NewKeyed(1, keyedGCRA(t, 1, 1), KeyedOverflowAdmit, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal("a second Close:", err)
	}
	if k.Allow([]byte("k")) || k.AllowString("k") || k.AllowAt(0, nil) || k.AllowStringAt(0, "") {
		t.Error("Allow after Close")
	}
	if d, err := k.Decide(0, nil, 1); d != KeyedRefused || !errors.Is(err, ErrClosed) {
		t.Errorf("Decide after Close: %v %v", d, err)
	}
	if d, err := k.DecideString(0, "", 1); d != KeyedRefused || !errors.Is(err, ErrClosed) {
		t.Errorf("DecideString after Close: %v %v", d, err)
	}
	if w, err := k.Next(0, nil); w != Never || !errors.Is(err, ErrClosed) {
		t.Errorf("Next after Close: %v %v", w, err)
	}
	if w, err := k.NextString(0, ""); w != Never || !errors.Is(err, ErrClosed) {
		t.Errorf("NextString after Close: %v %v", w, err)
	}
	if r, err := k.Read(); r != (KeyedReading{}) || !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close: %+v %v", r, err)
	}
}

// The short forms read Now (a heap table): a fresh key is allowed once.
func TestKeyedShortForms(t *testing.T) {
	k := newKeyedT(t, 2, keyedGCRA(t, 0.001, 1), KeyedOverflowRefuse)
	if !k.Allow([]byte("a")) || k.Allow([]byte("a")) || !k.AllowString("b") || k.AllowString("b") {
		t.Fatal("one token a key")
	}
}

func TestKeyedSizing(t *testing.T) {
	b, err := KeyedBucketsFor(1_000_000, 1e-9)
	if err != nil || b != 203_090 {
		t.Fatalf("KeyedBucketsFor(10^6, 1e-9): %d %v, want 203,090", b, err)
	}
	// The fewest: one bucket fewer is over the chance.
	if c := KeyedOverflowChance(1e6, float64(KeyedSlots*b)); !(c <= 1e-9) {
		t.Fatalf("chance at %d buckets: %g", b, c)
	}
	if c := KeyedOverflowChance(1e6, float64(KeyedSlots*(b-1))); !(c > 1e-9) {
		t.Fatalf("chance at %d buckets: %g", b-1, c)
	}
	for _, chance := range []float64{0, -1, math.NaN(), 1.5, math.Inf(1)} {
		if b, err := KeyedBucketsFor(1000, chance); !errors.Is(err, ErrKeyedSizing) || b != 0 {
			t.Errorf("chance %g: %d %v", chance, b, err)
		}
	}
	if _, err := KeyedBucketsFor(math.MaxUint64, 1e-9); !errors.Is(err, ErrKeyedSizing) {
		t.Errorf("2^64 keys: %v", err)
	}
	if b, err := KeyedBucketsFor(0, 1); err != nil || b < 1 {
		t.Errorf("no keys: %d %v", b, err)
	}
	// The header's figures: half full, 80 % full.
	for _, f := range []struct{ fill, want float64 }{{0.5, 2.8e-20}, {0.8, 0.0077}} {
		got := KeyedOverflowChance(f.fill*8e6, 8e6)
		if math.Abs(got/f.want-1) > 0.05 {
			t.Errorf("overflow chance at %g full: %g, want about %g", f.fill, got, f.want)
		}
	}
	if KeyedOverflowChance(3, 7) != 1 {
		t.Error("fewer than 8 slots: 1")
	}
	for _, bad := range [][2]float64{{math.NaN(), 8}, {8, math.NaN()}, {-1, 8}, {8, -1}, {math.Inf(1), 8}, {8, math.Inf(1)}} {
		if c := KeyedOverflowChance(bad[0], bad[1]); !math.IsNaN(c) {
			t.Errorf("KeyedOverflowChance(%g, %g) = %g, want NaN", bad[0], bad[1], c)
		}
	}
	if arch := runtime.GOARCH; (arch == "amd64" || arch == "arm64") && !KeyedLockFree() {
		t.Errorf("KeyedLockFree false on %s", arch)
	}
}

// keyedTrace drives a table and a map of lone words, one a key, with the
// same calls: a skewed draw of keys (a few hot ones refused often, many
// cold ones that go idle and are forgotten), times that move forward by
// up to 4 µs a call, n drawn up to the burst where the word takes it.
// Every decision and every Next must be the lone word's, and nothing may
// overflow: the table is sized for the keys that can be active at once.
func keyedTrace(t *testing.T, calls int, gcra bool, seed int64) {
	const burst = 4
	r := rand.New(rand.NewSource(seed))
	zipf := rand.NewZipf(r, 1.2, 1, 60_000)
	// Rate 2000/s: a word is at rest at most 2 ms after its last charge,
	// in which about 1,000 calls land; size for 2,000 active keys.
	buckets, err := KeyedBucketsFor(2000, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	var k *Keyed
	var glimit GCRALimit
	var rlimit RateLimit
	if gcra {
		glimit = keyedGCRA(t, 2000, burst)
		k, err = NewKeyed(buckets, glimit, KeyedOverflowRefuse, uint64(seed), 7)
	} else {
		rlimit = keyedRate(t, 2000, burst)
		k, err = NewKeyedRate(buckets, rlimit, KeyedOverflowRefuse, uint64(seed), 7)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	gwords := map[uint64]*GCRAWord{}
	rwords := map[uint64]*RateWord{}
	now := time.Duration(r.Int63n(int64(time.Second)))
	admits, refusals := 0, 0
	for i := range calls {
		now += time.Duration(r.Int63n(4001))
		id := zipf.Uint64()
		key := fmt.Appendf(nil, "client-%d", id)
		n := int64(1)
		var lone bool
		var loneNext time.Duration
		if gcra {
			w := gwords[id]
			if w == nil {
				w = new(GCRAWord)
				gwords[id] = w
			}
			loneNext = w.NextAt(glimit, now)
			n = 1 + r.Int63n(burst)
			lone = w.AllowNAt(glimit, now, n)
		} else {
			w := rwords[id]
			if w == nil {
				w = new(RateWord)
				rwords[id] = w
			}
			loneNext = w.NextAt(rlimit, now)
			lone = w.AllowAt(rlimit, now)
		}
		if i%8 == 0 {
			if wait, err := k.Next(now, key); err != nil || wait != loneNext {
				t.Fatalf("call %d, key %d at %v: Next %v %v, the lone word's %v", i, id, now, wait, err, loneNext)
			}
		}
		d, err := k.Decide(now, key, n)
		if err != nil || d.Overflowed() || d.Admitted() != lone {
			t.Fatalf("call %d, key %d at %v, n=%d: %v %v, the lone word admits: %v", i, id, now, n, d, err, lone)
		}
		if lone {
			admits++
		} else {
			refusals++
		}
	}
	r2, err := k.Read()
	if err != nil || r2.Overflows != 0 {
		t.Fatalf("%+v %v", r2, err)
	}
	distinct := max(len(gwords), len(rwords))
	if refusals == 0 || admits == 0 || uint64(distinct) <= r2.Slots {
		t.Fatalf("a weak trace: %d admits, %d refusals, %d keys in %d slots", admits, refusals, distinct, r2.Slots)
	}
	t.Logf("%d calls: %d admits, %d refusals, %d keys through %d slots, all a lone word's", calls, admits, refusals, distinct, r2.Slots)
}

// A key's admits are a lone word's, call for call, while keys are
// forgotten and retaken (more keys pass through than the table has
// slots), for both kinds of word: 60,000 calls a kind (about a second
// under -race), four seeds of 500,000 with WEIR_LONG=1.
func TestKeyedIsExactAgainstLoneWords(t *testing.T) {
	calls, seeds := 60_000, int64(1)
	if os.Getenv("WEIR_LONG") == "1" {
		calls, seeds = 500_000, 4
	}
	for _, gcra := range []bool{true, false} {
		name := "rate"
		if gcra {
			name = "gcra"
		}
		t.Run(name, func(t *testing.T) {
			for seed := int64(1); seed <= seeds; seed++ {
				keyedTrace(t, calls, gcra, seed)
			}
		})
	}
}

// Goroutines on one table at one instant: each key admits exactly its
// burst across all of them (run under -race by the go stage), while
// others read the table.
func TestKeyedGoroutines(t *testing.T) {
	const burst, keys, workers = 10, 64, 8
	k := newKeyedT(t, 64, keyedGCRA(t, 1, burst), KeyedOverflowRefuse)
	var admitted [keys]atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 3 * burst {
				for i := range keys {
					key := (i + w*7 + round) % keys
					if k.AllowStringAt(time.Second, fmt.Sprintf("key %d", key)) {
						admitted[key].Add(1)
					}
				}
				if round%10 == 0 {
					if _, err := k.Read(); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	for i := range admitted {
		if got := admitted[i].Load(); got != burst {
			t.Errorf("key %d: %d admits across %d goroutines, want the burst %d", i, got, workers, burst)
		}
	}
	if r, _ := k.Read(); r.Overflows != 0 || r.Occupied != keys {
		t.Errorf("%+v", r)
	}
}
