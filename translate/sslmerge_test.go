package translate

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/orderly-proxy/orderly/policy"
)

// MergeSSLDir is associative, so the walk may merge each walk's sections
// together first and then over what came before (mergedSSL), as Apache
// does, or one by one: the result is the same.
func TestMergeSSLDirAssociative(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	rules := []*policy.Rule{{ID: "r1"}, {ID: "r2"}, {ID: "r3"}}
	random := func() *SSLDir {
		if rng.IntN(5) == 0 {
			return nil
		}
		d := newSSLDir()
		r := rules[rng.IntN(len(rules))]
		if rng.IntN(3) == 0 {
			d.Required, d.RequiredRule = true, r
		}
		if rng.IntN(2) == 0 {
			d.Options = SSLOptions{Add: SSLOptionBits(rng.IntN(8)), Del: SSLOptionBits(rng.IntN(8)) << 3, Abs: rng.IntN(3) == 0}
			d.Options.Opts = d.Options.Add
			if d.Options.Abs {
				d.Options.Opts, d.Options.Add, d.Options.Del = SSLOptionBits(rng.IntN(64)), 0, 0
			}
			d.OptionsRule = r
		}
		if rng.IntN(2) == 0 {
			d.Verify, d.VerifyRule = SSLVerify(1+rng.IntN(3)), r
		}
		if rng.IntN(2) == 0 {
			d.Depth = rng.IntN(4)
		}
		if rng.IntN(3) == 0 {
			d.UserName, d.UserNameRule = "SSL_CLIENT_S_DN_CN", r
		}
		return d
	}
	for i := 0; i < 5000; i++ {
		a, b, c := random(), random(), random()
		x, y := MergeSSLDir(MergeSSLDir(a, b), c), MergeSSLDir(a, MergeSSLDir(b, c))
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("not associative:\na %+v\nb %+v\nc %+v\n(ab)c %+v\na(bc) %+v", a, b, c, x, y)
		}
	}
}
