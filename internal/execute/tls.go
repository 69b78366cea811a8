package execute

import (
	"context"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
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
	t := &summary.TLS{Mode: s.Dialect.TLSMode(s.Target)}
	var err error
	if t.Enabled, t.Version, t.Cipher, err = s.Dialect.SessionTLS(ctx, s.DB); err != nil {
		return nil
	}
	return t
}
