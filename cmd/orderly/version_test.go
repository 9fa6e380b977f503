package main

import (
	"runtime/debug"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	const rev = "7b77336abcde0123456789abcdef0123456789ab"
	devel := func(settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/orderly-proxy/orderly", Version: "(devel)"}, Settings: settings}
	}
	tests := []struct {
		name    string
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		{"stamped wins", "v1.2.3-4-g7b77336", &debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}}, "v1.2.3-4-g7b77336"},
		{"stamped without build info", "0.0.0-dev+7b77336", nil, "0.0.0-dev+7b77336"},
		{"no build info", "", nil, "dev"},
		{"go install @version", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{"pseudo-version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261127152926-7b77336abcde+dirty"}}, "v0.0.0-20261127152926-7b77336abcde+dirty"},
		{"test binary", "", &debug.BuildInfo{}, "dev"},
		{"devel without vcs", "", devel(debug.BuildSetting{Key: "-trimpath", Value: "true"}), "dev"},
		{"devel clean", "", devel(
			debug.BuildSetting{Key: "vcs", Value: "git"},
			debug.BuildSetting{Key: "vcs.revision", Value: rev},
			debug.BuildSetting{Key: "vcs.modified", Value: "false"},
		), "dev-7b77336abcde"},
		{"devel dirty", "", devel(
			debug.BuildSetting{Key: "vcs.modified", Value: "true"},
			debug.BuildSetting{Key: "vcs.revision", Value: rev},
		), "dev-7b77336abcde+dirty"},
		{"short revision", "", devel(debug.BuildSetting{Key: "vcs.revision", Value: "7b77"}), "dev-7b77"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildVersion(tt.stamped, tt.info); got != tt.want {
				t.Errorf("buildVersion(%q, ...) = %q, want %q", tt.stamped, got, tt.want)
			}
		})
	}
}
