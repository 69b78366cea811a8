package sandbox

import (
	"net"
	"os"
	"strings"
	"testing"
)

func TestParseSetting(t *testing.T) {
	tests := []struct {
		name, in string
		want     Setting
		wantErr  string
	}{
		{"simple", "max_connections=100", Setting{"max_connections", "100"}, ""},
		{"dashes", "innodb-log-file-size=1G", Setting{"innodb-log-file-size", "1G"}, ""},
		{"empty value", "skip_log_bin=", Setting{"skip_log_bin", ""}, ""},
		{"value with equals", "shared_preload_libraries=a=b", Setting{"shared_preload_libraries", "a=b"}, ""},
		{"dotted", "auto_explain.log_min_duration=10", Setting{"auto_explain.log_min_duration", "10"}, ""},
		{"spaces trimmed", " work_mem = 4MB ", Setting{"work_mem", "4MB"}, ""},
		{"no equals", "max_connections", Setting{}, "want KEY=VALUE"},
		{"bad key", "max connections=1", Setting{}, "bad name"},
		{"empty key", "=1", Setting{}, "bad name"},
		{"newline", "a=1\nport=3", Setting{}, "line break"},
		{"managed port", "port=3306", Setting{}, "cannot be set"},
		{"loose managed", "loose-port=3306", Setting{}, "cannot be set"},
		{"unsafe left to Validate", "bind-address=0.0.0.0", Setting{"bind-address", "0.0.0.0"}, ""},
		{"managed datadir", "DATADIR=/x", Setting{}, "cannot be set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSetting(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSetting(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseSetting(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want []string // substrings, one per expected error
	}{
		{"minimal", Spec{Name: "a"}, nil},
		{"full", Spec{Name: "my-box_1", Flavor: "postgres", Port: 5433, Profile: "durable",
			Settings: []Setting{{"work_mem", "4MB"}}, BufferPool: "1G", User: "bench", Password: "s3cret'\"", Database: "db1"}, nil},
		{"empty name", Spec{}, []string{"name"}},
		{"long name", Spec{Name: strings.Repeat("a", 33)}, []string{"name"}},
		{"bad name", Spec{Name: "a/b"}, []string{"name"}},
		{"unknown profile", Spec{Name: "a", Profile: "turbo"}, []string{`profile "turbo"`}},
		{"unknown flavor", Spec{Name: "a", Flavor: "oracle"}, []string{"unknown flavor"}},
		{"bad port", Spec{Name: "a", Port: 70000}, []string{"port"}},
		{"bad buffer pool", Spec{Name: "a", BufferPool: "lots"}, []string{"buffer pool"}},
		{"reserved user", Spec{Name: "a", User: "root"}, []string{"reserved"}},
		{"bad user", Spec{Name: "a", User: "1x"}, []string{"user"}},
		{"bad database", Spec{Name: "a", Database: "x-y"}, []string{"database"}},
		{"bad password", Spec{Name: "a", Password: "a\nb"}, []string{"password"}},
		{"managed setting", Spec{Name: "a", Settings: []Setting{{"socket", "/tmp/x"}}}, []string{"socket"}},
		{"every problem at once", Spec{Name: "", Profile: "x", Port: -1, BufferPool: "0", User: "postgres"},
			[]string{"name", "port", "profile", "buffer pool", "user"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.spec.Validate()
			if len(errs) != len(tt.want) {
				t.Fatalf("Validate() = %v, want %d errors about %v", errs, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to mention %q", i, errs[i], w)
				}
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"128M", 128 << 20, true},
		{"1G", 1 << 30, true},
		{"256MB", 256 << 20, true},
		{"512k", 512 << 10, true},
		{"65536", 65536, true},
		{"2T", 2 << 40, true},
		{"0", 0, false},
		{"-1M", 0, false},
		{"1.5G", 0, false},
		{"", 0, false},
		{"999999999999T", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseSize(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("parseSize(%q) = %d, %v; want %d, ok=%v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestMergeSettings(t *testing.T) {
	base := []Setting{{"a", "1"}, {"innodb-doublewrite", "ON"}}
	got := mergeSettings(base, Setting{"innodb_doublewrite", "OFF"}, Setting{"b", "2"})
	want := []Setting{{"a", "1"}, {"innodb-doublewrite", "OFF"}, {"b", "2"}}
	if len(got) != len(want) {
		t.Fatalf("mergeSettings = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("mergeSettings = %v, want %v", got, want)
		}
	}
	if base[1].Value != "ON" {
		t.Fatal("mergeSettings modified its input")
	}
}

func TestTailLog(t *testing.T) {
	path := t.TempDir() + "/error.log"
	var b strings.Builder
	b.WriteString("old run line\n")
	offset := int64(b.Len())
	b.WriteString("2026 0 [ERROR] mariadbd: unknown variable 'x=1'\n")
	for i := 0; i < 40; i++ {
		b.WriteString("advice " + strings.Repeat("x", i) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(tailLog(path, offset, 20), "\n")
	if len(got) != 20 || !strings.Contains(got[0], "[ERROR]") || got[1] != "..." || got[19] != "advice "+strings.Repeat("x", 39) {
		t.Fatalf("tailLog = %q", got)
	}
	if short := tailLog(path, int64(b.Len())-8, 20); short == "" || strings.Contains(short, "old run") {
		t.Fatalf("tailLog of a short attempt = %q", short)
	}
}

func TestListening(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if !listening(port) {
		t.Errorf("listening(%d) = false for an open listener", port)
	}
	l.Close()
	if listening(port) {
		t.Errorf("listening(%d) = true after close", port)
	}
}

func TestAllocator(t *testing.T) {
	tests := []struct {
		name      string
		allocator string
		valid     bool
	}{
		{"none", "", true},
		{"system", "system", true},
		{"jemalloc", "jemalloc", true},
		{"tcmalloc", "tcmalloc", true},
		{"unknown", "hoard", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Spec{Name: "x", Allocator: tt.allocator}.Validate()
			if (len(errs) == 0) != tt.valid {
				t.Errorf("Validate = %v, want valid=%v", errs, tt.valid)
			}
			lib, err := allocatorPreload(tt.allocator)
			switch {
			case tt.allocator == "" || tt.allocator == "system":
				if lib != "" || err != nil {
					t.Errorf("allocatorPreload = %q, %v; want nothing", lib, err)
				}
			case err == nil:
				if _, serr := os.Stat(lib); serr != nil {
					t.Errorf("allocatorPreload = %q, which does not exist", lib)
				}
			case !strings.Contains(err.Error(), "install") && tt.valid:
				t.Errorf("missing library error %q should say what to install", err)
			}
		})
	}
}
