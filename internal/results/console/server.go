package console

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/dbarena/dbarena/internal/server/catalog"
	"github.com/dbarena/dbarena/internal/server/sandbox"
)

// Sandbox prints a sandbox: its target, masked DSN, datadir, the OS user
// its server runs as and its CA (server start, restart, show).
func Sandbox(w io.Writer, sb *sandbox.Sandbox) {
	fmt.Fprintf(w, "Sandbox %s: %s %s %s\n", sb.Name, sb.Flavor, sb.Version, sb.State)
	fmt.Fprintf(w, "  target: sandbox:%s\n", sb.Name)
	fmt.Fprintf(w, "  dsn:    %s\n", sb.Target().MaskedDSN())
	fmt.Fprintf(w, "  datadir: %s\n", sb.Datadir)
	if sb.ServerUser != "" {
		fmt.Fprintf(w, "  os user: %s\n", sb.ServerUser)
	}
	if sb.TLSCA != "" {
		fmt.Fprintf(w, "  tls-ca: %s\n", sb.TLSCA)
	}
}

// SandboxInfo is the documented shape of `server show --json` (no
// password).
type SandboxInfo struct {
	Name     string `json:"name"`
	Flavor   string `json:"flavor"`
	Version  string `json:"version"`
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Socket   string `json:"socket"`
	User     string `json:"user"`
	Database string `json:"database"`
	PID      int    `json:"pid"`
	Datadir  string `json:"datadir"`
	State    string `json:"state"`
	Profile  string `json:"profile,omitempty"`
	Target   string `json:"target"`
	DSN      string `json:"dsn"`
	TLSCA    string `json:"tls_ca,omitempty"`
	// ServerUser is the OS user the server runs as, when not dbarena's.
	ServerUser string `json:"server_user,omitempty"`
}

// SandboxJSON is sb as `server show --json` prints it.
func SandboxJSON(sb *sandbox.Sandbox) SandboxInfo {
	return SandboxInfo{
		Name: sb.Name, Flavor: string(sb.Flavor), Version: sb.Version, Host: sb.Host, Port: sb.Port,
		Socket: sb.Socket, User: sb.User, Database: sb.Database, PID: sb.PID, Datadir: sb.Datadir,
		State: string(sb.State), Profile: sb.Profile, Target: "sandbox:" + sb.Name, DSN: sb.Target().MaskedDSN(),
		TLSCA: sb.TLSCA, ServerUser: sb.ServerUser,
	}
}

// CatalogEntry is one catalogue line of `server list --json`.
type CatalogEntry struct {
	Name    string `json:"name"`
	Flavor  string `json:"flavor"`
	Version string `json:"version"`
	Basedir string `json:"basedir"`
}

// ServersJSON is `server list --json`: the sandboxes, the server binaries
// found and the catalogue.
func ServersJSON(list []*sandbox.Sandbox, bins []sandbox.Binary, cat []catalog.Entry) any {
	out := struct {
		Sandboxes []SandboxInfo    `json:"sandboxes"`
		Binaries  []sandbox.Binary `json:"binaries"`
		Catalogue []CatalogEntry   `json:"catalogue"`
	}{Sandboxes: []SandboxInfo{}, Binaries: bins, Catalogue: []CatalogEntry{}}
	for _, e := range cat {
		out.Catalogue = append(out.Catalogue, CatalogEntry{e.Name, string(e.Flavor), e.Version, e.Basedir})
	}
	for _, sb := range list {
		out.Sandboxes = append(out.Sandboxes, SandboxJSON(sb))
	}
	return out
}

// Servers prints `server list`: the sandboxes, the server binaries found
// and the catalogue.
func Servers(w io.Writer, list []*sandbox.Sandbox, bins []sandbox.Binary, cat []catalog.Entry) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFLAVOR\tVERSION\tPORT\tSTATE\tPROFILE")
	for _, sb := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", sb.Name, sb.Flavor, sb.Version, sb.Port, sb.State, sb.Profile)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nServer binaries found:")
	for _, b := range bins {
		fmt.Fprintf(w, "  %-8s %-28s %s\n", b.Flavor, b.Version, b.Server)
	}
	if len(bins) == 0 {
		fmt.Fprintln(w, "  none (install mariadb-server or postgresql, or use --basedir)")
	}
	fmt.Fprintln(w, "\nServer catalogue (start one with --server NAME):")
	for _, e := range cat {
		fmt.Fprintf(w, "  %-20s %-8s %-12s %s\n", e.Name, e.Flavor, e.Version, e.Basedir)
	}
	if len(cat) == 0 {
		fmt.Fprintln(w, "  empty (dbarena server import PATH, or scripts/fetch-servers)")
	}
}
