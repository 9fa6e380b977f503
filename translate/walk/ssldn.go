package walk

import (
	"encoding/asn1"
	"encoding/hex"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Distinguished names as OpenSSL writes them for mod_ssl: the one-line
// form of X509_NAME_oneline ("/C=DE/O=Example/CN=alice"), which
// FakeBasicAuth puts in the Authorization header and 2.2's
// SSL_CLIENT_S_DN is, and the RFC 2253 form of X509_NAME_print_ex with
// XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB ("CN=alice,O=Example,C=DE"),
// 2.4's SSL_CLIENT_S_DN (OpenSSL crypto/x509/x509_obj.c,
// crypto/asn1/a_strex.c). TestDNFormats holds them to the openssl
// command's output.

// nameEntry is one attribute of a DN, with its string as encoded.
type nameEntry struct {
	oid string
	tag int // the value's universal tag (12 UTF8String, 19 PrintableString, ...)
	raw []byte
	der []byte // the whole value, for dumps
	set int    // the index of its RDN: entries of one multi-valued RDN share it
}

type atv struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

type atvSET []atv

type rdnSequence []atvSET

// parseName reads a DER Name (a certificate's RawSubject or RawIssuer).
func parseName(der []byte) ([]nameEntry, bool) {
	var seq rdnSequence
	rest, err := asn1.Unmarshal(der, &seq)
	if err != nil || len(rest) > 0 {
		return nil, false
	}
	var out []nameEntry
	for i, set := range seq {
		for _, a := range set {
			tag := a.Value.Tag
			if a.Value.Class != asn1.ClassUniversal {
				tag = -1
			}
			out = append(out, nameEntry{oid: a.Type.String(), tag: tag, raw: a.Value.Bytes, der: a.Value.FullBytes, set: i})
		}
	}
	return out, true
}

var (
	oidOnce  sync.Once
	oidShort map[string]string
)

// shortName is OBJ_nid2sn of an OID, or "" when OpenSSL does not know it.
func shortName(oid string) string {
	oidOnce.Do(func() {
		oidShort = map[string]string{}
		for _, l := range strings.Split(oidNames, "\n") {
			if o, sn, ok := strings.Cut(l, " "); ok {
				oidShort[o] = sn
			}
		}
	})
	return oidShort[oid]
}

const upperHex = "0123456789ABCDEF"

// dnOneline is X509_NAME_oneline. escape is OpenSSL 3's: "/" and "+" in
// a value are escaped with a backslash, and the entries of a
// multi-valued RDN are joined with "+"; OpenSSL before 3.0 (all Apache
// 2.2 could link) did neither.
func dnOneline(der []byte, escape bool) (string, bool) {
	es, ok := parseName(der)
	if !ok {
		return "", false
	}
	var b strings.Builder
	prev := -1
	for _, e := range es {
		s := shortName(e.oid)
		if s == "" {
			s = e.oid
		}
		if escape && prev == e.set {
			b.WriteByte('+')
		} else {
			b.WriteByte('/')
		}
		prev = e.set
		b.WriteString(s)
		b.WriteByte('=')
		q := e.raw
		doit := [4]bool{true, true, true, true}
		if e.tag == 27 && len(q)%4 == 0 { // V_ASN1_GENERALSTRING
			doit = [4]bool{}
			for j, c := range q {
				if c != 0 {
					doit[j&3] = true
				}
			}
			if doit[0] || doit[1] || doit[2] {
				doit = [4]bool{true, true, true, true}
			} else {
				doit = [4]bool{false, false, false, true}
			}
		}
		for j, c := range q {
			if !doit[j&3] {
				continue
			}
			switch {
			case c < ' ' || c > '~':
				b.WriteString(`\x`)
				b.WriteByte(upperHex[c>>4])
				b.WriteByte(upperHex[c&15])
			case escape && (c == '/' || c == '+'):
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
	}
	return b.String(), true
}

// The flags of do_esc_char that mod_ssl uses.
const (
	esc2253 = 1 << iota // ASN1_STRFLGS_ESC_2253 (and its first/last characters)
	escCtrl             // ASN1_STRFLGS_ESC_CTRL
)

// charWidth is tag2nbyte: how many bytes make a character of a string
// type; -1 for a type OpenSSL dumps, 0 for UTF8String.
func charWidth(tag int) int {
	switch tag {
	case 12:
		return 0
	case 18, 19, 20, 22, 23, 24, 26:
		return 1
	case 28:
		return 4
	case 30:
		return 2
	}
	return -1
}

// dnRFC2253 is X509_NAME_print_ex(XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB):
// the RDNs last first, separated by ",", the entries of a multi-valued
// RDN by "+", short names (dotted for an OID OpenSSL does not know, whose
// value is dumped as "#" and the hex of its DER), RFC 2253's escapes,
// control characters as \XX, other bytes as they are.
func dnRFC2253(der []byte) (string, bool) {
	es, ok := parseName(der)
	if !ok {
		return "", false
	}
	var b strings.Builder
	prev := -1
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		if prev != -1 {
			if prev == e.set {
				b.WriteByte('+')
			} else {
				b.WriteByte(',')
			}
		}
		prev = e.set
		sn := shortName(e.oid)
		if sn == "" {
			b.WriteString(e.oid)
			b.WriteByte('=')
			dumpDER(&b, e.der)
			continue
		}
		b.WriteString(sn)
		b.WriteByte('=')
		if !printString(&b, e, esc2253|escCtrl, true) {
			return "", false
		}
	}
	return b.String(), true
}

func dumpDER(b *strings.Builder, der []byte) {
	b.WriteByte('#')
	b.WriteString(strings.ToUpper(hex.EncodeToString(der)))
}

// printString is do_print_ex of one value with ASN1_STRFLGS_UTF8_CONVERT
// and the escapes of flags; dumpUnknown dumps a type OpenSSL cannot
// print (ASN1_STRFLGS_DUMP_UNKNOWN|DUMP_DER), else its bytes are printed
// one by one.
func printString(b *strings.Builder, e nameEntry, flags int, dumpUnknown bool) bool {
	w := charWidth(e.tag)
	if w < 0 {
		if dumpUnknown {
			dumpDER(b, e.der)
			return true
		}
		w = 1
	}
	convert := w != 0 // a UTF8String is passed through byte by byte
	if w == 0 {
		w = 1
	}
	p := e.raw
	if w == 4 && len(p)%4 != 0 || w == 2 && len(p)%2 != 0 {
		return false
	}
	for i := 0; i < len(p); {
		first := i == 0
		var c rune
		switch w {
		case 4:
			c = rune(uint32(p[i])<<24 | uint32(p[i+1])<<16 | uint32(p[i+2])<<8 | uint32(p[i+3]))
			i += 4
		case 2:
			c = rune(uint16(p[i])<<8 | uint16(p[i+1]))
			i += 2
		default:
			c = rune(p[i])
			i++
		}
		last := i == len(p)
		if !convert {
			escChar(b, byte(c), flags, first, last)
			continue
		}
		var buf [6]byte
		n := putUTF8(buf[:], c)
		for j := 0; j < n; j++ {
			escChar(b, buf[j], flags, first, last)
		}
	}
	return true
}

// putUTF8 is OpenSSL's UTF8_putc, which writes surrogates and values up
// to 0x7FFFFFFF as they are.
func putUTF8(buf []byte, c rune) int {
	if c >= 0 && c < 0x110000 && !utf16.IsSurrogate(c) {
		return utf8.EncodeRune(buf, c)
	}
	u := uint32(c)
	switch {
	case u < 0x10000:
		buf[0], buf[1], buf[2] = byte(0xe0|u>>12), byte(0x80|u>>6&0x3f), byte(0x80|u&0x3f)
		return 3
	case u < 0x200000:
		buf[0], buf[1], buf[2], buf[3] = byte(0xf0|u>>18), byte(0x80|u>>12&0x3f), byte(0x80|u>>6&0x3f), byte(0x80|u&0x3f)
		return 4
	case u < 0x4000000:
		buf[0], buf[1], buf[2], buf[3], buf[4] = byte(0xf8|u>>24), byte(0x80|u>>18&0x3f), byte(0x80|u>>12&0x3f), byte(0x80|u>>6&0x3f), byte(0x80|u&0x3f)
		return 5
	}
	buf[0], buf[1], buf[2], buf[3], buf[4], buf[5] = byte(0xfc|u>>30), byte(0x80|u>>24&0x3f), byte(0x80|u>>18&0x3f), byte(0x80|u>>12&0x3f), byte(0x80|u>>6&0x3f), byte(0x80|u&0x3f)
	return 6
}

// escChar is do_esc_char for one byte.
func escChar(b *strings.Builder, c byte, flags int, first, last bool) {
	if c > 0x7f {
		b.WriteByte(c) // ASN1_STRFLGS_ESC_MSB is off
		return
	}
	if flags&esc2253 != 0 {
		bs := strings.IndexByte(`,+"\<>;`, c) >= 0 ||
			first && (c == ' ' || c == '#') || last && c == ' '
		if bs {
			b.WriteByte('\\')
			b.WriteByte(c)
			return
		}
	}
	if flags&escCtrl != 0 && (c < ' ' || c == 0x7f) {
		b.WriteByte('\\')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
		return
	}
	if c == '\\' && flags != 0 {
		b.WriteString(`\\`)
		return
	}
	b.WriteByte(c)
}

// dnAttr is SSL_CLIENT_S_DN_<attr>[_n]: the n-th entry with the OID, as
// 2.4 prints it (ASN1_STRFLGS_ESC_CTRL|UTF8_CONVERT) or as 2.2 copies
// its bytes.
func dnAttr(der []byte, oid string, n int, legacy22 bool) (string, bool) {
	es, ok := parseName(der)
	if !ok {
		return "", false
	}
	for _, e := range es {
		if e.oid != oid {
			continue
		}
		if n > 0 {
			n--
			continue
		}
		if legacy22 {
			return string(e.raw), true
		}
		var b strings.Builder
		if !printString(&b, e, escCtrl, false) {
			return "", false
		}
		return b.String(), true
	}
	return "", true
}
