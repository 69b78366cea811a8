package summary

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestReportSectionsOfOldRuns: a run stored without sections gets those
// its workload's name implied when reports decided by name.
func TestReportSectionsOfOldRuns(t *testing.T) {
	for _, tc := range []struct {
		workload string
		replay   bool
		want     []string
	}{
		{"micro", false, []string{SectionMicro}},
		{"http", false, []string{SectionSiege}},
		{"HTTP_urls", false, []string{SectionSiege}},
		{"siege", false, []string{SectionSiege}},
		{"replay_urls", false, []string{SectionSiege}},
		{"replay", false, []string{SectionSiege}},
		{"replay", true, []string{SectionSiege, SectionFingerprints}},
		{"replay_urls", true, []string{SectionSiege}},
		{"oltp_read_write", false, nil},
		{"tpcc", false, nil},
		{"micro_x", false, nil},
	} {
		doc := `{"schema":"dbarena.run/v1","workload":"` + tc.workload + `"`
		if tc.replay {
			doc += `,"replay":{"capture":"app.capture","sessions":1,"statements":1,"speed":0,"span_s":1,"kept_up":true}`
		}
		var r Run
		if err := json.Unmarshal([]byte(doc+"}"), &r); err != nil {
			t.Fatal(err)
		}
		if r.Sections != nil || !slices.Equal(r.ReportSections(), tc.want) {
			t.Errorf("%s (replay %v): sections %q, report sections %q, want %q", tc.workload, tc.replay, r.Sections, r.ReportSections(), tc.want)
		}
	}
}

// TestSectionsDecide: sections a run carries decide, whatever its name.
func TestSectionsDecide(t *testing.T) {
	r := &Run{Workload: "micro", Replay: &Replay{}}
	r.AddSection(SectionSiege)
	r.AddSection(SectionSiege)
	if !slices.Equal(r.Sections, []string{SectionSiege}) || r.HasSection(SectionMicro) || !r.HasSection(SectionSiege) {
		t.Errorf("sections %q", r.Sections)
	}
	doc, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"sections":["siege"]`) {
		t.Errorf("json %s", doc)
	}
	var back Run
	if err := json.Unmarshal(doc, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.ReportSections(), []string{SectionSiege}) {
		t.Errorf("decoded sections %q", back.ReportSections())
	}
	if doc, _ := json.Marshal(&Run{Workload: "micro"}); strings.Contains(string(doc), "sections") {
		t.Errorf("a run without sections writes them: %s", doc)
	}
}
