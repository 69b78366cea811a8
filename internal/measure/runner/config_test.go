package runner

import (
	"strings"
	"testing"
)

func TestValidateIgnoreErrors(t *testing.T) {
	for _, tc := range []struct {
		code string
		ok   bool
	}{
		{"all", true}, {"ALL", true}, {"1062", true}, {"1", true}, {"12345", true}, {" 1213 ", true},
		{"40001", true}, {"23505", true}, {"HY000", true}, {"42P01", true},
		{"abc", false}, {"123456", false}, {"42p01", false}, {"4000", true}, {"HY00", false},
		{"1062;", false}, {"", false}, {"40001x", false},
	} {
		t.Run(tc.code, func(t *testing.T) {
			c := DefaultConfig()
			c.IgnoreErrors = []string{tc.code}
			errs := c.Validate()
			if tc.ok != (len(errs) == 0) {
				t.Fatalf("Validate(--ignore-errors %q) = %v, want ok %v", tc.code, errs, tc.ok)
			}
			if !tc.ok && (!strings.Contains(errs[0].Error(), "--ignore-errors") ||
				(tc.code != "" && !strings.Contains(errs[0].Error(), tc.code))) {
				t.Errorf("error %q does not name the flag and the value", errs[0])
			}
		})
	}
}

// FuzzCheckErrorCode: any value is accepted or rejected with a one-line
// error naming the flag, and what is accepted is a code the runner matches.
func FuzzCheckErrorCode(f *testing.F) {
	for _, s := range []string{"all", "1062", "40001", "HY000", "abc", "", " ", "123456", "42P01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, code string) {
		err := checkErrorCode(code)
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "--ignore-errors: ") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q: want one line naming the flag", msg)
			}
			return
		}
		c := strings.TrimSpace(code)
		if len(c) == 0 || len(c) > 5 {
			t.Fatalf("accepted %q", code)
		}
	})
}
