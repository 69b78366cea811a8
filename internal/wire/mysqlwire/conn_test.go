package mysqlwire_test

import (
	"database/sql"
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
	. "github.com/dbarena/dbarena/internal/wire/mysqlwire"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// server starts (or reuses) the test binary's MariaDB sandbox and returns
// the wire configuration and a database/sql pool to check results with.
func server(t testing.TB) (Config, *sql.DB) {
	t.Helper()
	tgt := sandboxtest.Start(t, target.FlavorMariaDB)
	cfg := Config{Addr: net.JoinHostPort(tgt.Host, strconv.Itoa(tgt.Port)), User: tgt.User,
		Password: tgt.Password, Database: tgt.Database}
	mc := mysql.NewConfig()
	mc.Net, mc.Addr, mc.User, mc.Passwd, mc.DBName = "tcp", cfg.Addr, cfg.User, cfg.Password, cfg.Database
	c, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return cfg, db
}

func dial(t *testing.T, cfg Config) *Conn {
	t.Helper()
	c, err := Dial(cfg)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPreparedStatements(t *testing.T) {
	cfg, db := server(t)
	c := dial(t, cfg)
	if c.ServerVersion() == "" {
		t.Error("no server version from the greeting")
	}
	if _, err := c.Exec("DROP TABLE IF EXISTS wire_ps", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec("CREATE TABLE wire_ps (id INT PRIMARY KEY, k BIGINT, c VARCHAR(200), f DOUBLE, n INT NULL)", nil); err != nil {
		t.Fatal(err)
	}
	ins, err := c.Prepare("INSERT INTO wire_ps (id, k, c, f, n) VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	if ins.NumParams() != 5 {
		t.Fatalf("NumParams = %d", ins.NumParams())
	}
	for i := 1; i <= 300; i++ {
		var n any
		if i%2 == 0 {
			n = int64(i)
		}
		if got, err := ins.Exec([]any{int64(i), -int64(i) << 40, "row 'x' \\ " + strconv.Itoa(i), float64(i) / 4, n}); err != nil || got != 1 {
			t.Fatalf("insert %d: %d rows, %v", i, got, err)
		}
	}
	if err := ins.Close(); err != nil {
		t.Fatal(err)
	}
	// The rows read back through go-sql-driver are the ones sent.
	var k int64
	var s string
	var f float64
	var n sql.NullInt64
	if err := db.QueryRow("SELECT k, c, f, n FROM wire_ps WHERE id = 7").Scan(&k, &s, &f, &n); err != nil {
		t.Fatal(err)
	}
	if k != -7<<40 || s != "row 'x' \\ 7" || f != 1.75 || n.Valid {
		t.Errorf("row 7 = %d %q %g %v", k, s, f, n)
	}

	// A result set of many rows (over several reads) is skipped whole, and
	// the connection stays in step.
	sel, err := c.Prepare("SELECT id, c FROM wire_ps WHERE id BETWEEN ? AND ?")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := sel.Query([]any{int64(1), int64(300)}); err != nil {
			t.Fatal(err)
		}
	}
	upd, err := c.Prepare("UPDATE wire_ps SET k = k + 1 WHERE id <= ?")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := upd.Exec([]any{int64(10)}); err != nil || got != 10 {
		t.Fatalf("update: %d rows, %v", got, err)
	}
	// Wrong argument counts are the client's error; the server is not asked.
	if _, err := upd.Exec(nil); err == nil {
		t.Error("missing argument accepted")
	}
	if _, err := upd.Exec([]any{struct{}{}}); err == nil {
		t.Error("unsupported argument type accepted")
	}
	if _, err := upd.Exec([]any{int64(0)}); err != nil {
		t.Fatalf("connection out of step after a client-side error: %v", err)
	}
	if _, err := c.Exec("DROP TABLE wire_ps", nil); err != nil {
		t.Fatal(err)
	}
}

func TestTextProtocolEscaping(t *testing.T) {
	cfg, db := server(t)
	c := dial(t, cfg)
	nasty := "a'b\"c\\d\x00e\nf\rg\x1ah ? --"
	for _, mode := range []string{"", "NO_BACKSLASH_ESCAPES"} {
		if _, err := c.Exec("SET SESSION sql_mode = ?", []any{mode}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec("DROP TABLE IF EXISTS wire_txt", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec("CREATE TABLE wire_txt (id INT PRIMARY KEY, s VARBINARY(100), b VARBINARY(10) NULL)", nil); err != nil {
			t.Fatal(err)
		}
		if n, err := c.Exec("INSERT INTO wire_txt VALUES (?, ?, ?), (?, ?, ?)",
			[]any{1, nasty, []byte(nil), int64(2), []byte("x'y"), true}); err != nil || n != 2 {
			t.Fatalf("sql_mode %q: insert: %d rows, %v", mode, n, err)
		}
		var s string
		if err := db.QueryRow("SELECT s FROM wire_txt WHERE id = 1").Scan(&s); err != nil {
			t.Fatal(err)
		}
		if s != nasty {
			t.Errorf("sql_mode %q: stored %q, want %q", mode, s, nasty)
		}
		if err := c.Query("SELECT * FROM wire_txt WHERE s = ?", []any{nasty}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Exec("SELECT ?", []any{1, 2}); err == nil {
		t.Error("extra argument accepted")
	}
	if _, err := c.Exec("DROP TABLE wire_txt", nil); err != nil {
		t.Fatal(err)
	}
}

func TestServerErrors(t *testing.T) {
	cfg, _ := server(t)
	c := dial(t, cfg)
	_, err := c.Exec("SELEC 1", nil)
	var we *Error
	if !errors.As(err, &we) || we.Number != 1064 || we.SQLState != "42000" {
		t.Fatalf("syntax error = %v", err)
	}
	if _, err := c.Prepare("SELECT * FROM no_such_table WHERE id = ?"); !errors.As(err, &we) || we.Number != 1146 {
		t.Fatalf("prepare of a missing table = %v", err)
	}
	// The connection goes on after errors.
	if err := c.Query("SELECT 1", nil); err != nil {
		t.Fatal(err)
	}

	bad := cfg
	bad.Password = "wrong-password"
	if _, err := Dial(bad); !errors.As(err, &we) || we.Number != 1045 {
		t.Fatalf("wrong password = %v", err)
	}
	if _, err := Dial(Config{Addr: "127.0.0.1:1", User: "x"}); err == nil {
		t.Fatal("dial to a closed port succeeded")
	}
}

func TestAbort(t *testing.T) {
	cfg, _ := server(t)
	c := dial(t, cfg)
	done := make(chan error, 1)
	go func() { done <- c.Query("SELECT SLEEP(30)", nil) }()
	time.Sleep(200 * time.Millisecond)
	c.Abort()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("aborted statement = %v, want ErrClosed", err)
	}
	if err := c.Query("SELECT 1", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("statement after Abort = %v, want ErrClosed", err)
	}
	c.Abort() // twice is fine
}

func TestUnixSocket(t *testing.T) {
	cfg, db := server(t)
	if err := db.QueryRow("SELECT @@socket").Scan(&cfg.Socket); err != nil {
		t.Fatal(err)
	}
	c := dial(t, cfg)
	if err := c.Query("SELECT 1", nil); err != nil {
		t.Fatal(err)
	}
}

// TestHandshakeTimeout: a server that accepts but never greets makes Dial
// fail after Config.Timeout instead of waiting for ever.
func TestHandshakeTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			time.Sleep(5 * time.Second)
		}
	}()
	_, err = Dial(Config{Addr: ln.Addr().String(), User: "x", Timeout: 200 * time.Millisecond})
	if !errors.Is(err, syscall.ETIMEDOUT) {
		t.Fatalf("Dial to a silent server = %v, want a timeout", err)
	}
}

// TestAbortAfterClose: Abort of a closed Conn does nothing, even when the
// next connection was given the closed one's descriptor number.
func TestAbortAfterClose(t *testing.T) {
	cfg, _ := server(t)
	first, err := Dial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fd := FD(first)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := dial(t, cfg)
	if FD(second) != fd {
		t.Skipf("descriptor %d not reused (the next one is %d)", fd, FD(second))
	}
	first.Abort()
	if err := second.Query("SELECT 1", nil); err != nil {
		t.Fatalf("connection on the reused descriptor after Abort of the closed one: %v", err)
	}
	if err := first.Query("SELECT 1", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("statement on a closed Conn = %v, want ErrClosed", err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

// TestKeepAlive: a TCP connection sends small packets at once and probes a
// silent server (KeepAliveIdle, KeepAliveInterval, KeepAliveCount,
// UserTimeout).
func TestKeepAlive(t *testing.T) {
	cfg, _ := server(t)
	fd := FD(dial(t, cfg))
	const tcpUserTimeout = 0x12
	for _, o := range []struct {
		name       string
		level, opt int
		want       int
	}{
		{"TCP_NODELAY", syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1},
		{"SO_KEEPALIVE", syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{"TCP_KEEPIDLE", syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, int(KeepAliveIdle.Seconds())},
		{"TCP_KEEPINTVL", syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, int(KeepAliveInterval.Seconds())},
		{"TCP_KEEPCNT", syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, KeepAliveCount},
		{"TCP_USER_TIMEOUT", syscall.IPPROTO_TCP, tcpUserTimeout, int(UserTimeout.Milliseconds())},
	} {
		if got, err := syscall.GetsockoptInt(fd, o.level, o.opt); err != nil || got != o.want {
			t.Errorf("%s = %d (%v), want %d", o.name, got, err, o.want)
		}
	}
}
