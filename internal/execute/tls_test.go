package execute

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/sandbox/sandboxtest"
	"github.com/dbarena/dbarena/internal/server/target"
)

// TestSessionTLS: the TLS a session's connections use, as the server says
// (pg_stat_ssl here; SHOW STATUS on MariaDB, see the cli's TLS test), and
// the sslmode asked for.
func TestSessionTLS(t *testing.T) {
	sb := sandboxtest.StartNamed(t, target.FlavorPostgres, func(s *sandbox.Spec) { s.TLS = true })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, mode := range []string{"", "require"} {
		tg := sb.Target
		tg.Params = maps.Clone(tg.Params)
		if tg.Params == nil {
			tg.Params = map[string]string{}
		}
		if mode != "" {
			tg.Params["sslmode"] = mode
		}
		s, err := Connect(ctx, tg, dialect.OpenOptions{MaxConns: 1})
		if err != nil {
			t.Fatal(err)
		}
		got := sessionTLS(ctx, s)
		s.Close()
		switch {
		case got == nil:
			t.Errorf("sslmode=%q: no TLS figures", mode)
		case mode == "" && (got.Enabled || got.Mode != "sslmode=disable" || got.Version != ""):
			t.Errorf("default sslmode: %+v, want off, sslmode=disable", got)
		case mode == "require" && (!got.Enabled || got.Mode != "sslmode=require" || !strings.HasPrefix(got.Version, "TLSv1.") || got.Cipher == ""):
			t.Errorf("sslmode=require: %+v, want on with version and cipher", got)
		}
	}
}
