package proxy

import "github.com/orderly-proxy/orderly/proxy/authfile"

// Identity checks Basic credentials against the files a configuration
// names: authfile's, which the translate packages' tests use too without
// importing the proxy.
type Identity = authfile.Identity

// NewIdentity returns an Identity with an empty file cache.
func NewIdentity() *Identity { return authfile.NewIdentity() }
