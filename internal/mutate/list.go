package mutate

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ListName is the reviewed file each mutated package keeps beside its code.
const ListName = "mutants.txt"

// A List is a package's mutants.txt: which code is mutated, the stamp of the
// sources the last passing run saw, and every surviving mutant with the
// reason it may survive.
//
//	# comment
//	scope clientip.go
//	scope proxy.go encodePath Handler.serve
//	without table_test.go
//	stamp 3f1a...
//
//	addrset.go:36:51 CONDITIONALS_BOUNDARY (newAddrSet) ok && old «<=» idx[i] {
//		equivalent: the indices given to newAddrSet are distinct, ...
//
// A survivor's first line names where it was (advice only: the line number
// moves with every edit above it), the mutator, the function and the line
// of code with the mutated token between « and ». The reason follows on
// indented lines and starts with one of the Reasons.
//
// "without" names a test file of the package that the mutants are run
// without (a test that imports half the module, rebuilt for every mutant);
// the kill rate is then that of the other tests alone.
//
// "floor 0.62" marks a package whose tests do not reach MinEfficacy yet:
// a run then fails only below the floor, and reports, without failing, the
// survivors not reviewed. The floor is raised as tests are added, never
// lowered, and removed when the package reaches MinEfficacy.
type List struct {
	Path      string
	Scopes    []Scope
	Without   []string
	Floor     float64
	Stamp     string
	Survivors []Survivor
}

// A Survivor is one reviewed surviving mutant.
type Survivor struct {
	Line   int // in mutants.txt
	Where  string
	Kind   string
	Func   string
	Code   string // with the token marked
	Reason string
}

// Reasons a mutant may survive. An equivalent mutant is one no input can
// tell from the code: it leaves the denominator of the kill rate. A
// harmless one changes only what no decision, counter or log line shows;
// an open one is not reviewed to the end. Both count as survivors.
var Reasons = []string{"equivalent:", "harmless:", "open:"}

// Equivalent reports whether the survivor is excused as equivalent.
func (s Survivor) Equivalent() bool { return strings.HasPrefix(s.Reason, "equivalent:") }

// Key identifies a mutant across edits that do not touch its line.
func (m Mutant) Key() string {
	return m.Kind + " " + m.File + " (" + m.Func + ") " + m.Marked()
}

// Marked is the mutant's line of code with the token between « and ».
func (m Mutant) Marked() string {
	if m.Rel < 0 || m.Rel+len(m.From) > len(m.Code) {
		return m.Code
	}
	return m.Code[:m.Rel] + "«" + m.From + "»" + m.Code[m.Rel+len(m.From):]
}

// Key identifies the mutant the survivor was written for.
func (s Survivor) Key() string {
	file, _, _ := strings.Cut(s.Where, ":")
	return s.Kind + " " + file + " (" + s.Func + ") " + s.Code
}

// Entry formats m as a survivor's first line.
func Entry(m Mutant) string {
	return fmt.Sprintf("%s:%d:%d %s (%s) %s", m.File, m.Line, m.Col, m.Kind, m.Func, m.Marked())
}

// ReadList reads a package's mutants.txt.
func ReadList(path string) (*List, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseList(path, data)
}

// ParseList parses a mutants.txt; path names it in errors.
func ParseList(path string, data []byte) (*List, error) {
	l := &List{Path: path}
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	var cur *Survivor
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", path, n, fmt.Sprintf(format, a...))
	}
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			cur = nil
		case line[0] == ' ' || line[0] == '\t':
			if cur == nil {
				return nil, bad("an indented line belongs under a survivor")
			}
			if cur.Reason != "" {
				cur.Reason += " "
			}
			cur.Reason += trimmed
		default:
			cur = nil
			word, rest, _ := strings.Cut(trimmed, " ")
			switch word {
			case "scope":
				f := strings.Fields(rest)
				if len(f) == 0 {
					return nil, bad("scope names a file, then optionally its functions")
				}
				l.Scopes = append(l.Scopes, Scope{File: f[0], Funcs: f[1:]})
			case "without":
				f := strings.Fields(rest)
				if len(f) != 1 || !strings.HasSuffix(f[0], "_test.go") {
					return nil, bad("without names one test file")
				}
				l.Without = append(l.Without, f[0])
			case "floor":
				f, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
				if err != nil || f <= 0 || f >= MinEfficacy {
					return nil, bad("floor is a kill rate between 0 and %.2f", MinEfficacy)
				}
				l.Floor = f
			case "stamp":
				l.Stamp = strings.TrimSpace(rest)
			default:
				s, err := parseSurvivor(trimmed)
				if err != nil {
					return nil, bad("%v", err)
				}
				s.Line = n
				l.Survivors = append(l.Survivors, s)
				cur = &l.Survivors[len(l.Survivors)-1]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, s := range l.Survivors {
		ok := false
		for _, r := range Reasons {
			ok = ok || strings.HasPrefix(s.Reason, r)
		}
		if !ok {
			return nil, fmt.Errorf("%s:%d: the reason must start with one of %s", path, s.Line, strings.Join(Reasons, " "))
		}
	}
	if len(l.Scopes) == 0 {
		return nil, fmt.Errorf("%s: no scope line: say which files are mutated", path)
	}
	return l, nil
}

// parseSurvivor reads "file:line:col KIND (func) code".
func parseSurvivor(s string) (Survivor, error) {
	where, rest, ok := strings.Cut(s, " ")
	kind, rest, ok2 := strings.Cut(rest, " ")
	if !ok || !ok2 || !strings.HasPrefix(rest, "(") {
		return Survivor{}, fmt.Errorf("want \"file:line:col MUTATOR (func) code\", got %q", s)
	}
	fn, code, ok := strings.Cut(rest[1:], ") ")
	if !ok || !strings.Contains(code, "«") {
		return Survivor{}, fmt.Errorf("want the mutated token of %q between « and »", s)
	}
	parts := strings.Split(where, ":")
	if len(parts) != 3 {
		return Survivor{}, fmt.Errorf("want file:line:col, got %q", where)
	}
	for _, p := range parts[1:] {
		if _, err := strconv.Atoi(p); err != nil {
			return Survivor{}, fmt.Errorf("want file:line:col, got %q", where)
		}
	}
	known := false
	for _, m := range []string{ArithmeticBase, ConditionalsBoundary, ConditionalsNegation, IncrementDecrement, InvertNegatives} {
		known = known || m == kind
	}
	if !known {
		return Survivor{}, fmt.Errorf("unknown mutator %q", kind)
	}
	return Survivor{Where: where, Kind: kind, Func: fn, Code: code}, nil
}

// WithStamp returns data, a mutants.txt, with its stamp line set to stamp.
func WithStamp(data []byte, stamp string) []byte {
	lines := strings.SplitAfter(string(data), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "stamp ") || strings.TrimSpace(l) == "stamp" {
			lines[i] = "stamp " + stamp + "\n"
			return []byte(strings.Join(lines, ""))
		}
	}
	// After the last scope line.
	last := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "scope ") {
			last = i
		}
	}
	out := append([]string{}, lines[:last+1]...)
	out = append(out, "stamp "+stamp+"\n")
	return []byte(strings.Join(append(out, lines[last+1:]...), ""))
}
