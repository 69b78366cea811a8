package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/summary"
)

// TestRunCarriesMonitor runs a short workload on both flavors and checks
// the monitor section: one sample per throughput interval at the same
// t_s, host, server-process, client and server-counter figures, the
// summaries, the settings snapshot and the storage facts, in the JSON and
// in the store.
func TestRunCarriesMonitor(t *testing.T) {
	needServers(t)
	for _, f := range flavors() {
		t.Run(f.name, func(t *testing.T) {
			prepareSmall(t, f.target)
			js := jsonPath(t)
			r := dbarena(t, withTarget(f.target, "run", "oltp_read_write", "--tables", "2", "--table-size", "2000",
				"--threads", "2", "--time", "3s", "--warmup", "1s", "--report-interval", "1s", "--json", js)...).mustSucceed(t)
			assertNoPassword(t, "stdout", r.stdout)
			run := readSummary(t, js)
			m := run.Monitor
			if m == nil || len(m.Samples) == 0 {
				t.Fatalf("no monitor section:\n%s", r.stdout)
			}
			if len(m.Samples) != len(run.Intervals) {
				t.Fatalf("%d samples for %d intervals", len(m.Samples), len(run.Intervals))
			}
			for i, s := range m.Samples {
				if s.TS != run.Intervals[i].TS {
					t.Fatalf("sample %d at t_s %v, interval at %v", i, s.TS, run.Intervals[i].TS)
				}
			}
			counter := map[string]string{"mariadb": "counter.Questions", "postgres": "counter.xact_commit"}[f.name]
			last := m.Samples[len(m.Samples)-1].Values
			for _, k := range []string{"host.cpu.busy", "host.cpu.iowait", "host.load1", "host.mem.used_mb",
				"server.cpu", "server.rss_mb", "client.cpu", "client.rss_mb", counter} {
				if _, ok := last[k]; !ok {
					t.Errorf("last sample lacks %s", k)
				}
			}
			if m.Avg["server.cpu"] <= 0 || m.Max["host.load1"] <= 0 || m.Avg[counter] <= 0 {
				t.Errorf("avg/max: server.cpu %v, max load1 %v, %s %v", m.Avg["server.cpu"], m.Max["host.load1"], counter, m.Avg[counter])
			}
			if m.PerTxn["server_cpu_us"] <= 0 || m.PerTxn["client_cpu_us"] <= 0 {
				t.Errorf("per transaction: %v", m.PerTxn)
			}
			if len(run.SettingsAll) < 100 {
				t.Errorf("settings snapshot has %d entries", len(run.SettingsAll))
			}
			if st := run.Host.Storage; st == nil || st.Mount == "" || st.FSType == "" {
				t.Errorf("host storage: %+v", run.Host.Storage)
			}
			if !strings.Contains(r.stdout, "] thds: 2 tps:") || !strings.Contains(r.stdout, "iowait:") ||
				!strings.Contains(r.stdout, "Monitor (avg / max):") {
				t.Errorf("output lacks the host figures:\n%s", r.stdout)
			}

			st, err := store.Open(context.Background(), store.DefaultPath(func(k string) string {
				return map[string]string{"DBARENA_HOME": suite.home, "HOME": suite.home}[k]
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			stored, err := st.Run(context.Background(), run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Monitor == nil || len(stored.Monitor.Samples) != len(stored.Intervals) || len(stored.SettingsAll) != len(run.SettingsAll) {
				t.Fatalf("stored run lacks the monitor section or the settings snapshot")
			}
			for i, s := range stored.Monitor.Samples {
				if s.TS != stored.Intervals[i].TS {
					t.Fatalf("stored sample %d at t_s %v, interval at %v", i, s.TS, stored.Intervals[i].TS)
				}
			}
		})
	}
}

func TestMonitorModes(t *testing.T) {
	needServers(t)
	prepareSmall(t, "")
	run := func(t *testing.T, mode string) (string, *monitorResult) {
		js := jsonPath(t)
		r := dbarena(t, "run", "oltp_point_select", "--tables", "2", "--table-size", "2000", "--threads", "1",
			"--time", "1s", "--json", js, "--monitor", mode).mustSucceed(t)
		s := readSummary(t, js)
		return r.stdout, &monitorResult{run: s.Monitor != nil, keys: keysOf(s.Monitor)}
	}
	t.Run("off keeps server counters only", func(t *testing.T) {
		out, m := run(t, "off")
		if !m.run || m.has("host.") || m.has("server.") || !m.has("counter.") || !m.has("client.") {
			t.Fatalf("keys with --monitor off: %v", m.keys)
		}
		if !strings.Contains(out, "--monitor off") {
			t.Fatalf("the run does not say what is off:\n%s", out)
		}
	})
	t.Run("none samples nothing", func(t *testing.T) {
		out, m := run(t, "none")
		if m.run || strings.Contains(out, "Monitor") {
			t.Fatalf("--monitor none still monitors:\n%s", out)
		}
	})
	t.Run("without report interval one sample covers the run", func(t *testing.T) {
		_, m := run(t, "on")
		if !m.run || !m.has("host.cpu.busy") {
			t.Fatalf("keys: %v", m.keys)
		}
	})
	t.Run("bad value", func(t *testing.T) {
		r := dbarena(t, "run", "oltp_point_select", "--monitor", "sometimes")
		if r.code != ExitUsage || !strings.Contains(r.stderr, "--monitor") {
			t.Fatalf("exit %d stderr %q", r.code, r.stderr)
		}
	})
}

type monitorResult struct {
	run  bool
	keys []string
}

func (m *monitorResult) has(prefix string) bool {
	for _, k := range m.keys {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func keysOf(m *summary.Monitor) []string {
	if m == nil {
		return nil
	}
	var keys []string
	for k := range m.Avg {
		keys = append(keys, k)
	}
	return keys
}
