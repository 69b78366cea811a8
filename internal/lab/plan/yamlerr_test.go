package plan

import (
	"strings"
	"testing"
)

// TestSyntaxErrorPositions checks that each kind of YAML syntax error names
// the 1-based line, and the column where the problem lies (yaml.v3 itself
// gives 0-based lines for some, and no column).
func TestSyntaxErrorPositions(t *testing.T) {
	const head = "name: x\ndescription: y\nrounds: 3\nduration: 5\n" // lines 1-4
	tests := []struct {
		name, plan, want string
	}{
		{"unclosed [", head + "servers: [a, b\nworkloads: [w]\n",
			`p.yaml:5:10: "[" is not closed: did not find expected ',' or ']'`},
		{"unclosed [ at the end", head + "servers: [a, b\n",
			`p.yaml:5:10: "[" is not closed: did not find expected ',' or ']'`},
		{"unclosed [ on line 1", "servers: [a, b\nname: x\n",
			`p.yaml:1:10: "[" is not closed: did not find expected ',' or ']'`},
		{"unclosed [ over lines", "name: x\nservers: [a,\n  b,\n  c\nworkloads: [w]\n",
			`p.yaml:2:10: "[" is not closed: did not find expected ',' or ']'`},
		{"unclosed [ after a closed one", "name: x\naxes: {threads: [1, 2], table-size: [1, 2}\n",
			`p.yaml:2:37: "[" is not closed: did not find expected ',' or ']'`},
		{"unclosed {", head + "servers: {a: b\nworkloads: [w]\n",
			`p.yaml:5:10: "{" is not closed: did not find expected ',' or '}'`},
		{"unclosed { in a list", "name: x\nservers: [{flavor: mariadb, {flavor: postgres}]\nworkloads: [w]\n",
			`p.yaml:2:11: "{" is not closed: did not find expected ',' or '}'`},
		{"empty unclosed [", "name: x\nservers: [\n", `p.yaml:2:10: did not find expected node content at the end of the file`},
		{"unclosed [ far down", head + strings.Repeat("# a comment\n", 3000) + "servers: [a, b\nworkloads: [w]\n",
			`p.yaml:3005:10: "[" is not closed: did not find expected ',' or ']'`},
		{"tab far down", "name: x\nservers:\n" + strings.Repeat("  - flavor: mariadb\n", 2000) + "  - name: a\n\tflavor: x\n",
			`p.yaml:2004:1: found a tab character that violates indentation (indent with spaces, not tabs)`},
		{"tab in indentation", "name: x\nservers:\n  - name: a\n\tflavor: mariadb\nworkloads: [w]\n",
			`p.yaml:4:1: found a tab character that violates indentation (indent with spaces, not tabs)`},
		{"tab before a list", "name: x\nservers:\n\t- name: a\nworkloads: [w]\n",
			`p.yaml:3:1: found character that cannot start any token (indent with spaces, not tabs)`},
		{"tab on line 1", "\tname: x\n", `p.yaml:1:1: found character that cannot start any token (indent with spaces, not tabs)`},
		{"deeper indentation", "name: x\nservers:\n  - name: a\n     flavor: mariadb\nworkloads: [w]\n",
			`p.yaml:4:12: mapping values are not allowed in this context`},
		{"indented key", "name: x\n  servers: a\n", `p.yaml:2:10: mapping values are not allowed in this context`},
		{"shallower indentation in a list", "name: x\nservers:\n  - name: a\n    flavor: mariadb\n   profile: x\nworkloads: [w]\n",
			`p.yaml:5:4: did not find expected '-' indicator`},
		{"shallower indentation in a mapping", "name: x\nservers:\n  - flavor: mariadb\n workloads: [w]\n",
			`p.yaml:4:2: did not find expected key`},
		{"list item without dash", "name: x\nservers:\n  - a\n  b\n", `p.yaml:4:3: could not find expected ':' at the end of the file`},
		{"unterminated double quote", "name: x\ndescription: \"abc\nrounds: 3\n",
			`p.yaml:2:14: quoted value is not closed: found the end of the file`},
		{"unterminated quote on line 1", "description: \"abc\nrounds: 3\nname: x\n",
			`p.yaml:1:14: quoted value is not closed: found the end of the file`},
		{"unterminated single quote", "name: x\ndescription: 'abc\nrounds: 3\n",
			`p.yaml:2:14: quoted value is not closed: found the end of the file`},
		{"column counts characters", "name: x\né: \"é\n",
			`p.yaml:2:4: quoted value is not closed: found the end of the file`},
		{"dangling comma", "name: x\nservers: [a, b,   # more to come\n\n", `p.yaml:2:15: did not find expected node content at the end of the file`},
		{"dangling comma in a long list", "name: x\nservers: [" + strings.Repeat("a, ", 1000) + "\n", `p.yaml:2:3009: did not find expected node content at the end of the file`},
		{"bad escape", "name: x\ndescription: \"a\\qb\"\n", `p.yaml:2:16: found unknown escape character`},
		{"colon in a value", "name: x\ndescription: a: b\n", `p.yaml:2:15: mapping values are not allowed in this context`},
		{"reserved character", "name: x\nrounds: @3\n", `p.yaml:2:9: found character that cannot start any token`},
		{"unknown anchor", "name: x\ndescription: *nope\n", `p.yaml:2:14: unknown anchor 'nope' referenced`},
		{"control character", "name: x\ndescription: a\x01\n", `p.yaml:2:15: control characters are not allowed`},
		{"not UTF-8", "name: x\ndescription: \xff\n", `p.yaml:2:14: not UTF-8 text (save the plan as UTF-8)`},
		{"byte order mark", "\xef\xbb\xbfname: x\nservers: [a\n", `p.yaml:2:10: "[" is not closed: did not find expected ',' or ']'`},
		{"CRLF", "name: x\r\nservers: [a\r\nworkloads: b\r\n", `p.yaml:2:10: "[" is not closed: did not find expected ',' or ']'`},
		{"error in a second document", "name: x\n---\n[\n", `p.yaml:3:1: did not find expected node content at the end of the file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Parse("p.yaml", []byte(tt.plan))
			if len(errs) != 1 || errs[0].Error() != tt.want {
				t.Errorf("errors %q\nwant   %q", errs, tt.want)
			}
		})
	}
}

// TestValueErrorLines checks that problems with well-formed YAML name the
// line of the offending key or value.
func TestValueErrorLines(t *testing.T) {
	tests := []struct {
		name, plan string
		want       []string // every error, in line order
	}{
		{"duplicate top-level key", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [w]\nname: y\n",
			[]string{`p.yaml:4: "name" given twice (first at line 1)`}},
		{"duplicate server key", "name: x\nservers:\n  - name: a\n    flavor: mariadb\n    name: b\nworkloads: [w]\n",
			[]string{`p.yaml:5: "name" given twice (first at line 3)`}},
		{"duplicate setting", "name: x\nservers:\n  - flavor: mariadb\n    settings:\n      a: 1\n      a: 2\nworkloads: [w]\n",
			[]string{`p.yaml:6: "a" given twice (first at line 5)`}},
		{"duplicate parameter", "name: x\nservers: [{flavor: mariadb}]\nworkloads:\n  - name: w\n    params: {tables: 1,\n      tables: 2}\n",
			[]string{`p.yaml:6: "tables" given twice (first at line 5)`}},
		{"duplicate axis", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [w]\naxes:\n  threads: [1]\n  threads: [2]\n",
			[]string{`p.yaml:6: "threads" given twice (first at line 5)`}},
		{"unknown keys", "name: x\nservers:\n  - flavor: mariadb\n    colour: red\nworkloads:\n  - name: w\n    param: {}\nroundz: 1\n",
			[]string{`p.yaml:4: unknown server key "colour"`, `p.yaml:7: unknown workload key "param"`, `p.yaml:8: unknown key "roundz"`}},
		{"wrong types", "name: [x]\nservers: x\nworkloads: {a: b}\nrounds:\n  a: 1\naxes: [threads]\n",
			[]string{`p.yaml:1: name: want a single value, not a list`,
				`p.yaml:2: a server is a mapping (name, server|flavor|dsn|catalog, profile, settings, engines, tls, port, data), not a single value`,
				`p.yaml:3: workloads: want a list, not a mapping`,
				`p.yaml:4: rounds: want a single value, not a mapping`,
				`p.yaml:6: axes: want AXIS: [values] pairs, not a list`}},
		{"wrong types inside", "name: x\nservers:\n  - flavor: [mariadb]\n    settings: [a]\nworkloads:\n  - [w]\n  - name: v\n    params: 3\n",
			[]string{`p.yaml:3: flavor: want a single value, not a list`, `p.yaml:4: settings: want KEY: VALUE pairs, not a list`,
				`p.yaml:6: a workload is a name or a mapping (name, params, shards, jobs), not a list`, `p.yaml:8: params: want KEY: VALUE pairs, not a single value`}},
		{"out of range", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [w]\nrounds: 1001\nduration: -5\nreport_interval: 1e300\nwarmup: NaN\nnoisy_cv: NaN\naxes:\n  threads: [1, 100001]\n",
			[]string{`p.yaml:4: rounds "1001": want a whole number from 1 to 1000`,
				`p.yaml:5: duration "-5": want a positive duration`,
				`p.yaml:6: report_interval "1e300": want a positive duration`,
				`p.yaml:7: warmup "NaN": want a positive duration`,
				`p.yaml:8: noisy_cv "NaN": want a number above 0 and below 10`,
				`p.yaml:10: threads "100001": want a whole number from 1 to 100000`}},
		{"unknown baseline server", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [w]\nbaseline:\n  server: nosuch\n",
			[]string{`p.yaml:5: baseline server "nosuch" is not one of the plan's servers`}},
		{"unknown baseline axis", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [w]\nbaseline:\n  threads: 4\n",
			[]string{`p.yaml:5: baseline "threads" is not an axis of the plan`}},
		{"server name used twice", "name: x\nservers:\n  - flavor: mariadb\n    name: a\n  - flavor: postgres\n    name: a\nworkloads: [w]\n",
			[]string{`p.yaml:6: server name "a" already used at line 4`}},
		{"two documents", "name: x\nservers: [{flavor: mariadb}]\nworkloads: [w]\n---\nname: y\n",
			[]string{`p.yaml:4: a plan is one YAML document: a second one starts here`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Parse("p.yaml", []byte(tt.plan))
			sortErrors(errs)
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors %q, want %d", len(errs), errs, len(tt.want))
			}
			for i, e := range errs {
				if !strings.HasPrefix(e.Error(), tt.want[i]) {
					t.Errorf("error %d = %q, want prefix %q", i, e, tt.want[i])
				}
			}
		})
	}
}

// TestWorkloadAndServerLines checks the lines the caller uses for unknown
// workloads (the name's) and unknown catalogue servers (the server key's).
func TestWorkloadAndServerLines(t *testing.T) {
	p, errs := Parse("p.yaml", []byte("name: x\nservers:\n  - name: a\n    server: nosuch\nworkloads:\n  - params: {tables: 1}\n    name: w\n  - v\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if p.Servers[0].Line != 4 {
		t.Errorf("server line %d, want 4 (its server key)", p.Servers[0].Line)
	}
	if p.Workloads[0].Line != 7 || p.Workloads[1].Line != 8 {
		t.Errorf("workload lines %d %d, want 7 8 (their names)", p.Workloads[0].Line, p.Workloads[1].Line)
	}
}
