package digest

import "testing"

// TestRFCVectors checks the digest computations against the examples of
// RFC 2617 (3.5) and RFC 7616 (3.9.1, MD5), and the RFC 2069 form (2.4).
func TestRFCVectors(t *testing.T) {
	// RFC 2617 3.5
	ha1 := HA1("Mufasa", "testrealm@host.com", "Circle Of Life")
	if ha1 != "939e7578ed9e3c518a452acee763bce9" {
		t.Errorf("RFC 2617 HA1 %s", ha1)
	}
	if ha2 := HA2("GET", "/dir/index.html"); ha2 != "39aff3a2bab6126f332b942af96d3366" {
		t.Errorf("RFC 2617 HA2 %s", ha2)
	}
	got := ResponseDigest(ha1, "dcd98b7102dd2f0e8b11d0f600bfb0c093", "00000001", "0a4f113b", "auth", "GET", "/dir/index.html")
	if got != "6629fae49393a05397450978507c4ef1" {
		t.Errorf("RFC 2617 response %s", got)
	}
	// RFC 7616 3.9.1, MD5
	ha1 = HA1("Mufasa", "http-auth@example.org", "Circle of Life")
	got = ResponseDigest(ha1, "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "00000001",
		"f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", "auth", "GET", "/dir/index.html")
	if got != "8ca523f5e9506fed4657c9700eebdbec" {
		t.Errorf("RFC 7616 response %s", got)
	}
	// RFC 2069 2.4's example, as errata 749 corrects it: no qop.
	ha1 = HA1("Mufasa", "testrealm@host.com", "CircleOfLife")
	got = ResponseDigest(ha1, "dcd98b7102dd2f0e8b11d0f600bfb0c093", "", "", "", "GET", "/dir/index.html")
	if got != "1949323746fe6a43ef61f9606e7febea" {
		t.Errorf("RFC 2069 response %s", got)
	}
	// MD5-sess: H(A1) is MD5(MD5(user:realm:password):nonce:cnonce).
	// (No RFC gives an MD5-sess vector; TestCurl checks it against
	// curl's implementation.)
	sess := SessionHA1(HA1("Mufasa", "testrealm@host.com", "Circle Of Life"), "dcd98b7102dd2f0e8b11d0f600bfb0c093", "0a4f113b")
	if sess != md5Hex("939e7578ed9e3c518a452acee763bce9:dcd98b7102dd2f0e8b11d0f600bfb0c093:0a4f113b") {
		t.Errorf("SessionHA1 %s", sess)
	}
	// rspauth: A2 has an empty method.
	if r := rspauth("a", "n", "1", "c", "auth", "/u"); r != md5Hex("a:n:1:c:auth:"+md5Hex(":/u")) {
		t.Errorf("rspauth %s", r)
	}
}
