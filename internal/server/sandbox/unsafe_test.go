package sandbox

import (
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/server/target"
)

// unsafeValue is a value each listed setting is refused with: any value for
// an always-unsafe one, a path outside the sandbox for a path one.
func unsafeValue(r unsafeRule) string {
	if r.kind == pathOutside {
		return "/etc/cron.d/x"
	}
	return "x"
}

// spellings are ways of writing the setting k that name the same option.
func spellings(k string, mysql bool) []string {
	out := []string{k, strings.ToUpper(k), strings.ReplaceAll(k, "_", "-")}
	if mysql {
		out = append(out, "loose-"+strings.ReplaceAll(k, "_", "-"), "loose_"+k, "maximum-"+k, "LOOSE_"+strings.ToUpper(k))
	}
	return out
}

func TestUnsafeSettingsRefused(t *testing.T) {
	lists := []struct {
		flavors []target.Flavor
		rules   map[string]unsafeRule
		mysql   bool
	}{
		{[]target.Flavor{target.FlavorMariaDB, target.FlavorMySQL, target.FlavorPercona, ""}, mysqlUnsafe, true},
		{[]target.Flavor{target.FlavorPostgres, ""}, postgresUnsafe, false},
	}
	for _, l := range lists {
		for k, r := range l.rules {
			for _, f := range l.flavors {
				for _, key := range spellings(k, l.mysql) {
					spec := Spec{Name: "a", Flavor: f, Settings: []Setting{{key, unsafeValue(r)}}}
					errs := spec.Validate()
					if len(errs) != 1 || !strings.Contains(errs[0].Error(), `setting "`+key+`"`) ||
						!strings.Contains(errs[0].Error(), "--allow-unsafe-set") || strings.Contains(errs[0].Error(), "\n") {
						t.Errorf("flavor %q: %s=%s: Validate() = %v, want one line naming the setting and --allow-unsafe-set", f, key, unsafeValue(r), errs)
					}
					spec.AllowUnsafe = true
					if errs := spec.Validate(); len(errs) != 0 {
						t.Errorf("flavor %q: %s with AllowUnsafe: Validate() = %v, want none", f, key, errs)
					}
				}
			}
		}
	}
}

func TestUnsafeSettingCases(t *testing.T) {
	tests := []struct {
		flavor     target.Flavor
		key, value string
		unsafe     bool
	}{
		// Families of MySQL options, and boolean prefixes.
		{target.FlavorMySQL, "mysqlx_ssl_cert", "x", true},
		{target.FlavorMariaDB, "wsrep_slave_threads", "4", true},
		{target.FlavorMariaDB, "skip-grant-tables", "", true},
		{target.FlavorMariaDB, "loose-skip-grant-tables", "", true},
		{target.FlavorMariaDB, "enable_mysqlx", "ON", true},
		{target.FlavorMariaDB, "Plugin-Load-Add", "ha_connect.so", true},
		// Abbreviations the MySQL family takes for the full name.
		{target.FlavorMariaDB, "init-fil", "/tmp/x.sql", true},
		{target.FlavorMariaDB, "loose-plugin_load_a", "x.so", true},
		{target.FlavorMySQL, "admin_addr", "0.0.0.0", true},
		{target.FlavorMariaDB, "skip-grant", "", true},
		{target.FlavorMariaDB, "wsrep", "ON", true},
		{target.FlavorMariaDB, "general_log_f", "/etc/x", true},
		{target.FlavorMariaDB, "general_log_f", "general.log", false},
		{target.FlavorMariaDB, "general_log", "ON", false},
		{target.FlavorMariaDB, "slow_query_log", "1", false},
		{target.FlavorMariaDB, "log_slow_query", "1", false},
		{target.FlavorMariaDB, "lc_messages", "en_US", false},
		{target.FlavorMySQL, "innodb_doublewrite", "0", false},
		{target.FlavorPostgres, "init", "x", false}, // PostgreSQL takes no abbreviations
		// Paths: inside the data directory passes, outside is refused.
		{target.FlavorMariaDB, "general_log_file", "general.log", false},
		{target.FlavorMariaDB, "general_log_file", "logs/general.log", false},
		{target.FlavorMariaDB, "general_log_file", "../../etc/x", true},
		{target.FlavorMariaDB, "slow_query_log_file", "'/tmp/slow.log'", true},
		{target.FlavorMariaDB, "log_bin", "", false},
		{target.FlavorMariaDB, "log-bin", "mysql-bin", false},
		{target.FlavorMariaDB, "skip_log_bin", "", false},
		{target.FlavorMariaDB, "innodb_data_file_path", "ibdata1:12M:autoextend", false},
		{target.FlavorMariaDB, "innodb_data_file_path", "ibdata1:12M;/var/x/ibdata2:1G", true},
		{target.FlavorPostgres, "log_directory", "log", false},
		{target.FlavorPostgres, "log_directory", "/var/log", true},
		{target.FlavorPostgres, "log_filename", "postgresql-%a.log", false},
		{target.FlavorPostgres, "log_filename", "../x.log", true},
		// Safe benchmark knobs.
		{target.FlavorMariaDB, "innodb_buffer_pool_size", "1G", false},
		{target.FlavorMariaDB, "sync_binlog", "1", false},
		{target.FlavorMariaDB, "skip_name_resolve", "ON", false},
		{target.FlavorMariaDB, "init_connect", "SET NAMES utf8mb4", false},
		{target.FlavorMySQL, "innodb_flush_log_at_trx_commit", "2", false},
		{target.FlavorPostgres, "work_mem", "4MB", false},
		{target.FlavorPostgres, "synchronous_commit", "off", false},
		{target.FlavorPostgres, "enable_seqscan", "off", false},
		{target.FlavorPostgres, "auto_explain.log_min_duration", "10", false},
		// A setting unsafe in one family only.
		{target.FlavorPostgres, "init_file", "/x", false},
		{target.FlavorMariaDB, "archive_command", "x", false},
		{"", "archive_command", "x", true},
		{"", "init_file", "x", true},
	}
	for _, tt := range tests {
		why, got := UnsafeSetting(tt.flavor, tt.key, tt.value)
		if got != tt.unsafe || got == (why == "") {
			t.Errorf("UnsafeSetting(%q, %q, %q) = %q, %v; want unsafe %v", tt.flavor, tt.key, tt.value, why, got, tt.unsafe)
		}
	}
}

// TestManagedStayRefused: AllowUnsafe does not free the settings the
// sandbox owns.
func TestManagedStayRefused(t *testing.T) {
	for k := range managedSettings {
		for _, key := range spellings(k, true) {
			spec := Spec{Name: "a", AllowUnsafe: true, Settings: []Setting{{key, "x"}}}
			if errs := spec.Validate(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "cannot be set") {
				t.Errorf("%s with AllowUnsafe: Validate() = %v, want it refused", key, errs)
			}
		}
	}
}

// TestManagedAbbreviations: beginnings of managed names are refused too
// (the MySQL family reads datad as datadir), real options are not.
func TestManagedAbbreviations(t *testing.T) {
	for _, kv := range []string{"datad=/x", "sock=/tmp/s", "log-e=/x", "loose-pid=/x", "unix_socket_dir=/tmp"} {
		if _, err := ParseSetting(kv); err == nil || !strings.Contains(err.Error(), "reads it as") {
			t.Errorf("ParseSetting(%q) = %v, want it refused as an abbreviation", kv, err)
		}
	}
	for _, kv := range []string{"unix_socket=ON", "port_open_timeout=5", "log_error_verbosity=3", "enable_seqscan=off", "user_variables=x"} {
		if _, err := ParseSetting(kv); err != nil {
			t.Errorf("ParseSetting(%q) = %v, want it accepted", kv, err)
		}
	}
}

func FuzzUnsafeSetting(f *testing.F) {
	for _, s := range []string{"init_file=/x", "loose-skip-grant-tables=", "general_log_file=../x", "work_mem=4MB", "innodb_data_file_path=a:1M;/b:2M"} {
		f.Add("mariadb", s)
		f.Add("postgres", s)
	}
	f.Fuzz(func(t *testing.T, flavor, kv string) {
		k, v, _ := strings.Cut(kv, "=")
		why, unsafe := UnsafeSetting(target.Flavor(flavor), k, v)
		if unsafe == (why == "") {
			t.Fatalf("UnsafeSetting(%q, %q, %q) = %q, %v", flavor, k, v, why, unsafe)
		}
		if unsafe {
			if _, any := UnsafeSetting("", k, v); !any {
				t.Fatalf("%q unsafe for %q but not for an unknown flavor", kv, flavor)
			}
		}
	})
}
