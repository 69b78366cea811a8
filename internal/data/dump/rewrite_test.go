package dump

import (
	"errors"
	"strings"
	"testing"
)

func TestEngineRewrite(t *testing.T) {
	create := "CREATE TABLE `items` (\n  `engine` varchar(10) DEFAULT 'ENGINE=MyISAM',\n  `b` text\n) ENGINE=MyISAM COMMENT='ENGINE=MyISAM stays' /*!50100 PARTITION BY HASH (id) (PARTITION p0 ENGINE = MyISAM) */"
	for _, c := range []struct {
		rw   Rewrite
		want string
	}{
		{Rewrite{Engine: "InnoDB"}, strings.NewReplacer(") ENGINE=MyISAM", ") ENGINE=InnoDB", "ENGINE = MyISAM", "ENGINE = InnoDB").Replace(create)},
		{Rewrite{EngineMap: map[string]string{"MYISAM": "Aria"}, TableOptions: "TRANSACTIONAL=1"},
			strings.NewReplacer(") ENGINE=MyISAM", ") ENGINE=Aria TRANSACTIONAL=1", "ENGINE = MyISAM", "ENGINE = Aria").Replace(create)},
		{Rewrite{EngineMap: map[string]string{"MEMORY": "Aria"}}, create},
	} {
		st := Statement{Kind: Schema, SQL: create, Creates: true, Table: "items", File: "d.sql", Line: 7}
		if err := c.rw.Apply(&st); err != nil {
			t.Fatal(err)
		}
		if st.SQL != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.rw, st.SQL, c.want)
		}
	}
	// No ENGINE clause: one is added after the column list.
	st := Statement{Kind: Schema, SQL: "CREATE TABLE t (a int) DEFAULT CHARSET=utf8mb4", Creates: true, Table: "t"}
	(&Rewrite{Engine: "Aria"}).Apply(&st)
	if st.SQL != "CREATE TABLE t (a int) ENGINE=Aria DEFAULT CHARSET=utf8mb4" {
		t.Errorf("added engine: %s", st.SQL)
	}
	// Data is never touched.
	data := Statement{Kind: Data, SQL: "INSERT INTO t VALUES ('ENGINE=MyISAM')", Table: "t"}
	(&Rewrite{Engine: "InnoDB"}).Apply(&data)
	if data.SQL != "INSERT INTO t VALUES ('ENGINE=MyISAM')" {
		t.Errorf("data rewritten: %s", data.SQL)
	}
	// What MEMORY cannot hold is an error naming table, file and line.
	mem := Statement{Kind: Schema, SQL: create, Creates: true, Table: "items", File: "d.sql", Line: 7}
	err := (&Rewrite{Engine: "MEMORY"}).Apply(&mem)
	var ee *EngineError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "d.sql:7: table items: engine MEMORY cannot hold a TEXT column") {
		t.Errorf("MEMORY: %v", err)
	}
}

func TestStripDefiner(t *testing.T) {
	for in, want := range map[string]string{
		"/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER tr": "/*!50003 CREATE*/ /*!50017 */ /*!50003 TRIGGER tr",
		"CREATE DEFINER=`u`@`%` PROCEDURE p() SELECT 'DEFINER=`x`@`y`'":               "CREATE  PROCEDURE p() SELECT 'DEFINER=`x`@`y`'",
		"/*!50013 DEFINER=CURRENT_USER SQL SECURITY DEFINER */":                       "/*!50013  SQL SECURITY DEFINER */",
	} {
		if got := StripDefiner(in); got != want {
			t.Errorf("StripDefiner(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		sql   string
		syn   Syntax
		kind  Kind
		table string
		name  string
	}{
		{"/*!40101 SET NAMES utf8mb4 */", MySQL, Session, "", ""},
		{"CREATE DATABASE /*!32312 IF NOT EXISTS*/ `shop` /*!40100 DEFAULT CHARACTER SET utf8mb4 */", MySQL, Database, "", "shop"},
		{"USE `shop`", MySQL, Use, "", "shop"},
		{"INSERT IGNORE INTO `a``b` VALUES (1)", MySQL, Data, "a`b", ""},
		{"REPLACE INTO shop.t VALUES (1)", MySQL, Data, "shop.t", ""},
		{"LOCK TABLES `t` WRITE", MySQL, Skip, "", ""},
		{"/*!40000 ALTER TABLE `t` DISABLE KEYS */", MySQL, Schema, "t", ""},
		{"/*!40000 ALTER TABLE `t` ENABLE KEYS */", MySQL, PostData, "t", ""},
		{"/*!50001 CREATE ALGORITHM=UNDEFINED */ /*!50013 DEFINER=`u`@`%` SQL SECURITY DEFINER */ /*!50001 VIEW `v` AS select 1 */", MySQL, PostData, "", ""},
		{"/*!50001 DROP VIEW IF EXISTS `v`*/", MySQL, PostData, "", ""},
		{"CREATE TABLE `t` (a int)", MySQL, Schema, "t", ""},
		{"SELECT pg_catalog.set_config('search_path', '', false)", Postgres, Session, "", ""},
		{"ALTER TABLE public.t OWNER TO bob", Postgres, Skip, "", ""},
		{"ALTER TABLE ONLY public.t ADD CONSTRAINT t_pkey PRIMARY KEY (id)", Postgres, PostData, "public.t", ""},
		{"ALTER TABLE ONLY public.t ALTER COLUMN id SET DEFAULT nextval('public.t_id_seq'::regclass)", Postgres, Schema, "public.t", ""},
		{"CREATE INDEX i ON public.t USING btree (a)", Postgres, PostData, "", ""},
		{"CREATE TABLE public.\"Odd\"\"Name\" (a int)", Postgres, Schema, "public.Odd\"Name", ""},
		{"GRANT ALL ON SCHEMA public TO bob", Postgres, Skip, "", ""},
	} {
		st, err := Classify(Raw{SQL: c.sql, Line: 1}, c.syn, "f", Server{MariaDB: true, Version: 101106})
		if err != nil {
			t.Errorf("%q: %v", c.sql, err)
		}
		if st.Kind != c.kind || st.Table != c.table || st.Name != c.name {
			t.Errorf("%q: %s table %q name %q; want %s %q %q", c.sql, st.Kind, st.Table, st.Name, c.kind, c.table, c.name)
		}
	}
	cp, _ := Classify(Raw{SQL: `COPY public."T" (a) FROM stdin`, Copy: []byte("1\n")}, Postgres, "f", Server{})
	if cp.Kind != Data || cp.Table != "public.T" {
		t.Errorf("COPY: %+v", cp)
	}
}

func TestSplitIndexes(t *testing.T) {
	st := Statement{Kind: Schema, Creates: true, Table: "p", SQL: "CREATE TABLE `p` (\n  `id` int NOT NULL,\n  `c` varchar(10) DEFAULT 'KEY (x), y',\n  PRIMARY KEY (`id`),\n  UNIQUE KEY `u` (`c`),\n  KEY `k1` (`c`(5),`id`),\n  INDEX k2 (id)\n) ENGINE=InnoDB"}
	alter := SplitIndexes(&st)
	if alter != "ALTER TABLE `p` ADD KEY `k1` (`c`(5),`id`), ADD INDEX k2 (id)" {
		t.Errorf("alter = %q", alter)
	}
	want := "CREATE TABLE `p` (`id` int NOT NULL,`c` varchar(10) DEFAULT 'KEY (x), y',PRIMARY KEY (`id`),UNIQUE KEY `u` (`c`)\n) ENGINE=InnoDB"
	if st.SQL != want {
		t.Errorf("create = %q", st.SQL)
	}
	fk := Statement{Kind: Schema, Creates: true, Table: "c", SQL: "CREATE TABLE c (id int, p int, KEY k (p), CONSTRAINT f FOREIGN KEY (p) REFERENCES p (id))"}
	if a := SplitIndexes(&fk); a != "" {
		t.Errorf("table with a foreign key: %q", a)
	}
}
