#!/usr/bin/env bash
# make soak: faults and load. A real Apache 2.4 backend (no access rules),
# orderly in front with legacy rules that allow and deny, and the soak
# client (internal/soak) holding 1,000 keep-alive connections for 60 s,
# each with its own X-Forwarded-For address, while orderly reloads its
# configuration every second (POST /-/reload, alternating two versions of
# the legacy file), the backend is stopped by pid and started again once,
# and 200 slowloris connections send their headers a byte at a time.
# Prints the summary and exits non-zero when a pass condition fails; the
# per-second samples (throughput, p50/p99, RSS, heap, goroutines,
# connections, CPU of orderly and of other processes) go to
# $SOAK_DIR/timeline.tsv and orderly's heap profile after the run to
# $SOAK_DIR/heap-after.pprof. Everything listens on 127.0.0.1 and is
# stopped by pid.
#
#   SOAK_SECONDS=60  SOAK_CONNS=1000  SOAK_RATE=5 (req/s per connection; 0: flat out)
#   SOAK_SLOW=200    SOAK_DIR=/tmp/orderly-soak
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/usr/local/go/bin"
GO=${GO:-go}
SECONDS_=${SOAK_SECONDS:-60}
CONNS=${SOAK_CONNS:-1000}
RATE=${SOAK_RATE:-5}
SLOW=${SOAK_SLOW:-200}
B=${SOAK_DIR:-/tmp/orderly-soak}
FRONT=127.0.0.1:18300 BACK=127.0.0.1:18301 METRICS=127.0.0.1:18302 ADMIN=127.0.0.1:18303

# Both sides need a descriptor per connection: 1,000 clients, 200 slow
# ones, as many backend connections, and the same again at the backend.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((CONNS * 3 + SLOW + 256)) ]; then
  echo "soak: ulimit -n is $(ulimit -n), too low for $CONNS connections" >&2
  exit 1
fi

need=()
[ -x /usr/sbin/apache2 ] || need+=(apache2)
command -v htpasswd >/dev/null || need+=(apache2-utils)
command -v ss >/dev/null || need+=(iproute2)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -q >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

rm -rf "$B"; mkdir -p "$B"/docroot/{staff,private,flip} "$B/run"
chmod 755 "$B"
head -c 1024 /dev/zero | tr '\0' 'x' > "$B/docroot/index.html"
cp "$B/docroot/index.html" "$B/docroot/staff/index.html"
echo secret > "$B/docroot/private/data.html"
echo 'DROP TABLE users;' > "$B/docroot/backup.sql"
echo flip > "$B/docroot/flip/index.html"
htpasswd -cb "$B/htpasswd" soak soak 2>/dev/null
chmod -R a+rX "$B"

# The legacy rules, in two versions that differ only for /flip/, which
# the keep-alive clients never ask for: A refuses it (403), B asks for a
# password (401). The soak checks after each reload that the new one is
# in force. Connections 0-499 send addresses in 10.0.0.0/23, the others
# in 10.0.2.0 and above.
legacy() { # legacy A|B
  cat <<CONF
<Directory />
    AllowOverride None
</Directory>
<Directory "$B/docroot">
    Order allow,deny
    Allow from all
</Directory>
<Directory "$B/docroot/staff">
    Order deny,allow
    Deny from all
    Allow from 10.0.0.0/23
</Directory>
<Directory "$B/docroot/private">
    Order deny,allow
    Deny from all
</Directory>
<FilesMatch "\.(sql|bak)$">
    Order allow,deny
    Deny from all
</FilesMatch>
CONF
  if [ "$1" = A ]; then
    printf '<Directory "%s/docroot/flip">\n    Order deny,allow\n    Deny from all\n</Directory>\n' "$B"
  else
    printf '<Directory "%s/docroot/flip">\n    AuthType Basic\n    AuthName "soak"\n    AuthUserFile "%s/htpasswd"\n    Require valid-user\n</Directory>\n' "$B" "$B"
  fi
}
legacy A > "$B/legacy-a.conf"
legacy B > "$B/legacy-b.conf"
cp "$B/legacy-a.conf" "$B/legacy.conf"

M=/usr/lib/apache2/modules
cat > "$B/backend.conf" <<CONF
# The Apache 2.4 backend: no access rules. The event MPM with enough
# threads for a connection from orderly per client.
ServerRoot "$B"
ServerName 127.0.0.1
Listen $BACK
ListenBacklog 4096
PidFile "$B/run/httpd.pid"
DefaultRuntimeDir "$B/run"
Mutex "file:$B/run" default
ErrorLog "$B/backend-error.log"
User www-data
Group www-data
LoadModule mpm_event_module $M/mod_mpm_event.so
LoadModule authz_core_module $M/mod_authz_core.so
LoadModule dir_module $M/mod_dir.so
LoadModule mime_module $M/mod_mime.so
StartServers 4
ServerLimit 20
ThreadsPerChild 64
MaxRequestWorkers 1280
MinSpareThreads 64
MaxSpareThreads 512
KeepAlive On
MaxKeepAliveRequests 0
<Directory />
    AllowOverride None
</Directory>
DocumentRoot "$B/docroot"
DirectoryIndex index.html
TypesConfig /etc/mime.types
CONF

cat > "$B/orderly.hcl" <<CONF
listen = "$FRONT"
backend "httpd" {
  url          = "http://$BACK"
  fail_timeout = "2s"
  health_check {
    path     = "/"
    interval = "1s"
    timeout  = "1s"
  }
}
legacy {
  files         = ["$B/legacy.conf"]
  document_root = "$B/docroot"
}
client_ip {
  trusted_proxies = ["127.0.0.1/32"]
}
mode      = "enforce"
error_log = "$B/orderly-error.log"
limits {
  read_header_timeout = "5s"
}
shutdown_grace = "5s"
metrics {
  listen = "$METRICS"
}
admin {
  listen = "$ADMIN"
}
CONF

make --no-print-directory build >/dev/null
$GO build -o "$B/soakload" ./internal/soak

pids=()
cleanup() {
  [ -s "$B/run/backend-restarted.pid" ] && pids+=("$(cat "$B/run/backend-restarted.pid")")
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
BACKEND_CMD="apache2 -DFOREGROUND -f $B/backend.conf"
$BACKEND_CMD >"$B/backend.out" 2>&1 & APACHE=$!; pids+=($APACHE)
bin/orderly serve -config "$B/orderly.hcl" >"$B/orderly.out" 2>&1 & ORDERLY=$!; pids+=($ORDERLY)
for _ in $(seq 100); do
  curl -sf -o /dev/null "http://$ADMIN/-/ready" && break
  sleep 0.1
done
curl -sf -o /dev/null "http://$ADMIN/-/ready" || { echo "soak: orderly not ready"; cat "$B/orderly.out"; exit 1; }
for want in "200 /" "403 /private/data.html" "403 /flip/"; do
  code=$(curl -s -o /dev/null -w '%{http_code}' -H 'X-Forwarded-For: 10.0.0.1' "http://$FRONT${want#* }")
  [ "$code" = "${want%% *}" ] || { echo "soak: GET ${want#* }: $code, want ${want%% *}"; exit 1; }
done
echo "soak: orderly $(bin/orderly version | cut -d' ' -f2) (pid $ORDERLY) on $FRONT, Apache (pid $APACHE) on $BACK; ulimit -n $(ulimit -n); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"

rc=0
"$B/soakload" -target "$FRONT" -admin "$ADMIN" -metrics "$METRICS" -backend "$BACK" \
  -orderly-pid "$ORDERLY" -conns "$CONNS" -duration "${SECONDS_}s" -rate "$RATE" -slow "$SLOW" \
  -read-header-timeout 5s -legacy "$B/legacy.conf" -legacy-a "$B/legacy-a.conf" -legacy-b "$B/legacy-b.conf" \
  -backend-pid "$APACHE" -backend-cmd "$BACKEND_CMD" -backend-log "$B/backend.out" \
  -backend-pidfile "$B/run/backend-restarted.pid" -timeline "$B/timeline.tsv" -heap-profile "$B/heap-after.pprof" | tee "$B/summary.txt" || rc=$?
echo "orderly's log, by message:"
grep -o '"msg":"[^"]*"' "$B/orderly.out" | sort | uniq -c | sort -rn | sed 's/^/  /'
echo "soak: $(date -u +%F), per-second samples in $B/timeline.tsv"
exit $rc
