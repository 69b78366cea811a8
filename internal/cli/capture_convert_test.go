package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaptureConvertOutputIsInput: `capture convert X -o X` (or -o a
// symbolic or hard link to X) is refused with exit 2 and X is left as it
// was (issue 33, item 13).
func TestCaptureConvertOutputIsInput(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "general.log")
	const text = "2024-11-22T22:50:01.000100Z\t    8 Query\tSELECT 1\n"
	if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sym, hard := filepath.Join(dir, "sym.capture"), filepath.Join(dir, "hard.capture")
	if err := os.Symlink(log, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(log, hard); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{log, sym, hard, filepath.Join(dir, ".", "general.log")} {
		r := dbarena(t, "capture", "convert", log, "--from", "mysql-general", "-o", out)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "-o "+out) || !strings.Contains(r.stderr, "same file") {
			t.Errorf("-o %s: exit %d, stderr %q; want 2 naming -o and the same file", out, r.code, r.stderr)
		}
		if b, err := os.ReadFile(log); err != nil || string(b) != text {
			t.Fatalf("-o %s: the log was changed (%v): %q", out, err, b)
		}
	}
	out := filepath.Join(dir, "ok.capture")
	dbarena(t, "capture", "convert", log, "--from", "mysql-general", "-o", out).mustSucceed(t)
}

// TestCaptureConvertCutOffLog: a log cut off mid-line converts with a
// warning naming file:line, without the cut entry.
func TestCaptureConvertCutOffLog(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "general.log")
	text := "2024-11-22T22:50:01.000100Z\t    8 Query\tSELECT 1\n2024-11-22T22:50:01.000200Z\t    8 Query\tSELECT 2\nFROM t WH"
	if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "c.capture")
	r := dbarena(t, "capture", "convert", log, "--from", "mysql-general", "-o", out).mustSucceed(t)
	if !strings.Contains(r.stderr, "warning: "+log+":3: ") || !strings.Contains(r.stderr, "1 events") {
		t.Errorf("stderr %q: want 1 event and a warning at %s:3", r.stderr, log)
	}
	b, err := os.ReadFile(out)
	if err != nil || strings.Contains(string(b), "SELECT 2") {
		t.Errorf("capture %q (%v): the cut entry is kept", b, err)
	}
}

// TestCaptureTimesOutOfRange: times that would overflow are refused with
// FILE:LINE and exit 2, in a capture file (run replay) and in a log
// (capture convert) (issue 33, item 9).
func TestCaptureTimesOutOfRange(t *testing.T) {
	dir := t.TempDir()
	capFile := filepath.Join(dir, "far.capture")
	if err := os.WriteFile(capFile, []byte(`{"schema":"dbarena.capture/v1","flavor":"mysql"}`+"\n"+
		`{"session":"1","t_us":0,"kind":"query","sql":"SELECT 1"}`+"\n"+
		`{"session":"1","t_us":9000000000000000000,"kind":"query","sql":"SELECT 1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := dbarena(t, "run", "replay", "--capture", capFile)
	if r.code != ExitUsage || !strings.Contains(r.stderr, capFile+":3: t_us 9000000000000000000 out of range") {
		t.Errorf("run replay: exit %d, stderr %q; want 2 and %s:3", r.code, r.stderr, capFile)
	}
	log := filepath.Join(dir, "general.log")
	if err := os.WriteFile(log, []byte("2024-11-22T22:50:01.000100Z\t    8 Query\tSELECT 1\n9999-11-22T22:50:01.000100Z\t    8 Query\tSELECT 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = dbarena(t, "capture", "convert", log, "--from", "mysql-general", "-o", filepath.Join(dir, "c.capture"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, log+":2: ") || !strings.Contains(r.stderr, "out of range") {
		t.Errorf("capture convert: exit %d, stderr %q; want 2 and %s:2", r.code, r.stderr, log)
	}
}
