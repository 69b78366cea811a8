package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

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
	unlock, err := m.lockNew(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, isNew, err := m.loadOrNew(spec.Name)
	if err != nil {
		return nil, err
	}
	if isNew {
		defer func() {
			if err != nil {
				m.discardUnsaved(rec)
			}
		}()
	}
	prevSettings := rec.Settings
	p, err := m.plan(rec, spec, isNew)
	if err != nil {
		return nil, err
	}
	done, err := m.keepOrStop(ctx, rec, p)
	if err != nil {
		return nil, err
	}
	if !done {
		if err := m.bringUp(ctx, rec, p); err != nil {
			rec.Settings = prevSettings
			rec.State, rec.PID = StateStopped, 0
			if serr := m.save(rec); serr != nil {
				err = errors.Join(err, serr)
			}
			return nil, err
		}
	}
	return m.view(rec), nil
}

// keepOrStop deals with a server that may be running already: an
// unchanged running one only gets its account bootstrapped (done); a
// changed or dead one is stopped so that bringUp starts it afresh.
func (m *Manager) keepOrStop(ctx context.Context, rec *record, p *startPlan) (done bool, err error) {
	switch rec.liveState() {
	case StateRunning:
		if !p.changed(rec) {
			if err := p.eng.Bootstrap(ctx, p.admin, p.acct); err != nil {
				return false, &StartError{Name: rec.Name, Phase: "bootstrap", Err: err}
			}
			return true, m.save(rec)
		}
		return false, m.stopServer(ctx, rec, p.eng) // settings changed: restart to apply them
	case StateDead:
		return false, m.stopServer(ctx, rec, p.eng)
	}
	return false, nil
}

// bringUp makes the directories, records the sandbox, initialises the data
// directory if needed, writes the config and launches the server.
func (m *Manager) bringUp(ctx context.Context, rec *record, p *startPlan) error {
	u, err := m.ensure(p.user, rec.Name)
	if err != nil {
		return err
	}
	p.user = u
	if err := m.prepareDirs(rec, p.user); err != nil {
		return err
	}
	if err := m.save(rec); err != nil { // Remove can now find every path
		return err
	}
	if err := m.adoptFiles(rec, p.user); err != nil {
		return err
	}
	if err := m.initialize(ctx, rec, p); err != nil {
		return err
	}
	if err := writeFiles(p.files, p.user); err != nil {
		return err
	}
	m.cleanStale(rec)
	if err := m.setSuperuserPassword(ctx, rec, p); err != nil {
		return err
	}
	if portOpen(rec.Port) {
		return &StartError{Name: rec.Name, Phase: "start", LogFile: rec.Layout.ErrorLog,
			Err: fmt.Errorf("port %d on 127.0.0.1 is already in use by another process", rec.Port)}
	}
	return m.launch(ctx, rec, p)
}

// adoptFiles gives the server files of an initialised sandbox to u when
// another OS user owns its data directory: a sandbox an older dbarena ran
// as the OS user it shared with every sandbox of its flavor ("dbarena" or
// "postgres") moves to its own user on its next start.
func (m *Manager) adoptFiles(rec *record, u osUser) error {
	if !rec.Initialized || !u.set {
		return nil
	}
	fi, err := os.Lstat(rec.Layout.Datadir)
	if err != nil {
		return nil // initialize makes a new one
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == u.UID {
		return nil
	}
	dirs := []string{rec.Layout.ServerDir}
	if !within(rec.Layout.RunDir, rec.Layout.ServerDir) {
		dirs = append(dirs, rec.Layout.RunDir)
	}
	for _, d := range dirs {
		if err := u.chownTree(d); err != nil {
			return fmt.Errorf("sandbox %q: give its files to OS user %s: %w", rec.Name, u.Name, err)
		}
	}
	return nil
}

// setSuperuserPassword gives the superuser of a data directory an older
// dbarena made (trusted on the socket, no password) the admin password,
// with the server stopped, before the new config requires it.
func (m *Manager) setSuperuserPassword(ctx context.Context, rec *record, p *startPlan) error {
	ps, ok := p.eng.(passwordSetter)
	if !ok || !p.setPassword {
		return nil
	}
	cmd, stdin := ps.setPasswordCommand(p.cfg, p.admin.Password)
	offset := logSize(rec.Layout.ErrorLog)
	if err := runInput(ctx, cmd, stdin, rec.Layout.ServerDir, p.user, rec.Layout.ErrorLog); err != nil {
		return &StartError{Name: rec.Name, Phase: "secure", Err: err, LogFile: rec.Layout.ErrorLog,
			LogTail: tailLog(rec.Layout.ErrorLog, offset, 20)}
	}
	rec.Secured, p.setPassword = true, false
	return m.save(rec)
}

// initialize creates a fresh data directory unless it holds one already.
// Config files go in first or after, as the engine needs.
func (m *Manager) initialize(ctx context.Context, rec *record, p *startPlan) error {
	if rec.Initialized {
		return nil
	}
	l, eng, u := rec.Layout, p.eng, p.user
	if err := os.RemoveAll(l.Datadir); err != nil {
		return fmt.Errorf("sandbox %q: clear half-initialised datadir: %w", rec.Name, err)
	}
	if _, ok := eng.(passwordAtInit); ok {
		pwFile := p.cfg.PasswordFile
		if err := writePrivate(pwFile, []byte(p.admin.Password+"\n"), u); err != nil {
			return err
		}
		defer os.Remove(pwFile)
	}
	if eng.ConfigBeforeInit() {
		if err := mkdirPrivate(l.Datadir, u); err != nil {
			return err
		}
		if err := writeFiles(p.files, u); err != nil {
			return err
		}
	}
	var stdin []byte
	si, secures := eng.(stdinInit)
	if secures {
		var err error
		if stdin, err = si.initInput(p.cfg, u, p.admin.Password); err != nil {
			return &StartError{Name: rec.Name, Phase: "initialize", Err: err}
		}
	}
	offset := logSize(l.ErrorLog)
	if err := runInput(ctx, eng.InitCommand(p.cfg), stdin, l.ServerDir, u, l.ErrorLog); err != nil {
		return &StartError{Name: rec.Name, Phase: "initialize", Err: err, LogFile: l.ErrorLog, LogTail: tailLog(l.ErrorLog, offset, 20)}
	}
	// Installer scripts create some files with dbarena's umask.
	if err := privatize(l.ServerDir); err != nil {
		return fmt.Errorf("sandbox %q: %w", rec.Name, err)
	}
	rec.Initialized = true
	if _, ok := eng.(passwordAtInit); ok || secures {
		rec.Secured = true
	}
	return m.save(rec)
}

// launch starts the server detached, waits until it accepts queries and
// bootstraps the account. Any failure stops what was started.
func (m *Manager) launch(ctx context.Context, rec *record, p *startPlan) error {
	l, eng := rec.Layout, p.eng
	offset := logSize(l.ErrorLog)
	fail := func(phase string, err error) error {
		return &StartError{Name: rec.Name, Phase: phase, Err: err, LogFile: l.ErrorLog, LogTail: tailLog(l.ErrorLog, offset, 20)}
	}
	start := p.start
	if p.secure != "" {
		// The init file runs before the server serves connections; the
		// recorded command leaves it out (it is a suffix of the live one).
		initFile := filepath.Join(fileDir(l), "secure.sql")
		if err := writePrivate(initFile, []byte(p.secure), p.user); err != nil {
			return fail("start", err)
		}
		defer os.Remove(initFile)
		start.Args = append(slices.Clone(start.Args), "--init-file="+initFile)
	}
	proc, err := startDetached(start, l.ServerDir, p.user, l.ErrorLog)
	if err != nil {
		return fail("start", err)
	}
	rec.State, rec.PID, rec.Command, rec.StartedAt = StateRunning, proc.pid, p.start.Args, time.Now().UTC()
	rec.Preload = p.preload
	if err := m.save(rec); err != nil {
		m.kill(rec, eng)
		return err
	}
	if err := m.waitReady(ctx, p.admin, proc); err != nil {
		m.kill(rec, eng)
		return fail("wait", err)
	}
	if err := eng.Bootstrap(ctx, p.admin, p.acct); err != nil {
		m.kill(rec, eng)
		return fail("bootstrap", err)
	}
	if p.secure != "" {
		rec.Secured = true
	}
	return m.save(rec)
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
