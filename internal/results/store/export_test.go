package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// richRun is testRun with every optional part filled in.
func richRun(i int) *summary.Run {
	r := testRun(i, 4)
	ivs, samples := checkpointIntervals(0, 4)
	r.Intervals = ivs
	r.Monitor = &summary.Monitor{Note: "n", Samples: samples, Avg: map[string]float64{"a": 1}, Max: map[string]float64{"a": 2}, PerTxn: map[string]float64{"fsyncs": 0.5}}
	r.Plan = &summary.PlanRef{Name: "sweep", Cell: "threads=4", Coords: map[string]string{"threads": "4"}, Round: 2}
	r.Outages = []summary.Outage{{StartS: 1, EndS: 2.5, Recovered: true}}
	r.UptimeS = 58.5
	r.Notes = []string{"server restarted"}
	r.Figures = map[string]float64{"delivery.skipped_districts": 3}
	r.SettingsAll = map[string]string{"max_connections": "2000"}
	r.Totals.Unfinished = 2
	r.Throughput.UpTPS = 17
	r.Status = summary.StatusDegraded
	return r
}

// TestExportImport moves runs through every backend in turn and back:
// nothing is lost on the way, an aborted run stays aborted.
func TestExportImport(t *testing.T) {
	ctx := context.Background()
	src, _ := openBackend(t, "sqlite")
	var want []*summary.Run
	var ids []int64
	for _, r := range []*summary.Run{richRun(0), testRun(1, 0), {Status: summary.StatusFailed, Workload: "oltp_read_only", Error: "refused"}} {
		id := save(t, src, r)
		ids = append(ids, id)
		want = append(want, mustRun(t, src, id))
	}
	// A run killed mid-way: begun here, then its owner marked gone.
	aid, err := src.BeginRun(ctx, testRun(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	ivs, sm := checkpointIntervals(0, 3)
	if err := src.AppendIntervals(ctx, aid, ivs, sm); err != nil {
		t.Fatal(err)
	}
	if _, err := src.db.Exec("UPDATE runs SET owner_pid = ? WHERE id = ?", deadPID(t), aid); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, aid)
	want = append(want, mustRun(t, src, aid))
	if want[3].Status != summary.StatusAborted {
		t.Fatalf("setup: run %d is %s, want aborted", aid, want[3].Status)
	}

	var buf bytes.Buffer
	if err := src.Export(ctx, ids, &buf); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != len(ids)+1 {
		t.Errorf("export has %d lines, want %d", n, len(ids)+1)
	}
	for _, name := range append(backendNames[1:], "sqlite") {
		t.Run("into "+name, func(t *testing.T) {
			dst, _ := openBackend(t, name)
			save(t, dst, testRun(7, 1)) // ids differ from the source's
			res, err := dst.Import(ctx, bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatalf("Import: %v", err)
			}
			got := res.IDs
			if len(got) != len(want) {
				t.Fatalf("Import returned %d ids, want %d", len(got), len(want))
			}
			for i, id := range got {
				w := *want[i]
				w.ID = id
				sameRun(t, "imported run", mustRun(t, dst, id), &w)
			}
			// And out again, byte for byte but for the ids.
			var again bytes.Buffer
			if err := dst.Export(ctx, got, &again); err != nil {
				t.Fatal(err)
			}
			if err := dst.Export(ctx, []int64{1 << 40}, &again); !errors.Is(err, ErrNotFound) {
				t.Errorf("Export of a missing run = %v, want ErrNotFound", err)
			}
			buf = again
		})
	}
}

func TestImportBadInput(t *testing.T) {
	var good bytes.Buffer
	if err := encodeExport(&good, []*summary.Run{richRun(0), testRun(1, 1)}); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(good.String(), "\n")
	hdr, run1, run2 := lines[0], lines[1], lines[2]
	tests := []struct {
		name, in string
		line     int
		says     string
	}{
		{"empty", "", 1, "empty file"},
		{"not JSON", "hello\n", 1, "header"},
		{"wrong format", `{"format":"dbarena.export/v9","runs":1}` + "\n" + run1, 1, "header"},
		{"negative count", `{"format":"dbarena.export/v1","runs":-1}` + "\n", 1, "header"},
		{"truncated file", hdr + run1, 2, "truncated"},
		{"truncated line", hdr + run1 + run2[:len(run2)/2], 3, "invalid JSON"},
		{"extra run", strings.Replace(hdr, `"runs":2`, `"runs":1`, 1) + run1 + run2, 3, "more runs"},
		{"unknown field", hdr + run1 + strings.Replace(run2, `{"schema"`, `{"bogus":1,"schema"`, 1), 3, "unknown field"},
		{"wrong schema", hdr + run1 + strings.Replace(run2, summary.Schema, "dbarena.run/v0", 1), 3, "schema"},
		{"bad status", hdr + strings.Replace(run1, `"status":"degraded"`, `"status":"done"`, 1) + run2, 2, "status"},
		{"no workload", hdr + run1 + strings.Replace(run2, `"workload":"tpcc"`, `"workload":""`, 1), 3, "workload"},
		{"bad histogram", hdr + run1 + strings.Replace(run2, `"histogram":"`, `"histogram":"!!`, 1), 3, "histogram"},
		{"two values", hdr + run1 + strings.TrimSuffix(run2, "\n") + " {}\n", 3, "after the value"},
		{"wrong type", hdr + run1 + strings.Replace(run2, `"threads":16`, `"threads":"16"`, 1), 3, "invalid JSON"},
	}
	s, _ := openBackend(t, "sqlite")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Import(context.Background(), strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("Import succeeded: %+v", res)
			}
			msg := err.Error()
			if !errors.Is(err, ErrBadInput) || !strings.HasPrefix(msg, "line "+strconv.Itoa(tt.line)+": ") ||
				!strings.Contains(msg, tt.says) || strings.Contains(msg, "\n") {
				t.Errorf("Import = %q; want one ErrBadInput line starting 'line %d: ' saying %q", msg, tt.line, tt.says)
			}
		})
	}
	if rows, err := s.List(context.Background(), Filter{}); err != nil || len(rows) != 0 {
		t.Errorf("failed imports stored %d runs (%v)", len(rows), err)
	}
	// Blank lines and a missing final newline are fine.
	res, err := s.Import(context.Background(), strings.NewReader(hdr+"\n"+run1+"\n"+strings.TrimSuffix(run2, "\n")))
	if err != nil || len(res.IDs) != 2 {
		t.Errorf("Import with blank lines = %+v, %v", res, err)
	}
}

// FuzzDecodeExport: no input makes the import parser panic, and whatever
// it accepts survives another export and import unchanged. Seeds are in
// testdata/fuzz/FuzzDecodeExport.
func FuzzDecodeExport(f *testing.F) {
	var good bytes.Buffer
	if err := encodeExport(&good, []*summary.Run{richRun(0), testRun(1, 1)}); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	f.Add([]byte(`{"format":"dbarena.export/v1","runs":0}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		hdr, runs, err := decodeImport(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrBadInput) || !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error %q is not a line-numbered ErrBadInput", err)
			}
			return
		}
		var out bytes.Buffer
		if err := encodeExport(&out, runs, hdr.Sharded...); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		_, again, err := decodeExport(&out)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, out.Bytes())
		}
		var a, b bytes.Buffer
		if err := encodeExport(&a, runs); err != nil {
			t.Fatal(err)
		}
		if err := encodeExport(&b, again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("round trip changed the runs\n%s\n%s", a.Bytes(), b.Bytes())
		}
	})
}

// TestFuzzSeeds: the committed seeds named valid-* are accepted, the
// others refused, so the corpus covers both paths.
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecodeExport")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("no seed corpus in %s: %v", dir, err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitN(string(b), "\n", 3)
		if len(lines) < 2 || lines[0] != "go test fuzz v1" {
			t.Fatalf("%s is not a fuzz seed", e.Name())
		}
		in, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		_, _, err = decodeImport(strings.NewReader(in))
		if valid := strings.HasPrefix(e.Name(), "valid-"); valid != (err == nil) {
			t.Errorf("seed %s: decode error %v", e.Name(), err)
		}
	}
}
