package proxy

import (
	"crypto/sha1"
	"encoding/base64"
)

func sha1b64(s string) string {
	sum := sha1.Sum([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}
