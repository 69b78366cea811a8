package monitor

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/dbarena/dbarena/internal/results/summary"
	"github.com/dbarena/dbarena/internal/server/dialect"
	"github.com/dbarena/dbarena/internal/server/target"
)

// mount is one line of /proc/PID/mountinfo (proc(5)).
type mount struct {
	devID      string // "254:0"
	mountPoint string
	fsType     string
	source     string
}

// unescapeMount undoes the octal escapes of mountinfo ("\040" is a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, ok := octal(s[i+1 : i+4]); ok {
				b.WriteByte(n)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func octal(s string) (byte, bool) {
	if len(s) != 3 {
		return 0, false
	}
	var n int
	for _, c := range s {
		if c < '0' || c > '7' {
			return 0, false
		}
		n = n*8 + int(c-'0')
	}
	return byte(n), n < 256
}

// parseMountinfo reads every mount of a mountinfo file.
func parseMountinfo(r io.Reader) ([]mount, error) {
	var out []mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// id parent maj:min root mountpoint options [optional...] - fstype source superopts
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if len(f) < 7 || sep < 0 {
			continue
		}
		m := mount{devID: f[2], mountPoint: unescapeMount(f[4])}
		if sep+1 < len(f) {
			m.fsType = f[sep+1]
		}
		if sep+2 < len(f) {
			m.source = unescapeMount(f[sep+2])
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// mountOf returns the mount holding path: the longest mount point that is
// path or one of its parents; of mounts stacked on the same point, the
// last one wins (it hides the others).
func mountOf(mounts []mount, path string) (mount, bool) {
	var best mount
	found := false
	for _, m := range mounts {
		mp := m.mountPoint
		under := path == mp || mp == "/" || strings.HasPrefix(path, strings.TrimSuffix(mp, "/")+"/")
		if under && (!found || len(mp) >= len(best.mountPoint)) {
			best, found = m, true
		}
	}
	return best, found
}

// parseScheduler returns the scheduler in brackets of a
// /sys/block/DEV/queue/scheduler line ("none [mq-deadline] kyber bfq"),
// or the only word when there is no choice ("none").
func parseScheduler(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	if f := strings.Fields(s); len(f) == 1 {
		return f[0]
	}
	return ""
}

// StorageOf describes the file system and block device holding path, from
// procRoot/self/mountinfo and sysfs at sysRoot. A file system without a
// block device (tmpfs, overlay) has no Device or Scheduler.
func StorageOf(procRoot, sysRoot, path string) (*summary.Storage, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	f, err := os.Open(filepath.Join(procRoot, "self", "mountinfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mounts, err := parseMountinfo(f)
	if err != nil {
		return nil, fmt.Errorf("mountinfo: %w", err)
	}
	m, ok := mountOf(mounts, abs)
	if !ok {
		return nil, fmt.Errorf("no mount holds %s", abs)
	}
	st := &summary.Storage{Path: abs, Mount: m.mountPoint, FSType: m.fsType, Source: m.source}
	st.Device = wholeDeviceOf(sysRoot, m.devID)
	if st.Device != "" {
		q := filepath.Join(sysRoot, "block", strings.ReplaceAll(st.Device, "/", "!"), "queue")
		if b, err := os.ReadFile(filepath.Join(q, "scheduler")); err == nil {
			st.Scheduler = parseScheduler(string(b))
		}
		if b, err := os.ReadFile(filepath.Join(q, "rotational")); err == nil {
			st.Rotational = strings.TrimSpace(string(b)) == "1"
		}
	}
	return st, nil
}

// wholeDeviceOf maps a device number ("259:1") to the whole block device
// that holds it, through /sys/dev/block: a partition's parent directory is
// its disk. "" when the number is no block device (major 0: tmpfs,
// overlay, btrfs subvolumes).
func wholeDeviceOf(sysRoot, devID string) string {
	if strings.HasPrefix(devID, "0:") {
		return ""
	}
	link := filepath.Join(sysRoot, "dev", "block", devID)
	real, err := filepath.EvalSymlinks(link)
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(real, "partition")); err == nil {
		real = filepath.Dir(real)
	}
	return strings.ReplaceAll(filepath.Base(real), "!", "/")
}

// secretName matches variable names whose values may be secrets.
var secretName = regexp.MustCompile(`(?i)password|passwd|secret|passphrase|_auth$|_key$`)

// Snapshot reads every server variable or setting: SHOW GLOBAL VARIABLES
// (MySQL family) or SHOW ALL (PostgreSQL, values with their units as the
// server shows them). Values of secret-looking names are masked ("***"),
// and so is t's password wherever it appears.
func Snapshot(ctx context.Context, t target.Target, db *sql.DB) (map[string]string, error) {
	d, err := dialect.Of(t)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, d.ShowSettings())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for rows.Next() {
		var name, value sql.NullString
		dest := []any{&name, &value}
		for len(dest) < len(cols) {
			dest = append(dest, new(sql.RawBytes))
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		v := value.String
		if secretName.MatchString(name.String) && v != "" {
			v = "***"
		}
		out[strings.ToLower(name.String)] = t.Mask(v)
	}
	return out, rows.Err()
}
