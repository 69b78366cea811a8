package lab

import (
	"context"
	"os"

	"github.com/dbarena/dbarena/internal/lab/plan"
	"github.com/dbarena/dbarena/internal/server/catalog"
	"github.com/dbarena/dbarena/internal/server/sandbox"
	"github.com/dbarena/dbarena/internal/server/target"
)

// Local runs the variants' servers as sandboxes of Manager, finding
// catalogue servers in Catalog.
type Local struct {
	Manager *sandbox.Manager
	Catalog *catalog.Catalog
}

var _ Sandboxes = Local{}

// Start starts the sandbox of Spec(name, s, settings), with the password
// of the other sandboxes on its fixed port if any.
func (l Local) Start(ctx context.Context, name string, s plan.Server, settings []plan.Param) (target.Target, string, error) {
	spec := Spec(name, s, settings)
	spec.Password = portPassword(l.Manager, name, s.Port)
	switch {
	case s.Server != "":
		e, err := l.Catalog.Get(s.Server)
		if err != nil {
			return target.Target{}, "", err
		}
		spec.Basedir = e.Basedir
	case s.Flavor != "":
		f, err := target.ParseFlavor(s.Flavor)
		if err != nil {
			return target.Target{}, "", err
		}
		spec.Flavor = f
	}
	sb, err := l.Manager.Start(ctx, spec)
	if err != nil {
		return target.Target{}, "", err
	}
	return sb.Target(), sb.TLSCA, nil
}

// Restart restarts sandbox name.
func (l Local) Restart(ctx context.Context, name string) error {
	_, err := l.Manager.Restart(ctx, name)
	return err
}

// Stop stops sandbox name.
func (l Local) Stop(ctx context.Context, name string) error { return l.Manager.Stop(ctx, name) }

// DropCaches drops the kernel's clean page cache, dentries and inodes
// (root only).
func (Local) DropCaches() error {
	f, err := os.OpenFile("/proc/sys/vm/drop_caches", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString("3\n")
	return err
}

// Spec is the sandbox of a plan server with a cell's settings: the plan's
// profile (default "default"), buffer pool and allocator (default the C
// library's), TLS, the fixed port and whether unsafe settings are allowed, without the
// binary (Local.Start finds it).
func Spec(name string, s plan.Server, settings []plan.Param) sandbox.Spec {
	spec := sandbox.Spec{Name: name, Profile: s.Profile, BufferPool: s.BufferPool, Allocator: s.Allocator,
		AllowUnsafe: s.AllowUnsafeSettings, TLS: s.TLS, Port: s.Port}
	if spec.Allocator == "" {
		spec.Allocator = "system"
	}
	if spec.Profile == "" {
		spec.Profile = sandbox.ProfileDefault
	}
	for _, kv := range settings {
		spec.Settings = append(spec.Settings, sandbox.Setting{Key: kv.Key, Value: kv.Value})
	}
	return spec
}
