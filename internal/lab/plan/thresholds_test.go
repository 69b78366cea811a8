package plan

import (
	"strings"
	"testing"
)

func TestParseThresholds(t *testing.T) {
	p, errs := Parse("p.yaml", []byte(`name: g
servers: [{flavor: mariadb}]
workloads:
  - name: tpcc
    thresholds:
      - p95<5ms
      - "type:new_order p90<5ms"
  - name: replay
    thresholds: lag_p99<100ms
  - oltp_read_only
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	w := p.Workloads
	if len(w[0].Thresholds) != 2 || w[0].Thresholds[1].Value != "type:new_order p90<5ms" || w[0].Thresholds[1].Line != 7 ||
		len(w[1].Thresholds) != 1 || w[1].Thresholds[0].Line != 9 || len(w[2].Thresholds) != 0 {
		t.Fatalf("thresholds %+v", w)
	}
	for _, c := range p.Cells() {
		if want := map[string]int{"tpcc": 2, "replay": 1, "oltp_read_only": 0}[c.Workload]; len(c.Thresholds) != want {
			t.Errorf("cell %s: %d thresholds, want %d", c.ID, len(c.Thresholds), want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"    thresholds:\n      - p95<<5ms\n", `p.yaml:6: thresholds: "p95<<5ms": comparison "<<"`},
		{"    thresholds: [p95<5ms, tpz>1]\n", `p.yaml:5: thresholds: "tpz>1": unknown metric "tpz"`},
		{"    thresholds: {p95: 5ms}\n", `p.yaml:5: thresholds: want a list`},
		{"    thresholds:\n      - [p95<5ms]\n", `p.yaml:6: want a single value`},
	} {
		_, errs := Parse("p.yaml", []byte("name: g\nservers: [{flavor: mariadb}]\nworkloads:\n  - name: oltp_read_only\n"+c.text))
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, errs, c.want)
		}
	}
}
