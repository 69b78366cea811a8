// Package target describes the database server a command talks to: its
// protocol family, flavor, version and connection settings, parsed from a DSN
// or filled in by a sandbox.
package target

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/secret"
)

// Family is the wire protocol family of a server.
type Family string

// The protocol families dbarena speaks.
const (
	MySQL    Family = "mysql"
	Postgres Family = "postgres"
)

// Flavor is the server product within a family.
type Flavor string

// Known flavors. MariaDB, MySQL and Percona speak the MySQL protocol.
const (
	FlavorMariaDB  Flavor = "mariadb"
	FlavorMySQL    Flavor = "mysql"
	FlavorPercona  Flavor = "percona"
	FlavorPostgres Flavor = "postgres"
)

// families maps each known flavor to its protocol family: the built-in
// ones, and those the flavor registry (package dialect) adds.
var families = map[Flavor]Family{
	FlavorMariaDB:  MySQL,
	FlavorMySQL:    MySQL,
	FlavorPercona:  MySQL,
	FlavorPostgres: Postgres,
}

// defaultPorts are the families' default TCP ports.
var defaultPorts = map[Family]int{MySQL: 3306, Postgres: 5432}

// RegisterFlavor makes f a known flavor of family fam (ParseFlavor, DSN
// schemes). The flavor registry calls it at init for every flavor it
// lists; it is not safe to call concurrently with anything else.
func RegisterFlavor(f Flavor, fam Family) { families[f] = fam }

// flavorNames lists the known flavors for messages, sorted.
func flavorNames() string {
	names := make([]string, 0, len(families))
	for f := range families {
		names = append(names, string(f))
	}
	sort.Strings(names)
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// schemeAliases are the other names of flavors in DSN schemes and plans.
var schemeAliases = map[string]Flavor{"postgresql": FlavorPostgres, "pgsql": FlavorPostgres}

// lookup finds a flavor by its name or an alias (postgresql, pgsql),
// case-insensitively.
func lookup(name string) (Flavor, Family, bool) {
	f := Flavor(strings.ToLower(name))
	if a, ok := schemeAliases[string(f)]; ok {
		f = a
	}
	fam, ok := families[f]
	return f, fam, ok
}

// FamilyOf is the protocol family of a flavor named as a DSN scheme or a
// plan writes it (mariadb, mysql, percona, postgres, postgresql, pgsql).
func FamilyOf(name string) (Family, bool) {
	_, fam, ok := lookup(name)
	return fam, ok
}

// ParseFlavor validates a flavor name.
func ParseFlavor(s string) (Flavor, error) {
	f := Flavor(strings.ToLower(s))
	if _, ok := families[f]; ok {
		return f, nil
	}
	return "", fmt.Errorf("unknown flavor %q (want %s)", s, flavorNames())
}

// Family returns the protocol family of the flavor (MySQL for an unknown
// one).
func (f Flavor) Family() Family {
	if fam, ok := families[f]; ok {
		return fam
	}
	return MySQL
}

// Target is everything needed to connect to one server. Password is secret:
// it never appears in String, MaskedDSN or any JSON form of a Target.
type Target struct {
	Flavor   Flavor `json:"flavor"`
	Version  string `json:"version,omitempty"`
	Host     string `json:"host,omitempty"`
	Port     int    `json:"port,omitempty"`
	Socket   string `json:"socket,omitempty"`
	User     string `json:"user,omitempty"`
	Password string `json:"-"`
	Database string `json:"database,omitempty"`
	// Sandbox is the sandbox name when dbarena started the server itself.
	Sandbox string `json:"sandbox,omitempty"`
	// Params holds extra DSN query parameters (for example sslmode).
	Params map[string]string `json:"-"`
}

// Family returns the protocol family of the target.
func (t Target) Family() Family { return t.Flavor.Family() }

// MaskedDSN renders the target as a DSN with the password replaced by "***".
func (t Target) MaskedDSN() string {
	return strings.Replace(t.dsn("***"), "%2A%2A%2A", "***", 1)
}

// DSN renders the target as a DSN including its password: hand it only to
// code that connects, never to output.
func (t Target) DSN() string { return t.dsn(t.Password) }

func (t Target) dsn(password string) string {
	scheme := string(t.Family())
	u := url.URL{Scheme: scheme, Path: "/" + t.Database}
	if t.User != "" {
		if t.Password != "" {
			u.User = url.UserPassword(t.User, password)
		} else {
			u.User = url.User(t.User)
		}
	}
	if t.Socket != "" {
		u.Host = ""
		q := url.Values{"socket": {t.Socket}}
		u.RawQuery = q.Encode()
	} else {
		u.Host = t.Host + ":" + strconv.Itoa(t.Port)
	}
	return u.String()
}

// String is the masked DSN.
func (t Target) String() string { return t.MaskedDSN() }

// ErrNotDSN reports that a --target value is neither a DSN nor a sandbox reference.
var ErrNotDSN = errors.New("not a DSN")

// ParseDSN parses mysql://USER:PASS@HOST:PORT/DB or postgres://USER:PASS@HOST:PORT/DB.
// A unix socket is given as ?socket=/path (host may then be empty). The
// flavor of a mysql:// DSN is "mysql" until the server reports otherwise.
func ParseDSN(dsn string) (Target, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return Target{}, fmt.Errorf("%w: %q (want mysql://USER:PASS@HOST:PORT/DB or postgres://...)", ErrNotDSN, secret.MaskURL(dsn))
	}
	var t Target
	f, fam, ok := lookup(u.Scheme)
	if !ok {
		return Target{}, fmt.Errorf("unknown DSN scheme %q in %q (want mysql:// or postgres://)", u.Scheme, secret.MaskURL(dsn))
	}
	t.Flavor, t.Port = f, defaultPorts[fam]
	if u.User != nil {
		t.User = u.User.Username()
		t.Password, _ = u.User.Password()
	}
	t.Host = u.Hostname()
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return Target{}, fmt.Errorf("bad port %q in DSN %q", p, secret.MaskURL(dsn))
		}
		t.Port = n
	}
	t.Database = strings.TrimPrefix(u.Path, "/")
	q := u.Query()
	if s := q.Get("socket"); s != "" {
		t.Socket = s
		q.Del("socket")
	}
	if t.Host == "" && t.Socket == "" {
		return Target{}, fmt.Errorf("DSN %q has no host and no ?socket=", secret.MaskURL(dsn))
	}
	if t.Database == "" {
		t.Database = "sbtest"
	}
	for k, v := range q {
		if t.Params == nil {
			t.Params = map[string]string{}
		}
		t.Params[k] = v[len(v)-1]
	}
	return t, nil
}

// Mask replaces every occurrence of the target's password in s, as given
// or as a URL would escape it (user info, path, query); use it on any text
// (driver errors, logs) that might echo a DSN.
func (t Target) Mask(s string) string {
	if t.Password == "" {
		return s
	}
	_, info, _ := strings.Cut(url.UserPassword("u", t.Password).String(), ":")
	for _, p := range []string{t.Password, info, url.PathEscape(t.Password), url.QueryEscape(t.Password)} {
		s = strings.ReplaceAll(s, p, "***")
	}
	return s
}
