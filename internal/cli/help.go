package cli

import (
	"embed"
	"strings"
)

// helpFiles are the help pages of commands whose text is not made from
// their flags: help/NAME.txt.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpText is help page name.
func helpText(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("cli: no help page " + name) // the pages are embedded at build time
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n")
}

// The help pages (`dbarena help COMMAND`).
var (
	serverUsage  = helpText("server")
	resultsUsage = helpText("results")
	reportUsage  = helpText("report")
	compareUsage = helpText("compare")
	planUsage    = helpText("plan")
	loadUsage    = helpText("load")
)
