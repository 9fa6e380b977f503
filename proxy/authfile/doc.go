// Package authfile reads the password (AuthUserFile) and group
// (AuthGroupFile) files of Apache httpd 2.2 and 2.4, and their DBM
// counterparts (AuthDBMUserFile, AuthDBMGroupFile), and answers the
// questions that mod_authn_file, mod_authz_groupfile, mod_authn_dbm and
// mod_authz_dbm answer: is this the password of this user, and is this
// user in this group.
//
// Files are parsed the way httpd reads them: line by line as
// ap_cfg_getline does (surrounding white space removed, a backslash at the
// end of a line joins it to the next), lines starting with '#' and blank
// lines skipped, and fields split as ap_getword and ap_getword_conf split
// them.
//
// # Password files
//
// A password file holds "user:hash" lines. Like mod_authn_file, Check uses
// the first line that names the user; later lines for the same user are
// ignored (and reported), and a first line whose hash can't be used makes
// every password for that user a mismatch rather than letting a later line
// decide. User names are case-sensitive.
//
// The hash formats accepted are those httpd accepts on Unix (through
// apr_password_validate and crypt(3)):
//
//   - $apr1$: Apache's MD5 (htpasswd -m, the default from 2.2.18 on)
//   - $2y$, $2a$, $2b$: bcrypt (htpasswd -B); a $2a$ hash that the
//     crypt_blowfish of httpd made of one of the rare passwords that trip
//     its countermeasure against an old bug (such as "\xff\xff\xa3")
//     never matches
//   - {SHA}: unsalted SHA-1 (htpasswd -s)
//   - 13 characters of ./0-9A-Za-z: traditional DES crypt (htpasswd -d,
//     the Unix default before 2.2.18); only the first 8 bytes of a password
//     count, and of each byte only its low 7 bits
//   - $1$, $5$, $6$: the MD5, SHA-256 and SHA-512 crypt of glibc, which
//     htpasswd can't write but httpd on Linux verifies through crypt(3)
//
// Plaintext passwords, which httpd accepts only on Windows and NetWare,
// never match: a hash in no known format, or a malformed one, is reported
// as an error for its line and counted (see Users.Unsupported). So is
// {SSHA}, which httpd doesn't accept either, and so are the schemes that
// only some crypt(3) libraries know, such as the yescrypt ($y$) and bcrypt
// $2x$ of libxcrypt.
//
// # Group files
//
// A group file holds "group: user1 user2 ..." lines. A group may be spread
// over several lines. Members are words as ap_getword_conf reads them, so
// a member may be quoted ("John Smith"). Group names are compared without
// regard to ASCII case, as httpd looks them up in an apr_table_t; user
// names are case-sensitive.
//
// # DBM files
//
// mod_authn_dbm (AuthDBMUserFile) and mod_authz_dbm (AuthDBMGroupFile)
// keep users and groups in a DBM database, keyed by user name; the value
// is "hash", "hash:groups" or "hash:groups:comment", or "groups" alone in
// a group-only file. Store.DBMUsers and Store.DBMGroups read them as
// those modules do (see their documentation for the rules of the value).
// For Digest authentication (AuthDigestProvider dbm) Store.DBMHashes reads
// the records keyed "user:realm", whose value is the H(A1), as
// mod_authn_dbm's get_dbm_realm_hash does.
//
// Only SDBM, the format built into apr-util, is read, by a reader of this
// package (SDBM). Berkeley DB, GDBM and NDBM, which apr-util reads through
// C libraries, are refused with an error that says what the file is and
// gives the command that converts it to SDBM. AuthDBMType default is
// Berkeley DB on Debian (Store.DefaultDBMType changes that).
//
// Where httpd finds no user on a damaged page of an SDBM file, this
// package refuses the whole file (ErrSDBMMalformed): httpd answers 401
// for the users of that page, orderly 500 for every user.
//
// # Reloading
//
// httpd reads these files on every request, so that edits take effect at
// once. A Store gives the same effect at a fraction of the cost: it keeps
// the parsed files and checks each one for changes at most once per
// second.
package authfile
