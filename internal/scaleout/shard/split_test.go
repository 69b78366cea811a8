package shard

import (
	"testing"

	"github.com/dbarena/dbarena/internal/measure/runner"
)

func TestPartsAddUp(t *testing.T) {
	for _, tc := range []struct {
		total int64
		n     int
		want  []int64
	}{
		{10, 3, []int64{4, 3, 3}},
		{9, 3, []int64{3, 3, 3}},
		{2, 2, []int64{1, 1}},
		{1000003, 4, []int64{250001, 250001, 250001, 250000}},
	} {
		var sum int64
		for i := range tc.n {
			p := Part(tc.total, i, tc.n)
			if p != tc.want[i] {
				t.Errorf("Part(%d, %d, %d) = %d, want %d", tc.total, i, tc.n, p, tc.want[i])
			}
			if f := first(tc.total, i, tc.n); f != sum {
				t.Errorf("first(%d, %d, %d) = %d, want %d", tc.total, i, tc.n, f, sum)
			}
			sum += p
		}
		if sum != tc.total {
			t.Errorf("parts of %d in %d add up to %d", tc.total, tc.n, sum)
		}
	}
}

func TestConfigSplit(t *testing.T) {
	cfg := runner.DefaultConfig()
	cfg.Threads, cfg.Events, cfg.Rate = 7, 100, 70
	var threads, events int
	var rate float64
	for i := range 3 {
		c, err := Config(cfg, i, 3)
		if err != nil {
			t.Fatal(err)
		}
		if c.FirstWorker != threads {
			t.Errorf("shard %d FirstWorker %d, want %d", i, c.FirstWorker, threads)
		}
		threads += c.Threads
		events += int(c.Events)
		rate += c.Rate
	}
	if threads != 7 || events != 100 || rate < 69.999 || rate > 70.001 {
		t.Errorf("shards add up to %d threads, %d events, rate %g; want 7, 100, 70", threads, events, rate)
	}
	c, _ := Config(cfg, 0, 3)
	if c.Threads != 3 || c.Events != 34 || c.Rate != 30 {
		t.Errorf("shard 0: %d threads, %d events, rate %g; want 3, 34, 30", c.Threads, c.Events, c.Rate)
	}
	cfg.Threads, cfg.Events = 2, 2
	if _, err := Config(cfg, 0, 3); err == nil {
		t.Error("2 threads and 2 events split in 3 shards: no error")
	}
}

func TestParseIndex(t *testing.T) {
	for s, want := range map[string][2]int{"0/1": {0, 1}, "2/3": {2, 3}, " 0/4 ": {0, 4}} {
		i, n, err := ParseIndex(s)
		if err != nil || i != want[0] || n != want[1] {
			t.Errorf("ParseIndex(%q) = %d, %d, %v; want %v", s, i, n, err, want)
		}
	}
	for _, s := range []string{"", "3", "3/3", "-1/3", "1/0", "a/b", "1/2/3", "0/100000"} {
		if _, _, err := ParseIndex(s); err == nil {
			t.Errorf("ParseIndex(%q): no error", s)
		}
	}
}

func TestCheckKey(t *testing.T) {
	for _, k := range []string{"a", "bench-42", "Run_1.x"} {
		if err := CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q) = %v", k, err)
		}
	}
	for _, k := range []string{"", "42", "-a", "a b", "a/b", string(make([]byte, 64))} {
		if err := CheckKey(k); err == nil {
			t.Errorf("CheckKey(%q): no error", k)
		}
	}
}

func FuzzParseIndex(f *testing.F) {
	for _, s := range []string{"0/1", "2/3", "3/3", "x", "-1/2", "1/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, n, err := ParseIndex(s)
		if err == nil && (n < 1 || n > MaxShards || i < 0 || i >= n) {
			t.Fatalf("ParseIndex(%q) = %d/%d without error", s, i, n)
		}
	})
}

func FuzzCheckKey(f *testing.F) {
	for _, s := range []string{"bench-1", "", "1a", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckKey(s) == nil && (len(s) == 0 || len(s) > 63 || s[0] < 'A') {
			t.Fatalf("CheckKey(%q) accepted", s)
		}
	})
}
