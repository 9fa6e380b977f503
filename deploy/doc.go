// Package deploy holds orderly's deployment material: the example
// configuration, the Prometheus recording and alerting rules and their
// promtool unit tests, the Grafana dashboard, the Argo Rollouts analysis
// template, the compose file (orderly, Apache httpd 2.4, Prometheus) and
// the systemd unit. It has no Go API. Its test checks that the material is
// valid and that every orderly metric it names is one orderly exports, and
// builds the binary as the repository's Dockerfile does to check what the
// image would hold. The Kubernetes manifests in kubernetes/ are a Go
// module of their own, with their own test.
package deploy
