package lint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/orderly-proxy/orderly/internal/swar"
)

// WriteText writes one finding a line:
//
//	file:line:col: ID severity: directive: change; fix
func WriteText(w io.Writer, r *Report) error {
	return writeChunked(w, len(r.Findings), func() func([]byte, int) []byte {
		var seen textMemo
		return func(b []byte, i int) []byte {
			f := &r.Findings[i]
			b = append(b, f.Pos.File...)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(f.Pos.Line), 10)
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(f.Pos.Col), 10)
			b = append(b, ": "...)
			b = append(b, f.ID...)
			b = append(b, ' ')
			b = append(b, f.Severity...)
			b = append(b, ": "...)
			b = seen.appendOneLine(b, f.Directive)
			b = append(b, ": "...)
			b = seen.appendOneLine(b, f.Change)
			b = append(b, "; "...)
			b = seen.appendOneLine(b, f.Fix)
			return append(b, '\n')
		}
	})
}

// chunkRecords is how many records writeChunked formats at a time, in a
// buffer made chunkBytes long (the size of 512 findings of a big report).
const chunkRecords, chunkBytes = 512, 256 << 10

// writeChunked writes n records to w in order, each appended to a buffer
// by a function newAdd makes: one for each goroutine, so that it need not
// be safe for concurrent use. Output of more than one chunk of
// chunkRecords is formatted on every core, a chunk at a time, while the
// chunks done are written in order: a big report is megabytes, and
// writing them to a file costs about as much as formatting them. After a
// failed write the rest is neither formatted nor written, and the error
// is returned.
func writeChunked(w io.Writer, n int, newAdd func() func(b []byte, i int) []byte) error {
	chunks := (n + chunkRecords - 1) / chunkRecords
	if chunks <= 1 {
		add := newAdd()
		var b []byte
		for i := range n {
			b = add(b, i)
		}
		if len(b) == 0 {
			return nil
		}
		_, err := w.Write(b)
		return err
	}
	workers := min(runtime.GOMAXPROCS(0), chunks)
	// The buffers: one being filled by each worker, and as many done or
	// being written. A worker takes a buffer before it takes a chunk, so
	// the chunk the writer waits for always has one.
	free := make(chan []byte, 2*workers)
	for range 2 * workers {
		free <- nil
	}
	done := make([]chan []byte, chunks)
	for i := range done {
		done[i] = make(chan []byte, 1)
	}
	var next atomic.Int64
	var failed atomic.Bool
	for range workers {
		go func() {
			add := newAdd()
			for {
				b := (<-free)[:0]
				if b == nil {
					b = make([]byte, 0, chunkBytes)
				}
				i := int(next.Add(1) - 1)
				if i >= chunks {
					free <- b
					return
				}
				for j := i * chunkRecords; j < min((i+1)*chunkRecords, n) && !failed.Load(); j++ {
					b = add(b, j)
				}
				done[i] <- b
			}
		}()
	}
	var err error
	for i := range chunks {
		b := <-done[i]
		if err == nil {
			if _, err = w.Write(b); err != nil {
				failed.Store(true)
			}
		}
		free <- b
	}
	return err
}

// A textMemo remembers a property of the long texts of a report. Most
// are shared by many findings (a rule's fix, a scope's translation): it
// knows them by where they are in memory, which for texts that all stay
// alive (those of one report) says which they are.
type textMemo [256]struct {
	p  *byte
	n  int
	ok bool
}

// holds returns has(s), worked out once for a long text seen before.
func (m *textMemo) holds(s string, has func(string) bool) bool {
	if len(s) < 64 {
		return has(s)
	}
	p := unsafe.StringData(s)
	e := &m[(uintptr(unsafe.Pointer(p))>>4^uintptr(len(s)))%uintptr(len(m))]
	if e.p != p || e.n != len(s) {
		e.p, e.n, e.ok = p, len(s), has(s)
	}
	return e.ok
}

// appendOneLine is appendOneLine, with isOneLine's answer for a text seen
// before taken from the memo.
func (m *textMemo) appendOneLine(b []byte, s string) []byte {
	if m.holds(s, isOneLine) {
		return append(b, s...)
	}
	return appendOneLine(b, s)
}

// appendOneLine appends s with every run of white space made one space
// and none at either end.
func appendOneLine(b []byte, s string) []byte {
	if isOneLine(s) {
		return append(b, s...)
	}
	space := false
	start := len(b)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
			space = true
			continue
		}
		if space && len(b) > start {
			b = append(b, ' ')
		}
		space = false
		b = append(b, c)
	}
	return b
}

// isOneLine reports whether appendOneLine would copy s as it is: its only
// white space is single spaces between words, as in most texts of a
// report, which are then copied whole rather than byte by byte. Other
// control characters take the slow path too: it keeps them.
//
// A report's texts are hundreds of bytes, checked for every finding:
// they are read eight bytes at a time.
func isOneLine(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	var after uint64 // 0x80 when the byte before the word is a space
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := swar.Load(s, i)
		if swar.HasLess(x, ' ') {
			return false
		}
		sp := swar.Zero(x ^ ' '*swar.Ones) // the high bit of each space
		if sp&(sp<<8|after) != 0 {
			return false
		}
		after = sp >> 56
	}
	space := after != 0
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c < ' ':
			return false
		case c == ' ' && space:
			return false
		default:
			space = c == ' '
		}
	}
	return true
}

func oneLine(s string) string { return string(appendOneLine(nil, s)) }

// JSONFinding is the JSON form of a finding, as WriteJSON writes it (a
// report decodes into a []JSONFinding). Its field names are stable.
type JSONFinding struct {
	ID        string `json:"id"`
	Severity  string `json:"severity"`
	File      string `json:"file"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	Directive string `json:"directive"`
	Change    string `json:"change"`
	Fix       string `json:"fix"`
}

// WriteJSON writes the findings as a JSON array of [JSONFinding] ([] when
// there are none), each field on a line of its own: what encoding/json's
// Encoder writes with SetIndent("", "  "). It is written here, a chunk of
// findings at a time (writeChunked), rather than by the Encoder, which
// would marshal the whole array and then indent it in memory: a big
// report is tens of megabytes of JSON.
func WriteJSON(w io.Writer, r *Report) error {
	n := len(r.Findings)
	if n == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	return writeChunked(w, n, func() func([]byte, int) []byte {
		var plain textMemo
		str := func(b []byte, s string) []byte {
			if plain.holds(s, isJSONPlain) {
				b = append(b, '"')
				b = append(b, s...)
				return append(b, '"')
			}
			return appendJSONString(b, s)
		}
		return func(b []byte, i int) []byte {
			f := &r.Findings[i]
			if i == 0 {
				b = append(b, "[\n"...)
			} else {
				b = append(b, ",\n"...)
			}
			b = append(b, "  {\n    \"id\": "...)
			b = str(b, f.ID)
			b = append(b, ",\n    \"severity\": "...)
			b = str(b, string(f.Severity))
			b = append(b, ",\n    \"file\": "...)
			b = str(b, f.Pos.File)
			b = append(b, ",\n    \"line\": "...)
			b = strconv.AppendInt(b, int64(f.Pos.Line), 10)
			b = append(b, ",\n    \"column\": "...)
			b = strconv.AppendInt(b, int64(f.Pos.Col), 10)
			b = append(b, ",\n    \"directive\": "...)
			b = str(b, f.Directive)
			b = append(b, ",\n    \"change\": "...)
			b = str(b, f.Change)
			b = append(b, ",\n    \"fix\": "...)
			b = str(b, f.Fix)
			b = append(b, "\n  }"...)
			if i == n-1 {
				b = append(b, "\n]\n"...)
			}
			return b
		}
	})
}

// isJSONPlain reports whether s is printable ASCII (or DEL) without
// " \\ < > & (the last three encoding/json escapes for HTML): a text that
// encoding/json writes as it is between quotes, as it does most of lint's.
func isJSONPlain(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !jsonPlainWord(swar.Load(s, i)) {
			return false
		}
	}
	for ; i < len(s); i++ {
		if !jsonPlainByte(s[i]) {
			return false
		}
	}
	return true
}

// jsonPlainWord reports whether the eight bytes of x are each plain
// (jsonPlainByte): a report's texts are hundreds of bytes, read eight
// bytes at a time.
func jsonPlainWord(x uint64) bool {
	return x&(0x80*swar.Ones) == 0 && !swar.HasLess(x, ' ') &&
		swar.Zero(x^'"'*swar.Ones)|swar.Zero(x^'\\'*swar.Ones)|swar.Zero(x^'<'*swar.Ones)|swar.Zero(x^'>'*swar.Ones)|swar.Zero(x^'&'*swar.Ones) == 0
}

// jsonPlainByte reports whether encoding/json writes the byte c of a
// string as it is.
func jsonPlainByte(c byte) bool {
	return c >= ' ' && c < utf8.RuneSelf && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// appendJSONString appends s as a JSON string, as encoding/json writes it
// (HTML characters escaped): an ASCII text here, byte by byte as
// encoding/json's appendString does, and one with other bytes (which
// encoding/json checks for UTF-8 and U+2028, U+2029) by encoding/json.
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	mark := len(b)
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && jsonPlainWord(swar.Load(s, i)) {
			i += 8
			continue
		}
		c := s[i]
		switch {
		case jsonPlainByte(c):
			i++
			continue
		case c >= utf8.RuneSelf:
			q, _ := json.Marshal(string(s)) // a string always marshals
			return append(b[:mark], q...)
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default: // other control characters, and < > & (for HTML)
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// SARIFOptions say how to write SARIF.
type SARIFOptions struct {
	// BaseDir is the directory artifact URIs are relative to (uriBaseId
	// SRCROOT); empty means the working directory. Files outside it get
	// absolute file: URIs.
	BaseDir string
	// Version is the tool's version, if known.
	Version string
}

// InformationURI is the tool's home, for SARIF.
const InformationURI = "https://github.com/orderly-proxy/orderly"

// CatalogueDoc is the catalogue of the rules in the repository, which
// TestCatalogueDoc writes from the rule table.
const CatalogueDoc = "docs/catalogue.md"

// HelpURI is where a rule is described: its entry in the catalogue.
func HelpURI(id string) string {
	return InformationURI + "/blob/main/" + CatalogueDoc + "#" + strings.ToLower(id)
}

// FingerprintKey is the partialFingerprints key of orderly's results.
const FingerprintKey = "orderlyFingerprint/v1"

// The SARIF 2.1.0 object model, as far as orderly writes it.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool               sarifTool                   `json:"tool"`
		OriginalURIBaseIDs map[string]sarifArtifactLoc `json:"originalUriBaseIds,omitempty"`
		Results            []sarifResult               `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string             `json:"id"`
		Name                 string             `json:"name"`
		ShortDescription     sarifText          `json:"shortDescription"`
		FullDescription      sarifText          `json:"fullDescription"`
		Help                 sarifText          `json:"help"`
		HelpURI              string             `json:"helpUri"`
		DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
		Properties           sarifRuleProps     `json:"properties"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifConfiguration struct {
		Level string `json:"level"`
	}
	sarifRuleProps struct {
		Tags     []string `json:"tags"`
		Severity string   `json:"orderlySeverity"`
		Source   string   `json:"source"`
	}
	sarifResult struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             sarifText         `json:"message"`
		Locations           []sarifLocation   `json:"locations"`
		PartialFingerprints map[string]string `json:"partialFingerprints"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifactLoc `json:"artifactLocation"`
		Region           sarifRegion      `json:"region"`
	}
	sarifArtifactLoc struct {
		URI       string `json:"uri"`
		URIBaseID string `json:"uriBaseId,omitempty"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
	}
)

// SARIFLevel maps a severity to a SARIF level: error, warning, note.
func SARIFLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// WriteSARIF writes the report as a SARIF 2.1.0 log with one run: every
// rule in the driver's rules array (rule metadata for code scanning) and
// one result per finding, with a fingerprint that survives edits
// elsewhere in the file and a checkout in another directory (a hash of the
// rule, the file relative to BaseDir, the normalised directive with BaseDir
// left out, and its ordinal among identical ones).
func WriteSARIF(w io.Writer, r *Report, opt SARIFOptions) error {
	base := opt.BaseDir
	if base == "" {
		base = "."
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return err
	}
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{Name: "orderly", Version: opt.Version, InformationURI: InformationURI}},
		OriginalURIBaseIDs: map[string]sarifArtifactLoc{
			"SRCROOT": {URI: fileURI(base) + "/"},
		},
		Results: []sarifResult{},
	}
	for _, rule := range rules {
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID:                   rule.ID,
			Name:                 rule.Name,
			ShortDescription:     sarifText{rule.Short},
			FullDescription:      sarifText{rule.Change},
			Help:                 sarifText{rule.Fix + " (" + rule.Source + ")"},
			HelpURI:              HelpURI(rule.ID),
			DefaultConfiguration: sarifConfiguration{SARIFLevel(rule.Severity)},
			Properties:           sarifRuleProps{Tags: []string{"apache-httpd", "upgrade-2.2-2.4", category(rule.ID)}, Severity: string(rule.Severity), Source: rule.Source},
		})
	}
	log := sarifLog{
		Schema:  "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{run},
	}
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetIndent("", "  ")
	if err := enc.Encode(log); err != nil {
		return err
	}
	if len(r.Findings) == 0 {
		_, err := w.Write(head.Bytes())
		return err
	}
	// The results are written in the place of the run's empty array (its
	// last field), a chunk at a time on every core, laid out as the
	// Encoder lays them out: a big report is tens of megabytes of SARIF,
	// which the Encoder would marshal and then indent in memory.
	const empty = `"results": []`
	at := bytes.LastIndex(head.Bytes(), []byte(empty)) + len(empty) - 1
	if _, err := w.Write(head.Bytes()[:at]); err != nil {
		return err
	}
	sums := sarifFingerprints(r.Findings, base)
	n := len(r.Findings)
	err = writeChunked(w, n, func() func([]byte, int) []byte {
		var seen textMemo
		var msg []byte
		// Findings come in runs from one file: its location is
		// worked out once per run.
		var file string
		var loc sarifArtifactLoc
		located := false
		return func(b []byte, i int) []byte {
			f := &r.Findings[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n        {\n          \"ruleId\": "...)
			b = appendJSONString(b, f.ID)
			b = append(b, ",\n          \"ruleIndex\": "...)
			b = strconv.AppendInt(b, int64(ruleIndex[f.ID]), 10)
			b = append(b, ",\n          \"level\": "...)
			b = appendJSONString(b, SARIFLevel(f.Severity))
			b = append(b, ",\n          \"message\": {\n            \"text\": "...)
			msg = seen.appendOneLine(msg[:0], f.Directive)
			msg = append(msg, ": "...)
			msg = seen.appendOneLine(msg, f.Change)
			msg = append(msg, " Fix: "...)
			msg = seen.appendOneLine(msg, f.Fix)
			b = appendJSONString(b, msg)
			b = append(b, "\n          },\n          \"locations\": [\n            {\n              \"physicalLocation\": {\n                \"artifactLocation\": {\n                  \"uri\": "...)
			if !located || f.Pos.File != file {
				file, loc, located = f.Pos.File, artifact(base, f.Pos.File), true
			}
			b = appendJSONString(b, loc.URI)
			if loc.URIBaseID != "" {
				b = append(b, ",\n                  \"uriBaseId\": "...)
				b = appendJSONString(b, loc.URIBaseID)
			}
			b = append(b, "\n                },\n                \"region\": {\n                  \"startLine\": "...)
			b = strconv.AppendInt(b, int64(max(f.Pos.Line, 1)), 10)
			b = append(b, ",\n                  \"startColumn\": "...)
			b = strconv.AppendInt(b, int64(max(f.Pos.Col, 1)), 10)
			b = append(b, "\n                }\n              }\n            }\n          ],\n          \"partialFingerprints\": {\n            "...)
			b = appendJSONString(b, FingerprintKey)
			b = append(b, ": \""...)
			b = hex.AppendEncode(b, sums[i][:])
			b = append(b, "\"\n          }\n        }"...)
			if i == n-1 {
				b = append(b, "\n      "...)
			}
			return b
		}
	})
	if err != nil {
		return err
	}
	_, err = w.Write(head.Bytes()[at:])
	return err
}

// sarifFingerprints returns the fingerprint of each finding: the first
// half of a SHA-256 of the rule, the file relative to base, the
// normalised directive with base left out (a checkout elsewhere, a CI
// workspace, keeps the fingerprints) and its ordinal among identical
// ones.
func sarifFingerprints(findings []Finding, base string) [][16]byte {
	sums := make([][16]byte, len(findings))
	ordinal := make(map[string]int, len(findings))
	var key []byte
	// Findings come in runs from one file, and those on one line share
	// the directive's text: each is worked out once per run.
	var file, uri, directive, norm string
	for i := range findings {
		f := &findings[i]
		if i == 0 || f.Pos.File != file {
			file, uri = f.Pos.File, artifact(base, f.Pos.File).URI
		}
		if i == 0 || f.Directive != directive {
			directive, norm = f.Directive, normDirective(strings.ReplaceAll(f.Directive, base, "%SRCROOT%"))
		}
		key = append(append(append(append(append(key[:0], f.ID...), 0), uri...), 0), norm...)
		n := ordinal[string(key)]
		ordinal[string(key)] = n + 1
		sum := sha256.Sum256(strconv.AppendInt(append(key, 0), int64(n), 10))
		sums[i] = [16]byte(sum[:16])
	}
	return sums
}

func category(id string) string {
	prefix, _, _ := strings.Cut(id, "-")
	switch prefix {
	case "BLD":
		return "modules"
	case "DIR":
		return "directives"
	case "BEH":
		return "behaviour"
	case "AUTH":
		return "access-control"
	case "ERR":
		return "errors"
	}
	return "orderly"
}

// normDirective normalises a directive for fingerprints: white space
// collapsed, the name in lower case.
func normDirective(s string) string {
	f := strings.Fields(s)
	if len(f) > 0 {
		f[0] = strings.ToLower(f[0])
	}
	return strings.Join(f, " ")
}

// artifact returns the location of file: relative to base with uriBaseId
// SRCROOT, or an absolute file: URI when it is outside base.
func artifact(base, file string) sarifArtifactLoc {
	abs, err := filepath.Abs(file)
	if err != nil {
		return sarifArtifactLoc{URI: escapePath(filepath.ToSlash(file))}
	}
	rel, err := filepath.Rel(base, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return sarifArtifactLoc{URI: fileURI(abs)}
	}
	return sarifArtifactLoc{URI: escapePath(filepath.ToSlash(rel)), URIBaseID: "SRCROOT"}
}

func escapePath(p string) string { return (&url.URL{Path: p}).EscapedPath() }

func fileURI(abs string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}
