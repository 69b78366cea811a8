package sbrand

import (
	"math"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func cfgWith(d Dist) Config {
	c := DefaultConfig()
	c.Type = d
	return c
}

func TestDefaultsMatchSysbench(t *testing.T) {
	// sysbench 1.0.20 `sysbench --help`, "Pseudo-Random Numbers Generator options".
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	c := DefaultConfig()
	c.Flags(fs)
	want := map[string]string{
		"rand-type":        "special",
		"rand-spec-iter":   "12",
		"rand-spec-pct":    "1",
		"rand-spec-res":    "75",
		"rand-pareto-h":    "0.2",
		"rand-zipfian-exp": "0.8",
	}
	for name, def := range want {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("flag --%s missing", name)
			continue
		}
		if f.DefValue != def {
			t.Errorf("--%s default = %q, want %q", name, f.DefValue, def)
		}
	}
	if errs := c.Validate(); len(errs) != 0 {
		t.Errorf("defaults invalid: %v", errs)
	}
}

func TestFlagsParse(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	c := DefaultConfig()
	c.Flags(fs)
	if err := fs.Parse([]string{"--rand-type=Pareto", "--rand-pareto-h=0.3"}); err != nil {
		t.Fatal(err)
	}
	if c.Type != Pareto || c.ParetoH != 0.3 {
		t.Errorf("got %+v", c)
	}
	if err := fs.Parse([]string{"--rand-type=bogus"}); err == nil {
		t.Error("--rand-type=bogus accepted")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"type", func(c *Config) { c.Type = "poisson" }, "--rand-type"},
		{"iter", func(c *Config) { c.SpecIter = 0 }, "--rand-spec-iter"},
		{"pct", func(c *Config) { c.SpecPct = 101 }, "--rand-spec-pct"},
		{"res", func(c *Config) { c.SpecRes = -1 }, "--rand-spec-res"},
		{"pareto", func(c *Config) { c.ParetoH = 1 }, "--rand-pareto-h"},
		{"zipf", func(c *Config) { c.ZipfianExp = -0.1 }, "--rand-zipfian-exp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mod(&c)
			errs := c.Validate()
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.want) {
				t.Errorf("Validate() = %v, want one error naming %s", errs, tt.want)
			}
		})
	}
	c := DefaultConfig()
	c.SpecIter, c.SpecPct = 0, -5
	if errs := c.Validate(); len(errs) != 2 {
		t.Errorf("want every problem reported, got %v", errs)
	}
}

func TestRangesWithinBounds(t *testing.T) {
	ranges := [][2]int64{{1, 1}, {0, 1}, {1, 2}, {1, 10}, {1, 10000}, {5, 7}, {0, 1 << 31}, {1, 4294967295}}
	for _, d := range Dists {
		t.Run(string(d), func(t *testing.T) {
			r := cfgWith(d).New(42)
			for _, ab := range ranges {
				a, b := ab[0], ab[1]
				for i := 0; i < 20000; i++ {
					if v := r.Default(a, b); v < a || v > b {
						t.Fatalf("Default(%d, %d) = %d", a, b, v)
					}
				}
			}
		})
	}
	// Extreme parameters.
	for _, mod := range []func(*Config){
		func(c *Config) { c.SpecRes = 100; c.SpecPct = 100 },
		func(c *Config) { c.SpecRes = 0; c.SpecPct = 0; c.SpecIter = 1 },
		func(c *Config) { c.ZipfianExp = 0 },
		func(c *Config) { c.ZipfianExp = 1 },
		func(c *Config) { c.ZipfianExp = 3 },
		func(c *Config) { c.ParetoH = 0.999 },
	} {
		for _, d := range Dists {
			c := cfgWith(d)
			mod(&c)
			r := c.New(7)
			for i := 0; i < 5000; i++ {
				if v := r.Default(3, 1000); v < 3 || v > 1000 {
					t.Fatalf("%+v: Default(3, 1000) = %d", c, v)
				}
			}
		}
	}
}

// histogram draws n values in [1, size] and counts them.
func histogram(r *Rand, size int64, n int) []int {
	h := make([]int, size+1)
	for i := 0; i < n; i++ {
		h[r.Default(1, size)]++
	}
	return h
}

func TestUniformFlat(t *testing.T) {
	const size, n = 10, 200000
	h := histogram(cfgWith(Uniform).New(1), size, n)
	for v := 1; v <= size; v++ {
		if got := float64(h[v]) / n; math.Abs(got-0.1) > 0.01 {
			t.Errorf("P(%d) = %.4f, want ~0.1", v, got)
		}
	}
}

func TestSpecialHotSpot(t *testing.T) {
	const size, n = 10000, 200000
	h := histogram(cfgWith(Special).New(2), size, n)
	// The hot spot is 1% of the range around the middle: [4950, 5050].
	hot := 0
	for v := 4950; v <= 5050; v++ {
		hot += h[v]
	}
	frac := float64(hot) / n
	// 75% land uniformly in the hot spot, plus the gaussian share near the middle.
	if frac < 0.74 || frac > 0.80 {
		t.Errorf("fraction in the 1%% hot spot = %.3f, want ~0.75", frac)
	}
}

func TestGaussianCentered(t *testing.T) {
	const size, n = 1000, 100000
	h := histogram(cfgWith(Gaussian).New(3), size, n)
	sum, mid := 0.0, 0
	for v := 1; v <= size; v++ {
		sum += float64(v) * float64(h[v])
		if v > 400 && v <= 600 {
			mid += h[v]
		}
	}
	mean := sum / n
	if math.Abs(mean-500.5) > 5 {
		t.Errorf("mean = %.1f, want ~500.5", mean)
	}
	// sd of the mean of 12 uniforms over 1000 is ~83; +-100 holds ~77%.
	if f := float64(mid) / n; f < 0.7 {
		t.Errorf("fraction within (400, 600] = %.3f, want > 0.7", f)
	}
}

func TestSkewedLow(t *testing.T) {
	for _, d := range []Dist{Pareto, Zipfian} {
		t.Run(string(d), func(t *testing.T) {
			const size, n = 1000, 100000
			h := histogram(cfgWith(d).New(4), size, n)
			low := 0
			for v := 1; v <= 100; v++ {
				low += h[v]
			}
			if f := float64(low) / n; f < 0.5 {
				t.Errorf("fraction in lowest 10%% = %.3f, want > 0.5", f)
			}
			if h[1] < h[500]*5 {
				t.Errorf("P(1)=%d not well above P(500)=%d", h[1], h[500])
			}
		})
	}
}

func TestZipfianShape(t *testing.T) {
	// P(k) ~ 1/k^e: P(1)/P(2) = 2^0.8 ~ 1.74.
	const n = 400000
	h := histogram(cfgWith(Zipfian).New(5), 100, n)
	ratio := float64(h[1]) / float64(h[2])
	if math.Abs(ratio-math.Pow(2, 0.8)) > 0.08 {
		t.Errorf("P(1)/P(2) = %.3f, want ~%.3f", ratio, math.Pow(2, 0.8))
	}
}

func TestDeterministic(t *testing.T) {
	for _, d := range Dists {
		a, b := cfgWith(d).New(99), cfgWith(d).New(99)
		c := cfgWith(d).New(100)
		same := true
		for i := 0; i < 1000; i++ {
			x, y, z := a.Default(1, 1000000), b.Default(1, 1000000), c.Default(1, 1000000)
			if x != y {
				t.Fatalf("%s: same seed diverged at %d", d, i)
			}
			same = same && x == z
		}
		if same {
			t.Errorf("%s: different seeds gave the same sequence", d)
		}
	}
}

func TestStr(t *testing.T) {
	r := DefaultConfig().New(1)
	const pat = "###########-@@@@-xyz"
	for i := 0; i < 100; i++ {
		s := r.Str(pat)
		if len(s) != len(pat) {
			t.Fatalf("len(%q) = %d", s, len(s))
		}
		for j := 0; j < len(pat); j++ {
			switch pat[j] {
			case '#':
				if s[j] < '0' || s[j] > '9' {
					t.Fatalf("%q: byte %d not a digit", s, j)
				}
			case '@':
				if s[j] < 'a' || s[j] > 'z' {
					t.Fatalf("%q: byte %d not a letter", s, j)
				}
			default:
				if s[j] != pat[j] {
					t.Fatalf("%q: byte %d changed", s, j)
				}
			}
		}
	}
	// Every digit shows up.
	seen := map[byte]bool{}
	for _, ch := range []byte(r.Str(strings.Repeat("#", 500))) {
		seen[ch] = true
	}
	if len(seen) != 10 {
		t.Errorf("saw %d distinct digits", len(seen))
	}
}

func TestUniqueDistinct(t *testing.T) {
	u := NewUnique(1)
	seen := make(map[uint32]bool, 100000)
	for i := 0; i < 100000; i++ {
		v := u.Next()
		if seen[v] {
			t.Fatalf("value %d repeated after %d draws", v, i)
		}
		seen[v] = true
	}
	if NewUnique(1).Next() != NewUnique(1).Next() {
		t.Error("same seed, different first value")
	}
}

func TestPermuteBijective(t *testing.T) {
	// permute must be a bijection; check a window at both ends and the middle.
	seen := map[uint32]bool{}
	for _, start := range []uint32{0, 2147483645, 4294967290 - 1000} {
		for x := start; x < start+1000; x++ {
			p := permute(x)
			if seen[p] {
				t.Fatalf("permute(%d) = %d collides", x, p)
			}
			seen[p] = true
		}
	}
}

var sink int64

func BenchmarkDefault(b *testing.B) {
	for _, d := range Dists {
		b.Run(string(d), func(b *testing.B) {
			r := cfgWith(d).New(1)
			for i := 0; i < b.N; i++ {
				sink += r.Default(1, 10000)
			}
		})
	}
}

func BenchmarkUniform(b *testing.B) {
	r := DefaultConfig().New(1)
	for i := 0; i < b.N; i++ {
		sink += r.Uniform(1, 10000)
	}
}

func BenchmarkAppendStrC(b *testing.B) {
	const c = "###########-###########-###########-###########-###########-" +
		"###########-###########-###########-###########-###########"
	r := DefaultConfig().New(1)
	buf := make([]byte, 0, 128)
	b.SetBytes(int64(len(c)))
	for i := 0; i < b.N; i++ {
		buf = r.AppendStr(buf[:0], c)
	}
}

func BenchmarkUniqueNext(b *testing.B) {
	u := NewUnique(1)
	for i := 0; i < b.N; i++ {
		sink += int64(u.Next())
	}
}
