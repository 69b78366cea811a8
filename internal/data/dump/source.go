package dump

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// Format is the kind of dump.
type Format string

// The formats Open recognises.
const (
	FormatMySQL     Format = "mysqldump"  // mysqldump / mariadb-dump SQL file
	FormatMydumper  Format = "mydumper"   // a mydumper directory
	FormatPostgres  Format = "pg_dump"    // pg_dump plain SQL
	FormatPgArchive Format = "pg_archive" // pg_dump custom or directory format
	// FormatMySQLScript and FormatPsqlScript are plain SQL scripts, named
	// by the user (OpenAs): loaded in order on one connection, as the
	// mysql client or psql runs them.
	FormatMySQLScript Format = "mysql"
	FormatPsqlScript  Format = "psql"
)

// Formats are the names OpenAs takes ("" or "auto" sniffs).
var Formats = []Format{FormatMySQL, FormatPostgres, FormatMySQLScript, FormatPsqlScript}

// Phase is where a file's statements go in a load.
type Phase int

// The phases.
const (
	// Mixed is a whole single-file dump: schema, data and post-data in
	// order, told apart statement by statement.
	Mixed Phase = iota
	// SchemaPhase files run first, in order (mydumper *-schema*.sql).
	SchemaPhase
	// DataPhase files hold only data; each can load on its own connection.
	DataPhase
	// PostPhase files run after all data (views, triggers, routines).
	PostPhase
)

// Part is one file of a dump.
type Part struct {
	Path  string
	Phase Phase
	// Size is the file's size on disk (compressed size if compressed).
	Size int64
	// Database is the database the statements apply to when the file does
	// not say (mydumper names it in the file name); "" if unknown.
	Database string
	// Table is the table of a mydumper data file.
	Table   string
	archive bool
}

// Dump is a set of files to load, in order.
type Dump struct {
	Format Format
	Syntax Syntax
	Parts  []Part
	// Size is the total size of the parts on disk.
	Size int64
	// PgRestore is the pg_restore that reads an archive (FormatPgArchive).
	PgRestore string
	// Server is the server the statements are classified for (see
	// Server); the zero value reads every version comment as code.
	Server Server
	// Script: a plain SQL script (FormatMySQLScript, FormatPsqlScript).
	Script bool
	// FollowIncludes makes Reader read the files that client commands
	// (source, \\., \\i, \\ir) name, relative to the including file and
	// inside the directory of the dump file that started the chain;
	// otherwise such a command is a BadInputError naming file and line.
	FollowIncludes bool
}

// maxIncludeDepth bounds nested client includes (a file including
// itself stops there).
const maxIncludeDepth = 16

// OpenAs is Open with the format named: "" or "auto" sniffs each file;
// mysqldump, pg_dump, mysql or psql read every file as that (a
// directory is still a mydumper or pg_dump directory).
func OpenAs(paths []string, format string) (*Dump, error) {
	if format == "" || format == "auto" {
		return Open(paths)
	}
	var f Format
	for _, x := range Formats {
		if string(x) == format {
			f = x
		}
	}
	if f == "" {
		return nil, badInput("format %q: want auto, mysqldump, pg_dump, mysql or psql", format)
	}
	d, err := Open(paths)
	if err != nil {
		return nil, err
	}
	for _, p := range d.Parts {
		if p.archive || d.Format == FormatMydumper {
			return nil, badInput("%s: a directory or archive is read as itself: --format names the syntax of SQL files", p.Path)
		}
	}
	d.Format, d.Syntax = f, MySQL
	if f == FormatPostgres || f == FormatPsqlScript {
		d.Syntax = Postgres
	}
	d.Script = f == FormatMySQLScript || f == FormatPsqlScript
	return d, nil
}

// BadInputError is a dump that cannot be read as given.
type BadInputError struct{ Msg string }

func (e *BadInputError) Error() string { return e.Msg }

func badInput(format string, args ...any) error {
	return &BadInputError{fmt.Sprintf(format, args...)}
}

// Open inspects the given files and directories and returns the dump they
// make. All must be of one syntax.
func Open(paths []string) (*Dump, error) {
	if len(paths) == 0 {
		return nil, badInput("no dump file given")
	}
	d := &Dump{}
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, badInput("%v", err)
		}
		var f Format
		var parts []Part
		if fi.IsDir() {
			f, parts, err = openDir(p)
		} else {
			f, err = sniff(p)
			parts = []Part{{Path: p, Phase: Mixed, Size: fi.Size(), archive: f == FormatPgArchive}}
		}
		if err != nil {
			return nil, err
		}
		syn := MySQL
		if f == FormatPostgres || f == FormatPgArchive || f == FormatPsqlScript {
			syn = Postgres
		}
		if f == FormatPsqlScript {
			d.Script = true
		}
		if i == 0 {
			d.Format, d.Syntax = f, syn
		} else if syn != d.Syntax {
			return nil, badInput("%s is a %s dump, %s a %s one: load them separately", paths[0], d.Format, p, f)
		}
		if f == FormatPgArchive || f == FormatPsqlScript {
			d.Format = f
		}
		for _, pt := range parts {
			d.Size += pt.Size
		}
		d.Parts = append(d.Parts, parts...)
	}
	if d.Format == FormatPgArchive {
		pr, err := findPgRestore()
		if err != nil {
			return nil, err
		}
		d.PgRestore = pr
	}
	return d, nil
}

// compression magics.
var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// sniff looks at the start of a file (decompressed) to tell its format.
func sniff(path string) (Format, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", badInput("%v", err)
	}
	defer f.Close()
	var head [5]byte
	n, _ := io.ReadFull(f, head[:])
	if n >= 5 && string(head[:5]) == "PGDMP" {
		return FormatPgArchive, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	r, closeFn, err := decompress(f, path)
	if err != nil {
		return "", err
	}
	defer closeFn()
	buf := make([]byte, 64<<10)
	n, err = io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		var bi *BadInputError
		if errors.As(err, &bi) {
			return "", err
		}
		return "", badInput("%s: %v", path, err)
	}
	buf = buf[:n]
	if bytes.HasPrefix(buf, []byte("PGDMP")) {
		return "", badInput("%s: a compressed pg_dump custom-format archive: decompress it first, or give pg_restore the archive itself", path)
	}
	if looksPostgres(buf) {
		return FormatPostgres, nil
	}
	if looksPsqlScript(buf) {
		// No pg_dump in sight: a plain script, loaded as psql runs it.
		return FormatPsqlScript, nil
	}
	return FormatMySQL, nil
}

// looksPostgres: pg_dump's header, or psql/PostgreSQL-only statements.
func looksPostgres(b []byte) bool {
	for _, m := range []string{"-- PostgreSQL database dump", "SET standard_conforming_strings", "pg_catalog.set_config(", "\nCOPY ", "\\connect "} {
		if bytes.Contains(b, []byte(m)) {
			return true
		}
	}
	return false
}

// looksPsqlScript: psql's own commands at a line start (mysql has \.
// but not these).
func looksPsqlScript(b []byte) bool {
	for _, m := range []string{"\\i ", "\\ir ", "\\include ", "\\set ", "\\echo "} {
		if bytes.HasPrefix(b, []byte(m)) || bytes.Contains(b, []byte("\n"+m)) {
			return true
		}
	}
	return false
}

// openDir recognises a pg_dump directory (toc.dat) or a mydumper
// directory (metadata, *-schema.sql).
func openDir(dir string) (Format, []Part, error) {
	if fi, err := os.Stat(filepath.Join(dir, "toc.dat")); err == nil {
		return FormatPgArchive, []Part{{Path: dir, Phase: Mixed, Size: dirSize(dir) + fi.Size()*0, archive: true}}, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, badInput("%v", err)
	}
	var schemaCreate, schema, data, post []Part
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || name == "metadata" || strings.HasPrefix(name, "metadata.") {
			continue
		}
		base := stripCompression(name)
		if !strings.HasSuffix(base, ".sql") {
			continue
		}
		base = strings.TrimSuffix(base, ".sql")
		fi, err := e.Info()
		if err != nil {
			return "", nil, badInput("%v", err)
		}
		p := Part{Path: filepath.Join(dir, name), Size: fi.Size()}
		db, rest, _ := strings.Cut(base, ".")
		p.Database = db
		switch {
		case strings.HasSuffix(base, "-schema-create"):
			p.Database = strings.TrimSuffix(base, "-schema-create")
			p.Phase = SchemaPhase
			schemaCreate = append(schemaCreate, p)
		case strings.HasSuffix(base, "-schema-view"), strings.HasSuffix(base, "-schema-triggers"), strings.HasSuffix(base, "-schema-post"):
			if strings.HasSuffix(base, "-schema-post") && !strings.Contains(base, ".") {
				p.Database = strings.TrimSuffix(base, "-schema-post")
			}
			p.Phase = PostPhase
			post = append(post, p)
		case strings.HasSuffix(base, "-schema"):
			p.Phase = SchemaPhase
			p.Table = strings.TrimSuffix(rest, "-schema")
			schema = append(schema, p)
		default:
			if rest == "" {
				continue // not a mydumper file name
			}
			p.Phase = DataPhase
			t := rest
			if i := strings.LastIndexByte(t, '.'); i >= 0 && isDigits(t[i+1:]) {
				t = t[:i]
			}
			p.Table = t
			data = append(data, p)
		}
	}
	if len(schemaCreate)+len(schema)+len(data) == 0 {
		return "", nil, badInput("%s: neither a mydumper directory (no *-schema.sql files) nor a pg_dump directory (no toc.dat)", dir)
	}
	byPath := func(ps []Part) {
		sort.Slice(ps, func(i, j int) bool { return ps[i].Path < ps[j].Path })
	}
	byPath(schemaCreate)
	byPath(schema)
	byPath(post)
	// Largest data files first, so the long ones start early.
	sort.SliceStable(data, func(i, j int) bool { return data[i].Size > data[j].Size })
	// Views before triggers before routines is mydumper's own order too.
	sort.SliceStable(post, func(i, j int) bool { return postRank(post[i].Path) < postRank(post[j].Path) })
	parts := append(append(append(schemaCreate, schema...), data...), post...)
	return FormatMydumper, parts, nil
}

func postRank(p string) int {
	b := stripCompression(filepath.Base(p))
	switch {
	case strings.HasSuffix(b, "-schema-view.sql"):
		return 0
	case strings.HasSuffix(b, "-schema-triggers.sql"):
		return 1
	}
	return 2
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func stripCompression(name string) string {
	for _, ext := range []string{".gz", ".zst"} {
		if strings.HasSuffix(name, ext) {
			return strings.TrimSuffix(name, ext)
		}
	}
	return name
}

func dirSize(dir string) int64 {
	var n int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && !fi.IsDir() {
			n += fi.Size()
		}
	}
	return n
}

// findPgRestore finds pg_restore in PATH or in PostgreSQL's own bin
// directories.
func findPgRestore() (string, error) {
	if p, err := exec.LookPath("pg_restore"); err == nil {
		return p, nil
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_restore")
	m2, _ := filepath.Glob("/usr/pgsql-*/bin/pg_restore")
	m = append(m, m2...)
	if len(m) > 0 {
		sort.Strings(m)
		return m[len(m)-1], nil
	}
	return "", badInput("a pg_dump custom/directory archive needs pg_restore, which is not installed: install the PostgreSQL client, or make a plain SQL dump (pg_dump -Fp, or pg_restore -f dump.sql ARCHIVE elsewhere)")
}

// decompress wraps r by its magic bytes: gzip, zstd or plain.
func decompress(f io.Reader, name string) (io.Reader, func(), error) {
	br := bufio.NewReaderSize(f, 256<<10)
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, badInput("%s: %v", name, err)
		}
		return corruptReader{zr, name, "gzip"}, func() { zr.Close() }, nil
	case bytes.HasPrefix(head, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, badInput("%s: %v", name, err)
		}
		return corruptReader{zr, name, "zstd"}, zr.Close, nil
	}
	return br, func() {}, nil
}

// corruptReader makes a decompressor's errors bad input naming the file:
// a corrupt or cut-off .gz or .zst is the dump's fault.
type corruptReader struct {
	r          io.Reader
	name, kind string
}

func (c corruptReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		var bi *BadInputError
		if !errors.As(err, &bi) {
			err = badInput("%s: corrupt or cut-off %s data: %v", c.name, c.kind, err)
		}
	}
	return n, err
}

// Counter counts bytes read from the files on disk; safe for concurrent use.
type Counter struct{ n atomic.Int64 }

// Load returns the bytes read so far.
func (c *Counter) Load() int64 {
	if c == nil {
		return 0
	}
	return c.n.Load()
}

type countingReader struct {
	r io.Reader
	c *Counter
}

func (r countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if r.c != nil {
		r.c.n.Add(int64(n))
	}
	return n, err
}

// Reader yields the classified statements of one part.
type Reader struct {
	Part   Part
	syntax Syntax
	sc     *Scanner
	closer func() error
	name   string
	server Server
	// follow: read included files (Dump.FollowIncludes); root is the
	// directory they must be in; inc the files being included, the
	// innermost last.
	follow  bool
	root    string
	counter *Counter
	inc     []includeFrame
}

// includeFrame is an included file being read.
type includeFrame struct {
	sc     *Scanner
	name   string
	closer func() error
}

// OpenPart opens one part for reading; bytes read from disk are added to c.
// An archive part runs pg_restore, which ctx ends.
func (d *Dump) OpenPart(ctx context.Context, p Part, c *Counter) (*Reader, error) {
	if p.archive {
		return d.openArchive(ctx, p, c)
	}
	f, err := os.Open(p.Path)
	if err != nil {
		return nil, badInput("%v", err)
	}
	r, closeZ, err := decompress(countingReader{f, c}, p.Path)
	if err != nil {
		f.Close()
		return nil, err
	}
	sc := NewScanner(r, p.Path, d.Syntax)
	if d.Format == FormatMydumper {
		sc.LineDelimited()
	}
	return &Reader{Part: p, syntax: d.Syntax, sc: sc, name: p.Path, server: d.Server,
		follow: d.FollowIncludes, root: filepath.Dir(p.Path), counter: c,
		closer: func() error { closeZ(); return f.Close() }}, nil
}

// openArchive streams pg_restore's plain SQL output.
func (d *Dump) openArchive(ctx context.Context, p Part, c *Counter) (*Reader, error) {
	cmd := exec.CommandContext(ctx, d.PgRestore, "--no-owner", "--no-privileges", "-f", "-", p.Path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", d.PgRestore, err)
	}
	size := p.Size
	// Bytes of an archive are counted as pg_restore's output, scaled to
	// never pass the archive's size: a rough progress measure.
	cr := &archiveCounter{r: out, c: c, limit: size}
	name := p.Path + " (via pg_restore)"
	return &Reader{Part: p, syntax: Postgres, sc: NewScanner(bufio.NewReaderSize(cr, 256<<10), name, Postgres), name: name,
		closer: func() error {
			io.Copy(io.Discard, out)
			if err := cmd.Wait(); err != nil && ctx.Err() == nil {
				return badInput("pg_restore %s: %v: %s", p.Path, err, strings.TrimSpace(stderr.String()))
			}
			return nil
		}}, nil
}

type archiveCounter struct {
	r     io.Reader
	c     *Counter
	limit int64
	seen  int64
}

func (a *archiveCounter) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if a.c != nil && a.seen < a.limit {
		add := int64(n) / 4 // plain SQL is a few times larger than the archive
		if a.seen+add > a.limit {
			add = a.limit - a.seen
		}
		a.seen += add
		a.c.n.Add(add)
	}
	return n, err
}

// Name is the file name statements are located in.
func (r *Reader) Name() string { return r.name }

// Next returns the next statement, or io.EOF. Statements of included
// files (Dump.FollowIncludes) come in the place of their client command,
// located in their own file.
func (r *Reader) Next() (Statement, error) {
	for {
		sc, name := r.sc, r.name
		if n := len(r.inc); n > 0 {
			sc, name = r.inc[n-1].sc, r.inc[n-1].name
		}
		raw, err := sc.Next()
		if errors.Is(err, io.EOF) && len(r.inc) > 0 {
			top := r.inc[len(r.inc)-1]
			r.inc = r.inc[:len(r.inc)-1]
			top.closer()
			continue
		}
		if err != nil {
			return Statement{}, err
		}
		st, err := Classify(raw, r.syntax, name, r.server)
		if err != nil || st.Include == "" {
			return st, err
		}
		if err := r.include(&st); err != nil {
			return st, err
		}
	}
}

// include opens the file st's client command names.
func (r *Reader) include(st *Statement) error {
	cmd := strings.Fields(st.SQL)[0]
	if !r.follow {
		return badInput("%s: client command %s %s: dbarena does not run client commands unless asked: load with --follow-includes to read the file (relative to the dump), or give the files to dbarena load in order",
			st.Where(), cmd, strconvQuote(st.Include))
	}
	if len(r.inc) >= maxIncludeDepth {
		return badInput("%s: client command %s %s: includes nested deeper than %d (a file including itself?)", st.Where(), cmd, strconvQuote(st.Include), maxIncludeDepth)
	}
	p := unquoteInclude(st.Include)
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(st.File), p)
	}
	real, err := absReal(p)
	if err != nil {
		return badInput("%s: client command %s %s: %v", st.Where(), cmd, strconvQuote(st.Include), err)
	}
	root, err := absReal(r.root)
	if err != nil {
		return badInput("%s: %v", st.Where(), err)
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return badInput("%s: client command %s %s: the file is outside the dump's directory %s: dbarena reads included files only there",
			st.Where(), cmd, strconvQuote(st.Include), r.root)
	}
	f, err := os.Open(real)
	if err != nil {
		return badInput("%s: client command %s %s: %v", st.Where(), cmd, strconvQuote(st.Include), err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return badInput("%s: client command %s %s: not a regular file", st.Where(), cmd, strconvQuote(st.Include))
	}
	zr, closeZ, err := decompress(countingReader{f, r.counter}, p)
	if err != nil {
		f.Close()
		return err
	}
	r.inc = append(r.inc, includeFrame{sc: NewScanner(zr, p, r.syntax), name: p,
		closer: func() error { closeZ(); return f.Close() }})
	return nil
}

// absReal is p absolute with its symbolic links resolved.
func absReal(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(a)
}

// unquoteInclude removes the quotes psql allows around a file name.
func unquoteInclude(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// Close releases the file and any included ones (and waits for
// pg_restore, reporting its error).
func (r *Reader) Close() error {
	for i := len(r.inc) - 1; i >= 0; i-- {
		r.inc[i].closer()
	}
	r.inc = nil
	return r.closer()
}
