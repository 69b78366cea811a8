package hostinfo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/summary"
)

func sample(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func TestParseCPUModel(t *testing.T) {
	tests := []struct {
		file, want string
		count      int
	}{
		{"cpuinfo-x86", "Intel(R) Xeon(R) Processor @ 2.80GHz", 2},
		{"cpuinfo-rpi4", "Raspberry Pi 4 Model B Rev 1.1", 2},
		{"cpuinfo-power9", "POWER9 (architected), altivec supported", 2},
		{"cpuinfo-odd-whitespace", "AMD EPYC 7763 64-Core Processor", 2},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			in := sample(t, tt.file)
			if got := parseCPUModel(strings.NewReader(in)); got != tt.want {
				t.Errorf("parseCPUModel = %q, want %q", got, tt.want)
			}
			if got := parseCPUCount(strings.NewReader(in)); got != tt.count {
				t.Errorf("parseCPUCount = %d, want %d", got, tt.count)
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		if got := parseCPUModel(strings.NewReader("")); got != "" {
			t.Errorf("parseCPUModel(\"\") = %q", got)
		}
	})
	t.Run("x86 numeric model only", func(t *testing.T) {
		if got := parseCPUModel(strings.NewReader("processor : 0\nmodel : 85\n")); got != "" {
			t.Errorf("parseCPUModel = %q, want empty", got)
		}
	})
}

func TestParseMemTotalMB(t *testing.T) {
	tests := []struct {
		name, in string
		want     int64
	}{
		{"captured", sample(t, "meminfo"), 24684092 / 1024},
		{"odd whitespace", sample(t, "meminfo-odd-whitespace"), 16318480 / 1024},
		{"no unit", "MemTotal: 2048\n", 2},
		{"missing", "MemFree: 100 kB\n", 0},
		{"garbage", "MemTotal: lots kB\n", 0},
		{"empty value", "MemTotal:\n", 0},
		{"empty", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseMemTotalMB(strings.NewReader(tt.in)); got != tt.want {
				t.Errorf("parseMemTotalMB = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestParseOSRelease(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"debian", sample(t, "os-release-debian"), "Debian GNU/Linux 12 (bookworm)"},
		{"crlf", sample(t, "os-release-crlf"), "Ubuntu 24.04.1 LTS"},
		{"unquoted with escapes", sample(t, "os-release-unquoted"), "Alpine Linux v3.20"},
		{"no PRETTY_NAME, odd spacing and quotes", sample(t, "os-release-odd"), "Fancy \"Linux\" 1.0 (tab\tinside)"},
		{"single quotes keep backslashes", `PRETTY_NAME='a\b'`, `a\b`},
		{"empty PRETTY_NAME", "PRETTY_NAME=\"\"\nNAME=Arch\n", "Arch"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseOSRelease(strings.NewReader(tt.in)); got != tt.want {
				t.Errorf("parseOSRelease = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCollect(t *testing.T) {
	files := map[string]string{
		"/proc/cpuinfo":              sample(t, "cpuinfo-odd-whitespace"),
		"/proc/meminfo":              sample(t, "meminfo"),
		"/proc/sys/kernel/osrelease": "6.8.0-45-generic\n",
		"/etc/os-release":            sample(t, "os-release-debian"),
		"/usr/lib/os-release":        "PRETTY_NAME=fallback\n",
	}
	readFrom := func(files map[string]string) func(string) ([]byte, error) {
		return func(name string) ([]byte, error) {
			if s, ok := files[name]; ok {
				return []byte(s), nil
			}
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
	}
	tests := []struct {
		name string
		src  sources
		want summary.Host
	}{
		{
			name: "all sources",
			src: sources{
				readFile: readFrom(files),
				hostname: func() (string, error) { return "bench1", nil },
				numCPU:   func() int { return 64 },
			},
			want: summary.Host{Hostname: "bench1", CPUModel: "AMD EPYC 7763 64-Core Processor", Cores: 64,
				MemoryMB: 24684092 / 1024, Kernel: "6.8.0-45-generic", OS: "Debian GNU/Linux 12 (bookworm)"},
		},
		{
			name: "os-release fallback, cores from cpuinfo",
			src: sources{
				readFile: readFrom(map[string]string{
					"/proc/cpuinfo":       files["/proc/cpuinfo"],
					"/usr/lib/os-release": files["/usr/lib/os-release"],
				}),
				hostname: func() (string, error) { return "", errors.New("no hostname") },
				numCPU:   func() int { return 0 },
			},
			want: summary.Host{CPUModel: "AMD EPYC 7763 64-Core Processor", Cores: 2, OS: "fallback"},
		},
		{
			name: "nothing readable",
			src: sources{
				readFile: readFrom(nil),
				hostname: func() (string, error) { return "", errors.New("no hostname") },
				numCPU:   func() int { return 1 },
			},
			want: summary.Host{Cores: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := collect(tt.src); got != tt.want {
				t.Errorf("collect = %+v\nwant      %+v", got, tt.want)
			}
		})
	}

	t.Run("this machine", func(t *testing.T) {
		h := Collect()
		if h.Cores < 1 {
			t.Errorf("Cores = %d", h.Cores)
		}
		t.Logf("%+v", h)
	})
}
