package digest

import (
	"net/http"
	"strings"
	"testing"
)

const (
	vNonce = "AAAAAAAAAAA=0123456789012345678901234567890123456789"
	vResp  = "0123456789abcdef0123456789abcdef"
)

// valid is a Valid field; cases change it.
var valid = `Digest username="u", realm="r", nonce="` + vNonce + `", uri="/x", response="` + vResp + `"`

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   HeaderStatus
		check  map[Param]string // parameters and values (absent: "\x00")
	}{
		{"empty", "", NotDigest, nil},
		{"basic", "Basic dTpw", NotDigest, nil},
		{"leading space", " " + valid, NotDigest, nil},
		{"comma after scheme", "Digest," + valid[7:], NotDigest, nil},
		{"scheme only", "Digest", Invalid, nil},
		{"scheme and spaces", "Digest   ", Invalid, nil},
		{"valid", valid, Valid, map[Param]string{ParamUsername: "u", ParamRealm: "r", ParamURI: "/x", ParamQOP: "\x00"}},
		{"scheme case", "dIgEsT" + valid[6:], Valid, nil},
		{"tab after scheme", "Digest\t" + valid[7:], Valid, nil},
		{"key case", strings.Replace(valid, "username", "UserName", 1), Valid, map[Param]string{ParamUsername: "u"}},
		{"key folded only in ASCII", strings.Replace(valid, "username", "u\u017fername", 1), Invalid, map[Param]string{ParamUsername: "\x00"}},
		{"escapes", valid + `, cnonce="a\"b\\c\d"`, Valid, map[Param]string{ParamCNonce: `a"b\cd`}},
		{"token values", `Digest username=u, realm=r, nonce=` + vNonce + `, uri=/x, response=` + vResp + `, nc=00000001`, Valid,
			map[Param]string{ParamUsername: "u", ParamNC: "00000001"}},
		{"spaces around =", `Digest username = "u" ,realm= r,nonce ="` + vNonce + `",uri="/x",response="` + vResp + `"`, Valid,
			map[Param]string{ParamUsername: "u", ParamRealm: "r"}},
		{"bare key is empty", valid + `, opaque, qop`, Invalid, map[Param]string{ParamOpaque: "", ParamQOP: ""}},
		{"last duplicate wins", valid + `, username="v"`, Valid, map[Param]string{ParamUsername: "v"}},
		{"unknown parameters", valid + `, foo="x,y", bar=baz`, Valid, map[Param]string{ParamUsername: "u"}},
		{"junk after a value", `Digest username="u" junk, realm="r", nonce="` + vNonce + `", uri="/x", response="` + vResp + `"`, Valid,
			map[Param]string{ParamUsername: "u", ParamRealm: "r"}},
		{"no comma between values", `Digest username="u"realm="r", nonce="` + vNonce + `", uri="/x", response="` + vResp + `"`, Invalid,
			map[Param]string{ParamUsername: "u", ParamRealm: "\x00"}},
		{"unterminated quote", valid + `, cnonce="abc`, Valid, map[Param]string{ParamCNonce: "abc"}},
		{"trailing backslash in quote", valid + `, cnonce="abc\`, Valid, map[Param]string{ParamCNonce: `abc\`}},
		{"NUL ends the field", strings.Replace(valid, `username="u"`, "username=\"u\x00v\"", 1), Invalid, map[Param]string{ParamUsername: "u"}},
		{"empty username is present", strings.Replace(valid, `username="u"`, `username=""`, 1), Valid, map[Param]string{ParamUsername: ""}},
		{"no username", strings.Replace(valid, `username="u", `, "", 1), Invalid, nil},
		{"no realm", strings.Replace(valid, `realm="r", `, "", 1), Invalid, nil},
		{"no uri", strings.Replace(valid, `uri="/x", `, "", 1), Invalid, nil},
		{"short nonce", strings.Replace(valid, vNonce, vNonce[1:], 1), Invalid, nil},
		{"nonce without =", strings.Replace(valid, vNonce, "AAAAAAAAAAAA"+vNonce[12:], 1), Invalid, nil},
		{"short response", strings.Replace(valid, vResp, vResp[1:], 1), Invalid, nil},
		{"long response", strings.Replace(valid, vResp, vResp+"0", 1), Invalid, nil},
		{"non-hex response of 32", strings.Replace(valid, vResp, strings.Repeat("z", 32), 1), Valid, nil},
		{"qop needs nc", valid + `, qop=auth, cnonce="c"`, Invalid, nil},
		{"qop needs cnonce", valid + `, qop=auth, nc=00000001`, Invalid, nil},
		{"qop with both", valid + `, qop=auth, nc=00000001, cnonce="c"`, Valid, map[Param]string{ParamQOP: "auth"}},
		{"nc without qop", valid + `, nc=1`, Valid, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, st := Parse(tt.header)
			if st != tt.want {
				t.Fatalf("status %v, want %v (%+v)", st, tt.want, c)
			}
			for p, want := range tt.check {
				got, ok := c.Get(p)
				if want == "\x00" {
					if ok {
						t.Errorf("param %#x present: %q", p, got)
					}
				} else if !ok || got != want {
					t.Errorf("param %#x = %q, %v; want %q", p, got, ok, want)
				}
			}
		})
	}
}

func TestParseOpaque(t *testing.T) {
	for _, tt := range []struct {
		opaque string
		id     uint32
	}{
		{"1", 1}, {"a", 10}, {"0x1f", 31}, {"0X1F", 31}, {" 1", 1}, {"\t+1", 1},
		{"ffffffff", 1<<32 - 1}, {"100000000", 0}, {"ffffffffffffffffff", 0},
		{"-1", 0}, {"0", 0}, {"", 0}, {"1 ", 0}, {"zz", 0}, {"0x", 0}, {"1x", 0},
	} {
		c, st := Parse(valid + `, opaque="` + tt.opaque + `"`)
		if st != Valid || c.clientID != tt.id {
			t.Errorf("opaque %q: status %v id %d, want %d", tt.opaque, st, c.clientID, tt.id)
		}
	}
	// Only a Valid field has a client number.
	if c, _ := Parse(`Digest opaque="1"`); c.clientID != 0 || c.Opaque != "1" {
		t.Errorf("invalid field: %+v", c)
	}
}

func TestHeaderStatus(t *testing.T) {
	for _, tt := range []struct {
		s      HeaderStatus
		status int
		code   string
	}{
		{NoHeader, 401, ""}, {NotDigest, 401, "AH01781"}, {Invalid, 401, "AH01782"}, {Valid, 0, ""},
	} {
		if tt.s.HTTPStatus() != tt.status || tt.s.LogCode() != tt.code || tt.s.String() == "" {
			t.Errorf("%v: %d %q", tt.s, tt.s.HTTPStatus(), tt.s.LogCode())
		}
	}
}

func TestFieldValue(t *testing.T) {
	h := http.Header{}
	if _, ok := FieldValue(h); ok {
		t.Error("no field found")
	}
	h.Add("Authorization", "Digest a=1")
	h.Add("Authorization", "b=2")
	if v, ok := FieldValue(h); !ok || v != "Digest a=1, b=2" {
		t.Errorf("got %q %v", v, ok)
	}
}

// FuzzParse: Parse never panics; what it parses from a Digest field,
// encoded again, parses to the same parameters and status; and the status
// is what the parameters say it must be.
func FuzzParse(f *testing.F) {
	f.Add(valid)
	f.Add(valid + `, qop=auth, nc=00000001, cnonce="c", opaque="0x1f", algorithm=MD5`)
	f.Add(`Digest username="a\"b", realm=, nonce, uri="x`)
	f.Add("Digest ,,,=,= \"\\")
	f.Add("digest\tUSERNAME=u\x00realm=r")
	f.Add("Basic abc")
	f.Fuzz(func(t *testing.T, header string) {
		c, st := Parse(header)
		if c == nil {
			t.Fatal("nil credentials")
		}
		if st == NotDigest {
			if c.Present != 0 {
				t.Fatalf("not Digest but parameters: %+v", c)
			}
			return
		}
		for _, pn := range paramNames {
			if v, ok := c.Get(pn.p); ok && strings.IndexByte(v, 0) >= 0 {
				t.Fatalf("%s has a NUL", pn.name)
			}
		}
		wantValid := c.Has(ParamUsername) && c.Has(ParamRealm) && c.Has(ParamURI) &&
			c.Has(ParamNonce) && len(c.Nonce) == 52 && c.Nonce[11] == '=' &&
			c.Has(ParamResponse) && len(c.Response) == 32 &&
			(!c.Has(ParamQOP) || c.Has(ParamCNonce) && c.Has(ParamNC))
		if (st == Valid) != wantValid {
			t.Fatalf("status %v for %+v", st, c)
		}
		enc := c.Encode()
		c2, st2 := Parse(enc)
		c.Scheme, c2.Scheme = "", ""
		if st2 != st || *c2 != *c {
			t.Fatalf("re-encoded %q:\n%+v %v\nparsed %+v %v", enc, c, st, c2, st2)
		}
	})
}
