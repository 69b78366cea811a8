package execute

import (
	"context"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// tlsTimeout bounds the question to the server about the session's TLS.
const tlsTimeout = 5 * time.Second

// sessionTLS asks the server whether a connection of s's pool uses TLS,
// and with which protocol version and cipher; nil when s has no database
// or the server does not say.
func sessionTLS(ctx context.Context, s *Session) *summary.TLS {
	if s.NoDatabase || s.DB == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, tlsTimeout)
	defer cancel()
	t := &summary.TLS{Mode: tlsMode(s.Target)}
	switch s.Target.Family() {
	case target.MySQL:
		rows, err := s.DB.QueryContext(ctx, "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')")
		if err != nil {
			return nil
		}
		defer rows.Close()
		for rows.Next() {
			var name, value string
			if err := rows.Scan(&name, &value); err != nil {
				return nil
			}
			switch strings.ToLower(name) {
			case "ssl_version":
				t.Version = value
			case "ssl_cipher":
				t.Cipher = value
			}
		}
		if rows.Err() != nil {
			return nil
		}
		t.Enabled = t.Version != "" || t.Cipher != ""
	case target.Postgres:
		err := s.DB.QueryRowContext(ctx, `SELECT ssl, COALESCE(version, ''), COALESCE(cipher, '')
			FROM pg_stat_ssl WHERE pid = pg_backend_pid()`).Scan(&t.Enabled, &t.Version, &t.Cipher)
		if err != nil {
			return nil
		}
	default:
		return nil
	}
	return t
}

// tlsMode is the TLS parameter of t's DSN as the dialect applies it
// (dialect.MySQLTLS, sslmode), with dbarena's default when unset.
func tlsMode(t target.Target) string {
	if t.Family() == target.Postgres {
		mode := t.Params["sslmode"]
		if mode == "" {
			mode = "disable"
		}
		return "sslmode=" + mode
	}
	mode, ok := t.Params[dialect.ParamTLS]
	if !ok {
		mode = "false"
		if t.Params[dialect.ParamTLSCA] != "" || t.Params[dialect.ParamTLSCert] != "" {
			mode = "true"
		}
	}
	return "tls=" + strings.ToLower(mode)
}
