package replay

import (
	"context"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

func dialectOpts() dialect.OpenOptions { return dialect.OpenOptions{MaxConns: 2} }

// serverCounters reads MySQL's global Com_* counters (nothing on PostgreSQL).
func serverCounters(t testing.TB, env workload.Env) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	if env.Dialect.Family() != target.MySQL {
		return out
	}
	rows, err := env.DB.Query("SHOW GLOBAL STATUS LIKE 'Com\\_%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// waitPG waits (up to 20 s) for PostgreSQL's statistics of db to show the
// inserts into seqlog and updates of items that the replay's sessions
// flushed as they ended.
func waitPG(t testing.TB, env workload.Env, db string, inserts, updates int64) {
	t.Helper()
	tg := env.Target
	tg.Database = db
	c, err := env.Dialect.Open(tg, dialectOpts())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	conn, err := c.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var ins, upd int64
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := conn.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			t.Fatal(err)
		}
		err := conn.QueryRowContext(ctx, `SELECT (SELECT n_tup_ins FROM pg_stat_user_tables WHERE relname = 'seqlog'),
			(SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'items')`).Scan(&ins, &upd)
		if err != nil {
			t.Fatal(err)
		}
		if ins == inserts && upd == updates {
			return
		}
	}
	t.Errorf("pg_stat_user_tables: %d inserts into seqlog, %d updates of items; want %d and %d", ins, upd, inserts, updates)
}
