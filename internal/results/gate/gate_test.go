package gate

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in                    string
		typ, metric, op, unit string
		limit                 float64
	}{
		{"p95<5ms", "", "p95", "<", "ms", 5},
		{" p99.9 < 50ms ", "", "p99.9", "<", "ms", 50},
		{"p(99.9)<0.05s", "", "p99.9", "<", "ms", 50},
		{"tps>=1000", "", "tps", ">=", "/s", 1000},
		{"errors<0.1%", "", "errors", "<", "%", 0.1},
		{"errors<=3", "", "errors", "<=", "", 3},
		{"lag_p99<100ms", "", "lag_p99", "<", "ms", 100},
		{"type:new_order p90<5ms", "new_order", "p90", "<", "ms", 5},
		{"fingerprint:ab12cd avg<=250us", "ab12cd", "avg", "<=", "ms", 0.25},
		{"avg>1e1", "", "avg", ">", "ms", 10},
		{"tpmc>0", "", "tpmc", ">", "/min", 0},
		{"tps>=60/min", "", "tps", ">=", "/s", 1},
		{"qps>100/s", "", "qps", ">", "/s", 100},
		{"tpmc>=10/s", "", "tpmc", ">=", "/min", 600},
		{"tpmc>=600/min", "", "tpmc", ">=", "/min", 600},
	} {
		th, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if th.Type != c.typ || th.Metric != c.metric || th.Op != c.op || th.Unit != c.unit || th.Limit != c.limit {
			t.Errorf("Parse(%q) = %+v", c.in, th)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{"p95", "no comparison"},
		{"p95=5ms", "comparison \"=\""},
		{"p95!=5ms", "comparison"},
		{"p95<<5ms", `comparison "<<"`},
		{"p95=<5ms", `comparison "=<"`},
		{"p96<5ms", "unknown metric"},
		{"p95<", "no value"},
		{"p95<fast", "not a number"},
		{"p95<5 parsecs", "unit"},
		{"p95<-1ms", "negative"},
		{"errors<120%", "above 100%"},
		{"tps>5ms", "unit"},
		{"type: p90<5ms", "type:NAME"},
		{"type:new_order lag_p99<5ms", "not a per-type figure"},
		{"p95<NaN", "not a number"},
		{"p95<Inf", "not a number"},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line with %q", c.in, err, c.want)
		}
	}
}

func testRun() *summary.Run {
	tpmc := 1234.0
	return &summary.Run{ID: 7, Workload: "tpcc", Status: summary.StatusComplete, DurationS: 10,
		Totals:     summary.Totals{Events: 990, Errors: 10},
		Throughput: summary.Throughput{TPS: 99, QPS: 1980},
		LatencyMS:  summary.Latency{Avg: 2, P50: 1.5, P90: 3, P95: 4, P99: 9, P999: 30, Max: 40},
		TpmC:       &tpmc,
		PerType: map[string]summary.Type{
			"new_order":   {Count: 450, Errors: 0, LatencyMS: summary.Latency{P90: 6}},
			"payment":     {Count: 430, LatencyMS: summary.Latency{P90: 2}},
			"New-Order":   {Count: 45, Errors: 5, LatencyMS: summary.Latency{P90: 7}},
			"Stock-Level": {Count: 10, LatencyMS: summary.Latency{P90: 1}},
		}}
}

func TestEval(t *testing.T) {
	run := testRun()
	for _, c := range []struct {
		expr  string
		pass  bool
		value float64
		note  string
	}{
		{"p95<5ms", true, 4, ""},
		{"p95<4ms", false, 4, ""},
		{"p95<=4ms", true, 4, ""},
		{"p99.9<0.02s", false, 30, ""},
		{"tps>=99", true, 99, ""},
		{"tps>99", false, 99, ""},
		{"errors<1%", false, 1, ""},
		{"errors<=1%", true, 1, ""},
		{"errors<11", true, 10, ""},
		{"tpmc>1000", true, 1234, ""},
		{"type:new_order p90<5ms", false, 6, ""},
		{"type:payment p90<5ms", true, 2, ""},
		{"type:payment tps>=43", true, 43, ""},
		{"type:delivery p90<5ms", false, 0, `no type "delivery" (it has New-Order, Stock-Level, new_order, payment)`},
		{"type:New-Order p90<7ms", false, 7, ""},
		{"type:stock_level p90<5ms", true, 1, ""},
		{"type:StockLevel errors<1%", true, 0, ""},
		{"lag_p99<100ms", false, 0, "no replay lag"},
	} {
		th, err := Parse(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		r := th.Eval(run)
		if r.Pass != c.pass || !strings.Contains(r.Note, c.note) {
			t.Errorf("%s: %+v, want pass=%v note %q", c.expr, r, c.pass, c.note)
		}
		if c.note == "" && (r.Value == nil || *r.Value != c.value) {
			t.Errorf("%s: value %v, want %g", c.expr, r.Value, c.value)
		}
		if c.note != "" && r.Value != nil {
			t.Errorf("%s: value %v for a figure the run lacks", c.expr, *r.Value)
		}
	}
	lag := summary.Latency{P99: 80}
	replay := &summary.Run{Status: summary.StatusComplete, Replay: &summary.Replay{LagMS: &lag}}
	th, _ := Parse("lag_p99<100ms")
	if r := th.Eval(replay); !r.Pass {
		t.Errorf("lag_p99 80 < 100: %+v", r)
	}
	noTypes := &summary.Run{Status: summary.StatusComplete, Totals: summary.Totals{Events: 5}}
	th, _ = Parse("type:x p90<5ms")
	if r := th.Eval(noTypes); r.Pass || !strings.Contains(r.Note, "no per-type figures") {
		t.Errorf("run without types: %+v", r)
	}
	failedRun := testRun()
	failedRun.Status = summary.StatusFailed
	th, _ = Parse("p95<5ms")
	if r := th.Eval(failedRun); r.Pass || !strings.Contains(Line(r), "the run is failed") {
		t.Errorf("failed run: %s", Line(r))
	}
	if got := Line(EvalAll([]Threshold{th}, run)[0]); got != "PASS p95<5ms: p95 = 4 ms" {
		t.Errorf("Line = %q", got)
	}
}

func TestWriteJUnit(t *testing.T) {
	run := testRun()
	ts, err := ParseAll([]string{"p95<5ms", "p95<3ms", `type:new_order p90<5ms`})
	if err != nil {
		t.Fatal(err)
	}
	run.Thresholds = EvalAll(ts, run)
	cmp := CompareSuite("dbarena compare 2 vs 1", []Judgement{{Limit: Limit{Expr: "tps:-5%"}, Verdict: CannotJudge, Detail: "single runs"}})
	var b bytes.Buffer
	if err := WriteJUnit(&b, []Suite{RunSuite(run), cmp}); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if doc.Tests != 4 || doc.Failures != 2 || doc.Skipped != 1 || len(doc.Suites) != 2 {
		t.Fatalf("counts: %+v", doc)
	}
	c := doc.Suites[0].Cases
	if c[0].Name != "p95<5ms" || c[0].Failure != nil || c[1].Failure == nil || !strings.Contains(c[1].Failure.Message, "p95 = 4 ms, not < 3 ms") {
		t.Errorf("cases: %+v", c)
	}
	if doc.Suites[1].Cases[0].Skipped == nil {
		t.Errorf("cannot judge is not skipped: %+v", doc.Suites[1])
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, []Suite{RunSuite(run), cmp}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## dbarena gates: FAIL", "4 checked, 2 failed, 1 could not be judged", "| `p95<3ms` | ❌ **fail** | p95 = 4 ms, not &lt; 3 ms |", "⚪ cannot judge"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}
