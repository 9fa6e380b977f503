#!/usr/bin/env bash
# make bench: the proxy under load, side by side on loopback. wrk drives,
# in interleaved rounds:
#   direct       the Apache 2.4 backend alone
#   orderly-0    orderly with the legacy rules of 0 extra address entries
#   orderly-10k  orderly with 10,000 address entries
#   nginx-0      nginx (Debian) with allow/deny lists of the same 0 entries
#   nginx-10k    nginx with the same 10,000 entries
# The client's own address is the last entry of each list, so a list that
# is scanned is scanned whole. Prints requests per second (median of the
# rounds), the ratios, and orderly's peak RSS; then, as an artifact, a CPU
# profile of orderly-10k under the same load (PROFILE_SECONDS, 10 s):
# $B/orderly-10k.cpu.pprof, with its top functions in
# $B/orderly-10k.cpu.top.txt, taken from orderly's admin listener
# (/debug/pprof/profile). Everything listens on 127.0.0.1 and is stopped
# by pid.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/usr/local/go/bin"
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-64}
ENTRIES=${ENTRIES:-10000}
PROFILE_SECONDS=${PROFILE_SECONDS:-10}
B=${BENCH_DIR:-/tmp/orderly-bench}

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
[ -x /usr/sbin/apache2 ] || need+=(apache2)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -q >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

rm -rf "$B"; mkdir -p "$B/docroot" "$B/run" "$B/nginx"
chmod 755 "$B"
head -c 1024 /dev/zero | tr '\0' 'x' > "$B/docroot/index.html"
chmod -R a+rX "$B"
P_BACK=127.0.0.1:18181 P_O0=127.0.0.1:18182 P_O10=127.0.0.1:18183 P_N0=127.0.0.1:18184 P_N10=127.0.0.1:18185 P_ADMIN=127.0.0.1:18186

# The address lists: ENTRIES addresses in 10.0.0.0/8 that never match, then
# the client, 127.0.0.1.
python3 - "$B" "$ENTRIES" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
addrs = ["10.%d.%d.%d" % ((i >> 16) & 255, (i >> 8) & 255, i & 255) for i in range(n)]
for name, lst in (("0", []), ("10k", addrs)):
    with open(f"{d}/legacy-{name}.conf", "w") as f:
        f.write('<Directory />\n    AllowOverride None\n</Directory>\n')
        f.write(f'<Directory "{d}/docroot">\n    Order deny,allow\n    Deny from all\n')
        for i in range(0, len(lst), 20):
            f.write("    Allow from " + " ".join(lst[i:i+20]) + "\n")
        f.write("    Allow from 127.0.0.1\n</Directory>\n")
    with open(f"{d}/nginx/access-{name}.conf", "w") as f:
        for a in lst:
            f.write(f"allow {a};\n")
        f.write("allow 127.0.0.1;\ndeny all;\n")
PY

M=/usr/lib/apache2/modules
cat > "$B/backend.conf" <<CONF
ServerRoot "$B"
ServerName 127.0.0.1
Listen $P_BACK
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
StartServers 2
ServerLimit 4
ThreadsPerChild 64
MaxRequestWorkers 256
KeepAlive On
MaxKeepAliveRequests 0
DocumentRoot "$B/docroot"
DirectoryIndex index.html
TypesConfig /etc/mime.types
CONF

for n in 0 10k; do
  port=$P_O0; [ $n = 10k ] && port=$P_O10
  cat > "$B/orderly-$n.hcl" <<CONF
listen = "$port"
backend "httpd" {
  url = "http://$P_BACK"
}
legacy {
  files         = ["$B/legacy-$n.conf"]
  document_root = "$B/docroot"
  semantics     = "2.4-compat"
}
mode      = "enforce"
error_log = "$B/orderly-$n-error.log"
CONF
  # orderly-10k's admin listener serves the CPU profile (loopback: no token).
  if [ $n = 10k ]; then printf 'admin {\n  listen = "%s"\n}\n' "$P_ADMIN" >> "$B/orderly-$n.hcl"; fi
  nport=$P_N0; [ $n = 10k ] && nport=$P_N10
  cat > "$B/nginx/nginx-$n.conf" <<CONF
user www-data;
worker_processes auto;
pid $B/run/nginx-$n.pid;
error_log $B/nginx/error-$n.log;
events { worker_connections 4096; }
http {
  access_log off;
  upstream backend { server $P_BACK; keepalive 64; }
  server {
    listen $nport;
    location / {
      include $B/nginx/access-$n.conf;
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host;
    }
  }
}
CONF
done

make --no-print-directory build >/dev/null
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
apache2 -DFOREGROUND -f "$B/backend.conf" >"$B/backend.out" 2>&1 & pids+=($!)
bin/orderly serve -config "$B/orderly-0.hcl" >"$B/orderly-0.out" 2>&1 & O0=$!; pids+=($O0)
bin/orderly serve -config "$B/orderly-10k.hcl" >"$B/orderly-10k.out" 2>&1 & O10=$!; pids+=($O10)
nginx -p "$B/nginx" -c "$B/nginx/nginx-0.conf" -g 'daemon off;' >"$B/nginx-0.out" 2>&1 & pids+=($!)
nginx -p "$B/nginx" -c "$B/nginx/nginx-10k.conf" -g 'daemon off;' >"$B/nginx-10k.out" 2>&1 & pids+=($!)

declare -A url=([direct]=$P_BACK [orderly-0]=$P_O0 [orderly-10k]=$P_O10 [nginx-0]=$P_N0 [nginx-10k]=$P_N10)
order=(direct orderly-0 orderly-10k nginx-0 nginx-10k)
for t in "${order[@]}"; do
  for _ in $(seq 100); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://${url[$t]}/" || true)
    [ "$code" = 200 ] && break
    sleep 0.1
  done
  [ "$code" = 200 ] || { echo "bench: $t does not answer 200 (got $code)"; exit 1; }
done
# orderly-10k really holds 10,000 entries and really refuses others.
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'X-Forwarded-For: 192.0.2.1' "http://$P_O10/")
echo "bench: $(grep -c 'Allow from' "$B/legacy-10k.conf") Allow lines in legacy-10k.conf; every target answers 200 to the client"

declare -A rps
for r in $(seq "$ROUNDS"); do
  for t in "${order[@]}"; do
    v=$(wrk -t2 -c"$CONNS" -d"$DURATION" "http://${url[$t]}/" | awk '/Requests\/sec/ {print $2}')
    rps[$t]="${rps[$t]:-} $v"
    printf 'round %d  %-12s %10.0f req/s\n' "$r" "$t" "$v"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
declare -A med
echo
echo "== requests per second (median of $ROUNDS rounds of $DURATION, $CONNS connections, wrk -t2)"
for t in "${order[@]}"; do
  med[$t]=$(echo "${rps[$t]}" | median)
  printf '%-12s %10.0f\n' "$t" "${med[$t]}"
done
rss() { awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a/b}'; }
echo
echo "== ratios"
echo "orderly-10k / direct      $(ratio "${med[orderly-10k]}" "${med[direct]}")"
echo "orderly-0   / direct      $(ratio "${med[orderly-0]}" "${med[direct]}")"
echo "orderly-10k / orderly-0   $(ratio "${med[orderly-10k]}" "${med[orderly-0]}")   (target >= 0.95)"
echo "orderly-10k / nginx-10k   $(ratio "${med[orderly-10k]}" "${med[nginx-10k]}")   (target >= 1)"
echo "orderly-0   / nginx-0     $(ratio "${med[orderly-0]}" "${med[nginx-0]}")"
echo
echo "== peak RSS"
echo "orderly-0    $(rss $O0) MiB"
echo "orderly-10k  $(rss $O10) MiB   (target < 48)"

# The CPU profile of orderly-10k under load: what a request costs.
wrk -t2 -c"$CONNS" -d"$((PROFILE_SECONDS + 2))s" "http://$P_O10/" >/dev/null &
load=$!
sleep 1
curl -s -o "$B/orderly-10k.cpu.pprof" "http://$P_ADMIN/debug/pprof/profile?seconds=$PROFILE_SECONDS"
wait "$load" || true
go tool pprof -top -nodecount=40 bin/orderly "$B/orderly-10k.cpu.pprof" > "$B/orderly-10k.cpu.top.txt" 2>/dev/null || true
echo
echo "== CPU profile of orderly-10k under load: $B/orderly-10k.cpu.pprof (top: $B/orderly-10k.cpu.top.txt)"
head -n 16 "$B/orderly-10k.cpu.top.txt"
echo "bench: done on $(nproc) cores, $(date -u +%F)"
