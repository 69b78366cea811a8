package dumpload

import (
	"fmt"
	"strings"

	"github.com/dbarena/dbarena/internal/data/dump"
)

// Database-qualified names in MySQL-family dumps (`shopq`.`item`, as
// mysqldump writes some triggers and hand-written dumps do).
//
// Without --database a qualified statement runs as the client would run
// it; its table is counted (and waited for) as the same table written
// unqualified in the database the dump is in, so that a trigger ON
// `shopq`.`item` is created only after the rows the dump sent to `item`
// are in (else they fire it: its audit table gets their rows twice).
//
// With --database NAME everything goes to NAME: a qualifier naming the
// dump's own database (one it creates or uses) becomes NAME, one naming
// NAME stays, and any other stops the load with an error naming the file
// and line: a dump never reaches another database.

// noteDumpDatabase records a database the dump creates or uses.
func (ss *streamState) noteDumpDatabase(name string) {
	if name == "" {
		return
	}
	if ss.own == nil {
		ss.own = map[string]bool{}
	}
	ss.own[name] = true
}

// qualify maps st's database qualifiers (MySQL family): see above.
func (l *loader) qualify(ss *streamState, st *dump.Statement) error {
	switch st.Kind {
	case dump.Use, dump.Database:
		ss.noteDumpDatabase(st.Name)
		return nil
	case dump.Schema, dump.PostData, dump.Data:
	default:
		return nil
	}
	if l.o.Database != "" {
		isOwn := func(q string) bool { return ss.own[q] }
		requalify := dump.Requalify
		if st.Kind == dump.Data {
			requalify = dump.RequalifyData
		}
		out, err := requalify(st.SQL, isOwn, l.o.Database)
		if err != nil {
			fe, ok := err.(*dump.ForeignQualifierError)
			if !ok {
				return err
			}
			own := make([]string, 0, len(ss.own))
			for d := range ss.own {
				own = append(own, quoteText(d))
			}
			dumpDB := "it creates or uses no database"
			if len(own) > 0 {
				dumpDB = "its own: " + strings.Join(own, ", ")
			}
			return &dump.BadInputError{Msg: fmt.Sprintf("%s: the statement names %s, in database %s, which is not the dump's (%s): with --database %s a load writes only into %s; refused (nothing of it ran)",
				printable(st.Where()), printable(fe.Name), quoteText(fe.Database), dumpDB, quoteText(l.o.Database), quoteText(l.o.Database))}
		}
		st.SQL = out
		if st.TableRef != "" {
			// --drop-existing drops it by this name.
			ref, err := dump.Requalify("DROP TABLE "+st.TableRef, isOwn, l.o.Database)
			if err != nil {
				return err
			}
			st.TableRef = strings.TrimPrefix(ref, "DROP TABLE ")
		}
	}
	if st.Table == "" {
		return nil
	}
	db, tb := dump.SplitQualified(st.Table)
	if db != "" && (db == ss.cur || l.o.Database != "" && (db == l.o.Database || ss.own[db])) {
		// The same table as the unqualified name where the dump is.
		st.Table = tb
	}
	return nil
}
