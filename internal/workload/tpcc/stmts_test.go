package tpcc

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/wire/pgwire"
)

// batchRecorder records how prepareStmts asks to prepare; it runs
// nothing (the integration tests run the real executors).
type batchRecorder struct {
	single  int
	batches [][]string
	failAt  int // the text prepareAll refuses; -1: none
}

type recordedStmt struct{ text string }

func (recordedStmt) exec(context.Context, []any) error                   { return nil }
func (recordedStmt) query(context.Context, []any, func(row) error) error { return nil }
func (recordedStmt) close() error                                        { return nil }

func (x *batchRecorder) prepare(_ context.Context, text string) (stmt, error) {
	x.single++
	return recordedStmt{text}, nil
}

func (x *batchRecorder) run(context.Context, string) error { return nil }

func (x *batchRecorder) prepareAll(_ context.Context, texts []string) ([]stmt, error) {
	x.batches = append(x.batches, texts)
	if x.failAt >= 0 {
		return nil, &pgwire.PrepareError{Index: x.failAt, Err: errors.New("relation does not exist")}
	}
	sts := make([]stmt, len(texts))
	for i, t := range texts {
		sts[i] = recordedStmt{t}
	}
	return sts, nil
}

// TestPrepareStmtsInOneBatch: an executor that prepares in one round trip
// (PostgreSQL's pgwire) gets every statement in one call, each field
// bound to its own text; a refused statement is named by its text.
func TestPrepareStmtsInOneBatch(t *testing.T) {
	d, err := dialect.For(target.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	texts := newTexts(d, ShapeBatched)
	x := &batchRecorder{failAt: -1}
	s, err := prepareStmts(context.Background(), x, texts)
	if err != nil {
		t.Fatal(err)
	}
	if x.single != 0 || len(x.batches) != 1 || len(x.batches[0]) != len(texts.fixed) {
		t.Fatalf("%d single prepares and batches of %v; want one batch of %d", x.single, len(x.batches), len(texts.fixed))
	}
	for i, def := range stmtDefs(s, false, ShapeBatched) {
		if got := (*def.dst).(recordedStmt).text; got != texts.fixed[i] {
			t.Errorf("statement %d bound to %q, want %q", i, got, texts.fixed[i])
		}
	}
	if len(s.all) != len(texts.fixed) {
		t.Errorf("%d statements to close, want %d", len(s.all), len(texts.fixed))
	}

	x = &batchRecorder{failAt: 3}
	_, err = prepareStmts(context.Background(), x, texts)
	want := stmtDefs(&stmts{}, false, ShapeBatched)[3].sql
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "relation does not exist") {
		t.Errorf("refused statement: %v, want it named (%q)", err, want)
	}
}
