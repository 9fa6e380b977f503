#!/usr/bin/env bash
# test.sh: every test suite of `make test`, against the real parts, with
# the time each took. A failing suite fails the run; the others still run
# so that one report shows everything.
set -u
GO=${GO:-go}
# A real part that cannot be had fails the run (CI=true) unless the user
# says otherwise (Makefile: make test CI=false).
export CI=${CI:-true}
FUZZTIME=${FUZZTIME:-10s}
declare -a names times results
failed=0

suite() {
  local name=$1; shift
  echo
  echo "== suite: $name"
  local start end rc
  start=$(date +%s.%N)
  "$@"
  rc=$?
  end=$(date +%s.%N)
  names+=("$name")
  times+=("$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')")
  if [ $rc -eq 0 ]; then results+=(ok); else results+=(FAIL); failed=1; fi
}

vet() {
  local bad
  bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
  if [ -n "$bad" ]; then echo "gofmt needed:"; echo "$bad"; return 1; fi
  $GO vet ./...
}

fuzz() {
  local t pkg fn
  for t in \
    ./translate/apacheconf:FuzzParse \
    ./translate/apacheconf:FuzzLoad \
    ./policy:FuzzParseSubnet \
    ./translate/walk:FuzzNormalizePath \
    ./proxy:FuzzParseAuthorization \
    ./proxy:FuzzEncodePath \
    ./proxy/authfile:FuzzParseUsers \
    ./proxy/authfile:FuzzParseGroups \
    ./proxy/authfile:FuzzSDBM \
    ./proxy/digest:FuzzParse \
    ./proxy/ldapauth:FuzzParseURL \
    ./proxy:FuzzClientAddr \
    ./translate:FuzzParseHtaccess \
    ./translate/convert:FuzzFields \
    ./translate/walk:FuzzNormalizePath22 \
    ./translate/regex:FuzzRegexEngines \
    ./translate/regex:FuzzPrefilter \
    ./translate/regex:FuzzOverlap \
    ./proxy:FuzzHeadParser \
    ./cmd/orderly:FuzzLoadConfig \
    ./translate/rewrite:FuzzParseRule; do
    pkg=${t%%:*}; fn=${t##*:}
    # FUZZ=regexp runs only the targets it matches (make fuzz).
    if [ -n "${FUZZ:-}" ] && ! [[ $fn =~ $FUZZ ]]; then continue; fi
    echo "fuzz $pkg $fn ($FUZZTIME)"
    if ! fuzz_one "$pkg" "$fn"; then
      cat /tmp/orderly-fuzz.log
      return 1
    fi
  done
}

# fuzz_one runs one target. Go 1.26's fuzz coordinator can stop at the end
# of -fuzztime with "context deadline exceeded" and no failing input
# (golang/go#75804, fixed in Go 1.27): that is retried once, and passes
# when the target ran its time twice without one. A real failure writes
# its input ("Failing input written to ...") and fails.
fuzz_one() {
  local try
  for try in 1 2; do
    $GO test -run '^$' -fuzz "^${2}\$" -fuzztime "$FUZZTIME" "$1" >/tmp/orderly-fuzz.log 2>&1 && return 0
    if grep -q 'Failing input written' /tmp/orderly-fuzz.log || ! grep -q '^    context deadline exceeded$' /tmp/orderly-fuzz.log; then
      return 1
    fi
    echo "fuzz $2: stopped with 'context deadline exceeded' and no failing input (golang/go#75804)$([ $try = 1 ] && echo ', once more')"
  done
  return 0
}

# deploy/kubernetes is a Go module of its own (k8s.io/api and the
# Prometheus Operator's types stay out of the server's go.mod), and the
# server's ./... does not reach it: vet and test it in its directory.
k8s_manifests() {
  (cd deploy/kubernetes && $GO vet ./... && $GO test -count=1 ./...)
}

# release runs scripts/release.sh (make release) into a scratch directory
# and checks SHA256SUMS, the binaries, their SBOMs and the .deb and .rpm
# with dpkg-deb and rpm (scripts/release-test.sh).
release() {
  GO=$GO scripts/release-test.sh
}

# report passes go test's output on through internal/cmd/testreport, which
# counts the tests, prints every skip with its reason from
# testdata/skips.txt, and fails on a skip the list does not name.
report_bin=""
report() {
  if [ -z "$report_bin" ]; then
    report_bin=$(mktemp -d)/testreport
    $GO build -o "$report_bin" ./internal/cmd/testreport || return 1
  fi
  "$report_bin" -allow testdata/skips.txt "$@"
}

unit() {
  set -o pipefail
  $GO test -race -count=1 -json $unit_pkgs | report
}

differential() {
  set -o pipefail
  # The admin page's screenshots (TestAdminPageInChromium,
  # TestAdminPageDuringCutover) are kept here. The random tests run with
  # their defaults: TestRandomDifferential 500 configurations
  # (ORDERLY_RANDOM_CONFIGS), TestRandomTranslate 600, about a minute
  # (ORDERLY_RTRANS_CONFIGS); each prints its seeds.
  export ORDERLY_ARTIFACTS=${ORDERLY_ARTIFACTS:-$PWD/artifacts}
  echo "artifacts: $ORDERLY_ARTIFACTS"
  $GO test -count=1 -v ./internal/differential/ 2>&1 | report -text
}

# mutation runs make mutate on the packages of the decision path whose
# code, tests or testdata changed since their last passing run (their
# mutants.txt records its stamp): what a change touched. A full run of
# translate/walk takes hours (each mutant rebuilds and links its test
# binary), so each such package gets a random sample of its mutants for
# MUTATE_BUDGET (default 4m), held to the same verdict.
mutation() {
  $GO run ./internal/cmd/mutate -changed -budget "${MUTATE_BUDGET:-4m}" \
    ${MUTATE_PKGS:-./policy ./translate/walk ./translate/rewrite ./translate/retire ./proxy ./translate}
}

# `scripts/test.sh fuzz` (make fuzz) runs the fuzz targets alone.
if [ "${1:-}" = fuzz ]; then fuzz; exit $?; fi

unit_pkgs=$($GO list ./... | grep -v /internal/differential)
suite "vet and gofmt" vet
suite "unit tests (-race)" unit
suite "deploy manifests (k8s types)" k8s_manifests
suite "release (make release)" release
# The differential suite re-executes itself under `unshare --mount --net`
# with a private /etc/hosts, resolv.conf and nsswitch.conf and a DNS server
# on loopback (testdata/corpus/README.md, "Host names"), so the host-name
# cases run against a real name service and no lookup leaves the machine.
# unshare is util-linux's; the suite needs root for it (without, host-name
# cases are skipped, or fail under CI=true).
suite "differential vs Apache 2.4" differential
suite "fuzz targets" fuzz
suite "mutation (changed packages)" mutation

echo
echo "== suite timings"
for i in "${!names[@]}"; do
  printf '%-30s %8ss  %s\n' "${names[$i]}" "${times[$i]}" "${results[$i]}"
done
exit $failed
