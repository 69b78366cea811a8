package dialect

import (
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

// TestWireSupported: the family helper asks each dialect's own
// WireSupported, and no other dialect has a wire client.
func TestWireSupported(t *testing.T) {
	plain := target.Target{Host: "127.0.0.1", Port: 1}
	param := plain
	param.Params = map[string]string{"sql_mode": "ANSI"}
	for _, c := range []struct {
		name string
		d    Dialect
		t    target.Target
		want bool
	}{
		{"mysql", MySQLDialect{}, plain, true},
		{"mysql with a session variable", MySQLDialect{}, param, false},
		{"postgres", PostgresDialect{}, plain, true},
		{"postgres with a run-time parameter", PostgresDialect{}, param, true},
		{"none", nil, plain, false},
	} {
		if got := WireSupported(c.d, c.t); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
