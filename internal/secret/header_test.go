package secret

import (
	"strings"
	"testing"
)

func TestMaskHeader(t *testing.T) {
	for in, want := range map[string]string{
		"Authorization: Bearer abc.def":   "Authorization: ***",
		"proxy-authorization: Basic dXNl": "proxy-authorization: ***",
		"Cookie: sid=123":                 "Cookie: ***",
		"X-Api-Key: k3y":                  "X-Api-Key: ***",
		"X-Auth-Token: t":                 "X-Auth-Token: ***",
		"Accept: text/html":               "Accept: text/html",
		"no colon":                        "no colon",
	} {
		if got := MaskHeader(in); got != want {
			t.Errorf("MaskHeader(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMaskCommandHeaders: a credential header given to `run http` is not
// stored with the command line, in either flag form.
func TestMaskCommandHeaders(t *testing.T) {
	args := []string{"dbarena", "run", "http", "--header", "Authorization: Bearer s3cret", "--header", "Cookie: sid=s3cret",
		"--header=X-Api-Key: s3cret", "--header", "Accept: text/plain", "--url", "http://u:s3cret@127.0.0.1/"}
	got := strings.Join(MaskCommand(args), " ")
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "Accept: text/plain") || !strings.Contains(got, "Authorization: ***") {
		t.Errorf("masked command: %s", got)
	}
}
