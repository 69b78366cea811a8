package sandbox

import (
	"os"
	"strings"

	"github.com/dbarena/dbarena/internal/server/target"
)

// State is the live state of a sandbox.
type State string

// Sandbox states.
const (
	// StateRunning: the recorded server process is alive and accepts connections.
	StateRunning State = "running"
	// StateStopped: the sandbox was stopped (or never started successfully).
	StateStopped State = "stopped"
	// StateDead: the sandbox was started but its process is gone or not answering.
	StateDead State = "dead"
)

// Sandbox is one sandbox as the Manager sees it. Its JSON form never holds
// the password.
type Sandbox struct {
	Name     string        `json:"name"`
	Flavor   target.Flavor `json:"flavor"`
	Version  string        `json:"version"`
	Host     string        `json:"host"`
	Port     int           `json:"port"`
	Socket   string        `json:"socket"`
	User     string        `json:"user"`
	Database string        `json:"database"`
	// PID is the server's process id, recorded while it runs or since it
	// died; 0 when stopped.
	PID     int    `json:"pid"`
	Datadir string `json:"datadir"`
	State   State  `json:"state"`
	Profile string `json:"profile"`
	// Basedir is the unpacked server directory, "" for system binaries.
	Basedir string `json:"basedir,omitempty"`
	// Server is the path of the server binary.
	Server string `json:"server"`
	// Dir is the sandbox directory (home/sandboxes/NAME).
	Dir string `json:"dir"`
	// ErrorLog is the server's error log.
	ErrorLog string `json:"error_log"`
	// Settings are the --set values in force.
	Settings []Setting `json:"settings,omitempty"`
	// Allocator is the preloaded allocator, "" for the system's.
	Allocator string `json:"allocator,omitempty"`
	// TLSCA is the CA certificate of a TLS sandbox's server, for clients
	// that verify it (tls-ca=, sslrootcert=); "" without TLS.
	TLSCA string `json:"tls_ca,omitempty"`
	// ServerUser is the OS user the server runs as, "" for dbarena's own
	// (dbarena not running as root). A root dbarena gives each sandbox a
	// system user of its own (see Manager.ServerUser).
	ServerUser string `json:"server_user,omitempty"`

	password string
	admin    target.Target
}

// Target is the workload account's connection over TCP to 127.0.0.1,
// password included.
func (s *Sandbox) Target() target.Target {
	return target.Target{
		Flavor: s.Flavor, Version: s.Version, Host: s.Host, Port: s.Port,
		User: s.User, Password: s.password, Database: s.Database, Sandbox: s.Name,
	}
}

// AdminTarget is the server superuser's connection through the unix socket
// (root or postgres), with the sandbox's admin password: no sandbox trusts
// a connection without one.
func (s *Sandbox) AdminTarget() target.Target {
	t := s.admin
	t.Sandbox = s.Name
	return t
}

// view builds the public Sandbox of rec.
func (m *Manager) view(rec *record) *Sandbox {
	s := &Sandbox{
		Name: rec.Name, Flavor: rec.Flavor, Version: rec.Version,
		Host: "127.0.0.1", Port: rec.Port, Socket: rec.Layout.Socket,
		User: rec.User, Database: rec.Database, Datadir: rec.Layout.Datadir,
		State: rec.liveState(), Profile: rec.Profile, Basedir: rec.Basedir,
		Server: rec.Server, Dir: rec.Layout.Dir, ErrorLog: rec.Layout.ErrorLog,
		Settings: rec.Settings, Allocator: rec.Allocator, ServerUser: rec.ServerUser,
	}
	s.TLSCA = tlsCAPath(rec)
	if s.State != StateStopped {
		s.PID = rec.PID
	}
	if pw, err := readPassword(rec.Layout.Dir); err == nil {
		s.password = pw
	}
	s.admin = target.Target{Flavor: rec.Flavor, Version: rec.Version, Socket: rec.Layout.Socket, Port: rec.Port}
	if rec.Flavor.Family() == target.Postgres {
		s.admin.User, s.admin.Database = pgSuperuser, "postgres"
	} else {
		s.admin.User = "root"
	}
	if b, err := os.ReadFile(adminPasswordPath(rec.Layout.Dir)); err == nil {
		s.admin.Password = strings.TrimRight(string(b), "\n")
	}
	return s
}
