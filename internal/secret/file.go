package secret

import "os"

// WriteFile writes data to path readable by its owner only (mode 0600, an
// existing regular file's mode too): the files dbarena writes for the user
// (--json summaries, loads' and checksums' reports) hold statement text,
// tags and command lines from untrusted inputs.
func WriteFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return err
		}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
