package sandbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/dialect"
	"github.com/dbarena/dbarena/internal/target"
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
// (root or postgres, no password). Only the owner of the sandbox can use it.
func (s *Sandbox) AdminTarget() target.Target {
	t := s.admin
	t.Sandbox = s.Name
	return t
}

// record is what sandbox.json holds.
type record struct {
	Schema     string        `json:"schema"`
	Name       string        `json:"name"`
	Flavor     target.Flavor `json:"flavor"`
	Version    string        `json:"version"`
	Server     string        `json:"server"`
	Basedir    string        `json:"basedir,omitempty"`
	Port       int           `json:"port"`
	Profile    string        `json:"profile"`
	Settings   []Setting     `json:"settings,omitempty"`
	BufferPool string        `json:"buffer_pool"`
	User       string        `json:"user"`
	Database   string        `json:"database"`
	// Allocator is preloaded into the server (Spec.Allocator); Preload is
	// the library the running server was started with.
	Allocator string `json:"allocator,omitempty"`
	Preload   string `json:"preload,omitempty"`
	// ServerUser is the OS user the server runs as, when not the owner.
	ServerUser string `json:"server_user,omitempty"`
	// State is the recorded intent: running or stopped.
	State State `json:"state"`
	PID   int   `json:"pid,omitempty"`
	// Command is the start command's arguments; the live process must
	// show them in its command line.
	Command     []string  `json:"command,omitempty"`
	Initialized bool      `json:"initialized"`
	Layout      layout    `json:"layout"`
	CreatedAt   time.Time `json:"created_at"`
	StartedAt   time.Time `json:"started_at,omitzero"`
}

const recordSchema = "dbarena.sandbox/v1"

// Manager creates and runs the sandboxes under Home/sandboxes. Its methods
// may be called from several goroutines and processes: each one takes an
// exclusive lock on the sandbox directory while it changes the sandbox.
type Manager struct {
	// Home is $DBARENA_HOME.
	Home string
	// ServerRoot holds the files of servers that cannot run as the current
	// user (PostgreSQL when dbarena runs as root), in ServerRoot/HASH/NAME
	// owned by ServerUser. Default /var/lib/dbarena.
	ServerRoot string
	// ServerUser is the unprivileged OS user such servers run as; "" means
	// "postgres" if it exists, else "dbarena" (created with useradd).
	ServerUser string
	// SearchDirs are the directories (glob patterns allowed) Discover
	// searches, in order.
	SearchDirs []string
	// StartTimeout bounds the wait for a started server to accept queries.
	StartTimeout time.Duration
	// StopTimeout bounds a clean shutdown before SIGKILL.
	StopTimeout time.Duration
}

// NewManager returns a Manager for home with defaults: $PATH then the usual
// system directories as search path, 60 s start and stop timeouts.
func NewManager(home string) *Manager {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	dirs = append(dirs, defaultSearchDirs...)
	return &Manager{
		Home:         home,
		ServerRoot:   "/var/lib/dbarena",
		SearchDirs:   dirs,
		StartTimeout: 60 * time.Second,
		StopTimeout:  60 * time.Second,
	}
}

func (m *Manager) root() string { return filepath.Join(m.Home, "sandboxes") }

func (m *Manager) dir(name string) string { return filepath.Join(m.root(), name) }

// serverRootFor is this home's directory under ServerRoot.
func (m *Manager) serverRootFor() string {
	abs, err := filepath.Abs(m.Home)
	if err != nil {
		abs = m.Home
	}
	return filepath.Join(m.ServerRoot, shortHash(abs))
}

// Default starts (creating it on first use) the sandbox "default" from the
// first discovered server, MySQL family first.
func (m *Manager) Default(ctx context.Context) (*Sandbox, error) {
	return m.Start(ctx, Spec{Name: "default"})
}

// Get returns the sandbox with its live state; errors.Is(err, ErrNotFound)
// when there is none.
func (m *Manager) Get(name string) (*Sandbox, error) {
	if !nameRE.MatchString(name) {
		return nil, fmt.Errorf("sandbox %q: %w", name, ErrNotFound)
	}
	rec, err := m.load(name)
	if err != nil {
		return nil, err
	}
	return m.view(rec), nil
}

// List returns every sandbox, by name, with its live state. Sandboxes that
// cannot be read are left out and reported in the error.
func (m *Manager) List() ([]*Sandbox, error) {
	entries, err := os.ReadDir(m.root())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sandboxes: %w", err)
	}
	var out []*Sandbox
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !nameRE.MatchString(e.Name()) {
			continue
		}
		rec, err := m.load(e.Name())
		if err != nil {
			if !errors.Is(err, ErrNotFound) {
				errs = append(errs, err)
			}
			continue
		}
		out = append(out, m.view(rec))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errors.Join(errs...)
}

// load reads sandbox.json of name.
func (m *Manager) load(name string) (*record, error) {
	data, err := os.ReadFile(filepath.Join(m.dir(name), "sandbox.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("sandbox %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox %q: %w", name, err)
	}
	var rec record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("sandbox %q: read sandbox.json: %w", name, err)
	}
	return &rec, nil
}

// save writes sandbox.json of rec.
func (m *Manager) save(rec *record) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("sandbox %q: encode: %w", rec.Name, err)
	}
	return writePrivate(filepath.Join(m.dir(rec.Name), "sandbox.json"), append(data, '\n'), osUser{})
}

// marker is what the live server's /proc/PID/cmdline must contain.
func (rec *record) marker() string { return strings.Join(rec.Command, "\x00") }

// liveState checks the recorded process: running if it is alive and its
// port is listening, dead if it was started but is gone or not listening.
func (rec *record) liveState() State {
	if rec.State != StateRunning {
		return StateStopped
	}
	if alive(rec.PID, rec.marker()) && listening(rec.Port) {
		return StateRunning
	}
	return StateDead
}

// view builds the public Sandbox of rec.
func (m *Manager) view(rec *record) *Sandbox {
	s := &Sandbox{
		Name: rec.Name, Flavor: rec.Flavor, Version: rec.Version,
		Host: "127.0.0.1", Port: rec.Port, Socket: rec.Layout.Socket,
		User: rec.User, Database: rec.Database, Datadir: rec.Layout.Datadir,
		State: rec.liveState(), Profile: rec.Profile, Basedir: rec.Basedir,
		Server: rec.Server, Dir: rec.Layout.Dir, ErrorLog: rec.Layout.ErrorLog,
		Settings: rec.Settings, Allocator: rec.Allocator,
	}
	if s.State != StateStopped {
		s.PID = rec.PID
	}
	if pw, err := os.ReadFile(filepath.Join(rec.Layout.Dir, "password")); err == nil {
		s.password = strings.TrimRight(string(pw), "\n")
	}
	s.admin = target.Target{Flavor: rec.Flavor, Version: rec.Version, Socket: rec.Layout.Socket, Port: rec.Port}
	if rec.Flavor.Family() == target.Postgres {
		s.admin.User, s.admin.Database = pgSuperuser, "postgres"
	} else {
		s.admin.User = "root"
	}
	return s
}

// Start creates the sandbox if needed, starts its server and waits until it
// accepts queries, then makes sure the workload database and account
// exist. On a running sandbox it only applies changes: a changed config
// restarts the server. A dead sandbox is cleaned up and started again. A
// start that fails does not keep the spec's Settings, and a new sandbox
// whose start fails before its server directory was made leaves nothing
// behind.
func (m *Manager) Start(ctx context.Context, spec Spec) (sb *Sandbox, err error) {
	if errs := spec.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSpec, errors.Join(errs...))
	}
	if spec.Flavor != "" {
		spec.Flavor, _ = target.ParseFlavor(string(spec.Flavor)) // validated above
	}
	dir := m.dir(spec.Name)
	if err := mkdirPrivate(m.root(), osUser{}); err != nil {
		return nil, err
	}
	if err := mkdirPrivate(dir, osUser{}); err != nil {
		return nil, err
	}
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	rec, err := m.load(spec.Name)
	isNew := errors.Is(err, ErrNotFound)
	if err != nil && !isNew {
		return nil, err
	}
	if isNew {
		rec = &record{Schema: recordSchema, Name: spec.Name, Profile: ProfileDefault, State: StateStopped,
			User: DefaultUser, Database: DefaultDatabase, CreatedAt: time.Now().UTC()}
		defer func() {
			if err != nil {
				m.discardUnsaved(rec)
			}
		}()
	}
	prevSettings := rec.Settings
	bin, err := m.resolveBinary(rec, spec, isNew)
	if err != nil {
		return nil, err
	}
	eng, err := m.engine(bin, spec.Basedir)
	if err != nil {
		return nil, err
	}
	if err := m.applySpec(rec, spec, bin); err != nil {
		return nil, err
	}
	srvUser, err := m.serverUserFor(eng)
	if err != nil {
		return nil, err
	}
	rec.ServerUser = srvUser.Name
	serverDir := dir
	if srvUser.set {
		serverDir = filepath.Join(m.serverRootFor(), rec.Name)
	}
	rec.Layout = eng.Layout(dir, serverDir, rec.Port)
	pw, err := m.password(rec, spec)
	if err != nil {
		return nil, err
	}
	cfg, err := m.serverConfig(rec, bin, srvUser)
	if err != nil {
		return nil, err
	}
	files, err := eng.RenderConfig(cfg)
	if err != nil {
		return nil, err
	}
	if isNew && spec.Port != 0 && portOpen(spec.Port) {
		return nil, fmt.Errorf("%w: port %d on 127.0.0.1 is already in use by another process", ErrInvalidSpec, spec.Port)
	}
	acct := account{User: rec.User, Password: pw, Database: rec.Database}
	admin := eng.AdminTarget(cfg)
	start := eng.StartCommand(cfg)
	preload, err := allocatorPreload(rec.Allocator)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
	}
	if preload != "" {
		start.Env = append(start.Env, "LD_PRELOAD="+preload)
	}

	switch rec.liveState() {
	case StateRunning:
		if !configChanged(files) && slicesEqual(rec.Command, start.Args) && rec.Preload == preload {
			if err := eng.Bootstrap(ctx, admin, acct); err != nil {
				return nil, &StartError{Name: rec.Name, Phase: "bootstrap", Err: err}
			}
			if err := m.save(rec); err != nil {
				return nil, err
			}
			return m.view(rec), nil
		}
		// Settings changed: restart to apply them.
		if err := m.stopServer(ctx, rec, eng); err != nil {
			return nil, err
		}
	case StateDead:
		if err := m.stopServer(ctx, rec, eng); err != nil {
			return nil, err
		}
	}

	failed := func(err error) (*Sandbox, error) {
		rec.Settings = prevSettings
		rec.State, rec.PID = StateStopped, 0
		if serr := m.save(rec); serr != nil {
			err = errors.Join(err, serr)
		}
		return nil, err
	}
	if err := m.prepareDirs(rec, srvUser); err != nil {
		return failed(err)
	}
	if err := m.save(rec); err != nil { // Remove can now find every path
		return failed(err)
	}
	if err := m.initialize(ctx, rec, eng, cfg, files, srvUser); err != nil {
		return failed(err)
	}
	if err := writeFiles(files, srvUser); err != nil {
		return failed(err)
	}
	m.cleanStale(rec)
	if portOpen(rec.Port) {
		return failed(&StartError{Name: rec.Name, Phase: "start", LogFile: rec.Layout.ErrorLog,
			Err: fmt.Errorf("port %d on 127.0.0.1 is already in use by another process", rec.Port)})
	}
	if err := m.launch(ctx, rec, eng, start, admin, acct, srvUser); err != nil {
		return failed(err)
	}
	return m.view(rec), nil
}

// discardUnsaved removes what a failed start of a new sandbox made, unless
// it got as far as recording it (then Remove finds every path).
func (m *Manager) discardUnsaved(rec *record) {
	if _, err := os.Stat(filepath.Join(m.dir(rec.Name), "sandbox.json")); err == nil {
		return
	}
	for _, d := range append(rec.Layout.owned(), m.dir(rec.Name)) {
		if d != "" {
			_ = os.RemoveAll(d)
		}
	}
}

// resolveBinary finds the server binary of a new sandbox, or re-inspects
// the recorded one (its version may have changed with an upgrade).
func (m *Manager) resolveBinary(rec *record, spec Spec, isNew bool) (Binary, error) {
	if !isNew {
		if spec.Flavor != "" && spec.Flavor != rec.Flavor {
			return Binary{}, fmt.Errorf("%w: sandbox %q is %s, not %s (remove it first)", ErrInvalidSpec, rec.Name, rec.Flavor, spec.Flavor)
		}
		if spec.Basedir != "" && !samePath(spec.Basedir, rec.Basedir) {
			return Binary{}, fmt.Errorf("%w: sandbox %q uses basedir %q, not %q (remove it first)", ErrInvalidSpec, rec.Name, rec.Basedir, spec.Basedir)
		}
		b, err := inspectBinary(rec.Server)
		if err != nil {
			return Binary{}, fmt.Errorf("sandbox %q: server binary: %w", rec.Name, err)
		}
		if b.Flavor != rec.Flavor {
			return Binary{}, fmt.Errorf("sandbox %q: %s is now %s, was %s", rec.Name, rec.Server, b.Flavor, rec.Flavor)
		}
		b.Basedir = rec.Basedir
		return b, nil
	}
	if spec.Basedir != "" {
		if fi, err := os.Stat(spec.Basedir); err != nil || !fi.IsDir() {
			return Binary{}, fmt.Errorf("%w: basedir %q: no such directory", ErrInvalidSpec, spec.Basedir)
		}
		b, err := m.Inspect(spec.Basedir)
		if err != nil {
			return Binary{}, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
		}
		if spec.Flavor != "" && spec.Flavor != b.Flavor {
			return Binary{}, fmt.Errorf("%w: basedir %q holds %s %s, not %s", ErrInvalidSpec, spec.Basedir, b.Flavor, b.Version, spec.Flavor)
		}
		return b, nil
	}
	bins, err := m.Discover()
	if err != nil {
		return Binary{}, fmt.Errorf("discover servers: %w", err)
	}
	for _, b := range bins {
		if spec.Flavor == "" || spec.Flavor == b.Flavor {
			b.Basedir = ""
			return b, nil
		}
	}
	want := "any flavor"
	if spec.Flavor != "" {
		want = string(spec.Flavor)
	}
	return Binary{}, fmt.Errorf("sandbox %q: %w (%s; searched %s)", spec.Name, ErrNoServer, want, strings.Join(m.SearchDirs, ":"))
}

func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

func (m *Manager) engine(b Binary, basedir string) (engine, error) {
	if b.Flavor == target.FlavorMariaDB {
		return newMariaDBEngine(b, basedir)
	}
	return engineFor(b)
}

// applySpec copies the spec's non-empty fields into rec.
func (m *Manager) applySpec(rec *record, spec Spec, b Binary) error {
	rec.Flavor, rec.Version, rec.Server, rec.Basedir = b.Flavor, b.Version, b.Server, b.Basedir
	if spec.Port != 0 {
		rec.Port = spec.Port
	}
	if rec.Port == 0 {
		p, err := freePort()
		if err != nil {
			return err
		}
		rec.Port = p
	}
	if spec.Profile != "" {
		rec.Profile = spec.Profile
	}
	if len(spec.Settings) > 0 {
		rec.Settings = append([]Setting(nil), spec.Settings...)
	}
	if spec.BufferPool != "" {
		rec.BufferPool = spec.BufferPool
	}
	if rec.BufferPool == "" {
		rec.BufferPool = DefaultBufferPool
	}
	if spec.User != "" {
		rec.User = spec.User
	}
	if spec.Database != "" {
		rec.Database = spec.Database
	}
	switch spec.Allocator {
	case "":
	case "system":
		rec.Allocator = ""
	default:
		rec.Allocator = spec.Allocator
	}
	return nil
}

// password returns the workload password: the spec's, else the recorded
// one, else a new one; it is kept in Dir/password (0600).
func (m *Manager) password(rec *record, spec Spec) (string, error) {
	path := filepath.Join(m.dir(rec.Name), "password")
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("sandbox %q: read password: %w", rec.Name, err)
	}
	current := strings.TrimRight(string(old), "\n")
	pw := spec.Password
	if pw == "" {
		pw = current
	}
	if pw == "" {
		if pw, err = generatePassword(); err != nil {
			return "", err
		}
	}
	if pw == current {
		return pw, nil
	}
	if err := writePrivate(path, []byte(pw+"\n"), osUser{}); err != nil {
		return "", fmt.Errorf("sandbox %q: save password: %w", rec.Name, err)
	}
	return pw, nil
}

func (m *Manager) serverConfig(rec *record, b Binary, u osUser) (serverConfig, error) {
	pool, err := parseSize(rec.BufferPool)
	if err != nil {
		return serverConfig{}, fmt.Errorf("sandbox %q: buffer pool: %w", rec.Name, err)
	}
	return serverConfig{
		Layout: rec.Layout, Binary: b, Basedir: rec.Basedir, Port: rec.Port,
		Profile: rec.Profile, Settings: rec.Settings, BufferPool: pool,
		AsRoot: os.Geteuid() == 0 && !u.set, FileLimit: fileLimit(),
	}, nil
}

// serverUserFor picks the OS user of servers that refuse to run as root.
func (m *Manager) serverUserFor(e engine) (osUser, error) {
	if os.Geteuid() != 0 || e.Flavor() != target.FlavorPostgres {
		return osUser{}, nil
	}
	names := []string{"postgres", "dbarena"}
	if m.ServerUser != "" {
		names = []string{m.ServerUser}
	}
	for _, n := range names {
		if u, err := user.Lookup(n); err == nil {
			return toOSUser(u)
		}
	}
	name := names[len(names)-1]
	out, err := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
		"--shell", "/usr/sbin/nologin", name).CombinedOutput()
	if err != nil {
		return osUser{}, fmt.Errorf("create OS user %q for %s (it refuses to run as root): %w: %s", name, e.Flavor(), err, strings.TrimSpace(string(out)))
	}
	u, err := user.Lookup(name)
	if err != nil {
		return osUser{}, fmt.Errorf("look up OS user %q: %w", name, err)
	}
	return toOSUser(u)
}

func toOSUser(u *user.User) (osUser, error) {
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return osUser{}, fmt.Errorf("OS user %q: non-numeric uid/gid", u.Username)
	}
	return osUser{Name: u.Username, UID: uid, GID: gid, set: true}, nil
}

// prepareDirs creates the sandbox's private directories.
func (m *Manager) prepareDirs(rec *record, u osUser) error {
	l := rec.Layout
	if u.set {
		// ServerRoot is traversable, the per-home directory is the server user's.
		if err := os.MkdirAll(m.ServerRoot, 0o711); err != nil {
			return fmt.Errorf("create %s: %w", m.ServerRoot, err)
		}
		if err := mkdirPrivate(m.serverRootFor(), u); err != nil {
			return err
		}
	}
	for _, d := range []string{l.ServerDir, l.RunDir, l.TmpDir} {
		if d == "" {
			continue
		}
		if err := mkdirPrivate(d, u); err != nil {
			return err
		}
	}
	return nil
}

// initialize creates a fresh data directory unless it holds one already.
// Config files go in first or after, as the engine needs.
func (m *Manager) initialize(ctx context.Context, rec *record, eng engine, cfg serverConfig, files []configFile, u osUser) error {
	if rec.Initialized {
		return nil
	}
	l := rec.Layout
	if err := os.RemoveAll(l.Datadir); err != nil {
		return fmt.Errorf("sandbox %q: clear half-initialised datadir: %w", rec.Name, err)
	}
	if eng.ConfigBeforeInit() {
		if err := mkdirPrivate(l.Datadir, u); err != nil {
			return err
		}
		if err := writeFiles(files, u); err != nil {
			return err
		}
	}
	offset := logSize(l.ErrorLog)
	if err := runInit(ctx, eng.InitCommand(cfg), l.ServerDir, u, l.ErrorLog); err != nil {
		return &StartError{Name: rec.Name, Phase: "initialize", Err: err, LogFile: l.ErrorLog, LogTail: tailLog(l.ErrorLog, offset, 20)}
	}
	if err := os.Chmod(l.Datadir, 0o700); err != nil {
		return fmt.Errorf("chmod %s: %w", l.Datadir, err)
	}
	rec.Initialized = true
	return m.save(rec)
}

func writeFiles(files []configFile, u osUser) error {
	for _, f := range files {
		if err := writePrivate(f.Path, f.Content, u); err != nil {
			return err
		}
	}
	return nil
}

// configChanged reports whether any rendered file differs from the one on disk.
func configChanged(files []configFile) bool {
	for _, f := range files {
		old, err := os.ReadFile(f.Path)
		if err != nil || string(old) != string(f.Content) {
			return true
		}
	}
	return false
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// launch starts the server detached, waits until it accepts queries and
// bootstraps the account. Any failure stops what was started.
func (m *Manager) launch(ctx context.Context, rec *record, eng engine, start command, admin target.Target, acct account, u osUser) error {
	l := rec.Layout
	offset := logSize(l.ErrorLog)
	fail := func(phase string, err error) error {
		return &StartError{Name: rec.Name, Phase: phase, Err: err, LogFile: l.ErrorLog, LogTail: tailLog(l.ErrorLog, offset, 20)}
	}
	p, err := startDetached(start, l.ServerDir, u, l.ErrorLog)
	if err != nil {
		return fail("start", err)
	}
	rec.State, rec.PID, rec.Command, rec.StartedAt = StateRunning, p.pid, start.Args, time.Now().UTC()
	rec.Preload = strings.TrimPrefix(strings.Join(start.Env, " "), "LD_PRELOAD=")
	if err := m.save(rec); err != nil {
		m.kill(rec, eng)
		return err
	}
	if err := m.waitReady(ctx, admin, p); err != nil {
		m.kill(rec, eng)
		return fail("wait", err)
	}
	if err := eng.Bootstrap(ctx, admin, acct); err != nil {
		m.kill(rec, eng)
		return fail("bootstrap", err)
	}
	return m.save(rec)
}

// kill stops a server whose start failed, without the caller's context.
func (m *Manager) kill(rec *record, eng engine) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = stopProcess(ctx, rec.PID, rec.marker(), eng.StopSignal(), 5*time.Second)
	m.cleanStale(rec)
}

// waitReady polls the server through the admin socket until it answers,
// the process exits, StartTimeout passes or ctx ends.
func (m *Manager) waitReady(ctx context.Context, admin target.Target, p *process) error {
	d, err := dialect.For(admin.Family())
	if err != nil {
		return err
	}
	db, err := d.Open(admin, dialect.OpenOptions{MaxConns: 1})
	if err != nil {
		return err
	}
	defer db.Close()
	timeout := m.StartTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-p.exited:
			return fmt.Errorf("server exited during startup: %v", p.err)
		default:
		}
		if last = ping(ctx, db); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("server did not accept queries within %s: %w", timeout, last)
		case <-p.exited:
			return fmt.Errorf("server exited during startup: %v", p.err)
		case <-tick.C:
		}
	}
}

func ping(ctx context.Context, db *sql.DB) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// Stop shuts the sandbox's server down (SIGKILL after StopTimeout). Stopping
// a stopped sandbox does nothing.
func (m *Manager) Stop(ctx context.Context, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("sandbox %q: %w", name, ErrNotFound)
	}
	if _, err := m.load(name); err != nil {
		return err
	}
	unlock, err := lockDir(ctx, m.dir(name))
	if err != nil {
		return err
	}
	defer unlock()
	return m.stopLocked(ctx, name)
}

// stopLocked is Stop for a caller holding the sandbox lock.
func (m *Manager) stopLocked(ctx context.Context, name string) error {
	rec, err := m.load(name)
	if err != nil {
		return err
	}
	eng, err := engineFor(Binary{Flavor: rec.Flavor, Version: rec.Version, Server: rec.Server, Basedir: rec.Basedir})
	if err != nil {
		return err
	}
	return m.stopServer(ctx, rec, eng)
}

// stopServer stops rec's process if it is alive, kills leftovers of its
// process group, removes stale pid and socket files and records "stopped".
func (m *Manager) stopServer(ctx context.Context, rec *record, eng engine) error {
	if rec.PID > 0 {
		timeout := m.StopTimeout
		if timeout <= 0 {
			timeout = 60 * time.Second
		}
		if err := stopProcess(ctx, rec.PID, rec.marker(), eng.StopSignal(), timeout); err != nil {
			return fmt.Errorf("stop sandbox %q: %w", rec.Name, err)
		}
		killLeftovers(ctx, rec.PID)
	}
	m.cleanStale(rec)
	rec.State, rec.PID = StateStopped, 0
	return m.save(rec)
}

// cleanStale removes pid and socket files a dead server left behind.
func (m *Manager) cleanStale(rec *record) {
	l := rec.Layout
	for _, p := range []string{l.PIDFile, l.Socket, l.Socket + ".lock"} {
		if p != "" {
			_ = removeIfExists(p)
		}
	}
}

// Restart stops the sandbox and starts it again with its recorded spec.
func (m *Manager) Restart(ctx context.Context, name string) (*Sandbox, error) {
	if err := m.Stop(ctx, name); err != nil {
		return nil, err
	}
	return m.Start(ctx, Spec{Name: name})
}

// Remove stops the sandbox and deletes every file it made, including
// server directories outside Home.
func (m *Manager) Remove(ctx context.Context, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("sandbox %q: %w", name, ErrNotFound)
	}
	dir := m.dir(name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sandbox %q: %w", name, ErrNotFound)
	}
	unlock, err := lockDir(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	rec, err := m.load(name)
	if errors.Is(err, ErrNotFound) {
		// A directory without sandbox.json: a start that never got far.
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove sandbox %q: %w", name, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if err := m.stopLocked(ctx, name); err != nil {
		return err
	}
	var errs []error
	for _, d := range rec.Layout.owned() {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	if rec.Layout.ServerDir != "" && rec.Layout.ServerDir != rec.Layout.Dir {
		// Drop the per-home and root server directories once empty.
		parent := filepath.Dir(rec.Layout.ServerDir)
		if os.Remove(parent) == nil {
			_ = os.Remove(filepath.Dir(parent))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove sandbox %q: %w", name, err)
	}
	return nil
}
