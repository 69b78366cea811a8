package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/dbarena/dbarena/internal/server/target"
)

// engine is one flavor family's way to provision a server. Implementations
// are pure apart from Bootstrap: they build commands and files, and the
// Manager runs and writes them.
type engine interface {
	// Flavor is the server flavor the engine drives.
	Flavor() target.Flavor
	// Layout places the sandbox's files. dir is home/sandboxes/NAME;
	// serverDir is where files the server process must own go (dir itself
	// unless the server cannot run as the current user); port may name
	// the socket.
	Layout(dir, serverDir string, port int) layout
	// RenderConfig renders the config files of the sandbox.
	RenderConfig(c serverConfig) ([]configFile, error)
	// InitCommand creates a fresh data directory.
	InitCommand(c serverConfig) command
	// StartCommand runs the server in the foreground.
	StartCommand(c serverConfig) command
	// ConfigBeforeInit reports whether the config files must exist before
	// InitCommand runs (my.cnf) or are written into the fresh data
	// directory after it (postgresql.conf).
	ConfigBeforeInit() bool
	// StopSignal asks the server for a clean, fast shutdown.
	StopSignal() syscall.Signal
	// AdminTarget is the superuser's access through the unix socket.
	AdminTarget(c serverConfig) target.Target
	// Bootstrap creates the workload database and account (idempotent;
	// an existing account gets the password again).
	Bootstrap(ctx context.Context, admin target.Target, a account) error
}

// layout is where one sandbox keeps its files.
type layout struct {
	// Dir is home/sandboxes/NAME: sandbox.json, password, error log, my.cnf.
	Dir string `json:"dir"`
	// ServerDir holds files owned by the server's OS user.
	ServerDir string `json:"server_dir"`
	Datadir   string `json:"datadir"`
	// RunDir holds the unix socket; it is short enough for sun_path.
	RunDir   string `json:"run_dir"`
	Socket   string `json:"socket"`
	PIDFile  string `json:"pid_file"`
	ErrorLog string `json:"error_log"`
	// TmpDir is the server's temporary directory, if it has one of its own.
	TmpDir string `json:"tmp_dir,omitempty"`
	// Config is the main config file.
	Config string `json:"config"`
}

// owned lists the directories Remove deletes, deepest-first not required.
func (l layout) owned() []string {
	out := []string{l.Dir}
	for _, d := range []string{l.ServerDir, l.RunDir} {
		if d != "" && !within(d, l.Dir) {
			out = append(out, d)
		}
	}
	return out
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && (len(rel) < 3 || rel[:3] != "../")
}

// serverConfig is the typed input of config rendering and commands.
type serverConfig struct {
	Layout  layout
	Binary  Binary
	Basedir string // "" for system binaries
	Port    int
	Profile string
	// Settings are the user's --set values, applied after the profile.
	Settings []Setting
	// BufferPool is in bytes.
	BufferPool int64
	// AsRoot reports whether the server runs as root (--user=root for mysqld).
	AsRoot bool
	// FileLimit is the hard RLIMIT_NOFILE the server starts with, 0 when
	// unknown.
	FileLimit uint64
	// PasswordFile holds the superuser's password while InitCommand runs,
	// for engines that set it there (passwordAtInit).
	PasswordFile string
}

// passwordAtInit is an engine whose InitCommand gives the superuser the
// admin password, read from serverConfig.PasswordFile, so that its server
// trusts no connection from the first start on.
type passwordAtInit interface {
	passwordAtInit()
}

// passwordSetter is an engine that can give the superuser of a stopped
// server's data directory the admin password: for data directories an
// older dbarena made with a passwordless superuser. The returned command
// reads the statements it runs from stdin.
type passwordSetter interface {
	setPasswordCommand(c serverConfig, password string) (cmd command, stdin []byte)
}

// configFile is one rendered file.
type configFile struct {
	Path    string
	Content []byte
}

// command is a program to run.
type command struct {
	Path string
	Args []string
	// Env is added to the process environment (LD_PRELOAD=...).
	Env []string
}

// String renders the command for error messages.
func (c command) String() string {
	s := c.Path
	for _, a := range c.Args {
		s += " " + a
	}
	return s
}

// account is the workload account Bootstrap creates.
type account struct {
	User, Password, Database string
}

// engineFor picks the engine of a server binary.
func engineFor(b Binary) (engine, error) {
	switch b.Flavor {
	case target.FlavorMariaDB:
		return mariadbEngine{mysqlFamily: mysqlFamily{bin: b}}, nil
	case target.FlavorMySQL, target.FlavorPercona:
		if !versionAtLeast(b.Version, minMySQLVersion) {
			return nil, fmt.Errorf("%s %s is too old: sandboxes need %s or newer", b.Flavor, b.Version, minMySQLVersion)
		}
		if oldMySQL(b) {
			return mysqlOldEngine{mysqlFamily: mysqlFamily{bin: b}}, nil
		}
		return mysqlEngine{mysqlFamily: mysqlFamily{bin: b}}, nil
	case target.FlavorPostgres:
		return postgresEngine{bin: b}, nil
	}
	return nil, fmt.Errorf("no sandbox engine for flavor %q", b.Flavor)
}

// shortRunDir returns preferred if a socket named sockName fits in
// sun_path there, else a short directory under the system temp dir derived
// from preferred.
func shortRunDir(preferred, sockName string) string {
	const sunPathMax = 107 // 108 bytes including the NUL
	if len(preferred)+1+len(sockName) <= sunPathMax {
		return preferred
	}
	return filepath.Join(shortTempRoot(), "dbarena-"+shortHash(preferred))
}

// shortTempRoot is $TMPDIR when short, else /tmp.
func shortTempRoot() string {
	if t := os.TempDir(); len(t) <= 40 {
		return t
	}
	return "/tmp"
}
