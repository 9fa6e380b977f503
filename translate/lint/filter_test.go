package lint

import (
	"bytes"
	"testing"
)

func TestFilter(t *testing.T) {
	all := []Finding{
		{ID: "DIR-10", Severity: Error}, {ID: "AUTH-01", Severity: Warning}, {ID: "AUTH-05", Severity: Info},
		{ID: "DIR-01", Severity: Warning}, {ID: "DIR-10", Severity: Error},
	}
	ids := func(r *Report) string {
		var s string
		for _, f := range r.Findings {
			s += f.ID + " "
		}
		return s
	}
	for _, tt := range []struct {
		f    Filter
		want string
	}{
		{Filter{}, "DIR-10 AUTH-01 AUTH-05 DIR-01 DIR-10 "},
		{Filter{Only: []string{"AUTH-*"}}, "AUTH-01 AUTH-05 "},
		{Filter{Skip: []string{"DIR-10"}}, "AUTH-01 AUTH-05 DIR-01 "},
		{Filter{MinSeverity: Warning}, "DIR-10 AUTH-01 DIR-01 DIR-10 "},
		{Filter{MinSeverity: Error}, "DIR-10 DIR-10 "},
		{Filter{Only: []string{"DIR-*"}, Skip: []string{"DIR-01"}}, "DIR-10 DIR-10 "},
		{Filter{Only: []string{"AUTH-*"}, MinSeverity: Warning}, "AUTH-01 "},
	} {
		r := &Report{Findings: append([]Finding(nil), all...)}
		tt.f.Apply(r)
		if got := ids(r); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestParseIDs(t *testing.T) {
	if ids, err := ParseIDs("dir-10, AUTH-*"); err != nil || len(ids) != 2 || ids[0] != "DIR-10" || ids[1] != "AUTH-*" {
		t.Errorf("%v %v", ids, err)
	}
	for _, bad := range []string{"NOPE-1", "", "ZZZ-*", " , "} {
		if _, err := ParseIDs(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestWriteSummary(t *testing.T) {
	r := &Report{Files: []string{"a", "b"}, Findings: []Finding{
		{ID: "DIR-10", Severity: Error}, {ID: "AUTH-01", Severity: Warning}, {ID: "DIR-10", Severity: Error}, {ID: "AUTH-05", Severity: Info},
		{ID: "XYZ-01", Severity: "other"}, // not in the catalogue: counted all the same
	}}
	var b bytes.Buffer
	if err := WriteSummary(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "lint: 5 findings (2 errors, 1 warnings, 1 infos) in 2 files read\nlint: by rule: DIR-10 2 AUTH-01 1 AUTH-05 1 XYZ-01 1\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	b.Reset()
	WriteSummary(&b, &Report{})
	if b.String() != "lint: 0 findings (0 errors, 0 warnings, 0 infos) in 0 files read\n" {
		t.Errorf("empty: %q", b.String())
	}
}
