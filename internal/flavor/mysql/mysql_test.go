package mysql

import (
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

func TestMySQLFlavor(t *testing.T) {
	tests := []struct {
		version, comment string
		want             target.Flavor
	}{
		{"10.11.6-MariaDB-0+deb12u1", "Debian 12", target.FlavorMariaDB},
		{"8.0.36", "MySQL Community Server - GPL", target.FlavorMySQL},
		{"8.0.35-27", "Percona Server (GPL), Release 27, Revision 2f8eeab2", target.FlavorPercona},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			if got := mysqlFlavor(tt.version, tt.comment); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}
