package dump

import (
	"errors"
	"strings"
	"testing"
)

func TestRequalify(t *testing.T) {
	own := func(s string) bool { return s == "shopq" }
	cases := []struct{ in, want, foreign string }{
		{"CREATE TRIGGER shopq.item_ai AFTER INSERT ON shopq.item FOR EACH ROW INSERT INTO shopq.audit (msg) VALUES (CONCAT('new ', NEW.id))",
			"CREATE TRIGGER `dst`.item_ai AFTER INSERT ON `dst`.item FOR EACH ROW INSERT INTO `dst`.audit (msg) VALUES (CONCAT('new ', NEW.id))", ""},
		{"/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER `shopq`.`item_ai` AFTER INSERT ON `shopq`.`item` FOR EACH ROW INSERT INTO `shopq`.`audit` (msg) VALUES (NEW.id) */",
			"/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER `dst`.`item_ai` AFTER INSERT ON `dst`.`item` FOR EACH ROW INSERT INTO `dst`.`audit` (msg) VALUES (NEW.id) */", ""},
		// columns of tables and aliases stay; EXTRACT's FROM reads a column
		{"CREATE VIEW v AS SELECT i.id, shopq.item.v, EXTRACT(YEAR FROM i.d) FROM shopq.item i JOIN `shopq`.audit a ON a.id = i.id",
			"CREATE VIEW v AS SELECT i.id, `dst`.item.v, EXTRACT(YEAR FROM i.d) FROM `dst`.item i JOIN `dst`.audit a ON a.id = i.id", ""},
		{"CREATE TABLE shopq.t (id INT, FOREIGN KEY (id) REFERENCES shopq.p (id))", "CREATE TABLE `dst`.t (id INT, FOREIGN KEY (id) REFERENCES `dst`.p (id))", ""},
		{"INSERT INTO dst.item VALUES (1,'shopq.item', 1.5)", "INSERT INTO dst.item VALUES (1,'shopq.item', 1.5)", ""},
		{"CREATE TABLE item (id INT)", "CREATE TABLE item (id INT)", ""},
		{"CREATE TRIGGER item_ai AFTER INSERT ON item FOR EACH ROW INSERT INTO other.audit VALUES (NEW.id)", "", "other"},
		{"CREATE TRIGGER t BEFORE INSERT ON `other`.`item` FOR EACH ROW SET NEW.a = 1", "", "other"},
		{"CREATE VIEW v AS SELECT other.t.a FROM t", "", "other"},
		{"CALL other.p()", "", "other"},
		{"UPDATE x SET a = 1 WHERE x.id IN (SELECT id FROM other.t)", "", "other"},
	}
	for _, c := range cases {
		got, err := Requalify(c.in, own, "dst")
		var fe *ForeignQualifierError
		if c.foreign != "" {
			if !errors.As(err, &fe) || fe.Database != c.foreign || got != c.in {
				t.Errorf("Requalify(%q) = %q, %v; want database %s refused", c.in, got, err, c.foreign)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Requalify(%q)\n = %q, %v\nwant %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want, foreign string }{
		{"INSERT INTO `shopq`.`item` VALUES (1,'other.t',1.5),(2,'x',2.5)", "INSERT INTO `dst`.`item` VALUES (1,'other.t',1.5),(2,'x',2.5)", ""},
		{"INSERT INTO shopq.item (a, b) VALUES (1, 2)", "INSERT INTO `dst`.item (a, b) VALUES (1, 2)", ""},
		{"INSERT INTO item VALUES ((SELECT MAX(id) FROM other.t))", "", "other"},
		{"INSERT INTO item (a) SELECT a FROM other.t", "", "other"},
		{"INSERT INTO other.item VALUES (1)", "", "other"},
	} {
		got, err := RequalifyData(c.in, own, "dst")
		var fe *ForeignQualifierError
		if c.foreign != "" {
			if !errors.As(err, &fe) || fe.Database != c.foreign {
				t.Errorf("RequalifyData(%q) = %q, %v; want %s refused", c.in, got, err, c.foreign)
			}
		} else if err != nil || got != c.want {
			t.Errorf("RequalifyData(%q)\n = %q, %v\nwant %q", c.in, got, err, c.want)
		}
	}
	if db, tb := SplitQualified("shopq.item"); db != "shopq" || tb != "item" {
		t.Errorf("SplitQualified: %q %q", db, tb)
	}
	if db, tb := SplitQualified("item"); db != "" || tb != "item" {
		t.Errorf("SplitQualified: %q %q", db, tb)
	}
}

// FuzzRequalify: never a panic; the result differs from the input only
// in qualifiers, each now the target.
func FuzzRequalify(f *testing.F) {
	for _, s := range []string{
		"CREATE TRIGGER shopq.item_ai AFTER INSERT ON shopq.item FOR EACH ROW INSERT INTO shopq.audit (msg) VALUES (NEW.id)",
		"/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER `shopq`.`item_ai` AFTER INSERT ON `shopq`.`item` FOR EACH ROW INSERT INTO `shopq`.`audit` VALUES (NEW.id) */",
		"SELECT EXTRACT(YEAR FROM a.b) FROM shopq.t a",
		"INSERT INTO `shopq`.`t` VALUES (1.5,'a.b')",
		"x.`", "`a`.`b`.`c`.", "FROM (((.a.b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Requalify(s, func(q string) bool { return q == "shopq" }, "dst")
		if d, derr := RequalifyData(s, func(q string) bool { return q == "shopq" }, "dst"); derr == nil && strings.Count(d, "shopq") > strings.Count(s, "shopq") {
			t.Fatalf("data: qualifiers grew: %q -> %q", s, d)
		}
		if err != nil {
			if got != s {
				t.Fatalf("refused but changed: %q", got)
			}
			return
		}
		if strings.Count(got, "shopq") > strings.Count(s, "shopq") {
			t.Fatalf("qualifiers grew: %q -> %q", s, got)
		}
	})
}
