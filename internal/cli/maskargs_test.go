package cli

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

func TestMaskArgs(t *testing.T) {
	tg := target.Target{Password: "hunter2"}
	got := strings.Join(maskArgs([]string{"dbarena", "run", "--target", "mysql://u:hunter2@h/db",
		"--password", "pw1", "--mysql-password=pw2", "--note", "x hunter2 y"}, tg), " ")
	for _, secret := range []string{"hunter2", "pw1", "pw2"} {
		if strings.Contains(got, secret) {
			t.Fatalf("maskArgs left %q in %q", secret, got)
		}
	}
	if !strings.Contains(got, "mysql://u:***@h/db") {
		t.Fatalf("maskArgs: %q", got)
	}
}
