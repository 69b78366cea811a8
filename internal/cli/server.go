package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dbarena/dbarena/internal/results/console"
	"github.com/dbarena/dbarena/internal/server/catalog"
	"github.com/dbarena/dbarena/internal/server/credentials"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

func (a *App) server(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("name a server command: start, stop, restart, rm, list, show, import, forget")
	}
	m := a.sandboxes()
	sub, rest := args[0], args[1:]
	switch sub {
	case "start":
		return a.serverStart(ctx, m, rest)
	case "stop", "restart", "rm":
		name, err := oneName(sub, rest)
		if err != nil {
			return err
		}
		return a.serverControl(ctx, m, sub, name)
	case "list":
		return a.serverList(m, rest)
	case "show":
		return a.serverShow(m, rest)
	case "import":
		return a.serverImport(ctx, m, rest)
	case "forget":
		return a.serverForget(rest)
	}
	return usagef("unknown server command %q (want start, stop, restart, rm, list, show, import, forget)", sub)
}

func oneName(sub string, args []string) (string, error) {
	if len(args) != 1 || args[0] == "" || args[0][0] == '-' {
		return "", usagef("server %s needs exactly one sandbox NAME", sub)
	}
	return args[0], nil
}

func (a *App) serverStart(ctx context.Context, m *sandbox.Manager, args []string) error {
	var (
		spec     sandbox.Spec
		flavor   string
		settings [][2]string
		server   string
		pwFile   string
	)
	fs := newFlagSet("server start")
	fs.StringVar(&flavor, "flavor", "", "mariadb, mysql, percona or postgres (default: first server found, MySQL family first)")
	fs.StringVar(&spec.Basedir, "basedir", "", "unpacked server directory to run instead of the installed binaries")
	fs.IntVar(&spec.Port, "port", 0, "TCP port on 127.0.0.1 (default: a free one)")
	fs.StringVar(&spec.Profile, "profile", "", "settings profile: default, durable or fast")
	fs.Var(keyValues{&settings}, "set", "server setting KEY=VALUE (repeatable)")
	fs.BoolVar(&spec.AllowUnsafe, "allow-unsafe-set", false, "let --set run code, load libraries, open listeners or reach files outside the sandbox (init_file, plugin_load, archive_command, shared_preload_libraries...)")
	fs.StringVar(&spec.BufferPool, "buffer-pool", "", "innodb_buffer_pool_size / shared_buffers, e.g. 512M")
	fs.StringVar(&spec.User, "user", "", "workload account (default dbarena)")
	fs.StringVar(&spec.Password, "password", "", "workload account password (visible in ps: prefer --password-file; default: generated, kept in the sandbox directory)")
	fs.StringVar(&pwFile, "password-file", "", "read the workload account password from the first line of this file (keeps it out of ps)")
	fs.StringVar(&spec.Database, "database", "", "workload database (default sbtest)")
	fs.StringVar(&server, "server", "", "catalogued server to run (see `dbarena server list`; dbarena server import)")
	fs.StringVar(&spec.Allocator, "allocator", "", "memory allocator preloaded into the server: system, jemalloc or tcmalloc")
	fs.BoolVar(&spec.TLS, "tls", false, "generate a CA and server certificate and turn TLS on (server show gives the CA for tls-ca= / sslrootcert=)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("server start needs exactly one sandbox NAME")
	}
	spec.Name = fs.Arg(0)
	switch {
	case fs.Changed("password") && pwFile != "":
		return usagef("--password and --password-file exclude each other: keep only --password-file")
	case fs.Changed("password"):
		a.warnArgvPassword("--password", "--password-file")
	case pwFile != "":
		pw, err := credentials.ReadPasswordFile(pwFile)
		if err != nil {
			return usagef("%w", err)
		}
		spec.Password = pw
	}
	basedirFlag := "--basedir " + spec.Basedir
	if server != "" {
		if spec.Basedir != "" {
			return usagef("--server and --basedir exclude each other")
		}
		e, err := a.catalogServer(server)
		if err != nil {
			return err
		}
		spec.Basedir = e.Basedir
		basedirFlag = "--server " + server + ": basedir " + e.Basedir
	}
	if spec.Basedir != "" {
		if err := checkBasedir(m, basedirFlag, spec.Basedir); err != nil {
			return err
		}
	}
	if flavor != "" {
		f, err := target.ParseFlavor(flavor)
		if err != nil {
			return usagef("--flavor: %w", err)
		}
		spec.Flavor = f
	}
	for _, kv := range settings {
		spec.Settings = append(spec.Settings, sandbox.Setting{Key: kv[0], Value: kv[1]})
	}
	if err := validate(spec.Validate()); err != nil {
		return err
	}
	sb, err := m.Start(ctx, spec)
	if err != nil {
		if errors.Is(err, sandbox.ErrInvalidSpec) {
			return usagef("%w", err)
		}
		return unreachable(err)
	}
	console.Sandbox(a.Stdout, sb)
	return nil
}

// checkBasedir reports a basedir that is missing or holds no usable
// server (sandbox.CheckBasedir), naming the flag it came from (exit 2).
func checkBasedir(m *sandbox.Manager, flag, dir string) error {
	if err := m.CheckBasedir(dir); err != nil {
		return usagef("%s: %w", flag, err)
	}
	return nil
}

func (a *App) serverControl(ctx context.Context, m *sandbox.Manager, sub, name string) error {
	noSuch := usagef("no sandbox named %q (see `dbarena server list`)", name)
	// rm also deletes what a start left without sandbox.json (Get cannot see it).
	if _, err := m.Get(name); errors.Is(err, sandbox.ErrNotFound) && sub != "rm" {
		return noSuch
	}
	switch sub {
	case "stop":
		if err := m.Stop(ctx, name); err != nil {
			return failed(err)
		}
		fmt.Fprintf(a.Stdout, "Sandbox %s stopped\n", name)
	case "restart":
		sb, err := m.Restart(ctx, name)
		if err != nil {
			return unreachable(err)
		}
		console.Sandbox(a.Stdout, sb)
	case "rm":
		if err := m.Remove(ctx, name); errors.Is(err, sandbox.ErrNotFound) {
			return noSuch
		} else if err != nil {
			return failed(err)
		}
		fmt.Fprintf(a.Stdout, "Sandbox %s removed\n", name)
	}
	return nil
}

func (a *App) serverList(m *sandbox.Manager, args []string) error {
	var asJSON bool
	fs := newFlagSet("server list")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	list, err := m.List()
	if err != nil {
		return failed(err)
	}
	bins, err := m.Discover()
	if err != nil {
		return failed(err)
	}
	cat, err := catalog.Open(a.home()).List()
	if err != nil {
		return failed(err)
	}
	if asJSON {
		return a.printJSON(console.ServersJSON(list, bins, cat))
	}
	console.Servers(a.Stdout, list, bins, cat)
	return nil
}

func (a *App) serverShow(m *sandbox.Manager, args []string) error {
	var asJSON bool
	fs := newFlagSet("server show")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("server show needs exactly one sandbox NAME")
	}
	sb, err := m.Get(fs.Arg(0))
	if errors.Is(err, sandbox.ErrNotFound) {
		return usagef("no sandbox named %q (see `dbarena server list`)", fs.Arg(0))
	}
	if err != nil {
		return failed(err)
	}
	if asJSON {
		return a.printJSON(console.SandboxJSON(sb))
	}
	console.Sandbox(a.Stdout, sb)
	return nil
}

func (a *App) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintln(a.Stdout, string(b))
	return nil
}
