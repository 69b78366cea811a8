package sandbox

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
)

// passwordPath is the file holding the workload password (0600) in the
// sandbox directory dir.
func passwordPath(dir string) string { return filepath.Join(dir, "password") }

// readPassword returns the recorded workload password of the sandbox in dir.
func readPassword(dir string) (string, error) {
	b, err := os.ReadFile(passwordPath(dir))
	return strings.TrimRight(string(b), "\n"), err
}

// generatePassword returns a random 24-character alphanumeric password.
func generatePassword() (string, error) {
	const alphabet = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, 24)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", fmt.Errorf("generate password: %w", err)
		}
		b[i] = alphabet[n.Int64()]
	}
	return string(b), nil
}

// password returns the workload password: the spec's, else the recorded
// one, else a new one; it is kept in Dir/password (0600).
func (m *Manager) password(rec *record, spec Spec) (string, error) {
	dir := m.dir(rec.Name)
	current, err := readPassword(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("sandbox %q: read password: %w", rec.Name, err)
	}
	pw := spec.Password
	if pw == "" {
		pw = current
	}
	if pw == "" {
		if pw, err = generatePassword(); err != nil {
			return "", err
		}
	}
	if pw == current {
		return pw, nil
	}
	if err := writePrivate(passwordPath(dir), []byte(pw+"\n"), osUser{}); err != nil {
		return "", fmt.Errorf("sandbox %q: save password: %w", rec.Name, err)
	}
	return pw, nil
}

// adminPasswordPath is the file holding the server superuser's password
// (0600), beside the workload one.
func adminPasswordPath(dir string) string { return filepath.Join(dir, "admin-password") }

// adminPassword returns the superuser password of the sandbox in dir,
// generating and keeping it on first use.
func adminPassword(dir string) (string, error) {
	b, err := os.ReadFile(adminPasswordPath(dir))
	if err == nil {
		return strings.TrimRight(string(b), "\n"), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read admin password: %w", err)
	}
	pw, err := generatePassword()
	if err != nil {
		return "", err
	}
	if err := writePrivate(adminPasswordPath(dir), []byte(pw+"\n"), osUser{}); err != nil {
		return "", fmt.Errorf("save admin password: %w", err)
	}
	return pw, nil
}
