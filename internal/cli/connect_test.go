package cli

import (
	"fmt"
	"strings"
	"testing"
)

// TestRunConnectPerEvent: --connect per-event opens a new server
// connection for every event (the server's Connections counter).
func TestRunConnectPerEvent(t *testing.T) {
	needServers(t)
	freshTables(t, "oltp_point_select", "--tables", "1", "--table-size", "1000")
	tgt := suite.mariadb.Target()
	db := openTarget(t, tgt)
	defer db.Close()
	connections := func() int64 {
		t.Helper()
		var name string
		var n int64
		if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Connections'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := connections()
	js := jsonPath(t)
	r := dbarena(t, "run", "oltp_point_select", "--tables", "1", "--table-size", "1000", "--connect", "per-event",
		"--threads", "2", "--events", "200", "--report-interval", "0", "--monitor", "off", "--json", js).mustSucceed(t)
	if grew := connections() - before; grew < 200 {
		t.Errorf("the server's Connections grew by %d over 200 events, want >= 200", grew)
	}
	// Each worker's first connection opens before the clock: 200 events
	// on 2 workers make 198 more (199 if one worker never got an event),
	// each timed apart from the events.
	run := readSummary(t, js)
	want := fmt.Sprintf("Connections (--connect): %d made", run.Totals.Connects)
	if run.Totals.Connects < 198 || run.Totals.Connects > 199 || run.ConnectMS == nil || run.ConnectMS.Max <= 0 ||
		!strings.Contains(r.stdout, want) {
		t.Errorf("connects %d, connect_ms %+v; stdout:\n%s", run.Totals.Connects, run.ConnectMS, tail(r.stdout, 1500))
	}
	if r := dbarena(t, "run", "oltp_point_select", "--connect", "every=0", "--events", "1"); r.code != 2 || !strings.Contains(r.stderr, "--connect") {
		t.Errorf("--connect every=0: exit %d, stderr %q; want 2 naming --connect", r.code, r.stderr)
	}
}
