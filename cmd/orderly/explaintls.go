package main

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"

	"github.com/orderly-proxy/orderly/translate/walk"
)

// explainTLS is the TLS of a request explain decides: over TLS or not,
// with the client certificate chain of the PEM file certFile ("" for
// none), as orderly's own listener would have it before verification.
func explainTLS(over bool, certFile string) (walk.TLSInfo, error) {
	t := walk.TLSInfo{On: over || certFile != ""}
	if certFile == "" {
		return t, nil
	}
	data, err := os.ReadFile(certFile)
	if err != nil {
		return t, err
	}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return t, fmt.Errorf("%s: %v", certFile, err)
		}
		t.Chain = append(t.Chain, c)
	}
	if len(t.Chain) == 0 {
		return t, fmt.Errorf("%s holds no PEM certificate", certFile)
	}
	return t, nil
}
