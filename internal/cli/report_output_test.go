package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportOutputPath checks that a bad -o fails before any work with one
// line naming -o and the problem (exit 2), whatever else is given.
func TestReportOutputPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res := "--results=" + filepath.Join(dir, "results.db")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"directory", []string{"report", "1", "-o", dir, res}, "-o " + dir + ": is a directory, want a file name such as " + filepath.Join(dir, "report.html")},
		{"directory with format", []string{"report", "1", "--format", "html", "-o", dir, res}, "-o " + dir + ": is a directory"},
		{"directory, no selection", []string{"report", "-o", dir, res}, "-o " + dir + ": is a directory"},
		{"trailing slash", []string{"report", "1", "-o", dir + "/nosuch/", res}, "-o " + dir + "/nosuch/: is a directory"},
		{"missing directory", []string{"report", "1", "-o", filepath.Join(dir, "nosuch", "r.html"), res},
			"-o " + filepath.Join(dir, "nosuch", "r.html") + ": directory " + filepath.Join(dir, "nosuch") + " does not exist"},
		{"parent is a file", []string{"report", "1", "-o", filepath.Join(file, "r.html"), res}, ": " + file + " is not a directory"},
		{"no extension", []string{"report", "1", "-o", filepath.Join(dir, "r"), res}, "cannot tell the format from the name"},
		{"stdout without format", []string{"report", "1", "-o", "-", res}, "-o -: give --format csv or json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := dbarena(t, tt.args...)
			if r.code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitUsage, r.stderr)
			}
			line := strings.TrimRight(r.stderr, "\n")
			if strings.Contains(line, "\n") || !strings.HasPrefix(line, "dbarena report: ") || !strings.Contains(line, tt.want) {
				t.Fatalf("stderr %q: want one line containing %q", r.stderr, tt.want)
			}
			if strings.Contains(line, "report: report:") {
				t.Errorf("stderr %q repeats the command", r.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "results.db")); err == nil {
		t.Error("a bad -o opened (created) the results store")
	}
}
