package plan

import "testing"

// TestScaleFractions: --scale shrinks a fractional size and micro's scale
// factor as fractions; before, both were rounded to whole numbers and
// floored at 1, so micro's scale: 0.1 at --scale 0.3 ran at scale 1 (ten
// times the suite).
func TestScaleFractions(t *testing.T) {
	const src = `name: s
servers:
  - {name: m, flavor: mariadb}
workloads:
  - name: micro
    params: {scale: 0.1}
  - name: micro
    params: {scale: 1}
  - name: script
    params: {scale: 4}
axes:
  scale-factor: [0.5, 2]
duration: 10s
`
	p, errs := Parse("s.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p.Scale(0.3)
	for i, want := range []string{"0.03", "0.3", "1"} {
		if got := p.Workloads[i].Params[0].Value; got != want {
			t.Errorf("workload %d (%s) scale = %s, want %s", i, p.Workloads[i].Name, got, want)
		}
	}
	if vals := p.Axes[0].Values; len(vals) != 2 || vals[0].Value != "0.15" || vals[1].Value != "1" {
		t.Errorf("scale-factor axis = %+v, want 0.15 and 1", vals)
	}
}
