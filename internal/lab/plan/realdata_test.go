package plan

import (
	"strings"
	"testing"
)

// TestDataPlan: a plan-wide data with an engine list makes one variant per
// engine of each MySQL-family server (none for PostgreSQL), loads its
// family's dump, keys the data by dump and engine (so workloads share one
// load) and gives workloads no --mysql-storage-engine; a server's own data
// overrides the plan's.
func TestDataPlan(t *testing.T) {
	p, errs := Parse("d.yaml", []byte(`name: d
servers:
  - {name: maria, flavor: mariadb}
  - {name: pg, flavor: postgres}
  - name: other
    flavor: mariadb
    data: {dump: own.sql, reload: always, threads: 2}
data:
  dump: {mysql: shop-my.sql, postgres: shop-pg.sql}
  engine: [MyISAM, InnoDB, Aria]
  threads: 4
workloads: [script, oltp_point_select]
rounds: 1
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, v := range p.Variants() {
		got = append(got, v.Label())
	}
	if want := "maria-myisam maria-innodb maria-aria pg other"; strings.Join(got, " ") != want {
		t.Errorf("variants %q, want %q", got, want)
	}
	keys := map[string]bool{}
	for _, c := range p.Cells() {
		for _, kv := range c.Params {
			if kv.Key == "mysql-storage-engine" {
				t.Errorf("cell %s: workload parameter %s with data", c.ID, kv.Value)
			}
		}
		keys[c.DataKey] = true
	}
	for _, k := range []string{"data=shop-my.sql,engine=MyISAM", "data=shop-my.sql,engine=Aria", "data=shop-pg.sql", "data=own.sql"} {
		if !keys[k] {
			t.Errorf("no cell has data key %q (keys %v)", k, keys)
		}
	}
	if len(keys) != 5 {
		t.Errorf("data keys %v: two workloads share each load", keys)
	}
	d := p.DataFor(p.Servers[2])
	if d.Dump != "own.sql" || d.Reload != ReloadAlways || d.Threads != 2 || len(d.Engines) != 0 {
		t.Errorf("server data %+v", d)
	}
	if pd := p.DataFor(p.Servers[1]); pd != p.Data || pd.Reload != ReloadOnce || pd.DumpFor("postgres") != "shop-pg.sql" || pd.Threads != 4 {
		t.Errorf("plan data %+v", pd)
	}
	// The old scalar forms keep their meaning.
	p, errs = Parse("d.yaml", []byte("name: d\nservers: [{flavor: mariadb}]\nworkloads: [x]\ndata: reload\n"))
	if len(errs) > 0 || !p.Reload || p.Data != nil {
		t.Errorf("data: reload: %v %+v", errs, p)
	}
}

// TestConnectAxis: connect: [persistent, per-event, every=N] is a
// coordinate of every cell, crossed with threads, inside each variant.
func TestConnectAxis(t *testing.T) {
	p, errs := Parse("c.yaml", []byte(`name: c
servers: [{name: a, flavor: mariadb}]
workloads: [oltp_point_select]
axes:
  threads: [32, 640]
  connect: [persistent, per-event, every=10]
rounds: 1
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, c := range p.Cells() {
		got = append(got, c.ID+" "+c.Connect)
	}
	want := []string{
		"workload=oltp_point_select,server=a,threads=32,connect=persistent persistent",
		"workload=oltp_point_select,server=a,threads=32,connect=per-event per-event",
		"workload=oltp_point_select,server=a,threads=32,connect=every=10 every=10",
		"workload=oltp_point_select,server=a,threads=640,connect=persistent persistent",
		"workload=oltp_point_select,server=a,threads=640,connect=per-event per-event",
		"workload=oltp_point_select,server=a,threads=640,connect=every=10 every=10",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cells:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range p.Cells() {
		for _, kv := range c.Params {
			if kv.Key == "connect" {
				t.Errorf("connect became a workload parameter: %v", c.Params)
			}
		}
	}
}

// TestPortField: port: is kept on the server; servers may share one.
func TestPortField(t *testing.T) {
	p, errs := Parse("p.yaml", []byte(`name: p
servers:
  - {name: a, flavor: mariadb, port: 3399}
  - {name: b, flavor: postgres, port: 3399}
  - {name: c, dsn: "mysql://u@db.example:3399/x"}
workloads: [x]
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if p.Servers[0].Port != 3399 || p.Servers[1].Port != 3399 || p.Servers[2].Port != 0 {
		t.Errorf("ports %+v", p.Servers)
	}
}

// TestRealdataErrors: each problem of the new keys names its line.
func TestRealdataErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"servers:\n  - {name: a, flavor: mariadb, port: 70000}\n", "p.yaml:3: port \"70000\": want a TCP port from 1 to 65535"},
		{"servers:\n  - {name: a, dsn: \"mysql://u@127.0.0.1:3307/x\", port: 3307}\n", "p.yaml:3: server \"a\": a dsn server is not managed by dbarena"},
		{"servers:\n  - {name: a, dsn: \"mysql://u@127.0.0.1:3307/x\"}\n  - {name: b, flavor: mariadb, port: 3307}\n",
			"p.yaml:4: server \"b\": port 3307 is the port of dsn server \"a\" (line 3), which runs all along"},
		{"servers: [{name: a, flavor: mariadb}]\naxes:\n  connect: [persistent, sometimes]\n", "p.yaml:4: connect \"sometimes\": want persistent, per-event or every=N"},
		{"servers: [{name: a, flavor: mariadb}]\naxes:\n  connect: [every=0]\n", "p.yaml:4: connect \"every=0\""},
		{"servers: [{name: a, flavor: mariadb}]\ndata:\n  engine: InnoDB\n", "p.yaml:3: data: needs a dump"},
		{"servers: [{name: a, flavor: mariadb}]\ndata:\n  dump: x.sql\n  reload: sometimes\n", "p.yaml:5: reload \"sometimes\": want once, always or never"},
		{"servers: [{name: a, flavor: mariadb}]\ndata:\n  dump: x.sql\n  engine: [InnoDB, \"My ISAM\"]\n", "p.yaml:5: engine \"My ISAM\" is not a storage engine name"},
		{"servers: [{name: a, flavor: mariadb}]\ndata:\n  dump: x.sql\n  engine: [InnoDB, innodb]\n", "p.yaml:5: engine \"innodb\" already listed at line 5"},
		{"servers: [{name: a, flavor: mariadb}]\ndata:\n  dump: {oracle: x.sql}\n", "p.yaml:4: dump for \"oracle\": want mysql or postgres"},
		{"servers: [{name: a, flavor: mariadb}]\ndata:\n  dump: x.sql\n  size: 3\n", "p.yaml:5: unknown data key \"size\""},
		{"servers: [{name: a, flavor: mariadb}]\ndata:\n  dump: x.sql\n  threads: 0\n", "p.yaml:5: threads \"0\": want a whole number from 1 to 256"},
		{"servers:\n  - {name: a, flavor: mariadb, data: x.sql}\n", "p.yaml:3: data: want a mapping"},
		{"servers:\n  - {name: a, flavor: mariadb, engines: [InnoDB]}\ndata: {dump: x.sql, engine: [Aria]}\n", "p.yaml:3: server \"a\": engines given twice"},
	} {
		_, errs := Parse("p.yaml", []byte("name: p\n"+tc.text+"workloads: [x]\n"))
		var all []string
		for _, e := range errs {
			all = append(all, e.Error())
		}
		if !strings.Contains(strings.Join(all, "\n"), tc.want) {
			t.Errorf("%q:\n got %q\nwant %q", tc.text, all, tc.want)
		}
	}
}

// TestPathsFromPlanDir: relative dumps and script files are taken from the
// plan file's directory; absolute ones and weights are kept.
func TestPathsFromPlanDir(t *testing.T) {
	p, errs := Parse("plans/x.yaml", []byte(`name: x
servers:
  - {name: a, flavor: mariadb, data: {dump: /abs/own.sql}}
  - {name: b, flavor: postgres}
data:
  dump: {mysql: eshop/my.sql, postgres: eshop/pg.sql}
workloads:
  - name: script
    params: {file: eshop/shop.sql@3, create: setup.sql, define: products=10}
axes:
  file: [a.sql, /b.sql]
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got := []string{p.Servers[0].Data.Dump, p.Data.DumpFor("mysql"), p.Data.DumpFor("postgres")}
	for _, kv := range p.Workloads[0].Params {
		got = append(got, kv.Key+"="+kv.Value)
	}
	for _, v := range p.Axes[0].Values {
		got = append(got, v.Value)
	}
	want := "/abs/own.sql plans/eshop/my.sql plans/eshop/pg.sql file=plans/eshop/shop.sql@3 create=plans/setup.sql define=products=10 plans/a.sql /b.sql"
	if strings.Join(got, " ") != want {
		t.Errorf("paths\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}
