package lab

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/server/credentials"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// server is what the lab knows of one variant's server.
type server struct {
	v    plan.Variant
	name string // sandbox name
	// target is the server's connection once started (or parsed, for a DSN).
	target target.Target
	tlsCA  string // CA certificate of a sandbox with TLS on
	err    error  // the server could not be started
	key    string // settings applied at the last start
	data   string // DataKey of the data loaded, "" for none
	// started: a start was tried (and err tells how it went); false again
	// once stopped to free a fixed port.
	started bool
	// portPeers are the other servers of the same fixed port.
	portPeers []*server
}

// SandboxName is the sandbox a plan variant runs in.
func SandboxName(v plan.Variant) string {
	n := "lab-" + strings.NewReplacer(".", "_").Replace(v.Label())
	if len(n) > 32 {
		n = n[:32]
	}
	return n
}

// target starts (or reuses) the variant's server with the cell's settings
// (with TLS on when a cell of the plan needs it) and returns its target,
// which verifies the server over TLS for a cell with TLS. A DSN server is
// used as it is.
func (l *Lab) target(ctx context.Context, p *plan.Plan, s *server, cell plan.Cell, note func(string, ...any)) (target.Target, error) {
	t, err := l.sandboxTarget(ctx, p, s, cell, note)
	if err != nil || !cell.TLS {
		return t, err
	}
	if s.tlsCA == "" {
		return t, fmt.Errorf("TLS asked for, but sandbox %s gave no CA certificate", s.name)
	}
	return WithTLS(t, s.tlsCA), nil
}

// WithTLS returns a copy of t that connects over TLS and verifies the
// server with the CA certificate file ca: tls=true and tls-ca=CA for the
// MySQL family, sslmode=verify-full and sslrootcert=CA for PostgreSQL.
func WithTLS(t target.Target, ca string) target.Target {
	params := make(map[string]string, len(t.Params)+2)
	for k, v := range t.Params {
		params[k] = v
	}
	t.Params = dialect.MustFor(t.Flavor).VerifyTLS(params, ca)
	return t
}

// sandboxTarget is target without the cell's TLS parameters.
func (l *Lab) sandboxTarget(ctx context.Context, p *plan.Plan, s *server, cell plan.Cell, note func(string, ...any)) (target.Target, error) {
	if dsn := s.v.Server.DSN; dsn != "" {
		if s.target.Host == "" && s.target.Socket == "" {
			t, err := target.ParseDSN(dsn)
			if err != nil {
				return t, err
			}
			// A DSN without a password takes one from DBARENA_PASSWORD,
			// MYSQL_PWD / PGPASSWORD or ~/.pgpass / ~/.my.cnf.
			if _, err := credentials.Resolve(&t, credentials.Sources{PasswordEnv: credentials.DefaultEnv, Getenv: os.Getenv}); err != nil {
				return t, err
			}
			s.target = t
		}
		return s.target, nil
	}
	parts := make([]string, len(cell.Settings))
	for i, kv := range cell.Settings {
		parts[i] = kv.Key + "=" + kv.Value
	}
	key := strings.Join(parts, ",")
	// A server that failed to start is tried again: the failure may have
	// been the settings of one cell.
	if s.started && s.err == nil && s.key == key {
		return s.target, nil
	}
	if err := l.stopPortPeers(ctx, s, note); err != nil {
		return target.Target{}, err
	}
	srv := s.v.Server
	srv.TLS = p.SandboxTLS(srv)
	t, ca, err := l.Sandboxes.Start(ctx, s.name, srv, cell.Settings)
	s.started = true
	if err != nil {
		s.err = err
		return target.Target{}, err
	}
	s.err, s.key, s.target, s.tlsCA = nil, key, t, ca
	return t, nil
}

// betweenRounds applies the plan's actions before a variant's round.
func (l *Lab) betweenRounds(ctx context.Context, p *plan.Plan, s *server, note func(string, ...any)) {
	if p.Reload {
		s.data = ""
	}

	for _, act := range p.BetweenRounds {
		switch act.Name {
		case "restart":
			if s.v.Server.DSN != "" {
				note("server %s is a DSN: not restarted between rounds", s.v.Server.Name)
				continue
			}
			if s.started && s.err == nil {
				if err := l.Sandboxes.Restart(ctx, s.name); err != nil {
					s.err = err
				}
			}
		case "drop-caches":
			if err := l.Sandboxes.DropCaches(); err != nil {
				note("drop-caches not permitted here (%v): page cache kept between rounds", err)
			}
		}
	}
}
