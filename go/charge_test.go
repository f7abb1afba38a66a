package weir

import (
	"bytes"
	"errors"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// An organisation, a team (a rate word) and a user: a refusal by the user
// spends neither of the others, through C and in pure Go alike.
func TestChargeRefusedByTheUserSpendsNothingElse(t *testing.T) {
	org, _ := NewGCRALimit(10, 10)
	team, _ := NewRateLimit(5, 5)
	user, _ := NewGCRALimit(2, 2)
	for _, charge := range []func(time.Duration, ...ChargeItem) (ChargeResult, error){ChargeAll, chargeCV, ChargeWords} {
		var o, u GCRAWord
		var tw RateWord
		now := time.Second
		items := []ChargeItem{ChargeGCRA(&o, org, 1), ChargeRate(&tw, team, 1), ChargeGCRA(&u, user, 1)}
		for i := 0; i < 2; i++ {
			if r, err := charge(now, items...); err != nil || !r.Admitted || r.Index != 3 {
				t.Fatalf("call %d: %+v, %v", i, r, err)
			}
		}
		before := [2]uint64{o.Word(), tw.Word()}
		r, err := charge(now, items...)
		if err != nil || r.Admitted || r.Index != 2 || r.Wait != 500*time.Millisecond || r.Kept != 0 {
			t.Fatalf("the user's third: %+v, %v", r, err)
		}
		if o.Word() != before[0] || tw.Word() != before[1] {
			t.Fatalf("the refusal spent the organisation or the team")
		}
	}
}

// Every kind through ChargeAll: a bucket, a C bloom, a region; errors name
// the item and charge nothing.
func TestChargeAllEveryKindAndItsErrors(t *testing.T) {
	limit, _ := NewGCRALimit(1, 4)
	var word GCRAWord
	b, err := NewBucketAt(1, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	keyLimit, _ := NewRateLimit(1, 2)
	cb, err := NewCBloom(8, 2, keyLimit, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	mem := alignedBytes(BloomFootprint(6))
	region, err := LayGCRABloom(mem, 6, 1, limit, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	items := []ChargeItem{ChargeGCRA(&word, limit, 1), ChargeBucket(b, 1.5), ChargeCBloomString(cb, "alice", 1),
		ChargeBloomRegion(region, []byte("team-a"), 2)}
	for i := 0; i < 2; i++ {
		if r, err := ChargeAll(0, items...); err != nil || !r.Admitted {
			t.Fatalf("call %d: %+v, %v", i, r, err)
		}
	}
	r, err := ChargeAll(0, items...)
	if err != nil || r.Admitted || r.Index != 1 || r.Wait != b.Delay(0, 1.5) {
		t.Fatalf("the bucket's third: %+v, %v", r, err)
	}
	if word.RoomAt(limit, 0) != 2 {
		t.Fatalf("the refusal charged the word: room %d", word.RoomAt(limit, 0))
	}
	// Errors: each names its item and charges nothing.
	var other GCRAWord
	bad := []struct {
		item ChargeItem
		want error
	}{
		{ChargeItem{}, ErrUnknownKind},
		{ChargeGCRA(&word, limit, 0), ErrChargeCost},
		{ChargeGCRA(&word, GCRALimit{}, 1), ErrGCRALimitInvalid},
		{ChargeGCRA(nil, limit, 1), ErrNull},
		{ChargeBucket(nil, 1), ErrClosed},
	}
	for _, c := range bad {
		for _, inGo := range []bool{false, true} {
			charge, want := chargeCV, c.want
			if inGo {
				charge = ChargeWords
				if c.item.kind == chargeBucket {
					want = ErrUnknownKind // ChargeWords knows words only
				}
			}
			r, err := charge(0, ChargeGCRA(&other, limit, 1), c.item)
			if !errors.Is(err, want) || r.Index != 1 || r.Admitted {
				t.Errorf("%+v (Go %v): %+v, %v (want %v)", c.item, inGo, r, err, want)
			}
			if other.Word() != 0 {
				t.Fatalf("an error charged the item before it")
			}
		}
	}
	many := make([]ChargeItem, ChargeMaxItems+1)
	for i := range many {
		many[i] = ChargeGCRA(&other, limit, 1)
	}
	if _, err := chargeCV(0, many...); !errors.Is(err, ErrChargeTooMany) {
		t.Fatalf("too many: %v", err)
	}
	if _, err := ChargeWords(0, many...); !errors.Is(err, ErrChargeTooMany) {
		t.Fatalf("too many in Go: %v", err)
	}
}

// chargeCV is ChargeAll through C whatever the items (ChargeAll decides
// words alone in Go).
func chargeCV(now time.Duration, items ...ChargeItem) (ChargeResult, error) {
	return chargeC(now, items)
}

// alignedBytes is n bytes at a 64-byte aligned address (a region's).
func alignedBytes(n int) []byte {
	buf := make([]byte, n+64)
	off := 0
	for (uintptr(unsafe.Pointer(unsafe.SliceData(buf)))+uintptr(off))%64 != 0 {
		off++
	}
	return buf[off : off+n]
}

// ChargeWords and ChargeAll answer alike and write alike over random
// hierarchies of words, costs (a word named twice, costs past a burst) and
// instants (forwards, backwards, many at one).
func TestChargeWordsAgreesWithC(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	for round := 0; round < 300; round++ {
		const words = 4
		var gcras [2]GCRALimit
		var rates [2]RateLimit
		for i := range gcras {
			gcras[i], _ = NewGCRALimit([]float64{1, 3, 10, 0.5}[rng.Intn(4)], 1+rng.Int63n(4))
			rates[i], _ = NewRateLimit([]float64{1, 3, 10, 0.5}[rng.Intn(4)], 1+rng.Int63n(4))
		}
		var goGcra, cGcra [2]GCRAWord
		var goRate, cRate [2]RateWord
		now := time.Duration(rng.Int63n(int64(10 * time.Second)))
		for call := 0; call < 60; call++ {
			switch rng.Intn(6) {
			case 0:
			case 1:
				now -= time.Duration(rng.Int63n(int64(time.Second)))
			default:
				now += time.Duration(rng.Int63n(int64(time.Second / 2)))
			}
			if rng.Intn(40) == 0 {
				now = -1
			}
			n := rng.Intn(5)
			var goItems, cItems []ChargeItem
			for i := 0; i < n; i++ {
				w, cost := rng.Intn(words), int64(1+rng.Intn(2))
				if rng.Intn(10) == 0 {
					cost = 5
				}
				if w < 2 {
					goItems = append(goItems, ChargeGCRA(&goGcra[w], gcras[w], cost))
					cItems = append(cItems, ChargeGCRA(&cGcra[w], gcras[w], cost))
				} else {
					goItems = append(goItems, ChargeRate(&goRate[w-2], rates[w-2], cost))
					cItems = append(cItems, ChargeRate(&cRate[w-2], rates[w-2], cost))
				}
			}
			g, gerr := ChargeWords(now, goItems...)
			c, cerr := chargeCV(now, cItems...)
			if g != c || !errors.Is(gerr, cerr) && gerr != cerr {
				t.Fatalf("round %d call %d at %d: Go %+v %v, C %+v %v", round, call, now, g, gerr, c, cerr)
			}
			for i := range goGcra {
				if goGcra[i].Word() != cGcra[i].Word() || goRate[i].Word() != cRate[i].Word() {
					t.Fatalf("round %d call %d: the words differ", round, call)
				}
			}
		}
	}
}

// Goroutines racing on [organisation, team, user] hierarchies at one
// instant, in pure Go and through C on the same words: no word admits
// more than it holds, and every unit spent is an admitted call's or a kept
// charge.
func TestChargeRacingGoroutinesNeverPassABound(t *testing.T) {
	orgLimit, _ := NewGCRALimit(1, 5)
	teamLimit, _ := NewRateLimit(1, 3)
	userLimit, _ := NewGCRALimit(1, 2)
	for round := 0; round < 50; round++ {
		var org GCRAWord
		var teams [2]RateWord
		var users [4]GCRAWord
		var admitted [7]atomic.Int64
		var kept atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < 12; i++ {
					u := (g + i) % 4
					items := []ChargeItem{ChargeGCRA(&org, orgLimit, 1), ChargeRate(&teams[u/2], teamLimit, 1),
						ChargeGCRA(&users[u], userLimit, 1)}
					charge := ChargeWords
					if (g+i)%2 == 0 {
						charge = chargeCV
					}
					r, err := charge(time.Second, items...)
					if err != nil {
						t.Error(err)
						return
					}
					if r.Admitted {
						for _, w := range []int{0, 1 + u/2, 3 + u} {
							admitted[w].Add(1)
						}
					}
					kept.Add(int64(r.Kept))
				}
			}(g)
		}
		wg.Wait()
		spent := []int64{5 - org.RoomAt(orgLimit, time.Second)}
		for i := range teams {
			copy := teams[i].Word()
			var w RateWord
			w.state.Store(copy)
			left := int64(0)
			for left < 9 && w.AllowAt(teamLimit, time.Second) {
				left++
			}
			spent = append(spent, 3-left)
		}
		for i := range users {
			spent = append(spent, 2-users[i].RoomAt(userLimit, time.Second))
		}
		bursts := []int64{5, 3, 3, 2, 2, 2, 2}
		var extra int64
		for w := range bursts {
			got := admitted[w].Load()
			if got > bursts[w] || spent[w] < got {
				t.Fatalf("round %d word %d: %d admitted, %d spent, burst %d", round, w, got, spent[w], bursts[w])
			}
			extra += spent[w] - got
		}
		if extra != kept.Load() {
			t.Fatalf("round %d: %d units spent beyond the admitted calls, %d kept", round, extra, kept.Load())
		}
	}
}

// A region judged by a new limit keeps its words: a key that spent its
// burst under the header's limit (10/s, burst 5) owes 0.5 s, which the new
// one (2/s, burst 1) reads as refused for 0.5 s; a limit of another tick
// is refused and charges nothing.
func TestChargeBloomRegionByANewLimit(t *testing.T) {
	old, _ := NewGCRALimit(10, 5)
	next, _ := NewGCRALimit(2, 1)
	fine, _ := NewGCRALimit(10_000_000, 1)
	mem := alignedBytes(BloomFootprint(6))
	region, err := LayGCRABloom(mem, 6, 1, old, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("k")
	for i := 0; i < 5; i++ {
		if r, err := ChargeAll(0, ChargeBloomRegion(region, key, 1)); err != nil || !r.Admitted {
			t.Fatalf("take %d: %+v, %v", i, r, err)
		}
	}
	r, err := ChargeAll(0, ChargeBloomRegionGCRA(region, key, next, 1))
	if err != nil || r.Admitted || r.Wait != 500*time.Millisecond {
		t.Fatalf("under the new limit: %+v, %v (want refused for 0.5 s)", r, err)
	}
	before := append([]byte(nil), mem...)
	if r, err := ChargeAll(0, ChargeBloomRegionGCRA(region, []byte("other"), fine, 1)); !errors.Is(err, ErrGCRALimitInvalid) || r.Admitted {
		t.Fatalf("another tick: %+v, %v", r, err)
	}
	if !bytes.Equal(before, mem) {
		t.Fatal("the refused limit charged")
	}
	if r, err := ChargeAll(500*time.Millisecond, ChargeBloomRegionGCRA(region, key, next, 1)); err != nil || !r.Admitted {
		t.Fatalf("once the debt has run down: %+v, %v", r, err)
	}
	rateLimit, _ := NewRateLimit(1, 2)
	if r, err := ChargeAll(time.Second, ChargeBloomRegionRate(region, key, rateLimit, 1)); !errors.Is(err, ErrRateLimitInvalid) || r.Index != 0 {
		t.Fatalf("a rate limit on GCRA words: %+v, %v", r, err)
	}
}
