package main

import "runtime/debug"

// init settles version before anything reads it: what the linker stamped,
// or else what the go command recorded in the binary.
func init() {
	info, _ := debug.ReadBuildInfo()
	version = buildVersion(version, info)
}

// buildVersion returns the version orderly reports. In order:
//
//   - stamped, the value set with -ldflags "-X main.version=..." (make
//     build, make release, the Dockerfile);
//   - the main module's version the go command recorded: v1.2.3 from
//     go install github.com/orderly-proxy/orderly/cmd/orderly@v1.2.3, or
//     the pseudo-version go build stamps in a git checkout;
//   - "dev" for a build of the working tree ("(devel)"), followed by the
//     commit's short hash and "+dirty" when the build recorded them
//     (-buildvcs): dev-7b77336abcde+dirty.
//
// info is nil when the binary carries no build information.
func buildVersion(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "dev"
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			// 12 hex digits, as in a Go pseudo-version.
			v += "-" + s.Value[:min(len(s.Value), 12)]
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified {
		v += "+dirty"
	}
	return v
}
