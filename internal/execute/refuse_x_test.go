package execute

import (
	"context"
	"strings"
	"testing"

	"github.com/dbarena/dbarena/internal/results/store"
	"github.com/dbarena/dbarena/internal/results/store/storetest"
	"github.com/dbarena/dbarena/internal/server/target"
	"github.com/dbarena/dbarena/internal/workload"
)

// toyRefuse is toy whose data cannot serve the flags at all.
type toyRefuse struct{ toy }

func (*toyRefuse) Ready(context.Context, workload.Env) error {
	return &workload.NotReadyError{Problem: "--warehouses 3: the TPC-C tables hold 2", Refuse: true,
		Hint: "dbarena prepare toy"}
}

// TestRefusedAsBadInput: data that cannot serve the flags (Refuse) is bad
// input, refused before anything is stored.
func TestRefusedAsBadInput(t *testing.T) {
	s, st := session(t, target.FlavorMariaDB), storetest.Temp(t)
	_, err := Run(context.Background(), st, s, spec(&toyRefuse{}), &printer{})
	if KindOf(err) != BadInput || !strings.Contains(err.Error(), "--warehouses 3: the TPC-C tables hold 2") {
		t.Fatalf("err %v (kind %d), want BadInput", err, KindOf(err))
	}
	if rows, _ := st.List(context.Background(), store.Filter{}); len(rows) != 0 {
		t.Errorf("%d runs stored for a refused run", len(rows))
	}
}
