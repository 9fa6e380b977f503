package walk

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

// A brokenFile is an .htaccess file that does not load: Apache answers
// 500 for its directory and below.
type brokenFile struct {
	// rule stands for the file: the 500s are counted, logged and shown
	// under it, with the file:line and the message of the first error.
	rule *policy.Rule
	// alert is the text of Apache's error-log line, [core:alert]
	// "FILE: MESSAGE" (ap_parse_htaccess in server/config.c); empty where
	// the file fails only for refusals of orderly's own, which Apache
	// would have served.
	alert string
}

// newBrokenFile makes the brokenFile of the access file path, whose load
// failed with err. The rule's ID hashes the file (relative to baseDir)
// and nothing else, so that it survives edits of the file and reloads.
func newBrokenFile(path string, err error, baseDir string) *brokenFile {
	rel := path
	if baseDir != "" {
		if r, rerr := filepath.Rel(baseDir, path); rerr == nil && !strings.HasPrefix(r, "..") {
			rel = r
		}
	}
	msg, line, own := err.Error(), 0, false
	var el apacheconf.ErrorList
	var one *apacheconf.Error
	switch {
	case errors.As(err, &el) && len(el) > 0:
		// Apache stops at the first error it meets; orderly's own
		// refusals come after, where Apache would have read on.
		one, own = el[0], true
		for _, e := range el {
			if !e.Own {
				one, own = e, false
				break
			}
		}
	case errors.As(err, &one):
		own = one.Own
	}
	if one != nil {
		msg, line = one.Msg, one.Pos.Line
	}
	sum := sha256.Sum256([]byte(rel + "\x00(broken .htaccess)"))
	b := &brokenFile{rule: &policy.Rule{ID: hex.EncodeToString(sum[:6]), File: rel, Line: line, Text: "(does not load) " + msg}}
	if !own {
		b.alert = path + ": " + msg
	}
	return b
}
