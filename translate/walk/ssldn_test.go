package walk

import (
	"bytes"
	"encoding/asn1"
	"strings"
	"testing"
)

// utf8Classic is UTF-8 as RFC 2279 defined it (up to six bytes, any
// 31-bit value, surrogates included), which OpenSSL's UTF8_putc writes.
func utf8Classic(u uint32) []byte {
	switch {
	case u < 0x80:
		return []byte{byte(u)}
	case u < 0x800:
		return []byte{0xc0 | byte(u>>6), 0x80 | byte(u&0x3f)}
	}
	n := 3
	for _, lim := range []uint32{0x10000, 0x200000, 0x4000000, 0x80000000} {
		if u < lim {
			break
		}
		n++
	}
	out := make([]byte, n)
	for i := n - 1; i > 0; i-- {
		out[i] = 0x80 | byte(u&0x3f)
		u >>= 6
	}
	out[0] = byte(0xff<<(8-n)) | byte(u)
	return out
}

func TestPutUTF8(t *testing.T) {
	for _, c := range []rune{0, 0x41, 0x7ff, 0x800, 0xd7ff, 0xd800, 0xdfff, 0xe000, 0xffff, 0x10000, 0x10ffff, 0x110000,
		0x1fffff, 0x200000, 0x3ffffff, 0x4000000, 0x7fffffff} {
		var buf [6]byte
		n := putUTF8(buf[:], c)
		if want := utf8Classic(uint32(c)); !bytes.Equal(buf[:n], want) {
			t.Errorf("putUTF8(%#x) = % x, want % x", c, buf[:n], want)
		}
	}
}

// escChar is OpenSSL's do_esc_char: under ESC_2253 the specials, a
// leading space or "#" and a trailing space get a backslash; under
// ESC_CTRL control bytes and DEL are \XX; a backslash is doubled under
// any flag; bytes above 0x7F pass (ESC_MSB is off).
func TestEscChar(t *testing.T) {
	for _, tt := range []struct {
		c           byte
		flags       int
		first, last bool
		want        string
	}{
		{'a', esc2253 | escCtrl, false, false, "a"},
		{',', esc2253, false, false, `\,`},
		{'+', esc2253, false, false, `\+`},
		{'"', esc2253, false, false, `\"`},
		{'\\', esc2253, false, false, `\\`},
		{'<', esc2253, false, false, `\<`},
		{'>', esc2253, false, false, `\>`},
		{';', esc2253, false, false, `\;`},
		{',', escCtrl, false, false, ","},
		{' ', esc2253, true, false, `\ `},
		{' ', esc2253, false, true, `\ `},
		{' ', esc2253, false, false, " "},
		{'#', esc2253, true, false, `\#`},
		{'#', esc2253, false, true, "#"},
		{0x1f, escCtrl, false, false, `\1F`},
		{0x00, escCtrl, false, false, `\00`},
		{0x7f, escCtrl, false, false, `\7F`},
		{0x20, escCtrl, false, false, " "},
		{0x7e, escCtrl, false, false, "~"},
		{0x1f, esc2253, false, false, "\x1f"},
		{0x80, esc2253 | escCtrl, false, false, "\x80"},
		{0xff, escCtrl, true, true, "\xff"},
		{'\\', escCtrl, false, false, `\\`},
		{'\\', 0, false, false, `\`},
	} {
		var b strings.Builder
		escChar(&b, tt.c, tt.flags, tt.first, tt.last)
		if b.String() != tt.want {
			t.Errorf("escChar(%q, %d, %v, %v) = %q, want %q", tt.c, tt.flags, tt.first, tt.last, b.String(), tt.want)
		}
	}
}

// printString reads the characters of a string type by its width (1, 2
// or 4 bytes, UTF-8 as bytes), converts them to UTF-8 and escapes each
// byte; a BMPString or UniversalString of a wrong length is refused, and
// a type OpenSSL cannot print is dumped or printed byte by byte.
func TestPrintString(t *testing.T) {
	for _, tt := range []struct {
		tag  int
		raw  string
		dump bool
		want string
		ok   bool
	}{
		{12, "a\xc3\xa4 ", false, "a\xc3\xa4 ", true},
		{19, "ab", false, "ab", true},
		{30, "\x00a\x00\xe4", false, "a\xc3\xa4", true},
		{30, "\x00a\x00", false, "", false},
		{28, "\x00\x00\x00a\x00\x01\xf6\x00", false, "a\xf0\x9f\x98\x80", true},
		{28, "\x00\x00\x00a\x00", false, "", false},
		{4, "\x01\x02", true, "#0402" + "0102", true},
		{4, "ab", false, "ab", true},
		{20, "\xe4", false, "\xc3\xa4", true},
	} {
		der := append([]byte{byte(tt.tag), byte(len(tt.raw))}, tt.raw...)
		var b strings.Builder
		ok := printString(&b, nameEntry{tag: tt.tag, raw: []byte(tt.raw), der: der}, escCtrl, tt.dump)
		if ok != tt.ok || ok && b.String() != tt.want {
			t.Errorf("printString(tag %d, %q, dump %v) = %q, %v; want %q, %v", tt.tag, tt.raw, tt.dump, b.String(), ok, tt.want, tt.ok)
		}
	}
}

// dnOneline's value bytes as X509_NAME_oneline writes them: a
// GeneralString whose length is a multiple of 4 and whose bytes are zero
// but every fourth is printed as those, any other byte below " " or
// above "~" as \xXX; OpenSSL 3 escapes "/" and "+" and joins the entries
// of a multi-valued RDN with "+"; an OID it does not know is dotted.
func TestDNOnelineBytes(t *testing.T) {
	cn := asn1.ObjectIdentifier{2, 5, 4, 3}
	ou := asn1.ObjectIdentifier{2, 5, 4, 11}
	val := func(tag int, s string) asn1.RawValue {
		return asn1.RawValue{Class: asn1.ClassUniversal, Tag: tag, Bytes: []byte(s)}
	}
	name := func(sets ...atvSET) []byte {
		der, err := asn1.Marshal(rdnSequence(sets))
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	for _, tt := range []struct {
		der    []byte
		escape bool
		want   string
	}{
		{name(atvSET{{cn, val(27, "\x00\x00\x00a\x00\x00\x00b")}}), true, "/CN=ab"},
		{name(atvSET{{cn, val(27, "\x00\x00\x01a")}}), true, `/CN=\x00\x00\x01a`},
		{name(atvSET{{cn, val(27, "\x01\x00\x00a")}}), true, `/CN=\x01\x00\x00a`},
		{name(atvSET{{cn, val(27, "\x00\x01\x00a")}}), true, `/CN=\x00\x01\x00a`},
		{name(atvSET{{cn, val(27, "\x00\x00a")}}), true, `/CN=\x00\x00a`},
		{name(atvSET{{cn, val(12, "\x00\x00\x00a")}}), true, `/CN=\x00\x00\x00a`},
		{name(atvSET{{cn, val(12, "~\x7f \x1f!")}}), true, `/CN=~\x7F \x1F!`},
		{name(atvSET{{cn, val(12, "a/b+c")}}), true, `/CN=a\/b\+c`},
		{name(atvSET{{cn, val(12, "a/b+c")}}), false, `/CN=a/b+c`},
		{name(atvSET{{cn, val(12, "x")}, {ou, val(12, "y")}}, atvSET{{cn, val(12, "z")}}), true, "/CN=x+OU=y/CN=z"},
		{name(atvSET{{cn, val(12, "x")}, {ou, val(12, "y")}}, atvSET{{cn, val(12, "z")}}), false, "/CN=x/OU=y/CN=z"},
		{name(atvSET{{asn1.ObjectIdentifier{1, 2, 3, 4}, val(12, "v")}}), true, "/1.2.3.4=v"},
	} {
		if got, ok := dnOneline(tt.der, tt.escape); !ok || got != tt.want {
			t.Errorf("dnOneline(% x, %v) = %q, %v; want %q", tt.der, tt.escape, got, ok, tt.want)
		}
	}
	if _, ok := dnOneline(append(name(atvSET{{cn, val(12, "x")}}), 0), true); ok {
		t.Errorf("dnOneline accepted trailing bytes")
	}
	// RFC 2253: the RDNs last first, "+" within one; a value of a
	// non-universal tag is dumped.
	der := name(atvSET{{cn, val(12, "x")}, {ou, val(12, "y")}}, atvSET{{cn, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, Bytes: []byte("z")}}})
	if got, ok := dnRFC2253(der); !ok || got != "CN=#80017A,OU=y+CN=x" {
		t.Errorf("dnRFC2253 = %q, %v", got, ok)
	}
	// dnAttr: the n-th value of the attribute, "" past the last.
	for n, want := range []string{"x", "z", ""} {
		if got, ok := dnAttr(name(atvSET{{cn, val(12, "x")}, {ou, val(12, "y")}}, atvSET{{cn, val(12, "z")}}), "2.5.4.3", n, false); !ok || got != want {
			t.Errorf("dnAttr(CN, %d) = %q, %v; want %q", n, got, ok, want)
		}
	}
}
