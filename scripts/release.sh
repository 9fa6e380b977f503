#!/usr/bin/env bash
# release.sh: the release artifacts of orderly in dist/ (make release):
#
#   orderly_<version>_linux_<arch>             static binary (CGO_ENABLED=0,
#                                              -trimpath, stripped)
#   orderly_<version>_linux_<arch>.cdx.json    its SBOM, CycloneDX 1.6, from
#                                              the build info in the binary
#   orderly_<pkgversion>-1_<arch>.deb          packages (scripts/nfpm.yaml)
#   orderly-<pkgversion>-1.<rpmarch>.rpm
#   SHA256SUMS                                 of all the above
#
# for linux/amd64 and linux/arm64. nfpm and cyclonedx-gomod are pinned in
# tools/go.mod, a module of their own, so nothing of theirs reaches the
# server's go.mod or binary. scripts/release-test.sh checks the result.
#
# The version is $VERSION if set, else `git describe --tags --always
# --dirty` (v1.2.3, v1.2.3-4-g7b77336-dirty), or 0.0.0-dev+<commit> while
# the repository has no tag. `release.sh version` and `release.sh
# pkgversion [VERSION]` print the two forms and build nothing. DIST=DIR
# writes to DIR instead of dist/. Earlier artifacts there are removed.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
DIST=${DIST:-dist}
ARCHES=(amd64 arm64)

version() {
  if [ -n "${VERSION:-}" ]; then
    echo "$VERSION"
  elif git describe --tags --abbrev=0 >/dev/null 2>&1; then
    git describe --tags --always --dirty
  elif rev=$(git describe --always --dirty 2>/dev/null); then
    echo "0.0.0-dev+$rev"
  else
    echo "0.0.0-dev"
  fi
}

# pkg_version prints the packages' version, in the form dpkg and rpm both
# order correctly, of a version as version() makes it: a tag's pre-release
# goes after "~" (sorts before the release), commits past a tag and -dirty
# after "+" (sort after it). v1.2.3-rc.1 is 1.2.3~rc.1,
# v1.2.3-4-g7b77336-dirty is 1.2.3+4.g7b77336.dirty and 0.0.0-dev+7b77336
# is 0.0.0~dev+7b77336. A version that is not semver (a tag like
# release-7) is an error, not a guess.
pkg_version() {
  local v=${1#v} meta=() dirty="" pre m
  if [[ $v == *+* ]]; then meta+=("${v#*+}"); v=${v%%+*}; fi
  if [[ $v == *-dirty ]]; then v=${v%-dirty}; dirty=1; fi
  if [[ $v =~ ^(.*)-([0-9]+)-g([0-9a-f]+)$ ]]; then
    v=${BASH_REMATCH[1]}
    meta=("${BASH_REMATCH[2]}.g${BASH_REMATCH[3]}" "${meta[@]}")
  fi
  [ -z "$dirty" ] || meta+=(dirty)
  if ! [[ $v =~ ^([0-9]+\.[0-9]+\.[0-9]+)(-([0-9A-Za-z.-]+))?$ ]]; then
    echo "release: version $1 is not semver (vMAJOR.MINOR.PATCH[-PRE]): tag the release so" >&2
    return 1
  fi
  v=${BASH_REMATCH[1]}
  # Only letters, digits and dots after ~ and +: what both take as is.
  pre=$(tr -c 'A-Za-z0-9.\n' . <<<"${BASH_REMATCH[3]}")
  m=$(IFS=.; tr -c 'A-Za-z0-9.\n' . <<<"${meta[*]}")
  echo "$v${pre:+~$pre}${m:++$m}"
}

case "${1:-}" in
  version) version; exit ;;
  pkgversion) pkg_version "${2:-$(version)}"; exit ;;
  "") ;;
  *) echo "usage: release.sh [version | pkgversion [VERSION]]" >&2; exit 2 ;;
esac

VERSION=$(version)
PKG_VERSION=$(pkg_version "$VERSION")
export PKG_VERSION
# The packages' file times are the commit's, not the build's (nfpm reads
# SOURCE_DATE_EPOCH).
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "release: orderly $VERSION (packages $PKG_VERSION-1)"
$GO -C tools build -o "$work/" \
  github.com/goreleaser/nfpm/v2/cmd/nfpm \
  github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod

# deploy/systemd/orderly.service is written for a hand install into
# /usr/local/bin; the packages put the binary in /usr/bin.
export ORDERLY_UNIT=$work/orderly.service
sed 's|^ExecStart=/usr/local/bin/orderly |ExecStart=/usr/bin/orderly |' deploy/systemd/orderly.service >"$ORDERLY_UNIT"
if ! grep -q '^ExecStart=/usr/bin/orderly ' "$ORDERLY_UNIT"; then
  echo "release: deploy/systemd/orderly.service: no ExecStart= of /usr/local/bin/orderly or /usr/bin/orderly to package" >&2
  exit 1
fi

mkdir -p "$DIST"
rm -f "$DIST"/orderly[_-]* "$DIST/SHA256SUMS"
for arch in "${ARCHES[@]}"; do
  bin=$DIST/orderly_${VERSION}_linux_$arch
  # -buildvcs=auto records the commit in the build info (and so in the
  # SBOM) whatever GOFLAGS says, when built from a git checkout.
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch $GO build -trimpath -buildvcs=auto \
    -ldflags "-s -w -X main.version=$VERSION" -o "$bin" ./cmd/orderly
  "$work/cyclonedx-gomod" bin -json -noserial -notimestamp -version "$VERSION" \
    -output "$bin.cdx.json" "$bin"
  for packager in deb rpm; do
    ORDERLY_BIN=$bin PKG_ARCH=$arch "$work/nfpm" package -f scripts/nfpm.yaml -p $packager -t "$DIST/"
  done
done
(cd "$DIST" && sha256sum -- * >SHA256SUMS)
ls -l "$DIST"
