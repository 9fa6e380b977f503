package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// retire on a metrics source it cannot read exits 2 with a message that
// names the source, and lists nothing: no table, no JSON, no count.
func TestRetireUnreadableMetrics(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"orderly.hcl":        goodHCL,
		"legacy.conf":        "<Directory @DIR@/docroot>\nOrder deny,allow\nDeny from all\n</Directory>\n",
		"docroot/index.html": "x",
		"garbage.txt":        "hello world {{{\n",
		"other.prom":         "# TYPE go_goroutines gauge\ngo_goroutines 7\n",
	})
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("<html><body>not metrics</body></html>\n"))
	}))
	defer html.Close()
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	// A port nothing listens on: connections are refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()

	tests := []struct {
		name string
		args []string
		want string // in the message, after "retire: "
	}{
		{"missing file", []string{"-metrics", filepath.Join(dir, "nope.prom")}, "no such file or directory"},
		{"directory", []string{"-metrics", dir}, "is a directory"},
		{"garbage", []string{"-metrics", filepath.Join(dir, "garbage.txt")}, "reading the metrics"},
		{"not orderly's", []string{"-metrics", filepath.Join(dir, "other.prom")}, "not a scrape of orderly"},
		{"refused URL", []string{"-metrics", refused + "/metrics"}, "connection refused"},
		{"404 URL", []string{"-metrics", missing.URL + "/metrics"}, "404"},
		{"HTML URL", []string{"-metrics", html.URL + "/metrics"}, "reading the metrics"},
		{"refused Prometheus", []string{"-prometheus", refused}, "connection refused"},
		{"HTML Prometheus", []string{"-prometheus", html.URL}, "-prometheus " + html.URL},
	}
	for _, tt := range tests {
		for _, format := range []string{"table", "json"} {
			t.Run(tt.name+" "+format, func(t *testing.T) {
				var out, errb bytes.Buffer
				args := append([]string{"retire", "-config", filepath.Join(dir, "orderly.hcl"), "-format", format}, tt.args...)
				if code := run(args, &out, &errb); code != 2 {
					t.Errorf("exit %d, want 2", code)
				}
				if out.Len() > 0 {
					t.Errorf("a result on stdout:\n%s", out.String())
				}
				msg := errb.String()
				if !strings.HasPrefix(msg, "retire: "+tt.args[0]+" ") || !strings.Contains(msg, tt.want) || strings.Count(msg, "\n") != 1 {
					t.Errorf("stderr %q, want one line naming %s with %q", msg, tt.args[0], tt.want)
				}
			})
		}
	}
}
