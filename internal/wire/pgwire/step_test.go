package pgwire_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dbarena/dbarena/internal/server/dialect"
	. "github.com/dbarena/dbarena/internal/wire/pgwire"
	"github.com/dbarena/dbarena/internal/wire/rawsock"
)

// soleWaiter waits for one socket at a time, as a poller group's member
// does before its group runs.
type soleWaiter struct{}

func (soleWaiter) Attach(int) error { return nil }
func (soleWaiter) Wait(fd int)      { rawsock.AwaitReadable(fd) }

// pollDone calls Poll, waiting for the socket between calls, until the
// reply is complete, and returns how many calls found it incomplete.
func pollDone(t *testing.T, c *Conn) (affected int64, early int, err error) {
	t.Helper()
	for {
		done, n, err := c.Poll()
		if done {
			return n, early, err
		}
		if err != nil {
			t.Fatalf("Poll: not done, but error %v", err)
		}
		early++
		rawsock.AwaitReadable(c.Fd())
	}
}

func TestSendPoll(t *testing.T) {
	cfg, _, _ := server(t)
	if dial(t, cfg).CanStep() {
		t.Fatal("CanStep without a Waiter")
	}
	c, err := Dial(rawsock.WithWaiter(context.Background(), soleWaiter{}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.CanStep() {
		t.Fatal("CanStep: false with a Waiter")
	}

	// A reply many reads long: Poll returns early, then counts every row.
	// 20 MB is more than loopback's socket buffers hold (a few MB), so the
	// first Poll cannot find all of it there, however late it comes.
	if err := c.Send("SELECT g, repeat('x', 100) FROM generate_series(1, 200000) g", nil); err != nil {
		t.Fatal(err)
	}
	n, early, err := pollDone(t, c)
	if err != nil || n != 200000 {
		t.Fatalf("generate_series: %d rows, %v", n, err)
	}
	if early == 0 {
		t.Error("a 20 MB reply was complete at the first Poll")
	}

	// A server error ends the reply, and the Conn stays in step.
	if err := c.Send("SELECT 1/0", nil); err != nil {
		t.Fatal(err)
	}
	var pe *Error
	if _, _, err := pollDone(t, c); !errors.As(err, &pe) || pe.Code != "22012" {
		t.Fatalf("division by zero: %v", err)
	}
	if err := c.Send("SELECT $1::int + 1", []any{int64(41)}); err != nil {
		t.Fatal(err)
	}
	if n, _, err := pollDone(t, c); err != nil || n != 1 {
		t.Fatalf("extended after an error: %d, %v", n, err)
	}

	st, err := c.Prepare("SELECT generate_series(1, $1::int)")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int64{3, 5} {
		if err := st.Send([]any{k}); err != nil {
			t.Fatal(err)
		}
		if n, _, err := pollDone(t, c); err != nil || n != k {
			t.Fatalf("prepared, %d rows: %d, %v", k, n, err)
		}
	}
	// Rows handed to fn: simple, extended and prepared.
	var got []int64
	keep := func(r *Row) error {
		v, err := r.Int64(0)
		got = append(got, v)
		return err
	}
	if err := c.SendFunc("SELECT 7 AS y", nil, keep); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pollDone(t, c); err != nil {
		t.Fatal(err)
	}
	if err := c.SendFunc("SELECT $1::int * 2", []any{int64(21)}, keep); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pollDone(t, c); err != nil {
		t.Fatal(err)
	}
	if err := st.SendFunc([]any{int64(2)}, keep); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pollDone(t, c); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[7 42 1 2]" {
		t.Errorf("rows %v, want [7 42 1 2]", got)
	}

	// The blocking calls go on where Poll left the stream.
	if n, err := c.Exec("SELECT 1", nil); err != nil || n != 1 {
		t.Fatalf("Exec after Poll: %d, %v", n, err)
	}

	// A lost connection ends the reply with an error Poll reports as done.
	if err := c.Send("SELECT pg_terminate_backend(pg_backend_pid())", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pollDone(t, c); (dialect.PostgresDialect{}).Classify(err).Kind != dialect.ConnLost {
		t.Fatalf("terminated backend: %v, not a lost connection", err)
	}
}
