#!/usr/bin/env bash
# Installs the real parts the tests and the demo need, from Debian's
# packages, when they are missing. Under CI=true a part that cannot be had
# is an error, never a skip.
set -u
need=()
command -v apache2 >/dev/null 2>&1 || [ -x /usr/sbin/apache2 ] || need+=(apache2)
command -v htpasswd >/dev/null 2>&1 || need+=(apache2-utils)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-light)   # forward-auth test
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)   # deploy/compose.yaml's check
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)         # deploy/systemd's unit check
command -v pebble >/dev/null 2>&1 || need+=(pebble)   # ACME CA for the tls tests
command -v fail2ban-regex >/dev/null 2>&1 || need+=(fail2ban)
command -v rpm >/dev/null 2>&1 || need+=(rpm)                         # the release's .rpm check
# OpenLDAP's server and tools for proxy/ldapauth's tests (ldaptest starts
# its own slapd on a loopback port).
command -v slapd >/dev/null 2>&1 || [ -x /usr/sbin/slapd ] || need+=(slapd)
command -v ldapadd >/dev/null 2>&1 || need+=(ldap-utils)
# translate/regex's oracles: libpcre2 (what Apache 2.4 matches with) and
# APR's apr_fnmatch, built with cc by the tests.
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
[ -f /usr/include/pcre2.h ] || need+=(libpcre2-dev)
[ -f /usr/include/apr-1.0/apr_fnmatch.h ] || need+=(libapr1-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if [ ${#need[@]} -gt 0 ]; then
  echo "deps: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -q >/dev/null 2>&1 || echo "deps: apt-get update failed"
  if ! $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1; then
    # One package that cannot be had must not keep the others out.
    for p in "${need[@]}"; do
      $SUDO apt-get install -y -q --no-install-recommends "$p" >/dev/null 2>&1 || echo "deps: apt-get install $p failed"
    done
  fi
fi
missing=()
[ -x /usr/sbin/apache2 ] || missing+=(apache2)
command -v htpasswd >/dev/null 2>&1 || missing+=(htpasswd)
command -v promtool >/dev/null 2>&1 || missing+=(promtool)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || missing+=(nginx)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd-analyze)
command -v pebble >/dev/null 2>&1 || missing+=(pebble)
command -v fail2ban-regex >/dev/null 2>&1 || missing+=(fail2ban-regex)
command -v rpm >/dev/null 2>&1 || missing+=(rpm)
[ -x /usr/sbin/slapd ] || command -v slapd >/dev/null 2>&1 || missing+=(slapd)
command -v ldapadd >/dev/null 2>&1 || missing+=(ldapadd)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "deps: FATAL: missing real parts under CI=true: ${missing[*]}" >&2
    exit 1
  fi
  echo "deps: warning: missing ${missing[*]}; tests that need them will be skipped (set CI=true to make this fatal)" >&2
fi
exit 0
