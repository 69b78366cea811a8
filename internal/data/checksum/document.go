package checksum

import (
	"encoding/json"

	"github.com/dbarena/dbarena/internal/secret"
)

// Format is the format of a checksum document (dbarena checksum --json).
const Format = "dbarena.checksum/v1"

// Document is the --json file of `dbarena checksum`.
type Document struct {
	Format   string  `json:"format"`
	Target   string  `json:"target"`
	Flavor   string  `json:"flavor"`
	Version  string  `json:"version"`
	Database string  `json:"database"`
	Tables   []Table `json:"tables"`
}

// WriteJSON writes d (its Format set) to path, readable by its owner only.
func WriteJSON(path string, d Document) error {
	d.Format = Format
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	return secret.WriteFile(path, append(b, '\n'))
}
