package postgres

import (
	"fmt"
	"strings"

	"github.com/dbarena/dbarena/internal/server/target"
)

// PostgreSQL DSN parameters that configure TLS, as libpq names them.
var postgresTLSParams = []string{"sslmode", "sslrootcert", "sslcert", "sslkey"}

// postgresTLSParam reports whether a PostgreSQL DSN parameter configures TLS.
func postgresTLSParam(k string) bool {
	for _, p := range postgresTLSParams {
		if k == p {
			return true
		}
	}
	return false
}

// checkSSLMode validates sslmode (libpq's values); "" is disable, dbarena's
// default, unlike libpq's prefer, so that plain benchmarks stay plain.
func checkSSLMode(mode string) error {
	switch mode {
	case "", "disable", "allow", "prefer", "require", "verify-ca", "verify-full":
		return nil
	}
	return fmt.Errorf("DSN parameter sslmode=%q: want disable, allow, prefer, require, verify-ca or verify-full", mode)
}

// pgConnString renders host, port and the TLS parameters of t as a
// libpq keyword/value string for pgx's parser, which builds the TLS
// configuration and fall-backs of each sslmode.
func pgConnString(host string, port int, t target.Target) string {
	var b strings.Builder
	kv := func(k, v string) {
		r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
		fmt.Fprintf(&b, "%s='%s' ", k, r.Replace(v))
	}
	kv("host", host)
	kv("port", fmt.Sprint(port))
	mode := t.Params["sslmode"]
	if mode == "" {
		mode = "disable"
	}
	kv("sslmode", mode)
	for _, k := range postgresTLSParams[1:] {
		if v := t.Params[k]; v != "" {
			kv(k, v)
		}
	}
	return b.String()
}
