package deploy

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Docker cannot build here, so these tests build the binary the
// Dockerfile's RUN line builds, with the same command, and check what the
// image would hold: a static binary, run as a non-root user from a static
// base image.

const dockerfile = "../Dockerfile"

// testVersion is the VERSION build argument the tests pass: orderly
// version must print it, which shows the -ldflags were applied.
const testVersion = "deploy-test"

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	cmd  string // upper case: FROM, RUN, COPY, ...
	args string
}

// stage is one FROM and the instructions after it.
type stage struct {
	image, name string
	ins         []instruction
}

func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.ins {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// parseDockerfile reads a Dockerfile into its stages. It knows only what
// the repository's Dockerfile uses: comments, line continuations and
// instructions.
func parseDockerfile(text string) ([]stage, error) {
	var stages []stage
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		cmd, args, _ := strings.Cut(line, " ")
		in := instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			s := stage{image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if in.cmd == "ARG" {
				continue
			}
			return nil, fmt.Errorf("line %d: %s before FROM", start, in.cmd)
		}
		stages[len(stages)-1].ins = append(stages[len(stages)-1].ins, in)
	}
	if len(stages) == 0 {
		return nil, fmt.Errorf("no FROM")
	}
	return stages, nil
}

// shellWords splits a shell command line into words, with single and
// double quotes (no escapes or expansions: the RUN line needs none).
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in %q", quote, s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// jsonArray reads an exec-form instruction's ["a", "b"] arguments.
func jsonArray(s string) []string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil
	}
	var out []string
	for _, f := range strings.Split(s[1:len(s)-1], ",") {
		out = append(out, strings.Trim(strings.TrimSpace(f), `"`))
	}
	return out
}

// goBuild is the Dockerfile's go build command.
type goBuild struct {
	env    []string // the NAME=value words before go
	args   []string // after "go"
	output string   // the -o path in the image
}

func (b goBuild) flag(name string) (string, bool) {
	for i, a := range b.args {
		if a == name && i+1 < len(b.args) {
			return b.args[i+1], true
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// readDockerfile returns the stages and the build stage's go build.
func readDockerfile(t *testing.T) ([]stage, goBuild) {
	t.Helper()
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	stages, err := parseDockerfile(string(b))
	if err != nil {
		t.Fatalf("%s: %v", dockerfile, err)
	}
	var runs []instruction
	for _, s := range stages[:len(stages)-1] {
		for _, in := range s.all("RUN") {
			if strings.Contains(in.args, "go build") {
				runs = append(runs, in)
			}
		}
	}
	if len(runs) != 1 {
		t.Fatalf("%s: %d RUN lines with go build in the build stages, want 1", dockerfile, len(runs))
	}
	words, err := shellWords(runs[0].args)
	if err != nil {
		t.Fatalf("%s:%d: %v", dockerfile, runs[0].line, err)
	}
	var gb goBuild
	for len(words) > 0 && strings.Contains(words[0], "=") {
		gb.env = append(gb.env, words[0])
		words = words[1:]
	}
	if len(words) < 2 || words[0] != "go" || words[1] != "build" {
		t.Fatalf("%s:%d: RUN %s: want [NAME=value...] go build ...", dockerfile, runs[0].line, runs[0].args)
	}
	gb.args = words[1:]
	gb.output, _ = gb.flag("-o")
	if gb.output == "" {
		t.Fatalf("%s:%d: go build without -o", dockerfile, runs[0].line)
	}
	return stages, gb
}

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// orderlyBinary builds ./cmd/orderly once per test run, exactly as the
// Dockerfile's RUN line does (its environment assignments, flags and
// package; VERSION is testVersion), and returns its path.
func orderlyBinary(t *testing.T) string {
	t.Helper()
	_, gb := readDockerfile(t)
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "orderly-deploy-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "orderly")
		var args []string
		for i := 0; i < len(gb.args); i++ {
			a := strings.NewReplacer("${VERSION}", testVersion, "$VERSION", testVersion).Replace(gb.args[i])
			if a == "-o" {
				args = append(args, a, buildBin)
				i++
				continue
			}
			args = append(args, a)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = ".." // the Dockerfile's WORKDIR holds the repository
		cmd.Env = append(append(os.Environ(), "GOWORK=off"), gb.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// staticProblems says why the ELF file at path would not run in an image
// with no C library: an interpreter (the dynamic loader) or shared
// libraries it needs.
func staticProblems(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var problems []string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			problems = append(problems, "has a PT_INTERP program header (it needs the dynamic loader)")
		}
	}
	needed, err := f.DynString(elf.DT_NEEDED)
	if err != nil {
		return nil, err
	}
	if len(needed) > 0 {
		problems = append(problems, fmt.Sprintf("needs shared libraries (DT_NEEDED): %s", strings.Join(needed, ", ")))
	}
	return problems, nil
}

// TestDockerfileBinaryStatic: the binary the Dockerfile builds is static,
// stripped (-s -w), carries the version it was given, and holds no path of
// the machine that built it (-trimpath).
func TestDockerfileBinaryStatic(t *testing.T) {
	_, gb := readDockerfile(t)
	if !slices.Contains(gb.env, "CGO_ENABLED=0") {
		t.Errorf("the Dockerfile's go build does not set CGO_ENABLED=0 (env %q): the binary could need the C library the static image lacks", gb.env)
	}
	if !slices.Contains(gb.args, "-trimpath") {
		t.Errorf("the Dockerfile's go build has no -trimpath")
	}
	bin := orderlyBinary(t)
	problems, err := staticProblems(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("the Dockerfile's binary %s", p)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, name := range []string{".symtab", ".debug_info", ".zdebug_info"} {
		if f.Section(name) != nil {
			t.Errorf("the binary has a %s section: not built with -ldflags \"-s -w\"", name)
		}
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "orderly "+testVersion {
		t.Errorf("orderly version = %q, %v; want %q (-X main.version from the VERSION argument)", out, err, "orderly "+testVersion)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(root+"/")) {
		t.Errorf("the binary holds the build directory %s: not built with -trimpath", root)
	}
}

// TestStaticCheckCatchesDynamic: staticProblems finds a dynamically linked
// program, so TestDockerfileBinaryStatic can fail.
func TestStaticCheckCatchesDynamic(t *testing.T) {
	const sh = "/bin/sh" // dash, linked with the C library on Debian
	problems, err := staticProblems(sh)
	if err != nil {
		t.Skipf("%s: %v", sh, err)
	}
	if len(problems) == 0 {
		t.Fatalf("staticProblems(%s) found nothing; want PT_INTERP and DT_NEEDED", sh)
	}
	t.Logf("%s: %s", sh, strings.Join(problems, "; "))
}

var (
	// staticBase: images with no C library and no shell, in which only a
	// static binary runs.
	staticBase = regexp.MustCompile(`^(scratch|gcr\.io/distroless/static(-debian\d+)?(:[\w.-]+)?(@sha256:[0-9a-f]{64})?)$`)
	nonRoot    = regexp.MustCompile(`^(nonroot|65532)(:(nonroot|65532))?$`)
	goImage    = regexp.MustCompile(`^golang:(\d+\.\d+)(\.\d+)?(-[\w.-]+)?$`)
	goLine     = regexp.MustCompile(`(?m)^go (\d+\.\d+)(\.\d+)?$`)
)

// TestDockerfileFinalStage: the image runs the copied binary as the
// distroless non-root user from a static base; its Go is go.mod's.
func TestDockerfileFinalStage(t *testing.T) {
	stages, gb := readDockerfile(t)
	final := stages[len(stages)-1]
	if !staticBase.MatchString(final.image) {
		t.Errorf("final stage FROM %s: want a static base (gcr.io/distroless/static, scratch)", final.image)
	}
	users := final.all("USER")
	if len(users) == 0 {
		t.Errorf("final stage has no USER: the image would run as root")
	} else if u := users[len(users)-1].args; !nonRoot.MatchString(u) {
		t.Errorf("final stage USER %s: want nonroot (65532)", u)
	}
	var build stage
	for _, s := range stages[:len(stages)-1] {
		if len(s.all("RUN")) > 0 {
			build = s
		}
	}
	var dest string
	for _, c := range final.all("COPY") {
		f := strings.Fields(c.args)
		if len(f) == 3 && f[0] == "--from="+build.name && f[1] == gb.output {
			dest = f[2]
		}
	}
	if dest == "" {
		t.Fatalf("final stage does not COPY --from=%s %s", build.name, gb.output)
	}
	eps := final.all("ENTRYPOINT")
	if len(eps) != 1 || !slices.Equal(jsonArray(eps[0].args), []string{dest}) {
		t.Errorf("ENTRYPOINT %v: want [%q], the copied binary, in exec form", eps, dest)
	}
	m := goImage.FindStringSubmatch(build.image)
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := goLine.FindStringSubmatch(string(gomod))
	switch {
	case m == nil:
		t.Errorf("build stage FROM %s: want golang:<version>", build.image)
	case want == nil:
		t.Errorf("go.mod has no go line")
	case m[1] != want[1]:
		t.Errorf("build stage FROM %s, go.mod says go %s: the image would build with another Go", build.image, want[1])
	}
}

// TestMakefileBuildsTheSame: make build and the Dockerfile pass the same
// flags, as the Dockerfile's comment promises.
func TestMakefileBuildsTheSame(t *testing.T) {
	_, gb := readDockerfile(t)
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	mk := string(b)
	ld := regexp.MustCompile(`(?m)^LDFLAGS\s*:?=\s*(.*)$`).FindStringSubmatch(mk)
	build := regexp.MustCompile(`(?m)^\t(.*\$\(GO\) build .*)$`).FindStringSubmatch(mk)
	if ld == nil || build == nil {
		t.Fatal("Makefile: no LDFLAGS or build recipe")
	}
	dockerLD, _ := gb.flag("-ldflags")
	norm := strings.NewReplacer("${VERSION}", "V", "$VERSION", "V", "$(VERSION)", "V")
	if norm.Replace(dockerLD) != norm.Replace(strings.TrimSpace(ld[1])) {
		t.Errorf("Dockerfile -ldflags %q, Makefile LDFLAGS %q", dockerLD, ld[1])
	}
	for _, w := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/orderly"} {
		if !strings.Contains(build[1], w) {
			t.Errorf("Makefile build recipe %q has no %s", build[1], w)
		}
		if !slices.Contains(gb.env, w) && !slices.Contains(gb.args, w) {
			t.Errorf("Dockerfile go build has no %s", w)
		}
	}
}
