// Command gen-eshop writes a deterministic e-shop database as dumps and the
// read-heavy scripts that benchmark it, for `dbarena load`, `dbarena run
// script` and plans/realdata.yaml. It is document 000's shop in shape, with
// generated content only: a wide product table (about 200 columns of mixed
// types) joined to ten lookup and child tables.
//
//	go run ./scripts/gen-eshop --products 40000 --dir eshop
//
// writes into DIR:
//
//	eshop-mysql.sql     mysqldump format, ENGINE=MyISAM (--engine)
//	eshop-postgres.sql  pg_dump plain format with COPY blocks
//	shop.sql            pgbench-language script: 70% product pages (ten-way
//	                    join plus images, attributes, stock, prices), 28%
//	                    category pages, 2% view-counter updates
//	product_page.sql    the product page alone (read only)
//
// The scripts take the size from --define products=N; plans/eshop holds
// a copy of them.
//
// The same --products and --seed give the same bytes. Every column type
// compares across MySQL and PostgreSQL in `dbarena checksum`, so the two
// dumps loaded give equal checksums.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gen-eshop:", err)
		os.Exit(2)
	}
}

var engineRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("gen-eshop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	products := fs.Int64("products", 40000, "number of products (document 000's shop had 40,000)")
	dir := fs.String("dir", "eshop", "directory to write the dumps and scripts into")
	engine := fs.String("engine", "MyISAM", "storage engine of the MySQL dump's tables")
	seed := fs.Uint64("seed", 1, "seed of the generated content")
	only := fs.String("only", "", "write only this: mysql, postgres or scripts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *products < 1 || *products > 100_000_000 {
		return fmt.Errorf("--products %d: want 1 to 100000000", *products)
	}
	if !engineRE.MatchString(*engine) {
		return fmt.Errorf("--engine %q is not an engine name", *engine)
	}
	switch *only {
	case "", "mysql", "postgres", "scripts":
	default:
		return fmt.Errorf("--only %q: want mysql, postgres or scripts", *only)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	tables := shop(*products, *seed)
	write := func(name string, f func(io.Writer) error) error {
		path := filepath.Join(*dir, name)
		out, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := f(out); err != nil {
			out.Close()
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := out.Close(); err != nil {
			return err
		}
		fmt.Fprintln(stderr, "gen-eshop: wrote", path)
		return nil
	}
	if *only == "" || *only == "mysql" {
		if err := write("eshop-mysql.sql", func(w io.Writer) error { return writeMySQL(w, tables, *engine, *products) }); err != nil {
			return err
		}
	}
	if *only == "" || *only == "postgres" {
		if err := write("eshop-postgres.sql", func(w io.Writer) error { return writePostgres(w, tables, *products) }); err != nil {
			return err
		}
	}
	if *only == "" || *only == "scripts" {
		for name, text := range map[string]string{"shop.sql": shopScript(), "product_page.sql": productPageScript()} {
			if err := write(name, func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
				return err
			}
		}
	}
	return nil
}
