package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// These run inside TestIntegration, on its loaded warehouse.

// newTerminal makes a worker of w on its own connection, closed at the
// end of the test.
func newTerminal(t testing.TB, env workload.Env, w *Workload) (*worker, *sql.Conn) {
	t.Helper()
	ctx := context.Background()
	conn, err := env.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wk, err := w.NewWorker(ctx, env, conn, 0, 7)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { wk.Close(); conn.Close() })
	return wk.(*worker), conn
}

// deliveryOnly is a workload whose deck holds Delivery cards only.
func deliveryOnly(t testing.TB) *Workload { return setup(t, "--weights", "0,0,0,1,0") }

// testDeliveryAfterConcurrentTaker: another transaction delivers district
// 1's oldest undelivered order while a Delivery waits for its lock. The
// Delivery must then deliver the district's next order, not skip the
// district: InnoDB's locking read and PostgreSQL's LockRows both move on
// to the next row when the one they waited for was deleted.
func testDeliveryAfterConcurrentTaker(t *testing.T, env workload.Env) {
	ctx := context.Background()
	w := deliveryOnly(t)
	wk, conn := newTerminal(t, env, w)
	oldest := scalar(t, env, "SELECT MIN(no_o_id) FROM new_orders WHERE no_w_id = 1 AND no_d_id = 1")

	session := "SELECT CONNECTION_ID()"
	waiting := "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT' AND trx_mysql_thread_id = ?"
	if env.Dialect.Family() == target.Postgres {
		session = "SELECT pg_backend_pid()"
		waiting = "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid = $1"
	}
	var id int64
	if err := conn.QueryRowContext(ctx, session).Scan(&id); err != nil {
		t.Fatal(err)
	}
	tx, err := env.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	// The other delivery of the order, as clause 2.7.4.2 has it.
	for _, q := range []string{
		"DELETE FROM new_orders WHERE no_w_id = 1 AND no_d_id = 1 AND no_o_id = ?",
		"UPDATE orders SET o_carrier_id = 5 WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = ?",
		"UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = ?",
		"UPDATE customer SET c_balance = c_balance + (SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 1 AND ol_o_id = ?), " +
			"c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = (SELECT o_c_id FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_id = ?)",
	} {
		args := []any{oldest}
		if strings.Count(q, "?") == 2 {
			args = append(args, oldest)
		}
		if _, err := tx.ExecContext(ctx, env.Dialect.Rebind(q), args...); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- wk.Event(ctx, &workload.Event{}) }()
	// Wait (bounded) until the Delivery waits for the lock, then commit.
	// MariaDB refreshes INNODB_TRX only when it was not read for 100 ms,
	// so the polls are further apart.
	deadline := time.Now().Add(time.Minute)
	for {
		var n int
		if err := env.DB.QueryRowContext(ctx, env.Dialect.Rebind(waiting), id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the Delivery ended (%v) without waiting for the lock", err)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the Delivery never waited for the lock")
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("delivery: %v", err)
	}
	if delivered, skipped := w.delivery.take(); delivered != nDist || skipped != 0 {
		t.Errorf("%d districts delivered, %d skipped; want 10 and 0", delivered, skipped)
	}
	if n := scalar(t, env, "SELECT COUNT(*) FROM orders WHERE o_w_id = 1 AND o_d_id = 1 AND o_carrier_id IS NOT NULL AND o_id = "+
		strconv.FormatInt(oldest+1, 10)); n != 1 {
		t.Errorf("order %d of district 1, the next after the one taken, was not delivered", oldest+1)
	}
}

// testSkippedDistrict: with district 3's undelivered orders put aside,
// each Delivery skips it, and the count says so.
func testSkippedDistrict(t *testing.T, env workload.Env) {
	ctx := context.Background()
	rows, err := env.DB.QueryContext(ctx, "SELECT no_o_id FROM new_orders WHERE no_w_id = 1 AND no_d_id = 3")
	if err != nil {
		t.Fatal(err)
	}
	var aside []int64
	for rows.Next() {
		var o int64
		if err := rows.Scan(&o); err != nil {
			t.Fatal(err)
		}
		aside = append(aside, o)
	}
	if err := errors.Join(rows.Close(), rows.Err()); err != nil || len(aside) == 0 {
		t.Fatalf("district 3's new orders: %d, %v", len(aside), err)
	}
	if _, err := env.DB.ExecContext(ctx, "DELETE FROM new_orders WHERE no_w_id = 1 AND no_d_id = 3"); err != nil {
		t.Fatal(err)
	}
	defer func() {
		q := env.Dialect.Rebind("INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (?, 3, 1)")
		for _, o := range aside {
			if _, err := env.DB.ExecContext(ctx, q, o); err != nil {
				t.Fatalf("put district 3's new orders back: %v", err)
			}
		}
	}()
	w := deliveryOnly(t)
	wk, _ := newTerminal(t, env, w)
	for i := 0; i < 3; i++ {
		if err := wk.Event(ctx, &workload.Event{}); err != nil {
			t.Fatal(err)
		}
	}
	if delivered, skipped := w.delivery.take(); delivered != 27 || skipped != 3 {
		t.Errorf("3 Deliveries: %d districts delivered, %d skipped; want 27 and 3", delivered, skipped)
	}
}

// testPreparedStatements: a terminal that has run every line count holds
// exactly Demand's PreparedPerConn statements on the server.
func testPreparedStatements(t *testing.T, env workload.Env) {
	for _, shape := range shapes {
		t.Run(shape, func(t *testing.T) { testPreparedShape(t, env, shape) })
	}
}

func testPreparedShape(t *testing.T, env workload.Env, shape string) {
	ctx := context.Background()
	w := setup(t, "--shape", shape)
	count := func(conn *sql.Conn) int {
		q := "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'PREPARED_STMT_COUNT'"
		if env.Dialect.Family() == target.Postgres {
			q = "SELECT COUNT(*) FROM pg_prepared_statements"
		}
		var n int
		if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	conn, err := env.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	before := count(conn)
	wk, err := w.NewWorker(ctx, env, conn, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer wk.Close()
	for n := minLines; n <= maxLines && shape == ShapeBatched; n++ {
		if _, err := wk.(*worker).st.lines(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := count(conn)-before, w.Demand(1).PreparedPerConn; got != want {
		t.Errorf("a terminal holds %d prepared statements, Demand says %d", got, want)
	}
}

// testReady: Ready on the loaded warehouse, and for more warehouses than
// it holds.
func testReady(t *testing.T, env workload.Env) {
	ctx := context.Background()
	if err := setup(t).Ready(ctx, env); err != nil {
		t.Fatalf("ready after the load: %v", err)
	}
	w := setup(t, "--warehouses", "1", "--bind-warehouse")
	if err := w.Ready(ctx, env); err != nil {
		t.Fatalf("ready, --warehouses 1: %v", err)
	}
	if notes := w.Notes(4); len(notes) != 0 {
		t.Errorf("notes for 4 terminals on 1 warehouse: %q", notes)
	}
	err := setup(t, "--warehouses", "3").Ready(ctx, env)
	var nr *workload.NotReadyError
	if !errors.As(err, &nr) || !nr.Refuse || !strings.Contains(nr.Problem, "hold 1") ||
		nr.Hint != "dbarena cleanup tpcc && dbarena prepare tpcc --warehouses 3" {
		t.Fatalf("ready, --warehouses 3 on 1: %#v", err)
	}
}

// testNotPrepared: Ready on a database without the tables.
func testNotPrepared(t *testing.T, env workload.Env) {
	err := setup(t, "--warehouses", "2").Ready(context.Background(), env)
	var nr *workload.NotReadyError
	if !errors.As(err, &nr) || nr.Short || nr.Hint != "dbarena prepare tpcc --warehouses 2" {
		t.Fatalf("ready without tables: %#v", err)
	}
	if !strings.Contains(err.Error(), "run `dbarena prepare tpcc --warehouses 2` first") {
		t.Errorf("error %q does not say what to run", err)
	}
}

// testIncomplete: Ready after an interrupted load.
func testIncomplete(t *testing.T, env workload.Env) {
	err := setup(t).Ready(context.Background(), env)
	var nr *workload.NotReadyError
	if !errors.As(err, &nr) || !nr.Short || !strings.Contains(nr.Problem, "incomplete") ||
		nr.Hint != "dbarena prepare tpcc --warehouses 1" {
		t.Fatalf("ready after an interrupted load: %#v", err)
	}
}
