package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/dialect"
	"github.com/dbarena/dbarena/internal/sandbox"
	"github.com/dbarena/dbarena/internal/target"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func ping(t *testing.T, tgt target.Target) {
	t.Helper()
	d, err := dialect.For(tgt.Family())
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.Open(tgt, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("ping %s: %v", tgt.MaskedDSN(), err)
	}
}

func TestStartShared(t *testing.T) {
	for _, f := range []target.Flavor{target.FlavorMariaDB, target.FlavorPostgres} {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			a := Start(t, f)
			b := Start(t, f)
			if a.Port != b.Port || a.Sandbox != b.Sandbox || a.Password != b.Password {
				t.Fatalf("second Start gave another server: %v vs %v", a, b)
			}
			if a.Flavor != f || a.Host != "127.0.0.1" {
				t.Fatalf("Start = %v, want %s on 127.0.0.1", a, f)
			}
			ping(t, a)
		})
	}
}

func TestStartNamed(t *testing.T) {
	sb := StartNamed(t, target.FlavorPostgres, func(s *sandbox.Spec) { s.Database = "own" })
	if sb.Target.Database != "own" {
		t.Fatalf("modifier not applied: %v", sb.Target)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	re, err := sb.Manager.Restart(ctx, sb.Name)
	if err != nil {
		t.Fatal(err)
	}
	if re.Target().Port != sb.Target.Port {
		t.Errorf("port changed across restart: %d -> %d", sb.Target.Port, re.Target().Port)
	}
	ping(t, re.Target())
}

// TestAllocatorPreload starts a real server with jemalloc preloaded and
// finds the library mapped into the server process.
func TestAllocatorPreload(t *testing.T) {
	sb := StartNamed(t, target.FlavorMariaDB, func(s *sandbox.Spec) { s.Allocator = "jemalloc" })
	got, err := sb.Manager.Get(sb.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Allocator != "jemalloc" {
		t.Errorf("Allocator = %q", got.Allocator)
	}
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", got.PID))
	if err != nil {
		t.Skipf("no /proc maps: %v", err)
	}
	if !strings.Contains(string(maps), "libjemalloc") {
		t.Error("libjemalloc is not mapped into the server")
	}
}
