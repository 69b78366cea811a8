package dumpload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// BenchmarkLoadDataMariaDB loads a generated dump (one InnoDB table, 400
// extended INSERTs of 250 rows: numbers, strings with escapes, NULLs)
// with LoadData on, per iteration into a new table: the LOAD DATA
// path end to end (conversion, send, warnings check).
func BenchmarkLoadDataMariaDB(b *testing.B) {
	env := sandboxtest.Env(b, target.FlavorMariaDB)
	admin, err := sandboxtest.Manager(b).Admin(env.Target.Sandbox)
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	sb.WriteString("CREATE TABLE bench_ld (id INT PRIMARY KEY, price DECIMAL(8,2), name VARCHAR(80), note TEXT, n INT);\n")
	id := 0
	for s := 0; s < 400; s++ {
		sb.WriteString("INSERT INTO `bench_ld` VALUES ")
		for r := 0; r < 250; r++ {
			if r > 0 {
				sb.WriteByte(',')
			}
			id++
			fmt.Fprintf(&sb, "(%d,%d.%02d,'product number %d','it\\'s got \\\"escapes\\\"\\nand\\ttabs',NULL)", id, id%1000, id%100, id)
		}
		sb.WriteString(";\n")
	}
	file := filepath.Join(b.TempDir(), "bench.sql")
	if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		d, _ := dialect.For(admin.Family())
		if db, err := d.Open(admin, dialect.OpenOptions{MaxConns: 1}); err == nil {
			_, _ = db.Exec("DROP DATABASE IF EXISTS bench_ld")
			db.Close()
		}
	})
	b.SetBytes(int64(sb.Len()))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Load(ctx, env, Options{Files: []string{file}, Database: "bench_ld", Threads: 2,
			Admin: &admin, LoadData: "on", DropExisting: true})
		if err != nil {
			b.Fatal(err)
		}
		if res.Rows != int64(id) || res.LoadDataStatements != 400 {
			b.Fatalf("rows %d, LOAD DATA statements %d (notes %q)", res.Rows, res.LoadDataStatements, res.Notes)
		}
	}
}
