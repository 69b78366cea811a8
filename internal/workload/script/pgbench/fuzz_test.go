package pgbench

import (
	"strings"
	"testing"
)

// FuzzPgbenchArgv: pgbench's command line (NUL-separated arguments) is
// parsed without a panic, into a run or an option error.
func FuzzPgbenchArgv(f *testing.F) {
	for _, s := range []string{
		"-c\x003\x00-t10\x00-M\x00prepared\x00-f\x00x.sql@2",
		"--trans=5\x00-Dfoo=bla\x00--builtin=t\x00-nv",
		"-i\x00-I\x00dtGvpf\x00--partitions=2\x00--partition-method=hash\x00--unlogged",
		"-l\x00--aggregate-interval=1\x00-T\x002\x00--log-prefix=p\x00--failures-detailed\x00--max-tries=0",
		"-b\x00se@0\x00-b\x00si@-1\x00--random-seed=rand",
		"--\x00-c\x00db\x00extra",
		"-R\x000.0\x00-L\x00nan\x00--sampling-rate=2",
		"--target\x00sandbox:x\x00-S",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Split(s, "\x00")
		r, err := parsePgbench(argv, func(string) string { return "" })
		if err == nil && r == nil {
			t.Fatal("no run and no error")
		}
	})
}
