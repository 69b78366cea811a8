package sandboxtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
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

// TestHomesIsolated: sandboxes of two homes run as different OS users,
// and the superuser of one cannot make its server write a log into the
// other's data directory. Only a root dbarena has other OS users to give.
func TestHomesIsolated(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: every sandbox runs as the invoking user")
	}
	a := StartNamed(t, target.FlavorMariaDB, nil)
	b := StartIn(t, NewHome(t), target.FlavorMariaDB, nil)
	sa, err := a.Manager.Get(a.Name)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Manager.Get(b.Name)
	if err != nil {
		t.Fatal(err)
	}
	if sa.ServerUser == "" || sa.ServerUser == sb.ServerUser {
		t.Errorf("OS users %q and %q: want one of its own each", sa.ServerUser, sb.ServerUser)
	}
	db, err := dialect.MySQLDialect{}.Open(sa.AdminTarget(), dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	victim := filepath.Join(sb.Datadir, "x.log")
	_, _ = db.ExecContext(ctx, "SET GLOBAL general_log_file = '"+victim+"'")
	_, _ = db.ExecContext(ctx, "SET GLOBAL general_log = ON")
	_, _ = db.ExecContext(ctx, "SELECT 1")
	_, _ = db.ExecContext(ctx, "SET GLOBAL general_log = OFF")
	if _, err := os.Lstat(victim); err == nil {
		t.Errorf("the superuser of %s made its server write %s", sa.Dir, victim)
	}
}
