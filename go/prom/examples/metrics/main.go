// A server that limits and guards its routes with weir and serves what
// weir decided at /metrics, in Prometheus's text format:
//
//	go run ./examples/metrics -addr 127.0.0.1:9464
//
// Every handle is registered with the collector under a type and a name;
// the collector turns its counting on. A few decisions are made at start
// so that the page has something to show.
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	weir "github.com/weir-rs/weir/go"
	"github.com/weir-rs/weir/go/prom"
)

// Handles are the server's limits: a bucket per route and a breaker per
// backend.
type Handles struct {
	Search  *weir.Bucket
	Billing *weir.Breaker
}

// Setup makes the handles, registers them and a collector over them with
// reg, and returns the /metrics handler for reg.
func Setup(reg *prometheus.Registry) (*Handles, http.Handler, error) {
	search, err := weir.NewBucketAt(2, 2, 0)
	if err != nil {
		return nil, nil, err
	}
	billing, err := weir.NewBreakerAt(nil, 0)
	if err != nil {
		return nil, nil, err
	}
	c := prom.NewCollector()
	if err := c.Add("bucket", "search", search); err != nil {
		return nil, nil, err
	}
	if err := c.Add("breaker", "billing", billing); err != nil {
		return nil, nil, err
	}
	if err := reg.Register(c); err != nil {
		return nil, nil, err
	}
	return &Handles{search, billing}, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}

// Traffic makes a few decisions at instant 0: three searches (two pass,
// one is refused) and a billing call that passes.
func (h *Handles) Traffic() error {
	for i := 0; i < 3; i++ {
		h.Search.AllowAt(0)
	}
	t, err := h.Billing.AllowAt(0, 0.5)
	if err != nil {
		return err
	}
	return t.PassAt(1000)
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9464", "where to serve /metrics")
	flag.Parse()
	h, metrics, err := Setup(prometheus.NewRegistry())
	if err != nil {
		log.Fatal(err)
	}
	if err := h.Traffic(); err != nil {
		log.Fatal(err)
	}
	http.Handle("/metrics", metrics)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
