package bench

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A side of a pair: setup makes its state and returns a function that runs
// n decisions on it, carrying its state (the clock, the word) from call to
// call. The same side may be run many times; it never allocates outside
// what it measures.
type side struct {
	name  string
	setup func() func(n int)
}

// A pair: weir's decision and the Go one it is measured against.
type pair struct {
	row   string // the decision, e.g. "rate word allow"
	kind  string // "peer", "reference", or "for scale" (no target)
	weir  side
	other side
}

// pairs is every row of the table, in order (handles_test.go and words_test.go fill it).
var pairs []pair

// allocating is the allocations a decision must reach to count as
// allocating: the counts are the process's, and go-zero's own goroutines
// (its CPU sampler) allocate now and then while anything runs.
const allocating = 0.5

// result is one side's timing in one round.
type result struct {
	ns, allocs, bytes float64
}

// measure runs f until it has run for at least d, and answers the time,
// allocations and bytes per decision of its last batch.
func measure(f func(n int), d time.Duration) result {
	n := 64
	for {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		f(n)
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		if took >= d || n >= 1<<30 {
			return result{
				ns:     float64(took.Nanoseconds()) / float64(n),
				allocs: float64(after.Mallocs-before.Mallocs) / float64(n),
				bytes:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n),
			}
		}
		// Aim a little past d from what this batch took.
		next := int(float64(n) * 1.2 * float64(d) / float64(max(took, time.Microsecond)))
		n = min(max(next, 2*n), 100*n)
	}
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func envInt(name string, fallback int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return fallback
}

// row is a pair's medians over the rounds.
type row struct {
	pair
	weir, other result
	ratio       float64 // median of the rounds' weir ÷ other
	lo, hi      float64 // the rounds' smallest and largest ratio
}

// runTable runs every pair for `rounds` interleaved rounds: in each round
// the two sides of a pair run back to back, in alternating order, so that
// drift in the machine's speed falls on both.
func runTable(rounds int, d time.Duration) []row {
	rows := make([]row, len(pairs))
	for i, p := range pairs {
		weir, other := p.weir.setup(), p.other.setup()
		var ws, os []result
		var ratios []float64
		for r := 0; r < rounds; r++ {
			var w, o result
			if r%2 == 0 {
				w, o = measure(weir, d), measure(other, d)
			} else {
				o, w = measure(other, d), measure(weir, d)
			}
			ws, os = append(ws, w), append(os, o)
			ratios = append(ratios, w.ns/o.ns)
		}
		pick := func(rs []result, f func(result) float64) float64 {
			xs := make([]float64, len(rs))
			for j, r := range rs {
				xs[j] = f(r)
			}
			return median(xs)
		}
		meds := func(rs []result) result {
			return result{
				ns:     pick(rs, func(r result) float64 { return r.ns }),
				allocs: pick(rs, func(r result) float64 { return r.allocs }),
				bytes:  pick(rs, func(r result) float64 { return r.bytes }),
			}
		}
		sorted := append([]float64(nil), ratios...)
		sort.Float64s(sorted)
		rows[i] = row{pair: p, weir: meds(ws), other: meds(os), ratio: median(ratios),
			lo: sorted[0], hi: sorted[len(sorted)-1]}
	}
	return rows
}

// markdown is the table BENCHMARKS.md shows.
func markdown(rows []row, instr map[string]float64) string {
	var b strings.Builder
	b.WriteString("| weir decision | weir | ns | allocs (B) | instr | measured against | ns | allocs (B) | instr | weir ÷ it (rounds' range) | target ≤ 1.0× |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---:|---:|---:|---:|:---:|\n")
	cell := func(key string) string {
		if v, ok := instr[key]; ok {
			return fmt.Sprintf("%.0f", v)
		}
		return "–"
	}
	for _, r := range rows {
		ok := "yes"
		switch {
		case r.kind == "for scale":
			ok = "–"
		case r.ratio > 1.0 || r.weir.allocs >= allocating:
			ok = "**no**"
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f | %.0f (%.0f) | %s | %s: %s | %.1f | %.0f (%.0f) | %s | %.2f× (%.2f–%.2f) | %s |\n",
			r.row, r.pair.weir.name, r.weir.ns, r.weir.allocs, r.weir.bytes, cell(r.row+"/weir"),
			r.kind, r.pair.other.name, r.other.ns, r.other.allocs, r.other.bytes, cell(r.row+"/other"),
			r.ratio, r.lo, r.hi, ok)
	}
	return b.String()
}

// BenchmarkTable is the one run the table comes from: every pair,
// interleaved, WEIR_BENCH_ROUNDS rounds (9) of WEIR_BENCH_MS ms (30) a
// side. Run it once (-benchtime=1x); WEIR_BENCH_TABLE names a file to write
// the markdown to, and WEIR_BENCH_INSTR one of instruction counts to put
// in it (lines "row/side count", from run.sh's cachegrind pass).
func BenchmarkTable(b *testing.B) {
	rounds := envInt("WEIR_BENCH_ROUNDS", 9)
	d := time.Duration(envInt("WEIR_BENCH_MS", 30)) * time.Millisecond
	var rows []row
	for i := 0; i < b.N; i++ {
		rows = runTable(rounds, d)
	}
	instr := map[string]float64{}
	if path := os.Getenv("WEIR_BENCH_INSTR"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if at := strings.LastIndexByte(line, ' '); at > 0 {
				if v, err := strconv.ParseFloat(line[at+1:], 64); err == nil {
					instr[line[:at]] = v
				}
			}
		}
	}
	table := markdown(rows, instr)
	b.Logf("\n%s", table)
	if path := os.Getenv("WEIR_BENCH_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, r := range rows {
		if r.weir.allocs >= allocating {
			b.Errorf("%s: weir allocates %.2f a decision", r.row, r.weir.allocs)
		}
	}
}

// TestMain also runs one side alone, for cachegrind: WEIR_BENCH_ONE names
// it ("row/weir" or "row/other") and WEIR_BENCH_N how many decisions; run.sh
// runs two counts and takes the difference, so that setup and the
// runtime's start cancel out.
func TestMain(m *testing.M) {
	if one := os.Getenv("WEIR_BENCH_ONE"); one != "" {
		n := envInt("WEIR_BENCH_N", 100000)
		for _, p := range pairs {
			if one == p.row+"/weir" {
				p.weir.setup()(n)
				os.Exit(0)
			}
			if one == p.row+"/other" {
				p.other.setup()(n)
				os.Exit(0)
			}
		}
		fmt.Fprintf(os.Stderr, "no side %q\n", one)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// TestSidesRunAndDoNotAllocate runs every side briefly (the CI smoke's
// check that the table can be made) and checks weir's allocate nothing.
func TestSidesRunAndDoNotAllocate(t *testing.T) {
	for _, p := range pairs {
		f := p.weir.setup()
		f(1000)
		if a := testing.AllocsPerRun(100, func() { f(100) }); a > 0 {
			t.Errorf("%s: weir's side allocates %.1f per 100 decisions", p.row, a)
		}
		p.other.setup()(1000)
	}
}

// TestListSides prints the sides' names, for run.sh's cachegrind pass.
func TestListSides(t *testing.T) {
	if os.Getenv("WEIR_BENCH_LIST") == "" {
		t.Skip("WEIR_BENCH_LIST unset")
	}
	for _, p := range pairs {
		fmt.Printf("SIDE %s/weir\nSIDE %s/other\n", p.row, p.row)
	}
}
