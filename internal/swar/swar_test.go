package swar

import (
	"math/rand/v2"
	"testing"
)

// TestZeroAndHasLess holds Zero and HasLess to a byte at a time: every
// byte value at every place among bytes of every value that matters (zero,
// the bounds, the high bit), and random words.
func TestZeroAndHasLess(t *testing.T) {
	check := func(x uint64) {
		t.Helper()
		var zero uint64
		for k := range 8 {
			if byte(x>>(8*k)) == 0 {
				zero |= 0x80 << (8 * k)
			}
		}
		if got := Zero(x); got != zero {
			t.Fatalf("Zero(%#016x) = %#016x, want %#016x", x, got, zero)
		}
		for _, c := range []byte{1, ' ', '0', 0x7f, 0x80} {
			want := false
			for k := range 8 {
				want = want || byte(x>>(8*k)) < c
			}
			if got := HasLess(x, c); got != want {
				t.Fatalf("HasLess(%#016x, %#x) = %v, want %v", x, c, got, want)
			}
		}
	}
	for _, bg := range []byte{0, 1, ' ', 0x7f, 0x80, 0xff} {
		for k := range 8 {
			for v := range 256 {
				x := uint64(bg) * Ones
				x = x&^(0xff<<(8*k)) | uint64(v)<<(8*k)
				check(x)
			}
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 100000 {
		check(rng.Uint64())
	}
}

func TestLoad(t *testing.T) {
	s := "\x01\x02\x03\x04\x05\x06\x07\x08\x09"
	if got := Load(s, 1); got != 0x0908070605040302 {
		t.Errorf("Load = %#x", got)
	}
	if got := Load([]byte(s), 0); got != 0x0807060504030201 {
		t.Errorf("Load([]byte) = %#x", got)
	}
}
