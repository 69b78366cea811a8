package credentials

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

func TestPgpass(t *testing.T) {
	const file = "# comment\n" +
		"too:few:fields\n" +
		"db1.example:5432:sales:alice:a\\:b\\\\c:ignored\n" +
		"\\*:*:*:bob:literal-star-host\n" +
		"*:6543:*:bob:bob-6543\r\n" +
		"localhost:*:*:*:local\n" +
		"*:*:*:*:fallback\n"
	entries, err := ParsePgpass(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host, port, db, user string
		want                 string
		line                 int
	}{
		{"db1.example", "5432", "sales", "alice", `a:b\c`, 3},
		{"db2", "6543", "x", "bob", "bob-6543", 5},
		{"*", "1", "x", "bob", "literal-star-host", 4},
		{"localhost", "5432", "x", "carol", "local", 6},
		{"elsewhere", "5432", "x", "carol", "fallback", 7},
	}
	for _, tt := range tests {
		e, ok := LookupPgpass(entries, tt.host, tt.port, tt.db, tt.user)
		if !ok || e.Password != tt.want || e.Line != tt.line {
			t.Errorf("%s:%s:%s:%s -> %q line %d (%v), want %q line %d", tt.host, tt.port, tt.db, tt.user,
				e.Password, e.Line, ok, tt.want, tt.line)
		}
	}
	if _, ok := LookupPgpass(entries[:2], "db9", "5432", "x", "bob"); ok {
		t.Error("a literal \\* host matched another host")
	}
}

func TestOptionFile(t *testing.T) {
	const file = "; comment\n!includedir /etc/mysql/conf.d\n[mysqld]\npassword=server-side\n" +
		"[client]\nuser = u\npassword = \"two words # not a comment\" # a comment\n" +
		"[client-mariadb]\nskip_ssl\n[dbarena]\npassword='esc\\\\aped\\s\\x'\n"
	of, err := ParseOptionFile(strings.NewReader(file), "my.cnf")
	if err != nil {
		t.Fatal(err)
	}
	if v := of.Groups["client"]["password"]; v.Value != "two words # not a comment" || v.Line != 7 {
		t.Errorf("client password = %+v", v)
	}
	if !of.Groups["client-mariadb"]["skip-ssl"].Bare {
		t.Errorf("bare option: %+v", of.Groups["client-mariadb"])
	}
	if v, ok := of.Password(); !ok || v.Value != `esc\aped \x` || v.Line != 11 {
		t.Errorf("Password() = %+v, %v; want the [dbarena] one", v, ok)
	}

	for _, tt := range []struct{ in, want string }{
		{"password=secret-1\n", "my.cnf:1: option before any [group]"},
		{"[client]\n[client\npassword=secret-2\n", "my.cnf:2: group line without ']'"},
	} {
		_, err := ParseOptionFile(strings.NewReader(tt.in), "my.cnf")
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: err = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func write(t *testing.T, dir, name, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResolveOrder(t *testing.T) {
	home := t.TempDir()
	pwFile := write(t, home, "pw", "from-file\nsecond line\n", 0o600)
	write(t, home, ".pgpass", "*:*:*:*:from-pgpass\n", 0o600)
	write(t, home, ".my.cnf", "[client]\npassword=from-mycnf\n", 0o600)
	env := map[string]string{"HOME": home, "DBARENA_PASSWORD": "from-dbarena", "MYSQL_PWD": "from-mysql-pwd", "PGPASSWORD": "from-pgpassword"}
	getenv := func(k string) string { return env[k] }
	my := target.Target{Flavor: target.FlavorMySQL, Host: "h", Port: 3306, User: "u", Database: "d"}
	pg := target.Target{Flavor: target.FlavorPostgres, Host: "h", Port: 5432, User: "u", Database: "d"}

	steps := []struct {
		drop           string // removed before this step
		wantMy, wantPg string
	}{
		{"", "from-file", "from-file"},
		{"file", "from-dbarena", "from-dbarena"},
		{"DBARENA_PASSWORD", "from-mysql-pwd", "from-pgpassword"},
		{"conventional", "from-mycnf", "from-pgpass"},
	}
	file := pwFile
	for _, st := range steps {
		switch st.drop {
		case "file":
			file = ""
		case "DBARENA_PASSWORD":
			delete(env, "DBARENA_PASSWORD")
		case "conventional":
			delete(env, "MYSQL_PWD")
			delete(env, "PGPASSWORD")
		}
		for _, c := range []struct {
			tg   target.Target
			want string
		}{{my, st.wantMy}, {pg, st.wantPg}} {
			tg := c.tg
			src, err := Resolve(&tg, Sources{PasswordFile: file, PasswordEnv: DefaultEnv, Getenv: getenv})
			if err != nil || tg.Password != c.want || src == "" {
				t.Errorf("after dropping %q, %s: password %q from %q (%v), want %q", st.drop, tg.Flavor, tg.Password, src, err, c.want)
			}
		}
	}

	withPw := my
	withPw.Password = "typed"
	if _, err := Resolve(&withPw, Sources{PasswordFile: pwFile, Getenv: getenv}); err != nil || withPw.Password != "typed" {
		t.Errorf("a DSN password was replaced: %q, %v", withPw.Password, err)
	}
}

func TestResolveIgnoresOpenFiles(t *testing.T) {
	home := t.TempDir()
	write(t, home, ".pgpass", "*:*:*:*:from-pgpass\n", 0o644)
	write(t, home, ".my.cnf", "[client]\npassword=from-mycnf\n", 0o666)
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	for _, fl := range []target.Flavor{target.FlavorPostgres, target.FlavorMariaDB} {
		var warned []string
		tg := target.Target{Flavor: fl, Host: "h", Port: 1, User: "u", Database: "d"}
		src, err := Resolve(&tg, Sources{Getenv: getenv, Warn: func(s string) { warned = append(warned, s) }})
		if err != nil || tg.Password != "" || src != "" {
			t.Errorf("%s: got %q from %q (%v), want the file ignored", fl, tg.Password, src, err)
		}
		if len(warned) != 1 || !strings.Contains(warned[0], "ignored") || strings.Contains(warned[0], "from-") {
			t.Errorf("%s: warnings %q", fl, warned)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	dir := t.TempDir()
	empty := write(t, dir, "empty", "\nsecret-x\n", 0o600)
	bad := write(t, dir, "bad.cnf", "[client]\n[oops\npassword=secret-y\n", 0o600)
	for _, c := range []struct {
		s    Sources
		want string
	}{
		{Sources{PasswordFile: empty}, "--password-file " + empty + ":1: empty password line"},
		{Sources{PasswordFile: filepath.Join(dir, "none")}, "--password-file: open"},
		{Sources{OptionFile: bad}, bad + ":2: group line without ']'"},
		{Sources{OptionFile: filepath.Join(dir, "none.cnf")}, "--mysql-option-file: stat"},
	} {
		tg := target.Target{Flavor: target.FlavorMySQL, Host: "h", Port: 1, User: "u"}
		_, err := Resolve(&tg, c.s)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("err = %v, want prefix %q", err, c.want)
		}
	}
}

func TestPgpassHost(t *testing.T) {
	for _, c := range []struct {
		tg   target.Target
		want string
	}{
		{target.Target{Host: "db"}, "db"},
		{target.Target{Socket: "/var/run/postgresql"}, "localhost"},
		{target.Target{Socket: "/tmp/.s.PGSQL.5432"}, "localhost"},
		{target.Target{Socket: "/srv/pg/.s.PGSQL.5433"}, "/srv/pg"},
	} {
		if got := pgpassHost(&c.tg); got != c.want {
			t.Errorf("%+v: %q, want %q", c.tg, got, c.want)
		}
	}
}
