package differential

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/tools/txtar"
)

// A trick is one raw request (or several on one connection) of the
// security corpus, testdata/security/tricks.txtar (format in its comment).
type trick struct {
	Name     string // CATEGORY/NAME, also its X-Trick-ID
	Category string
	Trusted  bool     // sent from orderly's trusted proxy, 127.0.0.1
	Apache   int      // the oracle's first answer, 0 if not stated
	Notes    []string // what the trick is about
	// Segments are the bytes to send; between two of them the client
	// waits for the head of a response (@@await@@).
	Segments [][]byte
}

// trickCategories are the categories a trick may name.
var trickCategories = map[string]bool{
	"path": true, "method": true, "form": true, "host": true,
	"xff": true, "headers": true, "smuggling": true, "upgrade": true,
}

var repeatMarker = regexp.MustCompile(`@@repeat ([0-9]+) ((?:[^@]|@[^@])*)@@`)

// loadTricks reads a security corpus; errors name the file and the trick.
func loadTricks(path string) ([]trick, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ar := txtar.Parse(data)
	var tricks []trick
	seen := map[string]bool{}
	for _, f := range ar.Files {
		t, err := parseTrick(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", path, f.Name, err)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("%s: %s appears twice", path, t.Name)
		}
		seen[t.Name] = true
		tricks = append(tricks, t)
	}
	if len(tricks) == 0 {
		return nil, fmt.Errorf("%s: no trick", path)
	}
	return tricks, nil
}

func parseTrick(f txtar.File) (trick, error) {
	t := trick{Name: f.Name}
	cat, rest, ok := strings.Cut(f.Name, "/")
	if !ok || rest == "" || !trickCategories[cat] || strings.ContainsAny(f.Name, " \t+") {
		return t, fmt.Errorf("want the name CATEGORY/NAME (no blanks, no +), CATEGORY one of path, method, form, host, xff, headers, smuggling, upgrade")
	}
	t.Category = cat
	lines := strings.Split(string(f.Data), "\n")
	i := 0
	for ; i < len(lines) && strings.HasPrefix(lines[i], "#"); i++ {
		key, val, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(lines[i], "#")), ":")
		val = strings.TrimSpace(val)
		switch {
		case !ok:
			return t, fmt.Errorf("attribute %q: want # KEY: VALUE", lines[i])
		case key == "peer" && (val == "trusted" || val == "untrusted"):
			t.Trusted = val == "trusted"
		case key == "apache":
			n, err := strconv.Atoi(val)
			if err != nil || n < 100 || n > 599 {
				return t, fmt.Errorf("apache: %q is not a status code", val)
			}
			t.Apache = n
		case key == "note":
			t.Notes = append(t.Notes, val)
		default:
			return t, fmt.Errorf("unknown attribute %q", lines[i])
		}
	}
	text := strings.Join(lines[i:], "")
	text = repeatMarker.ReplaceAllStringFunc(text, func(m string) string {
		sm := repeatMarker.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sm[1])
		return strings.Repeat(sm[2], n)
	})
	for _, part := range strings.Split(text, "@@await@@") {
		if strings.Contains(part, "@@") {
			return t, fmt.Errorf("unknown @@ marker in %q", part)
		}
		b, err := unescapeWire(part)
		if err != nil {
			return t, err
		}
		t.Segments = append(t.Segments, b)
	}
	if !bytes.Contains(bytes.Join(t.Segments, nil), []byte(t.Name)) {
		return t, fmt.Errorf("the request does not carry its name (X-Trick-ID: %s)", t.Name)
	}
	return t, nil
}

// unescapeWire decodes the escapes of a trick: \r, \n, \t, \\, \xHH.
func unescapeWire(s string) ([]byte, error) {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		if i+1 >= len(s) {
			return nil, fmt.Errorf("a lone \\ at the end")
		}
		i++
		switch s[i] {
		case 'r':
			b = append(b, '\r')
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case '\\':
			b = append(b, '\\')
		case 'x':
			if i+2 >= len(s) {
				return nil, fmt.Errorf("a short \\x escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("bad escape \\x%s", s[i+1:i+3])
			}
			b = append(b, byte(v))
			i += 2
		default:
			return nil, fmt.Errorf("unknown escape \\%c (want \\r, \\n, \\t, \\\\ or \\xHH)", s[i])
		}
	}
	return b, nil
}
