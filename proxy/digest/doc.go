// Package digest is HTTP Digest authentication (RFC 2617) as Apache
// httpd's mod_auth_digest does it, so that a client cannot tell orderly
// from Apache: the same challenges, the same statuses, the same nonce
// handling, the same log codes.
//
// It follows mod_auth_digest.c of the Apache 2.4.71 that Debian installs:
// the rewrite of the module that followed 2.4.62, which keeps 2.4.62's
// AuthDigestEnableQueryStringHack and differs from it in ways a client
// sees: RFC 2069 responses (no qop) are refused (AH10560);
// AuthDigestQop accepts only auth and AuthDigestAlgorithm only MD5, so
// every challenge says algorithm=MD5 and qop="auth"; the realm is the
// AuthName quoted (ap_auth_name), for the comparison, the nonce and the
// password lookup alike; the nonce-count and one-time nonces are checked
// against what the client last used, and only for fully verified
// requests. The oracle tests (apache_test.go) hold this package to the
// installed binary. The functions cited in comments are that file's
// (parse_digest_header, note_digest_auth_failure, check_nonce,
// check_and_record_nonce, client_update_nonce, add_auth_info...), with
// their 2.4.62 names where they were renamed (get_digest_rec for
// parse_digest_header). The password file is read as mod_authn_file's
// get_realm_hash reads it, and URIs are parsed as apr-util 1.6's
// apr_uri_parse parses them.
//
// What Apache 2.4 does not do, this package does not do either:
//
//   - MD5-sess: AuthDigestAlgorithm MD5-sess is a configuration error,
//     and a client's algorithm=MD5-sess is refused (401, AH01789).
//     SessionHA1 computes it for clients and tests only. (Apache 2.2
//     accepted MD5-sess, with a warning that it was incomplete.)
//   - auth-int: AuthDigestQop auth-int is a configuration error
//     (2.4.62: "not implemented"; 2.4.71: "only 'auth' is supported"),
//     and a client's qop=auth-int is refused (AH10560). (2.2 accepted it
//     with a warning that it only worked for requests without a body.)
//   - AuthDigestNcCheck: Off by default, and then a captured request can
//     be replayed while its nonce lives. On: see Server.
//
// Use: one Server per process (the secret, the client numbers and the
// client table are shared by all scopes, as Apache's shared memory is);
// one Config per scope (see Config for how Apache scopes the digest
// directives); for each request to a scope with AuthType Digest,
// Server.Authenticate with the scope's providers as a Lookup
// (HTDigestFile for AuthUserFile, Providers for a list). A granted
// request whose authorization then fails gets Server.Challenge.
package digest
