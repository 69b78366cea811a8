package fingerprint

import (
	"strings"
	"testing"
)

func TestFingerprint(t *testing.T) {
	cases := []struct {
		f        Flavor
		in, want string
	}{
		{MySQL, "SELECT * FROM t WHERE id = 42", "select * from t where id = ?"},
		{MySQL, "select *\n\tfrom t where id=7;", "select * from t where id = ?"},
		{MySQL, "SELECT a FROM t WHERE s = 'it''s' AND d = \"x\\\"y\"", "select a from t where s = ? and d = ?"},
		{MySQL, "select a from t where id in (1, 2, 3)", "select a from t where id in (?+)"},
		{MySQL, "select a from t where id IN(1)", "select a from t where id in (?+)"},
		{MySQL, "select a from t where id in (select b from u where c = 5)", "select a from t where id in (select b from u where c = ?)"},
		{MySQL, "INSERT INTO t (a,b) VALUES (1,'x'),(2,'y'), (3, 'z')", "insert into t (a, b) values (?+)"},
		{MySQL, "INSERT INTO t VALUES (1, NOW())", "insert into t values (?, now ())"},
		{MySQL, "select /* hint */ a -- trailing\n from t # mysql comment\n where b = -1.5e3", "select a from t where b = ?"},
		{MySQL, "select a - 1, b+2 from t1 where c > 0x1F", "select a - ?, b + ? from t1 where c > ?"},
		{MySQL, "select `Col` from `T` where x = X'0A'", "select `Col` from `T` where x = ?"},
		{MySQL, "SELECT -5", "select ?"},
		{Postgres, "SELECT \"Col\" FROM t WHERE a = $1 AND b = 'q'", "select \"Col\" from t where a = ? and b = ?"},
		{Postgres, "select $$a'b$$, $tag$ x $tag$, E'\\'' from t", "select ?, ?, ? from t"},
		{Postgres, "select a::text, b # 3 from t where c <= 2", "select a :: text, b # ? from t where c <= ?"},
		{Postgres, "select * from t where id = ANY($1) and x in ($2, $3)", "select * from t where id = any (?) and x in (?+)"},
		{MySQL, "", ""},
		{MySQL, "select 'unterminated", "select ?"},
	}
	for _, c := range cases {
		if got := Fingerprint(c.in, c.f); got != c.want {
			t.Errorf("Fingerprint(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestSameFingerprint(t *testing.T) {
	a := Fingerprint("select a from t where id in (1,2,3) and s='x'", MySQL)
	b := Fingerprint("SELECT a\nFROM t WHERE id IN (4) AND s = 'yy'", MySQL)
	if a != b || ID(a) != ID(b) {
		t.Fatalf("%q and %q differ", a, b)
	}
	if ID(a) == ID(Fingerprint("select b from t", MySQL)) || len(ID(a)) != 16 {
		t.Fatalf("ID %q", ID(a))
	}
}

func BenchmarkFingerprint(b *testing.B) {
	q := "SELECT c FROM sbtest1 WHERE id BETWEEN 5013 AND 5112 AND k IN (1,2,3,4,5) ORDER BY c /* comment */"
	b.SetBytes(int64(len(q)))
	for range b.N {
		Fingerprint(q, MySQL)
	}
}

func FuzzFingerprint(f *testing.F) {
	for _, s := range []string{"select 1", "insert into t values (1,'a'),(2,'b')", "select $$x$$, $1", "a in (1, (2))", "'\\'", "/* x", "x'0", "-- c\n1"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, q string, pg bool) {
		fl := MySQL
		if pg {
			fl = Postgres
		}
		fp := Fingerprint(q, fl)
		if len(fp) > 2*len(q)+4 {
			t.Fatalf("fingerprint %q of %q too long", fp, q)
		}
		if strings.ContainsAny(q, "\"`") {
			return // quoted identifiers keep their spaces
		}
		if strings.HasPrefix(fp, " ") || strings.HasSuffix(fp, " ") || strings.Contains(fp, "  ") {
			t.Fatalf("fingerprint %q of %q has stray spaces", fp, q)
		}
		// Normalising twice changes nothing more (idempotent) for text
		// without comments or quotes, which the first pass removed.
		if !strings.ContainsAny(q, "'\"`$#-/\\") {
			if fp2 := Fingerprint(fp, fl); fp2 != fp {
				t.Fatalf("not idempotent: %q -> %q -> %q", q, fp, fp2)
			}
		}
	})
}
