#!/usr/bin/env bash
# make demo: a real Apache 2.4 backend with no access rules, orderly in
# front of it enforcing examples/demo/legacy.conf, and curl lines that show
# what it does. Everything listens on 127.0.0.1 and is stopped by pid.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/usr/local/go/bin"
DEMO=${DEMO_DIR:-/tmp/orderly-demo}
FRONT=127.0.0.1:${DEMO_PORT:-18080}
BACK=127.0.0.1:${DEMO_BACKEND_PORT:-18081}
METRICS=127.0.0.1:${DEMO_METRICS_PORT:-18082}
. scripts/demo-site.sh
demo_site
chmod -R a+rX "$DEMO"

M=/usr/lib/apache2/modules
cat > "$DEMO/backend.conf" <<CONF
# The upgraded Apache 2.4 backend: no access rules at all.
ServerRoot "$DEMO"
ServerName 127.0.0.1
Listen $BACK
PidFile "$DEMO/run/httpd.pid"
DefaultRuntimeDir "$DEMO/run"
Mutex "file:$DEMO/run" default
ErrorLog "$DEMO/backend-error.log"
User www-data
Group www-data
LoadModule mpm_event_module $M/mod_mpm_event.so
LoadModule authz_core_module $M/mod_authz_core.so
LoadModule dir_module $M/mod_dir.so
LoadModule mime_module $M/mod_mime.so
StartServers 1
DocumentRoot "$DEMO/docroot"
DirectoryIndex index.html
TypesConfig /etc/mime.types
CONF

cat > "$DEMO/orderly.hcl" <<CONF
listen = "$FRONT"

backend "httpd" {
  url = "http://$BACK"
}

legacy {
  files         = ["$DEMO/legacy.conf"]
  document_root = "$DEMO/docroot"
  semantics     = "2.4-compat"
}

client_ip {
  trusted_proxies = ["127.0.0.1/32"]
}

mode      = "enforce"
error_log = "$DEMO/orderly-error.log"

metrics {
  listen = "$METRICS"
}
CONF

make --no-print-directory build >/dev/null
apache2 -DFOREGROUND -f "$DEMO/backend.conf" > "$DEMO/backend.out" 2>&1 &
APACHE_PID=$!
bin/orderly serve -config "$DEMO/orderly.hcl" > "$DEMO/orderly.out" 2>&1 &
ORDERLY_PID=$!
cleanup() { kill "$ORDERLY_PID" "$APACHE_PID" 2>/dev/null || true; wait 2>/dev/null || true; }
if [ "${DEMO_KEEP:-}" != 1 ]; then trap cleanup EXIT; fi
for _ in $(seq 100); do
  curl -s -o /dev/null "http://$FRONT/" && curl -s -o /dev/null "http://$BACK/" && break
  sleep 0.1
done

show() {
  echo "\$ $*"
  "$@" 2>&1 | sed 's/^/  /'
  echo
}
req() { # req DESCRIPTION CURL-ARGS...
  local what=$1; shift
  echo "# $what"
  echo "\$ curl -s -o /dev/null -w '%{http_code}\\n' $(printf '%q ' "$@")"
  echo "  -> $(curl -s -o /dev/null -w '%{http_code}' "$@")"
  echo
}
echo "orderly $(bin/orderly version | cut -d' ' -f2) on http://$FRONT, Apache 2.4 backend on http://$BACK (no access rules)"
echo
req "allow: the public home page" "http://$FRONT/"
req "allow: the admin console from the office network" -H 'X-Forwarded-For: 10.1.2.3' "http://$FRONT/admin/"
req "deny: the admin console from the internet (403, AH01797 in the error log)" -H 'X-Forwarded-For: 203.0.113.50' "http://$FRONT/admin/"
req "the backend alone would have served it: this is what orderly protects" "http://$BACK/admin/"
req "auth challenge: members from outside the office (401, WWW-Authenticate)" -H 'X-Forwarded-For: 203.0.113.50' "http://$FRONT/members/"
req "auth success: members with alice's password" -u alice:wonderland -H 'X-Forwarded-For: 203.0.113.50' "http://$FRONT/members/"
req "deny: a database dump, whoever asks" -H 'X-Forwarded-For: 10.1.2.3' "http://$FRONT/backup.sql"
req "deny: a hot-linked image" -H 'X-Forwarded-For: 203.0.113.50' -H 'Referer: http://evil.example/' "http://$FRONT/images/logo.gif"
req "allow: the same image from this site's page" -H 'X-Forwarded-For: 203.0.113.50' -H 'Referer: http://www.example.com/index.html' "http://$FRONT/images/logo.gif"
echo "# explain: why was the admin console refused?"
show bin/orderly explain -config "$DEMO/orderly.hcl" -ip 203.0.113.50 /admin/
echo "# metrics: requests by decision, and every legacy rule with its decisive hits since start-up (0: never fired)"
echo "\$ curl -s http://$METRICS/metrics | grep -E '^orderly_(requests_total|rule_decisive_hits_total|rule_info)'"
curl -s "http://$METRICS/metrics" > "$DEMO/metrics.txt"
grep -E '^orderly_requests_total\{[^}]*\} [1-9]' "$DEMO/metrics.txt" | sed 's/^/  /'
awk '
  /^orderly_rule_info\{/ {
    id = $0; sub(/.*rule_id="/, "", id); sub(/".*/, "", id)
    d = $0; sub(/.*directive="/, "", d); sub(/",file=.*/, "", d); gsub(/\\"/, "\"", d)
    f = $0; sub(/.*file="/, "", f); sub(/".*/, "", f)
    l = $0; sub(/.*line="/, "", l); sub(/".*/, "", l)
    where[id] = (f == "" ? "" : f ":" l); text[id] = d
  }
  /^orderly_rule_decisive_hits_total\{/ { id = $0; sub(/.*rule_id="/, "", id); sub(/".*/, "", id); hits[id] = $2 }
  END { for (id in hits) printf "  %s  hits=%-3s %-16s %s\n", id, hits[id], where[id], text[id] }
' "$DEMO/metrics.txt" | sort -k3,3V
echo
echo "# the error log, in Apache 2.4's format"
show cat "$DEMO/orderly-error.log"
if [ "${DEMO_KEEP:-}" = 1 ]; then
  echo "DEMO_KEEP=1: orderly (pid $ORDERLY_PID) and Apache (pid $APACHE_PID) keep running; stop them with: kill $ORDERLY_PID $APACHE_PID"
fi
