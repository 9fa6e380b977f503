package authfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func BenchmarkCheck(b *testing.B) {
	for _, scheme := range []string{"apr1", "md5crypt", "sha1", "bcrypt", "sha256crypt", "sha512crypt", "des"} {
		u, errs := ParseUsers("bench", []byte("bob:"+secretHashes[scheme]+"\n"))
		if len(errs) != 0 {
			b.Fatal(errs)
		}
		b.Run(scheme, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if u.Check("bob", "secret") != OK {
					b.Fatal("not OK")
				}
			}
		})
	}
	u, _ := ParseUsers("bench", []byte("bob:plaintext\n"))
	b.Run("unsupported", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if u.Check("bob", "plaintext") != Mismatch {
				b.Fatal("not Mismatch")
			}
		}
	})
	b.Run("notfound", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if u.Check("alice", "secret") != NotFound {
				b.Fatal("not NotFound")
			}
		}
	})
}

// bigUsers returns a password file of n users.
func bigUsers(n int) []byte {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "user%d:%s\n", i, secretHashes["apr1"])
	}
	return []byte(sb.String())
}

func BenchmarkParseUsers(b *testing.B) {
	data := bigUsers(1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		ParseUsers("bench", data)
	}
}

func BenchmarkStoreUsers(b *testing.B) {
	path := filepath.Join(b.TempDir(), "users")
	if err := os.WriteFile(path, bigUsers(1000), 0o644); err != nil {
		b.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		b.Fatal(err)
	}
	s := NewStore()
	if _, err := s.Users(path); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Users(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}
