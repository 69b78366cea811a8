package cli

import (
	"fmt"
	"slices"

	"github.com/dbarena/dbarena/internal/capture/pglog"
)

// pgSessionsValue is the --pg-sessions flag of capture convert.
type pgSessionsValue struct{ p *pglog.Sessions }

func (v pgSessionsValue) String() string {
	if v.p == nil || *v.p == "" {
		return string(pglog.SessionsAuto)
	}
	return string(*v.p)
}

func (v pgSessionsValue) Set(s string) error {
	if !slices.Contains(pglog.SessionModes, pglog.Sessions(s)) {
		return fmt.Errorf("want one of %v", pglog.SessionModes)
	}
	*v.p = pglog.Sessions(s)
	return nil
}

func (v pgSessionsValue) Type() string { return "MODE" }
