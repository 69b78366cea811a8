package plan

import (
	"strings"
	"testing"
)

// TestTLSAxis: tls: [off, on] is a coordinate of every cell, runs within a
// variant's sandbox (no extra sandbox), and the sandbox is started with TLS;
// a server's tls: true turns TLS on for its cells without an axis.
func TestTLSAxis(t *testing.T) {
	p, errs := Parse("t.yaml", []byte(`name: t
servers:
  - {name: a, flavor: mariadb}
  - {name: b, flavor: postgres, tls: true}
  - {name: c, flavor: mariadb}
workloads: [oltp_point_select]
axes:
  tls: [off, on]
rounds: 1
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, c := range p.Cells() {
		got = append(got, c.ID+" tls="+map[bool]string{false: "false", true: "true"}[c.TLS])
	}
	want := []string{
		"workload=oltp_point_select,server=a,tls=off tls=false",
		"workload=oltp_point_select,server=a,tls=on tls=true",
		"workload=oltp_point_select,server=b,tls=off tls=false",
		"workload=oltp_point_select,server=b,tls=on tls=true",
		"workload=oltp_point_select,server=c,tls=off tls=false",
		"workload=oltp_point_select,server=c,tls=on tls=true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(p.Variants()) != 3 {
		t.Errorf("variants %+v: the tls axis makes no sandbox of its own", p.Variants())
	}
	for _, v := range p.Variants() {
		if !p.SandboxTLS(v.Server) {
			t.Errorf("server %s: sandbox without TLS", v.Server.Name)
		}
	}

	p, errs = Parse("t.yaml", []byte(`name: t
servers:
  - {name: a, flavor: mariadb, tls: true}
  - {name: b, flavor: mariadb}
workloads: [oltp_point_select]
axes:
  tls: [off]
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	vs := p.Variants()
	if !p.SandboxTLS(vs[0].Server) || p.SandboxTLS(vs[1].Server) {
		t.Errorf("tls: [off]: sandbox TLS a=%v b=%v, want true false", p.SandboxTLS(vs[0].Server), p.SandboxTLS(vs[1].Server))
	}
	for _, c := range p.Cells() {
		if c.TLS {
			t.Errorf("%s: tls=off cell connects over TLS", c.ID)
		}
	}

	p, errs = Parse("t.yaml", []byte(`name: t
servers:
  - {name: a, flavor: mariadb, tls: true}
  - {name: b, flavor: mariadb, tls: false}
workloads: [oltp_point_select]
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if cs := p.Cells(); !cs[0].TLS || cs[1].TLS || cs[0].ID != "workload=oltp_point_select,server=a" {
		t.Errorf("server tls without an axis: %+v", cs)
	}
}

// TestTLSErrors: bad tls values and TLS for a DSN server name their line.
func TestTLSErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`name: t
servers: [{name: a, flavor: mariadb}]
workloads: [w]
axes:
  tls: [off, yes]
`, `t.yaml:5: tls "yes": want on or off`},
		{`name: t
servers:
  - {name: a, flavor: mariadb}
  - {name: d, dsn: "mysql://u@127.0.0.1/db"}
workloads: [w]
axes:
  tls: [off, on]
`, `t.yaml:4: server "d": a dsn server cannot take the tls axis (line 7)`},
		{`name: t
servers:
  - {name: d, dsn: "mysql://u@127.0.0.1/db", tls: true}
workloads: [w]
`, `t.yaml:3: server "d": a dsn server is not managed by dbarena: no profile, settings, buffer_pool, allocator or tls`},
		{`name: t
servers:
  - {name: a, flavor: mariadb, tls: on}
workloads: [w]
`, `t.yaml:3: tls "on": want true or false`},
	} {
		_, errs := Parse("t.yaml", []byte(tc.text))
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want) {
			t.Errorf("errors %v, want one starting %q", errs, tc.want)
		}
	}
}
