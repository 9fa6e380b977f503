// Package kubernetes holds orderly's Kubernetes manifests (the *.yaml files
// beside this one, a Kustomize base: kustomization.yaml lists them and
// names the image) and the test that checks them: every document decodes
// strictly into its Kubernetes API type (unknown fields are errors), the
// base renders with Kustomize's Go API into the same objects with the
// image set, the objects agree with each other, with the orderly.hcl in
// the ConfigMap and with the backend Service they assume
// (testdata/httpd-service.yaml: the NetworkPolicy), and that configuration
// loads in the orderly binary with the files the Deployment mounts.
//
// It is a Go module of its own so that k8s.io/api, Kustomize and the
// Prometheus Operator's types stay out of the server's go.mod. It has no Go
// API and imports nothing of orderly's; its test builds ./cmd/orderly from
// the repository root.
package kubernetes
