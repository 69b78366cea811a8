package sandbox

import (
	"errors"
	"os"
)

// CheckBasedir reports a basedir (--basedir, a catalogued server) that is
// missing, not a directory or holds no usable server.
func (m *Manager) CheckBasedir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return errors.New("no such directory")
	case !fi.IsDir():
		return errors.New("not a directory")
	}
	if _, err := m.Inspect(dir); errors.Is(err, ErrNoServer) {
		return errors.New("no mariadbd, mysqld or postgres under bin/, sbin/ or libexec/")
	} else if err != nil {
		return err
	}
	return nil
}
