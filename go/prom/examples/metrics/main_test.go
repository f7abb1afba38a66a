package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// A scrape of /metrics holds what the handles decided.
func TestScrape(t *testing.T) {
	h, metrics, err := Setup(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Traffic(); err != nil {
		t.Fatal(err)
	}
	server := httptest.NewServer(metrics)
	defer server.Close()
	resp, err := server.Client().Get(server.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	page := string(body)
	for _, want := range []string{
		"# TYPE weir_decisions_total counter",
		`weir_decisions_total{decision="admitted",name="search",type="bucket"} 2`,
		`weir_decisions_total{decision="refused",name="search",type="bucket"} 1`,
		`weir_decisions_total{decision="error",name="search",type="bucket"} 0`,
		`weir_units_total{name="search",type="bucket"} 2`,
		`weir_decisions_total{decision="admitted",name="billing",type="breaker"} 1`,
		`weir_decisions_total{decision="refused",name="billing",type="breaker"} 0`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in:\n%s", want, page)
		}
	}
}
