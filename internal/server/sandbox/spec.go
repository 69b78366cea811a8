// Package sandbox provisions database servers that dbarena starts itself:
// one data directory, socket, port, pid file, error log and rendered config
// file per sandbox, bound to 127.0.0.1 only, with a workload account ready.
//
// A Manager owns the sandboxes under $DBARENA_HOME/sandboxes/NAME. The
// per-flavor differences (how to initialise a data directory, start the
// server, render its config and create the account) live behind the small
// engine interface, with one implementation per flavor family.
package sandbox

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/server/target"
)

// Profiles name a set of durability and memory settings.
const (
	// ProfileDefault keeps the server's defaults, with a modest buffer pool.
	ProfileDefault = "default"
	// ProfileDurable flushes and syncs every commit (binary log on for the MySQL family).
	ProfileDurable = "durable"
	// ProfileFast relaxes durability for throughput: no sync on commit, no
	// binary log, no doublewrite / full page writes.
	ProfileFast = "fast"
)

// Defaults applied by Start when a Spec leaves a field empty.
const (
	DefaultUser     = "dbarena"
	DefaultDatabase = "sbtest"
	// DefaultBufferPool is the buffer pool (InnoDB) or shared_buffers
	// (PostgreSQL) size of the default profile.
	DefaultBufferPool = "128M"
)

// Spec describes a sandbox to start. The zero value of each field means
// "default" for a new sandbox and "keep what is recorded" for an existing one.
type Spec struct {
	// Name is the sandbox name, [a-zA-Z0-9_-]{1,32}.
	Name string `json:"name"`
	// Flavor selects the server; "" picks the first discovered binary
	// (MySQL family first).
	Flavor target.Flavor `json:"flavor,omitempty"`
	// Basedir is an unpacked server directory (bin/, sbin/, share/...);
	// "" uses discovered system binaries.
	Basedir string `json:"basedir,omitempty"`
	// Port is the TCP port on 127.0.0.1; 0 picks a free one.
	Port int `json:"port,omitempty"`
	// Profile is "default", "durable" or "fast".
	Profile string `json:"profile,omitempty"`
	// Settings are extra server settings applied in order after the
	// profile (--set KEY=VALUE). When non-empty they replace the recorded
	// settings of an existing sandbox.
	Settings []Setting `json:"settings,omitempty"`
	// BufferPool sizes innodb_buffer_pool_size or shared_buffers, e.g. "256M".
	BufferPool string `json:"buffer_pool,omitempty"`
	// User is the workload account (default "dbarena").
	User string `json:"user,omitempty"`
	// Password of the workload account; "" generates one for a new sandbox
	// and keeps the recorded one otherwise. Never serialised.
	Password string `json:"-"`
	// Database is created for the workload account (default "sbtest").
	Database string `json:"database,omitempty"`
	// Allocator is a memory allocator preloaded into the server
	// (LD_PRELOAD): "jemalloc" (Debian libjemalloc2), "tcmalloc" (Debian
	// libtcmalloc-minimal4) or "system" for the C library's; "" keeps the
	// recorded choice.
	Allocator string `json:"allocator,omitempty"`
	// TLS gives the server a generated CA and certificate (127.0.0.1,
	// localhost) and turns TLS on; once on, it stays on.
	TLS bool `json:"tls,omitempty"`
	// AllowUnsafe lets Settings hold unsafe settings (see UnsafeSetting):
	// ones that run code, load libraries, open listeners or reach files
	// outside the sandbox (--allow-unsafe-set). Never recorded: every
	// start that brings new settings says so again.
	AllowUnsafe bool `json:"-"`
}

// allocatorLibs are the shared libraries of each preloadable allocator,
// first found wins.
func allocatorLibs(name string) []string {
	switch name {
	case "jemalloc":
		return []string{"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
			"/usr/lib/libjemalloc.so.2", "/usr/lib64/libjemalloc.so.2"}
	case "tcmalloc":
		return []string{"/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4", "/usr/lib/aarch64-linux-gnu/libtcmalloc_minimal.so.4",
			"/usr/lib/libtcmalloc_minimal.so.4", "/usr/lib64/libtcmalloc_minimal.so.4"}
	}
	return nil
}

// allocatorPreload returns the library to preload for an allocator, "" for
// the system allocator.
func allocatorPreload(name string) (string, error) {
	if name == "" || name == "system" {
		return "", nil
	}
	for _, p := range allocatorLibs(name) {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	pkg := map[string]string{"jemalloc": "libjemalloc2", "tcmalloc": "libtcmalloc-minimal4"}[name]
	return "", fmt.Errorf("allocator %s: library not found (install Debian's %s)", name, pkg)
}

// Setting is one server setting (a my.cnf option or a postgresql.conf parameter).
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// String renders the setting as KEY=VALUE.
func (s Setting) String() string { return s.Key + "=" + s.Value }

var (
	nameRE     = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,32}$`)
	settingRE  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,127}$`)
	accountRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,31}$`)
	databaseRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	sizeRE     = regexp.MustCompile(`^(?i)([0-9]{1,12})([KMGT]?)B?$`)
)

// managedSettings are settings the sandbox owns: changing them would break
// its bookkeeping, so they are refused even with AllowUnsafe (the unsafe
// ones are in unsafe.go). Keys are normalised (lower case, '_'), and match
// with MySQL's loose-/maximum- prefixes too.
var managedSettings = map[string]string{
	"port":                    "use the port field (--port)",
	"socket":                  "the sandbox owns its socket",
	"datadir":                 "the sandbox owns its data directory",
	"basedir":                 "use the basedir field (--basedir)",
	"pid_file":                "the sandbox owns its pid file",
	"log_error":               "the sandbox owns its error log",
	"user":                    "the sandbox chooses the server's OS user",
	"unix_socket_directories": "the sandbox owns its socket",
	"unix_socket_permissions": "the sandbox owns its socket",
	"unix_socket_group":       "the sandbox owns its socket",
	"data_directory":          "the sandbox owns its data directory",
	"hba_file":                "the sandbox owns pg_hba.conf",
	"ident_file":              "the sandbox owns its config files",
	"config_file":             "the sandbox owns its config files",
	"external_pid_file":       "the sandbox owns its pid file",
}

// managedNames are managedSettings' names in order.
var managedNames = slices.Sorted(maps.Keys(managedSettings))

// normKey normalises a setting name for comparisons: MySQL treats '-' and
// '_' alike, and both servers ignore case.
func normKey(k string) string {
	return strings.ToLower(strings.ReplaceAll(k, "-", "_"))
}

// ParseSetting parses "KEY=VALUE". The value may be empty; it may not
// contain line breaks or NUL bytes, and the key may not be a setting the
// sandbox owns. Unsafe settings are Spec.Validate's business (they depend
// on the flavor).
func ParseSetting(s string) (Setting, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return Setting{}, fmt.Errorf("setting %q: want KEY=VALUE", s)
	}
	st := Setting{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)}
	if err := st.validate(); err != nil {
		return Setting{}, err
	}
	return st, nil
}

func (s Setting) validate() error {
	if !settingRE.MatchString(s.Key) {
		return fmt.Errorf("setting %q: bad name (want letters, digits, '_', '-', '.')", s.Key)
	}
	for _, k := range mysqlNames(normKey(s.Key)) {
		if why, ok := managedSettings[k]; ok {
			return fmt.Errorf("setting %q cannot be set: %s", s.Key, why)
		}
		if full, ok := abbreviates(k, managedNames); ok {
			return fmt.Errorf("setting %q cannot be set: the MySQL family reads it as %s: %s", s.Key, full, managedSettings[full])
		}
	}
	if strings.ContainsAny(s.Value, "\n\r\x00") {
		return fmt.Errorf("setting %q: value contains a line break or NUL byte", s.Key)
	}
	return nil
}

// Validate reports every problem of the spec at once. Empty fields are
// valid: they mean "default".
func (s Spec) Validate() []error {
	var errs []error
	if !nameRE.MatchString(s.Name) {
		errs = append(errs, fmt.Errorf("name %q: want 1-32 of [a-zA-Z0-9_-]", s.Name))
	}
	var flavor target.Flavor // "" (unknown yet) checks every flavor's unsafe settings
	if s.Flavor != "" {
		f, err := target.ParseFlavor(string(s.Flavor))
		if err != nil {
			errs = append(errs, err)
		}
		flavor = f
	}
	if s.Port < 0 || s.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d: want 1-65535, or 0 to pick a free one", s.Port))
	}
	switch s.Profile {
	case "", ProfileDefault, ProfileDurable, ProfileFast:
	default:
		errs = append(errs, fmt.Errorf("profile %q: want default, durable or fast", s.Profile))
	}
	for _, st := range s.Settings {
		if err := st.validate(); err != nil {
			errs = append(errs, err)
			continue
		}
		if s.AllowUnsafe {
			continue
		}
		if why, bad := UnsafeSetting(flavor, st.Key, st.Value); bad {
			errs = append(errs, fmt.Errorf("setting %q %s: refused without --allow-unsafe-set", st.Key, why))
		}
	}
	if s.BufferPool != "" {
		if _, err := parseSize(s.BufferPool); err != nil {
			errs = append(errs, fmt.Errorf("buffer pool: %w", err))
		}
	}
	if s.User != "" {
		switch {
		case !accountRE.MatchString(s.User):
			errs = append(errs, fmt.Errorf("user %q: want 1-32 of [A-Za-z0-9_], not starting with a digit", s.User))
		case strings.EqualFold(s.User, "root"), strings.EqualFold(s.User, "postgres"),
			strings.EqualFold(s.User, "mysql"), strings.EqualFold(s.User, "mariadb.sys"):
			errs = append(errs, fmt.Errorf("user %q is reserved for the server's superuser", s.User))
		}
	}
	if strings.ContainsAny(s.Password, "\n\r\x00") || len(s.Password) > 128 {
		errs = append(errs, errors.New("password: at most 128 bytes, no line breaks or NUL bytes"))
	}
	switch s.Allocator {
	case "", "system", "jemalloc", "tcmalloc":
	default:
		errs = append(errs, fmt.Errorf("allocator %q: want system, jemalloc or tcmalloc", s.Allocator))
	}
	if s.Database != "" && !databaseRE.MatchString(s.Database) {
		errs = append(errs, fmt.Errorf("database %q: want 1-64 of [A-Za-z0-9_], not starting with a digit", s.Database))
	}
	return errs
}

// parseSize parses a memory size such as "256M", "1G", "128MB" or "65536"
// (bytes) into bytes.
func parseSize(s string) (int64, error) {
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("size %q: want a number with an optional K, M, G or T suffix", s)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("size %q: want a positive number", s)
	}
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[strings.ToUpper(m[2])]
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n << shift, nil
}

// formatSize renders bytes with the largest exact unit, using unit names
// from units (for example "K","M","G" or "kB","MB","GB").
func formatSize(n int64, kilo, mega, giga string) string {
	switch {
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + giga
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + mega
	case n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + kilo
	}
	return strconv.FormatInt(n, 10)
}

// mergeSettings applies over on top of base: a key already present (by
// normalised name) keeps its position and takes the new value; new keys are
// appended in order.
func mergeSettings(base []Setting, over ...Setting) []Setting {
	out := append([]Setting(nil), base...)
	for _, o := range over {
		replaced := false
		for i := range out {
			if normKey(out[i].Key) == normKey(o.Key) {
				out[i].Value = o.Value
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, o)
		}
	}
	return out
}
