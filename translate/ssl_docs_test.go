package translate

// The notes of docs/directives.md on mod_ssl's directives (ssl.go).
func init() {
	for name, note := range map[string]string{
		"SSLUserName":          "evaluated for the client certificate's SSL_CLIENT_S_DN, SSL_CLIENT_I_DN and their attributes (_CN, _O, ...), SSL_CLIENT_M_SERIAL, SSL_CLIENT_M_VERSION, SSL_CLIENT_VERIFY and (2.4) SSL_CLIENT_SAN_Email_n/DNS_n; other variables are refused",
		"SSLEngine":            "selects the virtual hosts of TLS requests; optional (2.4: RFC 2817 upgrades) is refused",
		"SSLCACertificateFile": "the server's CA list, read through path_map; 2.4 refuses it in a directory, as Apache does; 2.2's in a directory sets the server's",
		"SSLCACertificatePath": "the server's CA list, read through path_map; 2.4 refuses it in a directory, as Apache does; 2.2's in a directory sets the server's",
		"SSLVerifyClient":      "server level: asked at orderly's TLS handshake as Apache asks; directory: the certificate of the handshake decides where Apache renegotiates (403 where Apache breaks the connection)",
		"SSLOptions":           "FakeBasicAuth and StrictRequire evaluated, merged as mod_ssl merges them; StdEnvVars, ExportCertData, OptRenegotiate and LegacyDNStringFormat do not bear on access",
		"SSLRequire":           "its expression language (2.2's ssl_expr, 2.4's ap_expr in SSL compatibility mode) is not evaluated",
	} {
		docNotes[name] = note
	}
}
