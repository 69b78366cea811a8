package catalog

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ArchiveError is Unpack's error when tar(1) cannot unpack the tarball
// (bad input, unlike a failure to write).
type ArchiveError struct{ Msg string }

func (e *ArchiveError) Error() string { return e.Msg }

// Unpack extracts a tarball under home/servers with tar(1), into a
// directory named after it, and returns that directory; a tarball unpacked
// before is not unpacked again.
func Unpack(ctx context.Context, home, tarball string) (string, error) {
	base := filepath.Base(tarball)
	for _, suf := range []string{".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tar.zst", ".tar"} {
		if strings.HasSuffix(strings.ToLower(base), suf) {
			base = base[:len(base)-len(suf)]
			break
		}
	}
	dest := filepath.Join(home, "servers", base)
	if _, err := os.Stat(dest); err == nil {
		return dest, nil // unpacked before
	}
	tmp := dest + ".part"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, "tar", "-xaf", tarball, "-C", tmp).CombinedOutput()
	if err != nil {
		os.RemoveAll(tmp)
		return "", &ArchiveError{fmt.Sprintf("%s: unpack: %v: %s", tarball, err, strings.Join(strings.Fields(string(out)), " "))}
	}
	if err := os.Rename(tmp, dest); err != nil {
		return "", err
	}
	return dest, nil
}
