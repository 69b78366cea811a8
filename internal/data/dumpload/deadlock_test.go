package dumpload

import (
	"context"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/data/dump"
)

// deadlockOnce is a real connection whose first statement is refused as a
// deadlock victim (1213), as InnoDB does to one of two parallel INSERTs.
type deadlockOnce struct {
	conn
	left int
}

func (d *deadlockOnce) exec(ctx context.Context, q string) (int64, error) {
	if d.left > 0 {
		d.left--
		return 0, &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock"}
	}
	return d.conn.exec(ctx, q)
}

// TestDeadlockRetried: a data statement chosen as a deadlock victim runs
// again (autocommit: it was rolled back whole), unless the dump's session
// touches autocommit.
func TestDeadlockRetried(t *testing.T) {
	env, _, _ := mariadbSource(t)
	ctx := context.Background()
	for _, q := range []string{"DROP TABLE IF EXISTS dl", "CREATE TABLE dl (id INT PRIMARY KEY)"} {
		if _, err := env.DB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// The source database is dumped by the other tests: leave it as found.
	t.Cleanup(func() { env.DB.ExecContext(context.Background(), "DROP TABLE IF EXISTS dl") })
	dl, err := newDialer(env.Target)
	if err != nil {
		t.Fatal(err)
	}
	defer dl.close()
	c, err := dl.dial(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	l := &loader{t: env.Target, dl: dl, tables: map[string]*tableCount{}, res: &Result{}}
	for i, c2 := range []struct {
		log  []string
		fail int
		ok   bool
	}{
		{nil, 2, true},
		{[]string{"SET autocommit=0"}, 1, false},
	} {
		s := &session{c: &deadlockOnce{conn: c, left: c2.fail}, applied: len(c2.log)}
		j := &job{st: dump.Statement{Kind: dump.Data, SQL: "INSERT INTO dl VALUES (" + string(rune('1'+i)) + ")", File: "f.sql", Line: 1},
			log: c2.log, tc: l.table(env.Target.Database, "dl")}
		err := l.execIn(ctx, s, j)
		if (err == nil) != c2.ok {
			t.Errorf("case %d: %v", i, err)
		}
	}
	var n int
	if err := env.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM dl").Scan(&n); err != nil || n != 1 {
		t.Errorf("rows %d, %v", n, err)
	}
}
