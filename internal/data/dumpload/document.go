package dumpload

import (
	"encoding/json"

	"github.com/dbarena/dbarena/internal/secret"
)

// JSONFormat is the format of a load's --json file (dbarena load).
const JSONFormat = "dbarena.load/v1"

// Document is a load's --json file: the stored run's id and the whole
// load result (every failed statement, per-table figures).
type Document struct {
	Format string  `json:"format"`
	RunID  int64   `json:"run_id,omitempty"`
	Target string  `json:"target"`
	Result *Result `json:"result"`
}

// WriteJSON writes d (its Format set) to path. The file holds statement
// text from the dump: readable by its owner only.
func WriteJSON(path string, d Document) error {
	d.Format = JSONFormat
	b, err := json.MarshalIndent(&d, "", "  ")
	if err != nil {
		return err
	}
	return secret.WriteFile(path, append(b, '\n'))
}
