// Package storetest gives the tests of other packages a results store of
// their own.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dbarena/dbarena/internal/results/store"
)

// Temp opens a results store in the test's temporary directory, closed
// when the test ends.
func Temp(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
