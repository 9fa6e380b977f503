# orderly: make build | make test | make demo
SHELL := /bin/bash
GO    ?= go
export PATH := $(PATH):/usr/local/go/bin:/usr/sbin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 10s
# CI=true: a real part (Apache, Pebble, Prometheus...) that cannot be had
# fails the run instead of skipping its tests; `make test CI=false` on a
# machine that cannot install them runs what it can.
CI ?= true
export CI

.PHONY: all build deps test fuzz demo demo-cutover bench bench-translate soak mutate clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/orderly ./cmd/orderly

deps:
	@scripts/deps.sh

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

# test runs every suite against the real parts (Apache httpd 2.4 from
# Debian), printing how long each took.
test: deps
	@GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/test.sh

# fuzz runs every fuzz target for FUZZTIME each (FUZZ=regexp: only those
# it matches), e.g. FUZZTIME=10m make fuzz.
fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/test.sh fuzz

demo: deps build
	@scripts/demo.sh

demo-cutover: deps build
	@scripts/demo-cutover.sh

clean:
	rm -rf bin

# bench: the policy engine (go test -bench) and the proxy under load
# (scripts/bench.sh: wrk against orderly, the backend and nginx).
bench:
	$(GO) test -run '^$$' -bench BenchmarkDecide -benchmem -count 3 ./policy/
	@scripts/bench.sh

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

# mutate: mutation testing (gremlins) of the decision-path packages, one at
# a time (PKGS=./policy ...; default ./policy); not part of make test.
# Every mutant rebuilds the packages that import the mutated one for the
# package's external tests (policy: translate, proxy), about 10-25 s a
# mutant on 2 busy cores: ./policy (531 mutants, 355 covered) takes 30-60
# minutes. A mutant's timeout is the coverage run's time (under 1 s when
# the build cache has it) times MUTATE_TIMEOUT_COEFFICIENT: gremlins'
# default (3), and even 5 or 30, time mutants out that a slow rebuild
# (the first in each worker's copy takes about a minute) would have
# killed; 150 gives about two minutes from a cached coverage run.
# policy/mutants.txt lists the survivors and why each is harmless.
PKGS ?= ./policy
MUTATE_WORKERS ?= 2
MUTATE_TIMEOUT_COEFFICIENT ?= 150
GREMLINS ?= $(GO) run github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
mutate:
	@for p in $(PKGS); do \
		echo "== gremlins unleash $$p"; \
		$(GREMLINS) unleash --workers $(MUTATE_WORKERS) \
			--timeout-coefficient $(MUTATE_TIMEOUT_COEFFICIENT) $$p || exit 1; \
	done
