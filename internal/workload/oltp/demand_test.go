package oltp

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
	"github.com/dbarena/dbarena/internal/workload"
)

// demandCases are configurations whose workers prepare different numbers
// of statements.
var demandCases = []struct {
	name string
	args []string
}{
	{"oltp_read_write", []string{"--tables=3"}},
	{"oltp_read_write", []string{"--tables=3", "--range-selects=off"}},
	{"oltp_read_write", []string{"--tables=2", "--ps-mode=disable"}},
	{"oltp_read_only", []string{"--tables=2"}},
	{"oltp_point_select", []string{"--tables=2"}},
	{"oltp_insert", []string{"--tables=2"}},
	{"select_random_points", nil},
}

// TestDemandMatchesWorker: Demand's statements per connection are the
// statements a worker prepares.
func TestDemandMatchesWorker(t *testing.T) {
	for _, tc := range demandCases {
		t.Run(tc.name+strings.Join(tc.args, ""), func(t *testing.T) {
			wl := setup(t, tc.name, append([]string{"--table-size=100"}, tc.args...)...).(*Workload)
			w, rec := newTestWorker(t, wl, target.MySQL, 0)
			defer w.Close()
			want := len(rec.prepared)
			if !wl.PreparedStatements() {
				want = 0
			}
			d := wl.Demand(16)
			if d.PreparedPerConn != want || d.Connections != 16 || d.Tables != wl.Config().Tables {
				t.Errorf("Demand(16) = %+v, want %d statements per connection (%d tables)", d, want, wl.Config().Tables)
			}
		})
	}
	if d := NewBulkInsert().Demand(5); d != (workload.Demand{Connections: 5, Tables: 5}) {
		t.Errorf("bulk_insert Demand(5) = %+v", d)
	}
}

// serverPrepared counts the server's prepared statements: all of them on
// MySQL (Prepared_stmt_count), conn's on PostgreSQL.
func serverPrepared(t *testing.T, env workload.Env, conn *sql.Conn) int {
	t.Helper()
	var n int
	var err error
	if env.Dialect.Family() == target.Postgres {
		err = conn.QueryRowContext(context.Background(), "SELECT count(*) FROM pg_prepared_statements").Scan(&n)
	} else {
		var name string
		err = env.DB.QueryRow("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'").Scan(&name, &n)
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// pgPrepared counts the prepared statements of a pgwire connection's session.
func pgPrepared(t *testing.T, c *pgwire.Conn) int {
	t.Helper()
	var n int64
	err := c.QueryFunc("SELECT count(*) FROM pg_prepared_statements", nil, func(r *pgwire.Row) error {
		var err error
		n, err = r.Int64(0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// TestIntegrationDemand counts the statements a worker holds prepared on
// the server after a few events, on every client, against Demand.
func TestIntegrationDemand(t *testing.T) {
	for _, flavor := range flavors {
		t.Run(string(flavor), func(t *testing.T) {
			env := sandboxtest.Env(t, flavor)
			bg := context.Background()
			for _, client := range clientsFor(flavor) {
				for _, tc := range demandCases {
					t.Run(client+"/"+tc.name+strings.Join(tc.args, ""), func(t *testing.T) {
						args := append([]string{"--table-size=100", "--client=" + client}, tc.args...)
						wl := setup(t, tc.name, args...).(*Workload)
						_ = wl.Cleanup(bg, env)
						defer wl.Cleanup(bg, env)
						if err := wl.Prepare(bg, env, 2, &counter{}); err != nil {
							t.Fatal(err)
						}
						conn, err := env.DB.Conn(bg)
						if err != nil {
							t.Fatal(err)
						}
						defer conn.Close()
						before := serverPrepared(t, env, conn)
						var w workload.Worker
						if wl.OwnsConns(env) {
							w, err = wl.DialWorker(bg, env, 0, 1)
						} else {
							w, err = wl.NewWorker(bg, env, conn, 0, 1)
						}
						if err != nil {
							t.Fatal(err)
						}
						defer w.Close()
						for i := 0; i < 5; i++ {
							if err := w.Event(bg, &workload.Event{}); err != nil {
								t.Fatal(err)
							}
						}
						got := serverPrepared(t, env, conn) - before
						if pw, ok := w.(*worker).x.(*pgExecutor); ok {
							// PostgreSQL counts a session's own statements:
							// ask the worker's connection.
							got = pgPrepared(t, pw.conn)
						}
						if want := wl.Demand(1).PreparedPerConn; got != want {
							t.Errorf("the worker holds %d prepared statements on the server, Demand says %d", got, want)
						}
						if err := w.Close(); err != nil {
							t.Fatal(err)
						}
						// COM_STMT_CLOSE has no reply: a round trip on the
						// same connection, or its end, shows it was read.
						left := 0
						if wl.OwnsConns(env) {
							for i := 0; i < 100; i++ {
								if left = serverPrepared(t, env, conn) - before; left == 0 {
									break
								}
								time.Sleep(50 * time.Millisecond)
							}
						} else {
							if err := conn.PingContext(bg); err != nil {
								t.Fatal(err)
							}
							left = serverPrepared(t, env, conn) - before
						}
						if left != 0 {
							t.Errorf("%d prepared statements left after Close", left)
						}
					})
				}
			}
		})
	}
}
