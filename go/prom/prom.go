// Package prom exports what weir's handles decided to Prometheus: a
// [prometheus.Collector] over any handle that counts (every handle type of
// github.com/weir-rs/weir/go has ReadCounts once StartCounting has turned
// its counting on).
//
// It is a module of its own so that the weir package itself depends on
// nothing: a program that does not use Prometheus does not get
// client_golang.
//
// Each handle is registered under a type (bucket, breaker, ...) and a name
// (the route, client class or backend it guards), and is exported as
//
//	weir_decisions_total{type, name, decision="admitted"|"refused"|"error"}
//	weir_units_total{type, name}
//
// counters, read when Prometheus scrapes. The queries an operator puts on
// a dashboard (docs/go.md has them): the refusal ratio per limit,
//
//	sum by (type, name) (rate(weir_decisions_total{decision="refused"}[5m]))
//	  / sum by (type, name) (rate(weir_decisions_total{decision!="error"}[5m]))
//
// and the breaker's refusal ratio per backend, the same with
// type="breaker".
package prom

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	weir "github.com/weir-rs/weir/go"
)

// Counter is a weir handle that counts: *weir.Bucket, *weir.Window,
// *weir.Sliding, *weir.Period, *weir.Gate, *weir.Budget,
// *weir.Concurrency, *weir.Breaker, *weir.Shedder, *weir.Pool[T],
// *weir.CBloom, *weir.Lease and *weir.Keyed all are, once StartCounting
// has turned counting on.
type Counter interface {
	ReadCounts() (weir.Counts, error)
}

type key struct{ kind, name string }

// Collector is a prometheus.Collector over weir handles. Safe for many
// goroutines; register it once with a prometheus.Registerer.
type Collector struct {
	mu       sync.Mutex
	handles  map[key]Counter
	decision *prometheus.Desc
	units    *prometheus.Desc
}

// NewCollector makes a collector with no handles.
func NewCollector() *Collector {
	return &Collector{
		handles: map[key]Counter{},
		decision: prometheus.NewDesc("weir_decisions_total",
			"What a weir handle decided since counting began: admitted, refused for want of room, or an error (misuse).",
			[]string{"type", "name", "decision"}, nil),
		units: prometheus.NewDesc("weir_units_total",
			"The units the admitted calls took (a bucket's tokens, a window's added values; the admitted calls where each is one).",
			[]string{"type", "name"}, nil),
	}
}

// Add exports h as type kind ("bucket", "breaker", ...) and name. It turns
// h's counting on if it is not yet (a second StartCounting changes
// nothing), so the counts start at Add when they were not on before.
// Adding the same kind and name again replaces the handle.
func (c *Collector) Add(kind, name string, h Counter) error {
	if s, ok := h.(interface{ StartCounting() error }); ok {
		if err := s.StartCounting(); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handles[key{kind, name}] = h
	return nil
}

// Remove stops exporting the handle added as kind and name (before
// closing it).
func (c *Collector) Remove(kind, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.handles, key{kind, name})
}

// Describe sends the two metrics' descriptions.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.decision
	ch <- c.units
}

// Collect reads every handle's counts, in order of type and name. A
// handle whose reading fails (closed, or counting off) is left out of this
// scrape.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	keys := make([]key, 0, len(c.handles))
	for k := range c.handles {
		keys = append(keys, k)
	}
	handles := make([]Counter, len(keys))
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].kind != keys[j].kind {
			return keys[i].kind < keys[j].kind
		}
		return keys[i].name < keys[j].name
	})
	for i, k := range keys {
		handles[i] = c.handles[k]
	}
	c.mu.Unlock()
	for i, h := range handles {
		counts, err := h.ReadCounts()
		if err != nil {
			continue
		}
		k := keys[i]
		for _, d := range []struct {
			what string
			n    uint64
		}{{"admitted", counts.Admitted}, {"refused", counts.Refused}, {"error", counts.Errors}} {
			ch <- prometheus.MustNewConstMetric(c.decision, prometheus.CounterValue, float64(d.n), k.kind, k.name, d.what)
		}
		ch <- prometheus.MustNewConstMetric(c.units, prometheus.CounterValue, counts.Units, k.kind, k.name)
	}
}
