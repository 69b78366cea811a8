package capture

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Flavor: "mysql", Source: "mysql-general", Start: time.Unix(100, 0).UTC()})
	if err != nil {
		t.Fatal(err)
	}
	one, dur := "1", int64(42)
	in := []Event{
		{Session: "7", Kind: KindConnect, User: "app", DB: "shop"},
		{Session: "7", TUS: 10, Kind: KindQuery, SQL: "SELECT '<&>'\nFROM t", DurUS: &dur},
		{Session: "7", TUS: 20, Kind: KindExecute, Name: "s1", SQL: "SELECT ?", Params: []*string{&one, nil}},
		{Session: "7", TUS: 30, Kind: KindQuit},
	}
	for i := range in {
		if err := w.Write(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf, "c.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.Schema != Schema || r.Header.Flavor != "mysql" {
		t.Fatalf("header %+v", r.Header)
	}
	var got []Event
	for {
		var e Event
		if err := r.Next(&e); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if len(got) != len(in) || got[1].SQL != in[1].SQL || *got[1].DurUS != 42 || got[2].Params[1] != nil || *got[2].Params[0] != "1" {
		t.Fatalf("got %+v", got)
	}
}

func TestReaderErrorsNameLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "c:1: empty file"},
		{"{}\n", "c:1: not a capture file"},
		{`{"schema":"dbarena.capture/v1"}` + "\n" + `{"session":"1","kind":"query","sql":"x"}` + "\n{bad\n", "c:3:"},
		{`{"schema":"dbarena.capture/v1"}` + "\n" + `{"session":"1","kind":"nope"}` + "\n", `c:2: unknown kind "nope"`},
		{`{"schema":"dbarena.capture/v1"}` + "\n" + `{"kind":"quit"}` + "\n", "c:2: event without a session"},
		// Times that would overflow a replay's schedule (issue 33, item 9).
		{`{"schema":"dbarena.capture/v1"}` + "\n" + `{"session":"1","kind":"query","sql":"x","t_us":9000000000000000000}` + "\n", "c:2: t_us 9000000000000000000 out of range"},
		{`{"schema":"dbarena.capture/v1"}` + "\n" + `{"session":"1","kind":"query","sql":"x","t_us":1}` + "\n" +
			`{"session":"1","kind":"query","sql":"x","t_us":2,"dur_us":315576000000001}` + "\n", "c:3: dur_us 315576000000001 out of range"},
		{`{"schema":"dbarena.capture/v1"}` + "\n" + `{"session":"1","kind":"query","sql":"x","t_us":1,"dur_us":-5}` + "\n", "c:2: dur_us -5 out of range"},
	} {
		r, err := NewReader(strings.NewReader(tc.in), "c")
		if err == nil {
			var e Event
			for err == nil {
				err = r.Next(&e)
			}
		}
		if err == nil || err == io.EOF || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.in, err, tc.want)
		}
	}
}
