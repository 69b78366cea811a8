package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxInsert is the size at which an extended INSERT is cut, as
// mysqldump's net_buffer_length does.
const maxInsert = 256 << 10

// writeMySQL writes a mysqldump-style dump (no CREATE DATABASE / USE, as
// mysqldump without --databases) of tables with engine.
func writeMySQL(w io.Writer, tables []table, engine string, products int64) error {
	b := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(b, "-- dbarena gen-eshop dump, mysqldump format: an e-shop of %d products\n", products)
	b.WriteString(`--
-- Host: localhost    Database: shop
-- ------------------------------------------------------
/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */;
/*!40101 SET @OLD_COLLATION_CONNECTION=@@COLLATION_CONNECTION */;
/*!40101 SET NAMES utf8mb4 */;
/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;
/*!40103 SET TIME_ZONE='+00:00' */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;
/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */;
`)
	for _, t := range tables {
		q := "`" + t.name + "`"
		fmt.Fprintf(b, "\n--\n-- Table structure for table %s\n--\n\nDROP TABLE IF EXISTS %s;\n", q, q)
		b.WriteString("/*!40101 SET @saved_cs_client     = @@character_set_client */;\n/*!40101 SET character_set_client = utf8mb4 */;\n")
		fmt.Fprintf(b, "CREATE TABLE %s (\n", q)
		var lines []string
		for _, c := range t.cols {
			l := "  `" + c.name + "` " + sqlType(c, false)
			if c.null {
				l += " DEFAULT NULL"
			} else {
				l += " NOT NULL"
			}
			lines = append(lines, l)
		}
		lines = append(lines, "  PRIMARY KEY ("+myCols(t.pk)+")")
		for _, u := range t.unique {
			lines = append(lines, "  UNIQUE KEY `"+strings.Join(u, "_")+"` ("+myCols(u)+")")
		}
		for _, k := range t.keys {
			lines = append(lines, "  KEY `idx_"+strings.Join(k, "_")+"` ("+myCols(k)+")")
		}
		b.WriteString(strings.Join(lines, ",\n"))
		fmt.Fprintf(b, "\n) ENGINE=%s DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;\n", engine)
		b.WriteString("/*!40101 SET character_set_client = @saved_cs_client */;\n")
		fmt.Fprintf(b, "\n--\n-- Dumping data for table %s\n--\n\nLOCK TABLES %s WRITE;\n/*!40000 ALTER TABLE %s DISABLE KEYS */;\n", q, q, q)
		size := 0
		for i := int64(1); i <= t.rows; i++ {
			row := myRow(t.row(i))
			if size > 0 && size+len(row) > maxInsert {
				b.WriteString(";\n")
				size = 0
			}
			if size == 0 {
				n, _ := fmt.Fprintf(b, "INSERT INTO %s VALUES ", q)
				size = n
			} else {
				b.WriteByte(',')
			}
			b.WriteString(row)
			size += len(row) + 1
		}
		if size > 0 {
			b.WriteString(";\n")
		}
		fmt.Fprintf(b, "/*!40000 ALTER TABLE %s ENABLE KEYS */;\nUNLOCK TABLES;\n", q)
	}
	b.WriteString(`/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;

/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;
/*!40101 SET CHARACTER_SET_RESULTS=@OLD_CHARACTER_SET_RESULTS */;
/*!40101 SET COLLATION_CONNECTION=@OLD_COLLATION_CONNECTION */;
/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */;

-- Dump completed
`)
	return b.Flush()
}

func myCols(cs []string) string { return "`" + strings.Join(cs, "`,`") + "`" }

// myRow is one row as a MySQL tuple literal.
func myRow(vals []any) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		switch x := v.(type) {
		case nil:
			b.WriteString("NULL")
		case int:
			b.WriteString(strconv.Itoa(x))
		case int64:
			b.WriteString(strconv.FormatInt(x, 10))
		case bool:
			b.WriteString(map[bool]string{false: "0", true: "1"}[x])
		case decimal:
			b.WriteString(string(x))
		case stamp:
			b.WriteString("'" + string(x) + "'")
		case string:
			b.WriteString(myString(x))
		default:
			panic(fmt.Sprintf("value %T", v))
		}
	}
	b.WriteByte(')')
	return b.String()
}

// myString quotes s as mysqldump does.
var myEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`, "\n", `\n`, "\r", `\r`, "\x1a", `\Z`)

func myString(s string) string { return "'" + myEscaper.Replace(s) + "'" }

// writePostgres writes a pg_dump-style plain dump (pg_dump --clean
// --if-exists): drops, tables, COPY blocks, then keys and indexes.
func writePostgres(w io.Writer, tables []table, products int64) error {
	b := bufio.NewWriterSize(w, 1<<20)
	fmt.Fprintf(b, "--\n-- PostgreSQL database dump (dbarena gen-eshop: an e-shop of %d products)\n--\n\n", products)
	b.WriteString(`SET statement_timeout = 0;
SET lock_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET client_min_messages = warning;
SET row_security = off;

`)
	for i := len(tables) - 1; i >= 0; i-- {
		fmt.Fprintf(b, "DROP TABLE IF EXISTS public.%s;\n", tables[i].name)
	}
	b.WriteString("\nSET default_tablespace = '';\n\nSET default_table_access_method = heap;\n")
	for _, t := range tables {
		fmt.Fprintf(b, "\n--\n-- Name: %s; Type: TABLE; Schema: public\n--\n\nCREATE TABLE public.%s (\n", t.name, t.name)
		var lines []string
		for _, c := range t.cols {
			l := "    " + c.name + " " + sqlType(c, true)
			if !c.null {
				l += " NOT NULL"
			}
			lines = append(lines, l)
		}
		b.WriteString(strings.Join(lines, ",\n"))
		b.WriteString("\n);\n")
	}
	for _, t := range tables {
		names := make([]string, len(t.cols))
		for i, c := range t.cols {
			names[i] = c.name
		}
		fmt.Fprintf(b, "\n--\n-- Data for Name: %s; Type: TABLE DATA; Schema: public\n--\n\nCOPY public.%s (%s) FROM stdin;\n",
			t.name, t.name, strings.Join(names, ", "))
		for i := int64(1); i <= t.rows; i++ {
			b.WriteString(pgRow(t.row(i)))
			b.WriteByte('\n')
		}
		b.WriteString("\\.\n\n")
	}
	for _, t := range tables {
		fmt.Fprintf(b, "\nALTER TABLE ONLY public.%s\n    ADD CONSTRAINT %s_pkey PRIMARY KEY (%s);\n", t.name, t.name, strings.Join(t.pk, ", "))
		for _, u := range t.unique {
			fmt.Fprintf(b, "\nALTER TABLE ONLY public.%s\n    ADD CONSTRAINT %s_%s_key UNIQUE (%s);\n", t.name, t.name, strings.Join(u, "_"), strings.Join(u, ", "))
		}
	}
	for _, t := range tables {
		for _, k := range t.keys {
			fmt.Fprintf(b, "\nCREATE INDEX %s_%s_idx ON public.%s USING btree (%s);\n", t.name, strings.Join(k, "_"), t.name, strings.Join(k, ", "))
		}
	}
	b.WriteString("\n--\n-- PostgreSQL database dump complete\n--\n\n")
	return b.Flush()
}

var pgEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

// pgRow is one row in COPY text format.
func pgRow(vals []any) string {
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteByte('\t')
		}
		switch x := v.(type) {
		case nil:
			b.WriteString(`\N`)
		case int:
			b.WriteString(strconv.Itoa(x))
		case int64:
			b.WriteString(strconv.FormatInt(x, 10))
		case bool:
			b.WriteString(map[bool]string{false: "f", true: "t"}[x])
		case decimal:
			b.WriteString(string(x))
		case stamp:
			b.WriteString(string(x))
		case string:
			b.WriteString(pgEscaper.Replace(x))
		default:
			panic(fmt.Sprintf("value %T", v))
		}
	}
	return b.String()
}
