package k8s

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSecretArgs: whatever the arguments, a value SecretArgs takes out is
// in the Secret and nowhere in the args, and the args keep their count.
func FuzzSecretArgs(f *testing.F) {
	f.Add("--url\x00http://u:pw@h/x\x00--header\x00Authorization: Basic eA==")
	f.Add("--header=Cookie: s=1\x00--db-target=mysql://a:b@c/d\x00X $(HOME)")
	f.Add("--url\x00https://tok@h\x00--target\x00mysql://u@h/db")
	f.Fuzz(func(t *testing.T, in string) {
		if !utf8.ValidString(in) {
			return
		}
		args := strings.Split(in, "\x00")
		out, ps := SecretArgs(args)
		if len(out) != len(args) || len(ps.Args) != len(ps.Data) || len(ps.What) != len(ps.Args) {
			t.Fatalf("SecretArgs(%q) = %q, %d args, %d keys", args, out, len(ps.Args), len(ps.Data))
		}
		for _, v := range ps.Data {
			for _, a := range out {
				if len(v) > 3 && strings.Contains(a, string(v)) {
					t.Fatalf("secret %q left in arg %q", v, a)
				}
			}
		}
	})
}
