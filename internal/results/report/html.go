package report

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/dbarena/dbarena/internal/results/summary"
)

//go:embed templates/report.html
var templateFS embed.FS

// htmlChart is a chart with its SVG ready to inline.
type htmlChart struct {
	ID, Caption string
	SVG         template.HTML
	// Layout is carried as data attributes (data-kind, data-series...).
	Layout Layout
}

type htmlSection struct {
	ID, Title string
	Collapsed bool
	Charts    []htmlChart
}

type tpccBlock struct {
	Head          string
	Types, Checks Table
}

type navItem struct{ ID, Title string }

// htmlPage is the data the HTML template reads.
type htmlPage struct {
	R                            *Report
	Nav                          []navItem
	Servers, Settings, Workloads Table
	Summaries                    []Table
	Relative                     Table
	// Why are the comparisons' "where the difference comes from"
	// tables (why.go); WhyCollapsed folds many of them.
	Why          []Table
	WhyCollapsed bool
	Micro        []Table
	Fingerprints []Table
	Siege        *Table
	Sections     []htmlSection
	TPCC         []tpccBlock
	Host         *Table
	Runs         Table
	// SeriesKey is each series with its colour in every chart.
	SeriesKey []seriesKey
}

type seriesKey struct {
	Name  string
	Color template.CSS
}

// WriteHTML writes the report as one self-contained HTML page: inline CSS,
// charts as inline SVG, no script and no external asset, so that it opens
// offline and instantly.
func (rep *Report) WriteHTML(w io.Writer) error {
	tmpl, err := template.New("report.html").Funcs(template.FuncMap{
		"when": when,
		"join": strings.Join,
		"cls": func(cols []Column, i int, c Entry) string {
			cl := c.Class
			if i < len(cols) && cols[i].Numeric {
				cl = strings.TrimSpace("n " + cl)
			}
			return cl
		},
	}).ParseFS(templateFS, "templates/report.html")
	if err != nil {
		return fmt.Errorf("html report: template: %w", err)
	}
	page := htmlPage{R: rep, Servers: rep.ServersTable(), Settings: rep.SettingsTable(), Workloads: rep.WorkloadTable(),
		Summaries: rep.SummaryTables(), Relative: rep.RelativeTable(), Host: rep.HostTable(), Runs: rep.RunsTable()}
	page.Nav = append(page.Nav, navItem{"context", "Context"}, navItem{"summary", "Summary"})
	if page.Why = rep.WhyTables(); page.Why != nil {
		page.WhyCollapsed = len(page.Why) > 6
		page.Nav = append(page.Nav, navItem{"why", "Where the difference comes from"})
	}
	if page.Micro = rep.microTables(); page.Micro != nil {
		page.Nav = append(page.Nav, navItem{summary.SectionMicro, "Micro suite"})
	}
	if page.Fingerprints = rep.fingerprintTables(); page.Fingerprints != nil {
		page.Nav = append(page.Nav, navItem{"fingerprints", "Replay by fingerprint"})
	}
	if t := rep.replayTable(); t != nil {
		page.Siege = t
	}
	for _, sr := range rep.Series {
		// A colour written by hexColor: "#RRGGBB", nothing else.
		page.SeriesKey = append(page.SeriesKey, seriesKey{Name: sr, Color: template.CSS(hexColor(rep.SeriesColor(sr)))}) //nolint:gosec
	}
	for _, c := range rep.Charts() {
		svg, err := c.SVG()
		if err != nil {
			return fmt.Errorf("html report: %w", err)
		}
		if i := bytes.Index(svg, []byte("<svg")); i > 0 {
			svg = svg[i:]
		}
		svg = svgFonts(svg)
		n := len(page.Sections)
		if n == 0 || page.Sections[n-1].Title != c.Section {
			id := strings.ToLower(strings.NewReplacer(" ", "-").Replace(c.Section))
			collapsed := (c.Section == SectionTimeSeries && len(rep.timeGroups()) > 6) || (c.Section == SectionResources && len(rep.TimeSeries) > 4)
			page.Sections = append(page.Sections, htmlSection{ID: id, Title: c.Section, Collapsed: collapsed})
			page.Nav = append(page.Nav, navItem{id, c.Section})
			n++
		}
		// The SVG comes from gonum/plot, which escapes every text it draws.
		page.Sections[n-1].Charts = append(page.Sections[n-1].Charts, htmlChart{ID: c.ID, Caption: c.Caption, SVG: template.HTML(svg), Layout: c.Layout()}) //nolint:gosec
	}
	for _, r := range rep.Runs {
		if hasTypes(r) {
			page.TPCC = append(page.TPCC, tpccBlock{Head: runHead(r), Types: TypeTable(r), Checks: CheckTable(r)})
		}
	}
	if len(page.TPCC) > 0 {
		page.Nav = append(page.Nav, navItem{"transactions", "Transactions"})
	}
	if page.Host != nil {
		page.Nav = append(page.Nav, navItem{"host", "Host"})
	}
	page.Nav = append(page.Nav, navItem{"runs", "Runs"})
	if err := tmpl.Execute(w, page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	return nil
}

// replayTable is the siege-style table of the runs with
// summary.SectionSiege (HTTP and replay runs), or nil.
func (rep *Report) replayTable() *Table {
	var rs []*summary.Run
	for _, r := range rep.Runs {
		if r.HasSection(summary.SectionSiege) {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	t := SiegeTable(rs)
	return &t
}

func runHead(r *summary.Run) string {
	s := fmt.Sprintf("Run %s: %s on %s %s, %d threads, %s", RunName(r), r.Workload, r.Target.Flavor, r.Target.Version,
		r.Threads, r.StartedAt.Local().Format(time.DateTime))
	if r.TpmC != nil {
		s += fmt.Sprintf(", TpmC %.2f", *r.TpmC)
	}
	return s
}
