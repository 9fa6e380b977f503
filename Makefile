# orderly: make build | make test | make demo
SHELL := /bin/bash
GO    ?= go
export PATH := $(PATH):/usr/local/go/bin:/usr/sbin
# The version make release gives (scripts/release.sh version).
VERSION ?= $(shell scripts/release.sh version 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 10s
# CI=true: a real part (Apache, Pebble, Prometheus...) that cannot be had
# fails the run instead of skipping its tests; `make test CI=false` on a
# machine that cannot install them runs what it can.
CI ?= true
export CI

.PHONY: all build release deps test fuzz demo demo-cutover bench bench-peers bench-translate soak mutate clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/orderly ./cmd/orderly

# release: in dist/, static linux/amd64 and linux/arm64 binaries, their
# CycloneDX SBOMs, .deb and .rpm packages and SHA256SUMS
# (scripts/release.sh, docs/install.md). The version is git describe
# --tags's, or 0.0.0-dev+<commit> without a tag; make release
# VERSION=v1.2.3 sets it.
release:
	@GO=$(GO) scripts/release.sh

deps:
	@scripts/deps.sh

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

# test runs every suite against the real parts (Apache httpd 2.4 from
# Debian), printing how long each took.
test: deps
	@GO=$(GO) FUZZTIME=$(FUZZTIME) MUTATE_PKGS="$(MUTATE_PKGS)" MUTATE_BUDGET=$(MUTATE_BUDGET) scripts/test.sh

# fuzz runs every fuzz target for FUZZTIME each (FUZZ=regexp: only those
# it matches), e.g. FUZZTIME=10m make fuzz.
fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/test.sh fuzz

demo: deps build
	@scripts/demo.sh

demo-cutover: deps build
	@scripts/demo-cutover.sh

clean:
	rm -rf bin dist

# bench: the policy engine (go test -bench) and the proxy under load
# (scripts/bench.sh: wrk against orderly, the backend and nginx).
bench:
	$(GO) test -run '^$$' -bench BenchmarkDecide -benchmem -count 3 ./policy/
	@scripts/bench.sh

# bench-peers: orderly beside nginx, HAProxy and Caddy (Debian's), each in
# front of the same Apache 2.4 backend with 0, 100 and 10,000 deny entries:
# checked (allowed, denied, control) before timing, then interleaved wrk
# rounds; ratios to the backend alone in the same round, added server-core
# µs per request, p50/p99, peak RSS and the other CPU load during each run,
# beside the floor of a net/http relay that decides nothing
# (internal/cmd/benchrelay; scripts/bench-peers.sh). Not part of make test.
bench-peers: build
	@scripts/bench-peers.sh

# bench-translate: orderly lint + translate on a generated 2.2 configuration
# (1,000 virtual hosts, 10,000 access directives) against apache2 -t on the
# translation (scripts/bench-translate.sh).
bench-translate:
	@scripts/bench-translate.sh

# soak: faults and load, not part of make test (scripts/soak.sh): 1,000
# keep-alive connections for 60 s (SOAK_SECONDS) through orderly to a real
# Apache, with a reload every second, the backend restarted once and
# slowloris clients; fails on any failed request outside the 502 window.
soak:
	@GO=$(GO) scripts/soak.sh

# mutate: mutation testing of the decision path (internal/cmd/mutate;
# README, "Mutation testing"): every mutant of the scope each package's
# mutants.txt declares, run against that package's own tests through
# go test -overlay. Fails unless every survivor is reviewed in mutants.txt
# and at least 90% of the viable non-equivalent mutants are killed (or, for
# a package still under way, its floor). A mutant costs a rebuild and link
# of the package's test binary: seconds for policy, a few seconds for
# translate/walk on two cores (1,051 mutants: an hour). MUTATE_FLAGS=-stamp
# records a passing full run; make test runs the packages changed since
# (-changed), each for a sample of MUTATE_BUDGET.
MUTATE_PKGS ?= ./policy ./translate/walk ./translate/rewrite ./translate/retire ./proxy ./translate
MUTATE_FLAGS ?=
MUTATE_BUDGET ?= 4m
mutate:
	$(GO) run ./internal/cmd/mutate $(MUTATE_FLAGS) $(MUTATE_PKGS)
