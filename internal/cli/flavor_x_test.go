package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestFlavorDetected: a real run's summary records the flavor told from
// the live server's version, comment and variables (flavor/mysql.Detect),
// and its version, on each MySQL-family server this machine has: the
// system MariaDB 10.11, MariaDB 10.1.23 (Percona's XtraDB: innodb_version
// 5.6.35-80.0 and XtraDB's variables, still MariaDB), Oracle MySQL 5.5.9,
// and MariaDB 10.11 started with version=5.6.36-82.1-log (a Percona-looking
// version string; before, the run was recorded as Oracle MySQL).
func TestFlavorDetected(t *testing.T) {
	needServers(t)
	tests := []struct {
		name, catalogued string
		settings         []sandbox.Setting
		flavor           target.Flavor
		version          string // a prefix of the recorded version
	}{
		{name: "fl1011", flavor: target.FlavorMariaDB, version: "10.11."},
		{name: "fl1011v", settings: []sandbox.Setting{{Key: "version", Value: "5.6.36-82.1-log"}},
			flavor: target.FlavorMariaDB, version: "5.6.36-82.1-log"},
		{name: "fl101", catalogued: "mariadb-10.1.23", flavor: target.FlavorMariaDB, version: "10.1.23-MariaDB"},
		{name: "fl55", catalogued: "mysql-5.5.9", flavor: target.FlavorMySQL, version: "5.5.9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := sandbox.Spec{Name: tt.name, Flavor: target.FlavorMariaDB, Profile: "fast", Settings: tt.settings}
			if tt.catalogued != "" {
				e := sandboxtest.Catalogued(t, tt.catalogued)
				spec.Flavor, spec.Basedir = e.Flavor, e.Basedir
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			t.Cleanup(func() { _ = suite.mgr.Remove(context.Background(), tt.name) })
			if _, err := suite.mgr.Start(ctx, spec); err != nil {
				t.Fatalf("start %s: %v", tt.name, err)
			}
			tg := "--target=sandbox:" + tt.name
			dbarena(t, "prepare", "oltp_point_select", "--tables", "1", "--table-size", "100", tg).mustSucceed(t)
			js := jsonPath(t)
			dbarena(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "100", "--threads", "1",
				"--events", "50", "--json", js, tg).mustSucceed(t)
			run := readSummary(t, js)
			if run.Target.Flavor != string(tt.flavor) || !strings.HasPrefix(run.Target.Version, tt.version) {
				t.Fatalf("summary target %s %s, want %s %s...", run.Target.Flavor, run.Target.Version, tt.flavor, tt.version)
			}
			if run.Totals.Events != 50 {
				t.Fatalf("events %d, want 50", run.Totals.Events)
			}
		})
	}
}
