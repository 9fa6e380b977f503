#!/usr/bin/env bash
# make demo-cutover: the whole cutover on one machine (README.md, "Cutover
# walkthrough"). A real Apache 2.4 backend still enforcing the 2.2 rules
# (mod_access_compat); orderly in shadow comparing a hand-written 2.4
# configuration with them; the disagreement report; the fix; a rollout of
# the native policy to 10%, 50% and 100% of clients; the backend switched
# to the native 2.4 configuration; the retirement report. Everything
# listens on 127.0.0.1 and is stopped by pid.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/usr/local/go/bin"
DEMO=${DEMO_DIR:-/tmp/orderly-cutover}
FRONT=127.0.0.1:${DEMO_PORT:-18180}
BACK=127.0.0.1:${DEMO_BACKEND_PORT:-18181}
METRICS=127.0.0.1:${DEMO_METRICS_PORT:-18182}
ADMIN=127.0.0.1:${DEMO_ADMIN_PORT:-18183}
. scripts/demo-site.sh
demo_site
expand examples/cutover/native-draft.conf > "$DEMO/native.conf"
chmod -R a+rX "$DEMO"

M=/usr/lib/apache2/modules
# backend_conf RULES: the Apache 2.4 backend with the given access rules.
backend_conf() {
  cat <<CONF
ServerRoot "$DEMO"
ServerName 127.0.0.1
Listen $BACK
PidFile "$DEMO/run/httpd.pid"
DefaultRuntimeDir "$DEMO/run"
Mutex "file:$DEMO/run" default
ErrorLog "$DEMO/backend-error.log"
LogFormat "%a %>s %r" brief
CustomLog "$DEMO/backend-access.log" brief
User www-data
Group www-data
LoadModule mpm_event_module $M/mod_mpm_event.so
LoadModule authz_core_module $M/mod_authz_core.so
LoadModule authz_host_module $M/mod_authz_host.so
LoadModule authn_core_module $M/mod_authn_core.so
LoadModule authn_file_module $M/mod_authn_file.so
LoadModule auth_basic_module $M/mod_auth_basic.so
LoadModule authz_user_module $M/mod_authz_user.so
LoadModule access_compat_module $M/mod_access_compat.so
LoadModule setenvif_module $M/mod_setenvif.so
LoadModule remoteip_module $M/mod_remoteip.so
LoadModule dir_module $M/mod_dir.so
LoadModule mime_module $M/mod_mime.so
StartServers 1
# orderly's X-Forwarded-For is the client address.
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
DocumentRoot "$DEMO/docroot"
DirectoryIndex index.html
TypesConfig /etc/mime.types
Include "$1"
CONF
}
backend_conf "$DEMO/legacy.conf" > "$DEMO/backend.conf"

# orderly_conf MODE PERCENT: the scope "site" (the whole site) enforces
# the native policy for PERCENT% of clients and shadows the legacy one.
orderly_conf() {
  cat <<CONF
listen = "$FRONT"
mode   = "$1"

backend "httpd" {
  url = "http://$BACK"
}

legacy {
  files         = ["$DEMO/legacy.conf"]
  document_root = "$DEMO/docroot"
  semantics     = "2.4-compat"
}

native {
  files = ["$DEMO/native.conf"]
}

scope "site" {
  path            = "/"
  enforce         = "native"
  shadow          = "legacy"
  enforce_percent = $2
}

client_ip {
  trusted_proxies = ["127.0.0.1/32"]
}

error_log  = "$DEMO/orderly-error.log"
access_log = "$DEMO/orderly-access.log"
shadow_log = "$DEMO/shadow.jsonl"

metrics {
  listen = "$METRICS"
}

admin {
  listen = "$ADMIN"
}
CONF
}
orderly_conf shadow 100 > "$DEMO/orderly.hcl"

make --no-print-directory build >/dev/null
APACHE_PID=
start_apache() {
  apache2 -DFOREGROUND -f "$DEMO/backend.conf" >> "$DEMO/backend.out" 2>&1 &
  APACHE_PID=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://$BACK/" && return; sleep 0.1; done
  echo "Apache did not start:"; cat "$DEMO/backend.out"; exit 1
}
stop_apache() { kill "$APACHE_PID" 2>/dev/null || true; wait "$APACHE_PID" 2>/dev/null || true; }
start_apache
bin/orderly serve -config "$DEMO/orderly.hcl" > "$DEMO/orderly.out" 2>&1 &
ORDERLY_PID=$!
cleanup() { kill "$ORDERLY_PID" 2>/dev/null || true; stop_apache; wait 2>/dev/null || true; }
if [ "${DEMO_KEEP:-}" != 1 ]; then trap cleanup EXIT; fi
for _ in $(seq 100); do curl -s -o /dev/null "http://$FRONT/" && break; sleep 0.1; done

step() { echo; echo "== $*"; echo; }
reload() {
  echo "\$ curl -s -X POST http://$ADMIN/-/reload"
  curl -s -X POST "http://$ADMIN/-/reload" | sed 's/^/  /'
}
# traffic: every kind of request the site gets, from 40 clients.
traffic() {
  local i ip
  for i in $(seq 1 40); do
    ip=203.0.113.$i
    curl -s -o /dev/null -H "X-Forwarded-For: $ip" "http://$FRONT/"
    curl -s -o /dev/null -H "X-Forwarded-For: $ip" "http://$FRONT/admin/"
    curl -s -o /dev/null -H "X-Forwarded-For: $ip" "http://$FRONT/members/"
    curl -s -o /dev/null -H "X-Forwarded-For: $ip" -u alice:wonderland "http://$FRONT/members/"
    curl -s -o /dev/null -H "X-Forwarded-For: $ip" -H 'Referer: http://www.example.com/' "http://$FRONT/images/logo.gif"
    curl -s -o /dev/null -H "X-Forwarded-For: $ip" -H 'Referer: http://evil.example/' "http://$FRONT/images/logo.gif"
    curl -s -o /dev/null -H "X-Forwarded-For: $ip" "http://$FRONT/backup.sql"
  done
  curl -s -o /dev/null -H "X-Forwarded-For: 10.1.2.3" "http://$FRONT/admin/"
  curl -s -o /dev/null -H "X-Forwarded-For: 10.1.2.3" "http://$FRONT/members/"
}
# snapshot NAME: with DEMO_SNAPSHOTS=DIR, the admin page as headless
# Chromium draws it now: DIR/NAME.html (the DOM after its script ran) and
# DIR/NAME.png (TestAdminPageDuringCutover checks both).
snapshot() {
  [ -n "${DEMO_SNAPSHOTS:-}" ] || return 0
  mkdir -p "$DEMO_SNAPSHOTS"
  local c=(chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
    --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir="$DEMO/chromium" --virtual-time-budget=5000)
  "${c[@]}" --dump-dom "http://$ADMIN/" > "$DEMO_SNAPSHOTS/$1.html" 2>> "$DEMO/chromium.log"
  "${c[@]}" --screenshot="$DEMO_SNAPSHOTS/$1.png" --window-size=1400,1800 "http://$ADMIN/" >> "$DEMO/chromium.log" 2>&1
  echo "  (admin page snapshot: $DEMO_SNAPSHOTS/$1.png)"
}
metric() { curl -s "http://$METRICS/metrics" | grep -E "^($1)" | grep -Ev ' 0$' | sed 's/^/  /' || echo "  (none)"; }

echo "orderly $(bin/orderly version | cut -d' ' -f2) on http://$FRONT; Apache 2.4 on http://$BACK enforcing the 2.2 rules (mod_access_compat)"
echo "admin page: http://$ADMIN/   metrics: http://$METRICS/metrics"

step "1. Shadow: orderly forwards everything; it decides each request by the hand-written 2.4 draft and compares with the legacy rules and with the backend"
traffic
echo "# disagreements, by scope, what they were compared with, direction and rule"
metric 'orderly_shadow_disagreements_total'
echo
echo "# one sample from the shadow log (both decisions, both trails; credentials redacted)"
head -n 1 "$DEMO/shadow.jsonl" | sed 's/^/  /'
echo
echo "# the draft would newly allow /backup.sql: it forgot the 2.2 <FilesMatch>. Every answer was still the backend's:"
echo "\$ curl -s -o /dev/null -w '%{http_code}' -H 'X-Forwarded-For: 203.0.113.9' http://$FRONT/backup.sql"
echo "  -> $(curl -s -o /dev/null -w '%{http_code}' -H 'X-Forwarded-For: 203.0.113.9' "http://$FRONT/backup.sql")"
snapshot 1-shadow

step "2. Fix the draft and reload: the disagreements stop growing"
expand examples/cutover/native-fix.conf >> "$DEMO/native.conf"
reload
before=$(curl -s "http://$METRICS/metrics" | awk '/^orderly_shadow_disagreements_total/ {s += $2} END {print s+0}')
traffic
after=$(curl -s "http://$METRICS/metrics" | awk '/^orderly_shadow_disagreements_total/ {s += $2} END {print s+0}')
echo "  disagreements before this round: $before, after it: $after"
snapshot 2-fixed

step "3. Enforce, and roll the native policy out to 10%, 50%, 100% of clients (sticky: a client in the cohort stays in it)"
by_policy() { curl -s "http://$METRICS/metrics" | awk -v p="$1" '/^orderly_scope_requests_total/ && $0 ~ "policy=\""p"\"" {s += $2} END {print s+0}'; }
for pct in 10 50 100; do
  orderly_conf enforce "$pct" > "$DEMO/orderly.hcl"
  reload
  l0=$(by_policy legacy); n0=$(by_policy native)
  traffic
  l1=$(by_policy legacy); n1=$(by_policy native)
  echo "  at $pct%: this round, $((n1 - n0)) requests decided by native, $((l1 - l0)) by legacy (each shadowed by the other)"
  if [ "$pct" = 50 ]; then snapshot 3-rollout-50; fi
done
echo "# the access log names the scope and the policy of each decision:"
tail -n 2 "$DEMO/orderly-access.log" | sed 's/^/  /'
echo "# every request in the rollout also ran the other policy: new disagreements since step 2: $(( $(curl -s "http://$METRICS/metrics" | awk '/^orderly_shadow_disagreements_total/ {s += $2} END {print s+0}') - after ))"

step "4. Switch the backend to the native 2.4 configuration (no mod_access_compat rules any more)"
backend_conf "$DEMO/native.conf" > "$DEMO/backend.conf"
stop_apache
start_apache
traffic
echo "# new disagreements since step 2, the backend's answers included: $(( $(curl -s "http://$METRICS/metrics" | awk '/^orderly_shadow_disagreements_total/ {s += $2} END {print s+0}') - after ))"
echo "\$ curl -s -o /dev/null -w '%{http_code}' -H 'X-Forwarded-For: 203.0.113.9' http://$FRONT/backup.sql"
echo "  -> $(curl -s -o /dev/null -w '%{http_code}' -H 'X-Forwarded-For: 203.0.113.9' "http://$FRONT/backup.sql")"

step "5. Retirement: which legacy rules can go (orderly retire on a scrape; -prometheus for the fleet over a window)"
echo "\$ orderly retire -config orderly.hcl -metrics http://$METRICS/metrics"
bin/orderly retire -config "$DEMO/orderly.hcl" -metrics "http://$METRICS/metrics" 2>&1 | sed 's/^/  /'
echo
echo "# each word of an Allow/Deny line is counted too:"
metric 'orderly_rule_part_matches_total'

step "6. Delete one rule retire says can go, and check that the legacy rules answer every request of the traffic as before"
# legacy_answers: the legacy policy's decision (orderly explain) for each
# kind of request the traffic sends, one line each.
legacy_answers() {
  local ip u
  for ip in 203.0.113.5 10.1.2.3; do
    for u in / /admin/ /members/ /images/logo.gif /backup.sql; do
      echo "$ip $u $(bin/orderly explain -config "$DEMO/orderly.hcl" -ip "$ip" "http://$FRONT$u" | sed -n 's/^decision: //p')"
    done
    echo "$ip /members/ alice $(bin/orderly explain -config "$DEMO/orderly.hcl" -ip "$ip" -user alice -password wonderland "http://$FRONT/members/" | sed -n 's/^decision: //p')"
    echo "$ip /images/logo.gif referred $(bin/orderly explain -config "$DEMO/orderly.hcl" -ip "$ip" -header 'Referer: http://www.example.com/' "http://$FRONT/images/logo.gif" | sed -n 's/^decision: //p')"
  done
}
# The first access line (Allow, Deny, Require) whose verdict is "can go".
pick=$(bin/orderly retire -config "$DEMO/orderly.hcl" -metrics "http://$METRICS/metrics" -format json 2>/dev/null | awk '
  /^  \{/ { v = ""; f = ""; l = ""; d = "" }
  /"verdict":/ { v = $0; sub(/.*"verdict": "/, "", v); sub(/".*/, "", v) }
  /"file":/ { f = $0; sub(/.*"file": "/, "", f); sub(/".*/, "", f) }
  /"line":/ { l = $0; sub(/.*"line": /, "", l); sub(/,.*/, "", l) }
  /"directive":/ { d = $0; sub(/.*"directive": "/, "", d); sub(/",?$/, "", d) }
  /^  \}/ { if (v == "can go" && d ~ /^(Allow|Deny|Require) / && !done) { print l "\t" f "\t" d; done = 1 } }')
if [ -z "$pick" ]; then
  echo "  no access line can go on this traffic"
else
  line=$(printf '%s' "$pick" | cut -f1); text=$(printf '%s' "$pick" | cut -f3)
  legacy_answers > "$DEMO/answers.before"
  echo "\$ sed -i '${line}d' legacy.conf    # $text"
  sed -i "${line}d" "$DEMO/legacy.conf"
  legacy_answers > "$DEMO/answers.after"
  if diff "$DEMO/answers.before" "$DEMO/answers.after" > /dev/null; then
    echo "  the legacy rules answer all $(wc -l < "$DEMO/answers.before") kinds of request as before, for example:"
    head -n 3 "$DEMO/answers.after" | sed 's/^/    /'
  else
    echo "  the answers changed (a bug: a rule that can go changed a decision):"
    diff "$DEMO/answers.before" "$DEMO/answers.after" | sed 's/^/    /'
    exit 1
  fi
fi
if [ "${DEMO_KEEP:-}" = 1 ]; then
  echo
  echo "DEMO_KEEP=1: orderly (pid $ORDERLY_PID) and Apache (pid $APACHE_PID) keep running; the admin page is http://$ADMIN/; stop them with: kill $ORDERLY_PID $APACHE_PID"
fi
