package tpcc

import (
	"context"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/measure/runner"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// These run inside TestIntegration, on its loaded warehouse.

// testClients: --client auto puts terminals on the flavor's lean wire
// client, each owning its connection, whose Rollback ends an open
// transaction; --client sql keeps database/sql, and its mix runs clean.
func testClients(t *testing.T, env workload.Env) {
	ctx := context.Background()
	auto := setup(t)
	if !auto.OwnsConns(env) {
		t.Fatal("--client auto: terminals do not dial their own connection")
	}
	wk, err := auto.DialWorker(ctx, env, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer wk.Close()
	w := wk.(*worker)
	switch x := w.x.(type) {
	case *myExecutor:
		if env.Dialect.Family() == target.Postgres {
			t.Errorf("PostgreSQL terminal on %T", x)
		}
	case *pgExecutor:
		if env.Dialect.Family() != target.Postgres {
			t.Errorf("MySQL-family terminal on %T", x)
		}
	default:
		t.Fatalf("terminal on %T, want a wire executor", x)
	}
	// A failed event's open transaction ends with Rollback.
	before := scalar(t, env, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1")
	if err := w.x.run(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	// tpcc-mysql's shape (the default) sets d_next_o_id = ? + 1.
	if err := w.st.row.districtUpd.exec(ctx, []any{int(before) + 1000, 1, 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := scalar(t, env, "SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1"); got != before {
		t.Errorf("d_next_o_id %d after Rollback, want %d", got, before)
	}
	// Each transaction type on the wire terminal.
	for range 3 * len(newDeck(auto.cfg.Weights)) {
		var ev workload.Event
		if err := w.Event(ctx, &ev); err != nil {
			t.Fatalf("%s: %v", ev.Type, err)
		}
	}

	sqlc := setup(t, "--client", "sql")
	if sqlc.OwnsConns(env) {
		t.Fatal("--client sql: terminals dial their own connection")
	}
	res := run(t, env, sqlc, runner.Config{Threads: 2, Duration: 2 * time.Second})
	if res.Errors != 0 || res.Events == 0 {
		t.Fatalf("--client sql mix: %d events, %d errors", res.Events, res.Errors)
	}
}

// testPipeline: with --pipeline a terminal holds its writes until the
// commit, which sends them in one round trip; a rollback drops them; the
// mix runs clean (TestIntegration checks consistency afterwards).
func testPipeline(t *testing.T, env workload.Env) {
	ctx := context.Background()
	wl := setup(t, "--shape", "batched", "--pipeline")
	wk, err := wl.DialWorker(ctx, env, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer wk.Close()
	w := wk.(*worker)
	if w.batch == nil {
		t.Fatalf("--pipeline: terminal on %T sends no batches", w.x)
	}
	q := "SELECT FLOOR(d_ytd * 100) FROM district WHERE d_w_id = 1 AND d_id = 2"
	before := scalar(t, env, q)
	w.live = ctx
	var ev workload.Event
	for _, commit := range []bool{false, true} {
		if err := w.begin(ctx, &ev); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := w.exec(ctx, &ev, w.st.payDistrictUpd, decimal(150), 1, 2); err != nil {
				t.Fatal(err)
			}
		}
		if n := w.pending.len(); n != 2 {
			t.Fatalf("%d writes pending, want 2", n)
		}
		if commit {
			err = w.commit(ctx, &ev)
		} else {
			err = w.rollback(ctx, &ev)
		}
		if err != nil || w.pending.len() != 0 {
			t.Fatalf("commit %v: %v, %d writes still pending", commit, err, w.pending.len())
		}
	}
	if got := scalar(t, env, q); got != before+300 {
		t.Errorf("d_ytd*100 %d, want %d (+3.00 from the committed pair only)", got, before+300)
	}
	if _, err := env.DB.Exec("UPDATE district SET d_ytd = d_ytd - 3 WHERE d_w_id = 1 AND d_id = 2"); err != nil {
		t.Fatal(err)
	}

	res := run(t, env, setup(t, "--shape", "batched", "--pipeline"), runner.Config{Threads: 4, Duration: 2 * time.Second})
	if res.Errors != 0 || res.Events == 0 {
		t.Fatalf("--pipeline mix: %d events, %d errors", res.Events, res.Errors)
	}
}
