package convert

import (
	"io"
	"os"
	"path/filepath"
)

// Write runs write on stdout when out is "", else on a temporary file
// beside out, renamed to out when it succeeds (no partial capture file).
func Write(out string, stdout io.Writer, write func(io.Writer) (Result, error)) (Result, error) {
	if out == "" {
		return write(stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return Result{}, err
	}
	defer os.Remove(tmp.Name())
	res, err := write(tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	return res, os.Rename(tmp.Name(), out)
}
