#!/usr/bin/env bash
# release-test.sh: make test's release suite. It runs scripts/release.sh
# into a scratch directory (dist/ is left alone) and checks what a user
# gets: SHA256SUMS, the binaries, their SBOMs, and the .deb and .rpm read
# with Debian's own tools (dpkg-deb; rpm, from Debian's rpm package). A
# tool that is missing fails the run under CI=true, and otherwise skips
# only the checks that need it, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
export GO

failed=0
fail() { echo "release-test: FAIL: $*" >&2; failed=1; }
# have TOOL DEBIAN-PACKAGE: whether TOOL can be run.
have() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "${CI:-}" = true ]; then
    fail "$1 is missing (apt-get install $2; scripts/deps.sh does)"
  else
    echo "release-test: warning: $1 is missing (apt-get install $2): its checks are skipped" >&2
  fi
  return 1
}
# same WHAT GOT WANT
same() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }

# The packages' versions, which dpkg and rpm must order as the releases
# were made: a pre-release before its release, commits past a tag after it.
pkgversions=(
  0.0.0-dev+7b77336-dirty 0.0.0~dev+7b77336.dirty
  v1.2.3-rc.1 1.2.3~rc.1
  v1.2.3-rc.1-4-gabc1234 1.2.3~rc.1+4.gabc1234
  v1.2.3 1.2.3
  v1.2.3-4-g7b77336-dirty 1.2.3+4.g7b77336.dirty
  v1.2.3-10-g0a1b2c3 1.2.3+10.g0a1b2c3
)
prev=""
for ((i = 0; i < ${#pkgversions[@]}; i += 2)); do
  got=$(scripts/release.sh pkgversion "${pkgversions[i]}") || fail "pkgversion ${pkgversions[i]} failed"
  same "pkgversion ${pkgversions[i]}" "$got" "${pkgversions[i + 1]}"
  if [ -n "$prev" ]; then
    if command -v dpkg >/dev/null 2>&1; then
      dpkg --compare-versions "$prev-1" lt "$got-1" || fail "dpkg orders $prev-1 after $got-1"
    fi
    if command -v rpm >/dev/null 2>&1; then
      same "rpm.vercmp($prev, $got)" "$(rpm --eval "%{lua: print(rpm.vercmp('$prev', '$got'))}")" -1
    fi
  fi
  prev=$got
done
same "pkgversion v1.2.3-dirty" "$(scripts/release.sh pkgversion v1.2.3-dirty)" 1.2.3+dirty
same "pkgversion 0.0.0-dev" "$(scripts/release.sh pkgversion 0.0.0-dev)" 0.0.0~dev
for bad in release-7 7b77336 v1.2; do
  if scripts/release.sh pkgversion "$bad" >/dev/null 2>&1; then fail "pkgversion $bad: no error"; fi
done

dist=$(mktemp -d)
trap 'rm -rf "$dist"' EXIT
version=$(scripts/release.sh version)
pkgversion=$(scripts/release.sh pkgversion "$version")
VERSION=$version DIST=$dist scripts/release.sh

# Every file is in SHA256SUMS, and every sum holds.
files=$(printf '%s\n' SHA256SUMS \
  "orderly_${version}_linux_amd64" "orderly_${version}_linux_amd64.cdx.json" \
  "orderly_${version}_linux_arm64" "orderly_${version}_linux_arm64.cdx.json" \
  "orderly_${pkgversion}-1_amd64.deb" "orderly_${pkgversion}-1_arm64.deb" \
  "orderly-${pkgversion}-1.x86_64.rpm" "orderly-${pkgversion}-1.aarch64.rpm" | sort)
same "files in dist" "$(ls "$dist")" "$files"
same "files in SHA256SUMS" "$(awk '{print $2}' "$dist/SHA256SUMS" | sort)" "$(grep -vx SHA256SUMS <<<"$files")"
(cd "$dist" && sha256sum --quiet --strict -c SHA256SUMS) || fail "sha256sum -c SHA256SUMS"

# The binaries: static (no cgo), trimmed, stripped (go tool nm finds no
# symbols), stamped; the one this machine runs reports the version. The
# SBOM names every module the binary holds.
host=$($GO env GOHOSTARCH)
for arch in amd64 arm64; do
  bin=$dist/orderly_${version}_linux_$arch
  info=$($GO version -m "$bin")
  for setting in CGO_ENABLED=0 GOOS=linux GOARCH=$arch -trimpath=true; do
    grep -qxF "	build	$setting" <<<"$info" || fail "$bin: no build setting $setting in go version -m"
  done
  if $GO tool nm "$bin" >/dev/null 2>&1; then fail "$bin: not stripped"; fi
  grep -qaF "$version" "$bin" || fail "$bin: version $version not stamped"
  if [ "$arch" = "$host" ]; then
    same "$bin version" "$("$bin" version)" "orderly $version"
  fi
  grep -q '"bomFormat": "CycloneDX"' "$bin.cdx.json" || fail "$bin.cdx.json: not CycloneDX"
  while read -r _ path modversion _; do
    grep -qF "\"pkg:golang/$path@$modversion?" "$bin.cdx.json" || fail "$bin.cdx.json: no $path $modversion"
  done < <(awk '$1 == "dep" || $1 == "=>"' <<<"$info")
done

# What both packages install, and what the files hold: the binary of the
# same name in dist/, the example configuration and LICENSE as they are
# in the repository, and the unit as deploy/systemd/orderly.service has
# it, but for ExecStart, which runs /usr/bin/orderly.
unit=deploy/systemd/orderly.service
check_unit() {
  grep -q '^ExecStart=/usr/bin/orderly serve -config /etc/orderly/' "$1" || fail "$1: ExecStart: $(grep '^ExecStart=' "$1")"
  diff <(grep -v '^ExecStart=' "$unit") <(grep -v '^ExecStart=' "$1") >/dev/null || fail "$1 differs from $unit beyond ExecStart"
}

if have dpkg-deb dpkg; then
  for arch in amd64 arm64; do
    deb=$dist/orderly_${pkgversion}-1_$arch.deb
    same "$deb fields" "$(dpkg-deb -f "$deb" Package Version Architecture)" \
      "$(printf 'Package: orderly\nVersion: %s\nArchitecture: %s' "$pkgversion-1" "$arch")"
    dpkg-deb -I "$deb" >/dev/null || fail "dpkg-deb -I $deb"
    same "$deb conffiles" "$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)" /etc/orderly/orderly.hcl.example
    root=$dist/root-$arch
    dpkg-deb -x "$deb" "$root"
    same "$deb files" "$(cd "$root" && find . -type f | sort)" "$(printf '%s\n' \
      ./etc/orderly/orderly.hcl.example ./usr/bin/orderly ./usr/lib/systemd/system/orderly.service ./usr/share/doc/orderly/copyright)"
    cmp -s "$root/usr/bin/orderly" "$dist/orderly_${version}_linux_$arch" || fail "$deb: /usr/bin/orderly is not the release binary"
    [ -x "$root/usr/bin/orderly" ] || fail "$deb: /usr/bin/orderly is not executable"
    cmp -s "$root/etc/orderly/orderly.hcl.example" deploy/orderly.hcl.example || fail "$deb: orderly.hcl.example differs"
    cmp -s "$root/usr/share/doc/orderly/copyright" LICENSE || fail "$deb: copyright is not LICENSE"
    check_unit "$root/usr/lib/systemd/system/orderly.service"
    if [ "$arch" = "$host" ]; then
      same "$deb: /usr/bin/orderly version" "$("$root/usr/bin/orderly" version)" "orderly $version"
    fi
  done
fi

# rpm reads the header; --dump gives each file's SHA-256, checked against
# the release binary, the repository's files and the unit the .deb held.
sha256() { sha256sum "$1" | awk '{print $1}'; }
if have rpm rpm; then
  for arch in amd64 arm64; do
    rpmarch=${arch/amd64/x86_64}
    rpmarch=${rpmarch/arm64/aarch64}
    rpmfile=$dist/orderly-${pkgversion}-1.$rpmarch.rpm
    same "$rpmfile header" "$(rpm -qp --qf '%{NAME} %{VERSION} %{RELEASE} %{ARCH} %{LICENSE}\n' "$rpmfile")" \
      "orderly $pkgversion 1 $rpmarch Apache-2.0"
    same "$rpmfile files" "$(rpm -qlp "$rpmfile")" "$(printf '%s\n' /etc/orderly \
      /etc/orderly/orderly.hcl.example /usr/bin/orderly /usr/lib/systemd/system/orderly.service /usr/share/licenses/orderly/LICENSE)"
    same "$rpmfile config files" "$(rpm -qcp "$rpmfile")" /etc/orderly/orderly.hcl.example
    same "$rpmfile license files" "$(rpm -qLp "$rpmfile")" /usr/share/licenses/orderly/LICENSE
    declare -A digest=(
      [/usr/bin/orderly]=$(sha256 "$dist/orderly_${version}_linux_$arch")
      [/etc/orderly/orderly.hcl.example]=$(sha256 deploy/orderly.hcl.example)
      [/usr/share/licenses/orderly/LICENSE]=$(sha256 LICENSE)
    )
    debunit=$dist/root-$arch/usr/lib/systemd/system/orderly.service
    if [ -f "$debunit" ]; then digest[/usr/lib/systemd/system/orderly.service]=$(sha256 "$debunit"); fi
    while read -r path _ _ sum _; do
      if [ -n "${digest[$path]:-}" ]; then same "$rpmfile: sha256 of $path" "$sum" "${digest[$path]}"; fi
    done < <(rpm -qp --dump "$rpmfile")
    unset digest
  done
fi

if [ $failed != 0 ]; then exit 1; fi
echo "release-test: ok (orderly $version, packages $pkgversion-1)"
