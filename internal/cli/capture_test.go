package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCaptureConvert(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "general.log")
	os.WriteFile(log, []byte("garbage\n2024-11-22T22:50:01.000100Z\t    8 Connect\tapp@localhost on shop using Socket\n"+
		"2024-11-22T22:50:01.000200Z\t    8 Query\tCREATE USER x IDENTIFIED BY 'hunter2'\n"+
		"2024-11-22T22:50:01.000300Z\t    8 Query\tSELECT 1\n"), 0o644)
	out := filepath.Join(dir, "c.jsonl")
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		a := NewApp(&stdout, &stderr, append([]string{"dbarena"}, args...), func(string) string { return "" }, nil)
		code := a.Main(t.Context())
		return code, stderr.String()
	}
	if code, msg := run("capture", "convert", log, "--from", "mysql-general", "-o", out); code != ExitUsage || !strings.Contains(msg, "general.log:1: ") {
		t.Fatalf("malformed line: exit %d %s", code, msg)
	}
	code, msg := run("capture", "convert", log, "--from", "mysql-general", "-o", out, "--skip-bad", "--read-only")
	if code != 0 || !strings.Contains(msg, "skipped 1 malformed lines") || !strings.Contains(msg, "masked the passwords of 1") {
		t.Fatalf("exit %d %s", code, msg)
	}
	b, _ := os.ReadFile(out)
	if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "CREATE USER") || !strings.Contains(string(b), `"skipped":1`) ||
		!strings.Contains(string(b), `"sql":"SELECT 1"`) {
		t.Fatalf("capture:\n%s", b)
	}
	if code, msg := run("capture", "convert", log, "--from", "nope"); code != ExitUsage || !strings.Contains(msg, "--from") {
		t.Fatalf("bad --from: %d %s", code, msg)
	}
}

func TestCaptureLiveUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"capture", "--sandbox", "x"}, "--time is required"},
		{[]string{"capture", "--time", "5s"}, "give one of --sandbox NAME or --target T"},
		{[]string{"capture", "--sandbox", "nope", "--time", "5s"}, "no such sandbox"},
		{[]string{"capture", "convert", "--from", "mysql-general-table"}, "give --target"},
		{[]string{"capture", "convert", "x.log", "--from", "mysql-general", "--kinds", "nope"}, "unknown kind \"nope\""},
		{[]string{"capture", "--sandbox", "x", "--time", "1s", "--kinds", "nope"}, "unknown kind \"nope\""},
	} {
		var stdout, stderr bytes.Buffer
		home := t.TempDir()
		a := NewApp(&stdout, &stderr, append([]string{"dbarena"}, c.args...), func(k string) string {
			if k == "DBARENA_HOME" {
				return home
			}
			return ""
		}, nil)
		if code := a.Main(t.Context()); code != ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d %s", c.args, code, stderr.String())
		}
	}
}

func TestCaptureHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	a := NewApp(&stdout, &stderr, []string{"dbarena", "help", "capture"}, func(string) string { return "" }, nil)
	if code := a.Main(t.Context()); code != 0 || !strings.Contains(stdout.String(), "--log-line-prefix") || !strings.Contains(stdout.String(), "--performance-schema") {
		t.Fatalf("exit %d: %s%s", code, stdout.String(), stderr.String())
	}
}
