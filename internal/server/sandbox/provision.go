package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbarena/dbarena/internal/server/target"
)

// startPlan is everything Start works out before it touches the server.
type startPlan struct {
	eng engine
	// user is the server's OS user; bringUp looks up its uid (ensure).
	user  osUser
	cfg   serverConfig
	files []configFile
	acct  account
	admin target.Target
	start command
	// preload is the LD_PRELOAD library, "" for none.
	preload string
	// tlsFiles are a TLS sandbox's server certificate and key (addTLS).
	tlsFiles []configFile
	// secure is the init file of a first start (rootSecurer), "" when
	// the sandbox is secured already.
	secure string
	// setPassword: the superuser of a data directory an older dbarena
	// made has no password yet (passwordSetter).
	setPassword bool
	// prevUser is the OS user recorded before this start.
	prevUser string
}

// changed reports whether a server running as rec would differ from p.
func (p *startPlan) changed(rec *record) bool {
	return configChanged(p.files) || !slices.Equal(rec.Command, p.start.Args) || rec.Preload != p.preload ||
		p.secure != "" || p.setPassword || p.prevUser != p.user.Name
}

// plan applies spec to rec (binary, port, layout, password...) and works
// out the config files and commands of the server.
func (m *Manager) plan(rec *record, spec Spec, isNew bool) (*startPlan, error) {
	bin, err := m.resolveBinary(rec, spec, isNew)
	if err != nil {
		return nil, err
	}
	p := &startPlan{}
	if p.eng, err = m.engine(bin, spec.Basedir); err != nil {
		return nil, err
	}
	if err := m.applySpec(rec, spec, bin); err != nil {
		return nil, err
	}
	p.user = m.serverUserName(rec.Name)
	p.prevUser, rec.ServerUser = rec.ServerUser, p.user.Name
	l := p.eng.Layout(m.dir(rec.Name), m.serverDir(rec.Name, p.user), rec.Port)
	if rec.Initialized && rec.Layout.Datadir != l.Datadir {
		// An older dbarena ran MySQL-family servers as root, in the
		// sandbox directory.
		return nil, fmt.Errorf("%w: sandbox %q keeps its data in %s, but its server must now run from %s as another OS user (older dbarena versions ran it as root); remove it (dbarena server rm %s) and start it again",
			ErrInvalidSpec, rec.Name, rec.Layout.Datadir, l.Datadir, rec.Name)
	}
	rec.Layout = l
	pw, err := m.password(rec, spec)
	if err != nil {
		return nil, err
	}
	if p.cfg, err = m.serverConfig(rec, bin, p.user); err != nil {
		return nil, err
	}
	if err := m.addTLS(rec, p); err != nil {
		return nil, err
	}
	if p.files, err = p.eng.RenderConfig(p.cfg); err != nil {
		return nil, err
	}
	p.files = append(p.files, p.tlsFiles...)
	if isNew && spec.Port != 0 && portOpen(spec.Port) {
		return nil, fmt.Errorf("%w: port %d on 127.0.0.1 is already in use by another process", ErrInvalidSpec, spec.Port)
	}
	p.acct = account{User: rec.User, Password: pw, Database: rec.Database}
	p.admin = p.eng.AdminTarget(p.cfg)
	if p.admin.Password, err = adminPassword(m.dir(rec.Name)); err != nil {
		return nil, fmt.Errorf("sandbox %q: %w", rec.Name, err)
	}
	if rs, ok := p.eng.(rootSecurer); ok && !rec.Secured {
		host, _ := os.Hostname()
		p.secure = rs.secureSQL(p.admin.Password, host)
	}
	if _, ok := p.eng.(passwordSetter); ok && rec.Initialized && !rec.Secured {
		p.setPassword = true
	}
	p.start = p.eng.StartCommand(p.cfg)
	if p.preload, err = allocatorPreload(rec.Allocator); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSpec, err)
	}
	if p.preload != "" {
		if err := checkPreload(rec.Name, rec.Allocator, bin); err != nil {
			return nil, err
		}
		p.start.Env = append(p.start.Env, "LD_PRELOAD="+p.preload)
	}
	return p, nil
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
	if spec.TLS {
		rec.TLS = true
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

func (m *Manager) serverConfig(rec *record, b Binary, u osUser) (serverConfig, error) {
	pool, err := parseSize(rec.BufferPool)
	if err != nil {
		return serverConfig{}, fmt.Errorf("sandbox %q: buffer pool: %w", rec.Name, err)
	}
	return serverConfig{
		Layout: rec.Layout, Binary: b, Basedir: rec.Basedir, Port: rec.Port,
		Profile: rec.Profile, Settings: rec.Settings, BufferPool: pool,
		AsRoot: os.Geteuid() == 0 && !u.set, FileLimit: fileLimit(),
		PasswordFile: filepath.Join(rec.Layout.ServerDir, ".init-password"),
	}, nil
}
