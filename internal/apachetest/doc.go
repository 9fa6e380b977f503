// Package apachetest runs real Apache httpd 2.4 instances for tests and
// replays the requests of the differential corpus against them.
//
// The package has four parts:
//
//   - [Require] locates the Debian Apache installation (apache2, its module
//     directory and htpasswd) and skips the test when it is missing, or fails
//     it when the environment variable CI is "true".
//   - [Start] runs a private Apache instance on a free port of 127.0.0.1 as a
//     child process of the test, generated from [Options]; [Server.Reload]
//     rewrites its configuration and restarts it gracefully.
//   - [Do] sends one raw HTTP/1.1 request, so that the request target reaches
//     the server byte for byte, and [Response.Class] reduces the answer to the
//     class that the differential test compares.
//   - [LoadCase] and [LoadCorpus] read the txtar cases of testdata/corpus
//     (see the README there), and [Case.Materialize] writes a case's files
//     to disk; [Case.WithoutAccess] is the copy of a case the
//     differential's backend serves, its access rules and request limits
//     taken out ([StripAccess]).
//
// Everything is Linux- and Debian-specific: the package is test
// infrastructure, not product code. No test sends traffic beyond 127.0.0.1.
package apachetest
