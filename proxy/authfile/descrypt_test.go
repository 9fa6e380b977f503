package authfile

import (
	"crypto/des"
	"encoding/binary"
	"strings"
	"testing"
)

func TestDESCryptVectors(t *testing.T) {
	tests := []struct{ pw, salt, want string }{
		// Made with Debian's htpasswd -d and perl's crypt.
		{"secret", "Rt", "RtEniGnSHsCVI"},
		{"testtest", "es", "esDRYJnY4VaGM"},
		{"pw", "ab", "abzlUXK5ed5rs"},
		{"correct horse", "Jp", "JpkbXQC1JOgU2"},
		{"correct ", "Jp", "JpkbXQC1JOgU2"}, // only 8 bytes count
		{"", "MD", "MDR9XXkdRPXaI"},
		{"\x00secret", "MD", "MDR9XXkdRPXaI"}, // a NUL ends the password
	}
	for _, tt := range tests {
		if got := desCrypt(tt.pw, tt.salt[0], tt.salt[1]); string(got[:]) != tt.want {
			t.Errorf("desCrypt(%q, %q) = %q, want %q", tt.pw, tt.salt, got, tt.want)
		}
	}
}

// TestDESCryptUnsalted checks the DES of desCrypt against crypto/des: with
// the salt "..", which alters nothing, crypt(3) is DES encryption of a
// zero block 25 times over.
func TestDESCryptUnsalted(t *testing.T) {
	for _, pw := range []string{"", "a", "password", "\x7f\x01\x80\xff12345", "ABCDEFGHIJ"} {
		var key [8]byte
		for i := 0; i < len(pw) && i < 8; i++ {
			key[i] = pw[i] << 1
		}
		c, err := des.NewCipher(key[:])
		if err != nil {
			t.Fatal(err)
		}
		var block [8]byte
		for range 25 {
			c.Encrypt(block[:], block[:])
		}
		sum := binary.BigEndian.Uint64(block[:])
		want := []byte("..")
		for i := range 10 {
			want = append(want, cryptAlphabet[sum>>(58-6*i)&0x3f])
		}
		want = append(want, cryptAlphabet[sum<<2&0x3f])
		if got := desCrypt(pw, '.', '.'); string(got[:]) != string(want) {
			t.Errorf("desCrypt(%q, \"..\") = %q, crypto/des gives %q", pw, got, want)
		}
	}
}

func TestCryptValue(t *testing.T) {
	for i := 0; i < len(cryptAlphabet); i++ {
		if v, ok := cryptValue(cryptAlphabet[i]); !ok || v != uint32(i) {
			t.Errorf("cryptValue(%q) = %d, %v; want %d, true", cryptAlphabet[i], v, ok, i)
		}
	}
	for c := range 256 {
		if _, ok := cryptValue(byte(c)); ok != (strings.IndexByte(cryptAlphabet, byte(c)) >= 0) {
			t.Errorf("cryptValue(%q) ok = %v", byte(c), ok)
		}
	}
}
