package dumpload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/data/dump"
)

// TestMariaDBBulk: with Bulk on, the tricky dump loads into InnoDB with
// the source's checksums, each table's data in one transaction.
func TestMariaDBBulk(t *testing.T) {
	env, plain, _ := mariadbSource(t)
	_, srcSums := sourceChecksums(t, env)
	ctx := context.Background()
	for _, defer_ := range []bool{false, true} {
		db := "l_bulk"
		if defer_ {
			db += "_defer"
		}
		res, err := Load(ctx, env, Options{Files: []string{plain}, Database: db, Threads: 2, Bulk: "on", DeferIndexes: defer_,
			Rewrite: dump.Rewrite{Engine: "InnoDB"}, Admin: adminTarget(t, env.Target)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows != 6 || hasNote(res, "rolled back") {
			t.Errorf("rows %d, notes %q", res.Rows, res.Notes)
		}
		sameChecksums(t, res, srcSums)
	}
	// Bulk and ContinueOnError exclude each other.
	_, err := Load(ctx, env, Options{Files: []string{plain}, Database: "l_bulk_x", Bulk: "on", ContinueOnError: true})
	if !IsBadInput(err) || !strings.Contains(err.Error(), "continue-on-error") {
		t.Errorf("bulk with continue-on-error: err %v, want bad input", err)
	}
}

// TestMariaDBBulkErrors: a statement failing inside a table's transaction
// names its file and line, and the table's rolled-back rows are not
// counted as loaded; so for an interrupted load. The same dumps without
// Bulk keep (and count) the rows before the failure.
func TestMariaDBBulkErrors(t *testing.T) {
	env, _, _ := mariadbSource(t)
	ctx := context.Background()
	dir := t.TempDir()
	head := "SET unique_checks=0, foreign_key_checks=0;\nCREATE TABLE t1 (a INT PRIMARY KEY, b INT) ENGINE=InnoDB;\nINSERT INTO t1 VALUES (1,1),(2,2);\nINSERT INTO t1 VALUES (3,3);\n"
	dup := filepath.Join(dir, "dup.sql")
	if err := os.WriteFile(dup, []byte(head+"INSERT INTO t1 VALUES (2,9);\nINSERT INTO t1 VALUES (5,5);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	slow := filepath.Join(dir, "slow.sql")
	if err := os.WriteFile(slow, []byte(head+"INSERT INTO t1 VALUES (4, SLEEP(5));\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bulk := range []string{"on", "off"} {
		t.Run(bulk, func(t *testing.T) {
			db := "l_bulkerr_" + bulk
			res, err := Load(ctx, env, Options{Files: []string{dup}, Database: db, Threads: 1, Bulk: bulk, Admin: adminTarget(t, env.Target)})
			var le *Error
			if !errors.As(err, &le) || le.File != dup || le.Line != 5 || le.Code != "1062" {
				t.Fatalf("err = %v, want duplicate key at %s:5", err, dup)
			}
			left := rowsOf(t, openDB(t, env.Target, db), "SELECT COUNT(*) FROM t1")
			loaded := loadedOf(res, "t1")
			if bulk == "on" {
				// The server discarded the table's earlier rows.
				if left[0] != `"0"|` || loaded != 0 || res.Rows != 0 || !hasNote(res, "t1", "rolled back") {
					t.Errorf("bulk: %s rows left, loaded %d, rows %d, notes %q", left, loaded, res.Rows, res.Notes)
				}
			} else if left[0] != `"3"|` || loaded != 3 {
				t.Errorf("per statement: %s rows left, loaded %d", left, loaded)
			}

			// Interrupted while a statement runs (the first rows loaded).
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			var once sync.Once
			res, err = Load(cctx, env, Options{Files: []string{slow}, Database: db + "_int", Threads: 1, Bulk: bulk,
				Admin: adminTarget(t, env.Target), ProgressEvery: 5 * time.Millisecond,
				Progress: func(p Progress) {
					if p.Rows >= 3 {
						once.Do(cancel)
					}
				}})
			if !errors.Is(err, context.Canceled) || res == nil || !res.Interrupted {
				t.Fatalf("interrupted: err %v, result %+v", err, res)
			}
			want := int64(3)
			if bulk == "on" {
				want = 0
				if !hasNote(res, "t1", "rolled back") {
					t.Errorf("interrupted bulk load: notes %q", res.Notes)
				}
			}
			if got := loadedOf(res, "t1"); got != want || res.Rows != want {
				t.Errorf("interrupted: loaded %d, rows %d, want %d", got, res.Rows, want)
			}
		})
	}
}

func loadedOf(res *Result, table string) int64 {
	for _, tb := range res.Tables {
		if tb.Name == table {
			return tb.Loaded
		}
	}
	return -1
}

func hasNote(res *Result, words ...string) bool {
	for _, n := range res.Notes {
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(n, w)
		}
		if ok {
			return true
		}
	}
	return false
}
