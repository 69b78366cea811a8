package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

func TestPgVersionSetting(t *testing.T) {
	for _, c := range []struct {
		version, key, value, wantKey, wantValue string
	}{
		{"10.23", "wal_keep_size", "64MB", "wal_keep_segments", "4"},
		{"12.22", "wal_keep_size", "100MB", "wal_keep_segments", "7"}, // rounded up
		{"12.22", "wal_keep_size", "1GB", "wal_keep_segments", "64"},
		{"12.22", "wal_keep_size", "32", "wal_keep_segments", "2"}, // bare: MB
		{"13.23", "wal_keep_size", "64MB", "wal_keep_size", "64MB"},
		{"18.4", "wal_keep_segments", "4", "wal_keep_size", "64MB"},
		{"10.23", "wal_keep_segments", "4", "wal_keep_segments", "4"},
		{"17.10", "log_connections", "receipt,authorization", "log_connections", "on"},
		{"17.10", "log_connections", "", "log_connections", "off"},
		{"10.23", "log_connections", "on", "log_connections", "on"},
		{"18.4", "log_connections", "receipt", "log_connections", "receipt"},
		{"10.23", "wal_keep_size", "lots", "wal_keep_size", "lots"}, // the server's error says it
		{"", "wal_keep_size", "64MB", "wal_keep_size", "64MB"},
	} {
		got := pgVersionSetting(c.version, Setting{c.key, c.value})
		if got.Key != c.wantKey || got.Value != c.wantValue {
			t.Errorf("%s: %s=%s -> %s=%s, want %s=%s", c.version, c.key, c.value, got.Key, got.Value, c.wantKey, c.wantValue)
		}
	}
}

// catalogued returns the basedir of catalogue entry name of the user's
// dbarena home (scripts/fetch-servers test registers postgres-10 and
// postgres-18); skips, or fails under CI, when it is absent.
func catalogued(t *testing.T, name string) string {
	t.Helper()
	home := os.Getenv("DBARENA_HOME")
	if home == "" {
		h, _ := os.UserHomeDir()
		home = filepath.Join(h, ".local", "share", "dbarena")
	}
	path := filepath.Join(home, "servers.json")
	var doc struct {
		Servers []struct{ Name, Basedir string }
	}
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &doc)
	}
	if err == nil {
		err = fmt.Errorf("not in the server catalogue %s", path)
		for _, e := range doc.Servers {
			if e.Name == name {
				if _, err = os.Stat(e.Basedir); err == nil {
					return e.Basedir
				}
			}
		}
	}
	msg := fmt.Sprintf("server %s: %v (scripts/fetch-servers test fetches it; make test does under CI)", name, err)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// TestPostgresVersionsSandbox: the oldest and newest catalogued
// PostgreSQL majors start as locked down as the system's (the checks of
// TestUnprivileged), every setting dbarena writes is taken from the
// configuration file without error, and settings renamed between majors
// (wal_keep_segments/wal_keep_size, log_connections' list) are given in
// the name the major takes.
func TestPostgresVersionsSandbox(t *testing.T) {
	for _, name := range []string{"postgres-10", "postgres-18"} {
		t.Run(name, func(t *testing.T) {
			basedir := catalogued(t, name)
			major := strings.TrimPrefix(name, "postgres-")
			t.Run("unprivileged", func(t *testing.T) {
				checkUnprivileged(t, testManager(t, false), Spec{Name: "priv", Flavor: target.FlavorPostgres, Basedir: basedir, Profile: ProfileFast})
			})
			t.Run("settings", func(t *testing.T) {
				m := testManager(t, false)
				sb, err := m.Start(testCtx(t), Spec{Name: "set", Flavor: target.FlavorPostgres, Basedir: basedir, Profile: ProfileFast,
					Settings: []Setting{{"wal_keep_size", "64MB"}, {"log_connections", "receipt,authorization"}}})
				if err != nil {
					t.Fatal(err)
				}
				admin, err := m.Admin(sb.Name)
				if err != nil {
					t.Fatal(err)
				}
				if v := queryOne(t, admin, "SHOW server_version"); !strings.HasPrefix(v, major+".") {
					t.Fatalf("server_version %s, want %s.x", v, major)
				}
				if errs := queryOne(t, admin, "SELECT count(*) || ' ' || coalesce(string_agg(name || ': ' || error, '; '), '') FROM pg_file_settings WHERE error IS NOT NULL"); errs != "0 " {
					t.Errorf("postgresql.conf settings in error: %s", errs)
				}
				for _, k := range []string{"listen_addresses", "unix_socket_permissions", "password_encryption", "shared_buffers", "fsync", "max_connections"} {
					if src := queryOne(t, admin, "SELECT source FROM pg_settings WHERE name = '"+k+"'"); src != "configuration file" {
						t.Errorf("%s: source %q, want configuration file", k, src)
					}
				}
				wantWAL, wantConn := "SHOW wal_keep_size", "receipt,authorization"
				if major == "10" {
					wantWAL, wantConn = "SHOW wal_keep_segments", "on"
				}
				if v := queryOne(t, admin, wantWAL); v != map[string]string{"10": "4", "18": "64MB"}[major] {
					t.Errorf("%s = %s after --set wal_keep_size=64MB", wantWAL, v)
				}
				if v := queryOne(t, admin, "SHOW log_connections"); v != wantConn {
					t.Errorf("log_connections = %s, want %s", v, wantConn)
				}
				if v := queryOne(t, admin, "SHOW listen_addresses"); v != "127.0.0.1" {
					t.Errorf("listen_addresses = %s", v)
				}
			})
		})
	}
}
