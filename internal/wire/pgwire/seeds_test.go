package pgwire

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteSeeds writes the fuzz seed corpus (testdata/fuzz) when
// PGWIRE_WRITE_SEEDS is set; otherwise it checks that every seed is there.
func TestWriteSeeds(t *testing.T) {
	for name, list := range seeds() {
		for i, s := range list {
			path := filepath.Join("testdata", "fuzz", name, fmt.Sprintf("seed%d", i))
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
			if os.Getenv("PGWIRE_WRITE_SEEDS") != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != body {
				t.Errorf("%s is missing or stale (PGWIRE_WRITE_SEEDS=1 go test -run WriteSeeds): %v", path, err)
			}
		}
	}
}
