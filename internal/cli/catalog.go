package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/server/catalog"
	"github.com/dbarena/dbarena/internal/server/sandbox"
)

// catalogServer looks a catalogue name up (exit 2 when unknown).
func (a *App) catalogServer(name string) (catalog.Entry, error) {
	e, err := catalog.Open(a.home()).Get(name)
	if errors.Is(err, catalog.ErrNotFound) {
		return e, usagef("--server %s: not in the server catalogue (see `dbarena server list`)", name)
	}
	if err != nil {
		return e, failed(err)
	}
	return e, nil
}

// serverImport registers an unpacked server directory or a tarball
// (unpacked under $DBARENA_HOME/servers/NAME) in the catalogue.
func (a *App) serverImport(ctx context.Context, m *sandbox.Manager, args []string) error {
	var name string
	var quiet bool
	fs := newFlagSet("server import")
	fs.StringVar(&name, "name", "", "catalogue name (default FLAVOR-VERSION)")
	fs.BoolVar(&quiet, "quiet", false, "print nothing on success")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("server import needs exactly one PATH (a server directory or tarball)")
	}
	if name != "" {
		if err := catalog.ValidName(name); err != nil {
			return usagef("--name: %w", err)
		}
	}
	src, err := filepath.Abs(fs.Arg(0))
	if err != nil {
		return usagef("%s: %w", fs.Arg(0), err)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return usagef("%s: %w", fs.Arg(0), err)
	}
	dir := src
	if !fi.IsDir() {
		if !catalog.IsArchive(src) {
			return usagef("%s: want a server directory or a tarball (.tar, .tar.gz, .tgz, .tar.xz, .tar.bz2, .tar.zst)", fs.Arg(0))
		}
		var ae *catalog.ArchiveError
		if dir, err = catalog.Unpack(ctx, a.home(), src); errors.As(err, &ae) {
			return usagef("%w", err)
		} else if err != nil {
			return failed(err)
		}
	}
	basedir := catalog.FindBasedir(dir)
	bin, err := m.Inspect(basedir)
	if err != nil {
		return usagef("%s: %w", fs.Arg(0), err)
	}
	if name == "" {
		name = string(bin.Flavor) + "-" + bin.Version
	}
	e := catalog.Entry{Name: name, Flavor: bin.Flavor, Version: bin.Version, Basedir: bin.Basedir,
		Server: bin.Server, Source: src, ImportedAt: time.Now().UTC()}
	if err := catalog.Open(a.home()).Put(e); err != nil {
		return failed(err)
	}
	if !quiet {
		fmt.Fprintf(a.Stdout, "Server %s: %s %s in %s\n  start it with: dbarena server start NAME --server %s\n",
			e.Name, e.Flavor, e.Version, e.Basedir, e.Name)
	}
	return nil
}

func (a *App) serverForget(args []string) error {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		return usagef("server forget needs exactly one catalogue NAME")
	}
	err := catalog.Open(a.home()).Remove(args[0])
	if errors.Is(err, catalog.ErrNotFound) {
		return usagef("%s: not in the server catalogue", args[0])
	}
	if err != nil {
		return failed(err)
	}
	fmt.Fprintf(a.Stdout, "Server %s removed from the catalogue\n", args[0])
	return nil
}
