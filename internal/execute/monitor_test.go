package execute

import (
	"context"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestRemoteTargetMonitorsCountersOnly: a DSN on another machine gets no
// host or server-process figures, and the note says why.
func TestRemoteTargetMonitorsCountersOnly(t *testing.T) {
	d, _ := dialect.For(target.MySQL)
	s := &Session{Target: target.Target{Flavor: target.FlavorMariaDB, Host: "db.remote.invalid", Port: 3306,
		User: "u", Password: "topsecret", Database: "sbtest"}, Dialect: d}
	rm := StartMonitor(context.Background(), t.TempDir(), s, MonitorOn)
	defer rm.Stop()
	v := rm.Sample(context.Background(), 1)
	for k := range v {
		if strings.HasPrefix(k, "host.") || strings.HasPrefix(k, "server.") || strings.HasPrefix(k, "disk.") {
			t.Errorf("remote target sampled %s", k)
		}
	}
	if _, ok := v["client.rss_mb"]; !ok {
		t.Errorf("dbarena's own figures are missing: %v", v)
	}
	sum := rm.Summary(10, nil)
	if !strings.Contains(sum.Note, "remote target") || strings.Contains(sum.Note, "topsecret") {
		t.Fatalf("note: %q", sum.Note)
	}
	if rm.Host {
		t.Fatalf("a remote run samples host figures")
	}
}
