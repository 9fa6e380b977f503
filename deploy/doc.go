// Package deploy holds orderly's deployment material: the example
// configuration, the Prometheus recording and alerting rules and their
// promtool unit tests, the Grafana dashboard and the Argo Rollouts
// analysis template. It has no Go API; its test checks that the material
// is valid and that every orderly metric it names is one orderly exports.
package deploy
