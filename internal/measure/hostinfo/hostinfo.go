// Package hostinfo describes the client machine a run was made on. It reads
// Linux's /proc and /etc/os-release; everything is best-effort: a missing or
// unreadable source leaves its field empty and never stops a run.
package hostinfo

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/dbarena/dbarena/internal/results/summary"
)

// Collect describes this machine: hostname, CPU model, the number of CPUs
// this process may use (runtime.NumCPU), total memory, kernel release and
// OS name. Fields it cannot find are left empty.
func Collect() summary.Host {
	return collect(sources{
		readFile: os.ReadFile,
		hostname: os.Hostname,
		numCPU:   runtime.NumCPU,
	})
}

// sources are where collect gets its facts; tests substitute them.
type sources struct {
	readFile func(name string) ([]byte, error)
	hostname func() (string, error)
	numCPU   func() int
}

func collect(src sources) summary.Host {
	var h summary.Host
	if name, err := src.hostname(); err == nil {
		h.Hostname = name
	}
	read := func(names ...string) string {
		for _, n := range names {
			if b, err := src.readFile(n); err == nil {
				return string(b)
			}
		}
		return ""
	}
	cpuinfo := read("/proc/cpuinfo")
	h.CPUModel = parseCPUModel(strings.NewReader(cpuinfo))
	h.Cores = src.numCPU()
	if h.Cores <= 0 {
		h.Cores = parseCPUCount(strings.NewReader(cpuinfo))
	}
	h.MemoryMB = parseMemTotalMB(strings.NewReader(read("/proc/meminfo")))
	h.Kernel = strings.TrimSpace(read("/proc/sys/kernel/osrelease"))
	// os-release(5): /etc/os-release, falling back to /usr/lib/os-release.
	h.OS = parseOSRelease(strings.NewReader(read("/etc/os-release", "/usr/lib/os-release")))
	return h
}

// cpuinfoFields splits each "key : value" line of /proc/cpuinfo and calls
// fn with the trimmed key and value until fn returns false.
func cpuinfoFields(r io.Reader, fn func(key, value string) bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if !fn(strings.TrimSpace(key), strings.TrimSpace(value)) {
			return
		}
	}
}

// parseCPUModel returns the CPU model from /proc/cpuinfo, with runs of
// white space collapsed. x86 calls it "model name"; other architectures
// use "cpu model" (MIPS), "cpu" (POWER), "Model" or "Hardware" (ARM boards).
// The first of these keys, in that order of preference, wins.
func parseCPUModel(r io.Reader) string {
	prefs := []string{"model name", "cpu model", "cpu", "model", "hardware"}
	found := map[string]string{}
	cpuinfoFields(r, func(key, value string) bool {
		k := strings.ToLower(strings.Join(strings.Fields(key), " "))
		if _, seen := found[k]; !seen && value != "" {
			found[k] = value
		}
		return k != "model name" // the best there is
	})
	for _, k := range prefs {
		if v, ok := found[k]; ok {
			// "model" is numeric on x86 ("model : 85"); only ARM boards put a name there.
			if _, err := strconv.Atoi(v); err == nil {
				continue
			}
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}

// parseCPUCount counts the "processor" entries of /proc/cpuinfo.
func parseCPUCount(r io.Reader) int {
	n := 0
	cpuinfoFields(r, func(key, _ string) bool {
		if key == "processor" {
			n++
		}
		return true
	})
	return n
}

// parseMemTotalMB returns MemTotal from /proc/meminfo in MiB, or 0.
func parseMemTotalMB(r io.Reader) int64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.TrimSpace(key) != "MemTotal" {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			return 0
		}
		unit := "kb"
		if len(f) > 1 {
			unit = strings.ToLower(f[1])
		}
		switch unit {
		case "kb":
			return n / 1024
		case "mb":
			return n
		case "gb":
			return n * 1024
		}
		return 0
	}
	return 0
}

// parseOSRelease returns PRETTY_NAME from an os-release(5) file, or NAME
// and VERSION when it has none. Values may be quoted (single or double) and
// use shell escapes.
func parseOSRelease(r io.Reader) string {
	vars := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		vars[strings.TrimSpace(key)] = unquote(strings.TrimSpace(value))
	}
	if v := vars["PRETTY_NAME"]; v != "" {
		return v
	}
	return strings.TrimSpace(vars["NAME"] + " " + vars["VERSION"])
}

// unquote undoes os-release's shell-like quoting: "a \"b\"", 'a b' and
// a\ b.
func unquote(v string) string {
	escapable := func(byte) bool { return true } // unquoted: \x is x
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return v[1 : len(v)-1] // no escapes inside single quotes
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		v = v[1 : len(v)-1]
		escapable = func(c byte) bool { return strings.IndexByte("\"\\$`", c) >= 0 }
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && escapable(v[i+1]) {
			i++
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
