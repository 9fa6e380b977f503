package apachetest

import (
	"bufio"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
)

func TestParseRequests(t *testing.T) {
	tests := []struct {
		line string
		want Request
	}{
		{
			line: "GET / 8.8.8.8",
			want: Request{Method: "GET", Target: "/", ClientIP: "8.8.8.8"},
		},
		{
			line: "  GET\t/a/../b   10.1.2.3 want=403  ",
			want: Request{Method: "GET", Target: "/a/../b", ClientIP: "10.1.2.3", Want: "403"},
		},
		{
			line: "POST //x%2e 2001:db8::1 u=alice:se:cr=et want=other",
			want: Request{Method: "POST", Target: "//x%2e", ClientIP: "2001:db8::1", User: "alice", Password: "se:cr=et", HasAuth: true, Want: "other"},
		},
		{
			line: "GET /m 8.8.8.8 u=: want=401",
			want: Request{Method: "GET", Target: "/m", ClientIP: "8.8.8.8", HasAuth: true, Want: "401"},
		},
		{
			line: "GET * 8.8.8.8,10.0.0.1 h=Authorization:Bearer%20a%20b h=X-Empty: h=X-Colon:a:b",
			want: Request{Method: "GET", Target: "*", ClientIP: "8.8.8.8,10.0.0.1", Header: [][2]string{
				{"Authorization", "Bearer a b"}, {"X-Empty", ""}, {"X-Colon", "a:b"},
			}},
		},
		{
			line: "M-SEARCH http://127.0.0.1/x 127.0.0.1 want=599",
			want: Request{Method: "M-SEARCH", Target: "http://127.0.0.1/x", ClientIP: "127.0.0.1", Want: "599"},
		},
	}
	for _, tt := range tests {
		reqs, err := ParseRequests("f", 1, []byte(tt.line))
		if err != nil {
			t.Errorf("ParseRequests(%q): %v", tt.line, err)
			continue
		}
		if len(reqs) != 1 {
			t.Errorf("ParseRequests(%q) = %d requests, want 1", tt.line, len(reqs))
			continue
		}
		tt.want.Line, tt.want.Text = 1, strings.TrimSpace(tt.line)
		if !reflect.DeepEqual(reqs[0], tt.want) {
			t.Errorf("ParseRequests(%q) =\n%+v, want\n%+v", tt.line, reqs[0], tt.want)
		}
	}
}

func TestParseRequestsErrors(t *testing.T) {
	tests := []struct {
		line string
		err  string // a substring of the error
	}{
		{"GET /", "want METHOD TARGET CLIENT-IP"},
		{"GET", "want METHOD TARGET CLIENT-IP"},
		{"G(T / 8.8.8.8", `bad method "G(T"`},
		{"GET / 8.8.8", `bad client IP "8.8.8"`},
		{"GET / localhost", `bad client IP "localhost"`},
		{"GET / 8.8.8.8,", `bad client IP "8.8.8.8,"`},
		{"GET / 8.8.8.8 want=4031", `bad "want=4031"`},
		{"GET / 8.8.8.8 want=ok", `bad "want=ok"`},
		{"GET / 8.8.8.8 want=", `bad "want="`},
		{"GET / 8.8.8.8 want=200 want=403", "want= appears twice"},
		{"GET / 8.8.8.8 u=alice", `bad "u=alice"`},
		{"GET / 8.8.8.8 u=a:b u=c:d", "u= appears twice"},
		{"GET / 8.8.8.8 h=NoColon", `bad "h=NoColon"`},
		{"GET / 8.8.8.8 h=Bad(Name):x", `bad "h=Bad(Name):x"`},
		{"GET / 8.8.8.8 h=:x", `bad "h=:x"`},
		{"GET / 8.8.8.8 403", `unexpected "403"`},
		{"GET / 8.8.8.8 x=1", `unknown "x=1"`},
	}
	for _, tt := range tests {
		_, err := ParseRequests("case.txtar", 10, []byte("# comment\n\n"+tt.line+"\n"))
		if err == nil {
			t.Errorf("ParseRequests(%q): no error", tt.line)
			continue
		}
		if !strings.HasPrefix(err.Error(), "case.txtar:12: ") || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParseRequests(%q): error %q, want case.txtar:12: ...%s...", tt.line, err, tt.err)
		}
	}
}

func TestParseRequestsLines(t *testing.T) {
	data := "# a comment\nGET / 8.8.8.8\n\n   # indented comment\nGET /x 8.8.8.8 want=nope\nGET /y 10.0.0.1\nbad\n"
	_, err := ParseRequests("c.txtar", 20, []byte(data))
	if err == nil {
		t.Fatal("no error")
	}
	// Every malformed line is reported, each with its line number.
	if got := err.Error(); !strings.Contains(got, "c.txtar:24: ") || !strings.Contains(got, "c.txtar:26: ") || strings.Count(got, "\n") != 1 {
		t.Errorf("error %q, want lines 24 and 26", got)
	}
	reqs, err := ParseRequests("c", 20, []byte(strings.ReplaceAll(strings.ReplaceAll(data, "want=nope", ""), "bad\n", "")))
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, r := range reqs {
		lines = append(lines, r.Line)
	}
	if want := []int{21, 24, 25}; !reflect.DeepEqual(lines, want) {
		t.Errorf("lines %v, want %v", lines, want)
	}
}

func TestWire(t *testing.T) {
	r := Request{Method: "GET", Target: "/a/../b%2e//c", ClientIP: "10.1.2.3", User: "alice", Password: "secret", HasAuth: true,
		Header: [][2]string{{"X-Test", "a b"}}}
	want := "GET /a/../b%2e//c HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nX-Forwarded-For: 10.1.2.3\r\n" +
		"Authorization: Basic YWxpY2U6c2VjcmV0\r\nX-Test: a b\r\n\r\n"
	if got := string(r.Wire()); got != want {
		t.Errorf("Wire() =\n%q, want\n%q", got, want)
	}
	// An explicit header replaces the default one.
	r = Request{Method: "GET", Target: "/", ClientIP: "10.1.2.3", Header: [][2]string{{"host", "example"}, {"x-forwarded-for", "1.2.3.4"}}}
	want = "GET / HTTP/1.1\r\nConnection: close\r\nhost: example\r\nx-forwarded-for: 1.2.3.4\r\n\r\n"
	if got := string(r.Wire()); got != want {
		t.Errorf("Wire() =\n%q, want\n%q", got, want)
	}
}

// TestDoRaw checks against a fake server that Do sends the request byte for
// byte and reads the response.
func TestDoRaw(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		var head strings.Builder
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			head.WriteString(line)
			if err != nil || line == "\r\n" {
				break
			}
		}
		got <- head.String()
		io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"Members \\\"Only\\\"\"\r\n"+
			"WWW-Authenticate: Digest realm=\"other\"\r\nContent-Length: 5\r\n\r\nhello")
	}()
	req := Request{Method: "GET", Target: "/a/../b", ClientIP: "8.8.8.8"}
	resp, err := Do(l.Addr().String(), req)
	if err != nil {
		t.Fatal(err)
	}
	if head := <-got; head != string(req.Wire()) {
		t.Errorf("server got\n%q, want\n%q", head, req.Wire())
	}
	if resp.Status != 401 || string(resp.Body) != "hello" {
		t.Errorf("response %d %q, want 401 hello", resp.Status, resp.Body)
	}
	if want := `Basic realm="Members \"Only\"", Digest realm="other"`; resp.WWWAuthenticate != want {
		t.Errorf("WWWAuthenticate = %q, want %q", resp.WWWAuthenticate, want)
	}
	if want := `401 realm="Members \"Only\""`; resp.Class() != want {
		t.Errorf("Class() = %q, want %q", resp.Class(), want)
	}
}

func TestDoBodyLimit(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
		c.Write(make([]byte, MaxBody+1000))
	}()
	resp, err := Do(l.Addr().String(), Request{Method: "GET", Target: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || len(resp.Body) != MaxBody {
		t.Errorf("status %d, %d body bytes; want 200, %d", resp.Status, len(resp.Body), MaxBody)
	}
}

func TestClass(t *testing.T) {
	tests := []struct {
		resp Response
		want string
	}{
		{Response{Status: 200}, "other"},
		{Response{Status: 404}, "other"},
		{Response{Status: 301}, "other"},
		{Response{Status: 400}, "400"},
		{Response{Status: 403}, "403"},
		{Response{Status: 500}, "500"},
		{Response{Status: 502}, "other"},
		{Response{Status: 401}, "401"},
		{Response{Status: 401, WWWAuthenticate: `Basic realm="Members Only"`}, `401 realm="Members Only"`},
		{Response{Status: 401, WWWAuthenticate: `Basic REALM = "x" , charset="UTF-8"`}, `401 realm="x"`},
		{Response{Status: 401, WWWAuthenticate: `Basic realm=token`}, `401 realm="token"`},
		{Response{Status: 401, WWWAuthenticate: `Basic xrealm="no", realm="yes"`}, `401 realm="yes"`},
		{Response{Status: 401, WWWAuthenticate: `Basic realm=""`}, `401 realm=""`},
		{Response{Status: 401, WWWAuthenticate: `Basic`}, `401`},
	}
	for _, tt := range tests {
		if got := tt.resp.Class(); got != tt.want {
			t.Errorf("%+v.Class() = %q, want %q", tt.resp, got, tt.want)
		}
	}
}

func TestMatches(t *testing.T) {
	tests := []struct {
		status int
		want   string
		ok     bool
	}{
		{200, "200", true},
		{200, "other", true},
		{404, "other", true},
		{404, "200", false},
		{403, "403", true},
		{403, "other", false},
		{401, "401", true},
		{401, "other", false},
		{500, "500", true},
	}
	for _, tt := range tests {
		if got := (Response{Status: tt.status}).Matches(tt.want); got != tt.ok {
			t.Errorf("status %d Matches(%q) = %v, want %v", tt.status, tt.want, got, tt.ok)
		}
	}
}
