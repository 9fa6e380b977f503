// Package mutate is orderly's mutation tester: it plants one small bug at a
// time in a package's source (an operator flipped, a boundary moved) and runs
// the package's own tests against it, through go test -overlay, so that the
// module is never copied and the build cache serves every package the
// mutant does not touch.
//
// The mutators are gremlins' five defaults, with the same names, so that
// reports read alike; what differs is that every mutant in scope is run
// (gremlins skips as "not covered" the case expressions of a tagless switch,
// which Go's coverage blocks start after), that the scope can be narrowed to
// functions, and that a reviewed survivor is matched by its code, not by a
// line number that the next edit moves.
package mutate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// The mutators, as gremlins names them.
const (
	ArithmeticBase       = "ARITHMETIC_BASE"
	ConditionalsBoundary = "CONDITIONALS_BOUNDARY"
	ConditionalsNegation = "CONDITIONALS_NEGATION"
	IncrementDecrement   = "INCREMENT_DECREMENT"
	InvertNegatives      = "INVERT_NEGATIVES"
)

var binaryMutators = []struct {
	kind string
	to   map[token.Token]token.Token
}{
	{ConditionalsBoundary, map[token.Token]token.Token{
		token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR}},
	{ConditionalsNegation, map[token.Token]token.Token{
		token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.GEQ,
		token.LEQ: token.GTR, token.GTR: token.LEQ, token.GEQ: token.LSS}},
	{ArithmeticBase, map[token.Token]token.Token{
		token.ADD: token.SUB, token.SUB: token.ADD, token.MUL: token.QUO,
		token.QUO: token.MUL, token.REM: token.MUL}},
}

// A Mutant is one planted bug: the token at Offset in File replaced by To.
type Mutant struct {
	File   string // base name, in the package's directory
	Line   int
	Col    int // byte column, from 1, as go/token counts it
	Offset int
	Kind   string // a mutator's name
	From   string // the token replaced
	To     string // what replaces it
	Func   string // enclosing function: "name", "Recv.name", or "" at top level
	Code   string // the line, without its leading and trailing blanks
	Rel    int    // the token's byte offset in Code
}

func (m Mutant) String() string {
	return fmt.Sprintf("%s:%d:%d %s", m.File, m.Line, m.Col, m.Kind)
}

// Scope says which functions of a file are mutated: all of them when Funcs
// is empty.
type Scope struct {
	File  string
	Funcs []string
}

func (s Scope) has(fn string) bool {
	if len(s.Funcs) == 0 {
		return true
	}
	for _, f := range s.Funcs {
		if f == fn {
			return true
		}
	}
	return false
}

// Find lists the mutants of one file's source that fall in scope, in the
// order of the source. Test files are never mutated.
func Find(name string, src []byte, scope Scope) ([]Mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Mutant
	add := func(fn string, pos token.Pos, kind string, from, to token.Token) {
		p := fset.Position(pos)
		start := bytes.LastIndexByte(src[:p.Offset], '\n') + 1
		end := bytes.IndexByte(src[p.Offset:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += p.Offset
		}
		line := string(src[start:end])
		code := strings.TrimSpace(line)
		lead := len(line) - len(strings.TrimLeft(line, " \t"))
		out = append(out, Mutant{
			File: name, Line: p.Line, Col: p.Column, Offset: p.Offset,
			Kind: kind, From: from.String(), To: to.String(),
			Func: fn, Code: code, Rel: p.Offset - start - lead,
		})
	}
	visit := func(fn string, root ast.Node) {
		ast.Inspect(root, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				for _, m := range binaryMutators {
					to, ok := m.to[n.Op]
					if !ok || (m.kind == ArithmeticBase && n.Op == token.ADD && isString(n)) {
						continue
					}
					add(fn, n.OpPos, m.kind, n.Op, to)
				}
			case *ast.IncDecStmt:
				to := token.DEC
				if n.Tok == token.DEC {
					to = token.INC
				}
				add(fn, n.TokPos, IncrementDecrement, n.Tok, to)
			case *ast.UnaryExpr:
				if n.Op == token.SUB {
					add(fn, n.OpPos, InvertNegatives, token.SUB, token.ADD)
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		fn := ""
		if fd, ok := d.(*ast.FuncDecl); ok {
			fn = funcName(fd)
		}
		if scope.has(fn) {
			visit(fn, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out, nil
}

// isString reports a concatenation that a literal shows to be of strings,
// where "-" would not compile.
func isString(b *ast.BinaryExpr) bool {
	for _, e := range []ast.Expr{b.X, b.Y} {
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind == token.STRING {
				return true
			}
		case *ast.BinaryExpr:
			if e.Op == token.ADD && isString(e) {
				return true
			}
		}
	}
	return false
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		default:
			return fd.Name.Name
		}
	}
}

// Apply returns src with m planted.
func Apply(src []byte, m Mutant) ([]byte, error) {
	if m.Offset < 0 || m.Offset+len(m.From) > len(src) || string(src[m.Offset:m.Offset+len(m.From)]) != m.From {
		return nil, fmt.Errorf("%s: %q is not at offset %d", m, m.From, m.Offset)
	}
	out := make([]byte, 0, len(src)+1)
	out = append(out, src[:m.Offset]...)
	out = append(out, m.To...)
	return append(out, src[m.Offset+len(m.From):]...), nil
}
