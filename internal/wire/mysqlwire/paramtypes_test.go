package mysqlwire

import "testing"

// TestParamTypesSentOnce: an execution sends the parameter types (flag 1)
// only when they differ from the statement's last execution; otherwise
// flag 0 and no types, as libmariadb does.
func TestParamTypesSentOnce(t *testing.T) {
	s := &Stmt{c: replay(devNull(t), nil), id: 7, nparams: 2}
	// header 4, command 1, id 4, flags 1, iterations 4, null bitmap 1:
	// the new-params-bound flag is at 15, the types (if any) at 16.
	const flagAt = 15
	for i, step := range []struct {
		args  []any
		types bool
	}{
		{[]any{int64(1), "a"}, true},
		{[]any{int64(2), "bb"}, false},
		{[]any{int64(3), "c"}, false},
		{[]any{nil, "c"}, true}, // NULL is a type of its own
		{[]any{nil, "d"}, false},
		{[]any{1.5, "d"}, true},
		{[]any{int64(4), "e"}, true},
	} {
		if err := s.send(step.args); err != nil {
			t.Fatal(err)
		}
		p := s.c.wbuf
		want := byte(0)
		if step.types {
			want = 1
		}
		if p[flagAt] != want {
			t.Fatalf("execution %d: new-params-bound flag %d, want %d", i+1, p[flagAt], want)
		}
		// Payload length: the types take 4 bytes when sent.
		n := int(p[0]) | int(p[1])<<8 | int(p[2])<<16
		if n != len(p)-4 {
			t.Fatalf("execution %d: header says %d bytes, packet has %d", i+1, n, len(p)-4)
		}
		if step.types && (p[flagAt+1] == 0 || p[flagAt+3] != typeString) {
			t.Fatalf("execution %d: types % x", i+1, p[flagAt+1:flagAt+5])
		}
	}
}
