#!/usr/bin/env bash
# make bench-peers: orderly beside nginx, HAProxy and Caddy (all from
# Debian), each one an access-controlling reverse proxy in front of the
# same Apache 2.4 backend, with 0, 100 and 10,000 deny entries (NS).
#
# Each deny list is N random IPv4 entries that never overlap (/24 and /32
# alternately, none in 127.0.0.0/8), then 127.0.0.2 last, so a list that is
# scanned is scanned whole. Each front refuses the list and lets
# 127.0.0.0/8 through:
#   nginx    deny <entry>; ... allow 127.0.0.0/8; deny all;
#   haproxy  http-request deny if { src -f deny.lst }
#   caddy    @denied remote_ip <entries>; respond @denied 403
#   orderly  <Location /> Order Deny,Allow / Deny from <entry> ... /
#            Allow from 127.0.0.1 </Location>, the document root walked
#            (legacy.document_root) as Apache walks it
#
# Before anything is timed, every target is checked from three client
# addresses: 127.0.0.1 (allowed: 200 and the 1 KiB body), 127.0.0.3 (the
# control, in no list: 200) and 127.0.0.2 (the last deny entry: 403; 200
# from the backend alone). A target that fails a check fails the run.
#
# Then ROUNDS interleaved rounds: in each, the backend alone, every front,
# and the backend alone again (the round's baseline is the mean of its two
# runs). wrk (-t1, CONNS connections, --latency) runs on CLIENT_CPU and
# every server on SERVER_CPU (PIN=split), so that a front's cost shows as
# server-core time:
#   ratio      the front's req/s over the baseline of the same round
#   added µs   1e6/rps(front) - 1e6/rps(backend), server-core µs that the
#              front adds to a request (meaningful while the server CPU
#              is saturated: its busy % is reported)
#   p50, p99   wrk's latency distribution
#   peak RSS   VmHWM summed over the front's processes, after the rounds
#   CPU µs/req the CPU time the front's own processes and the backend's spent
#              per request during the run, and the added CPU µs/req: the
#              two less the backend's alone in the same round; unlike added
#              µs, other work on the machine does not move it much
#   other CPU  busy CPU time during the run that neither wrk nor any
#              server of this bench used (other work on the machine), in %
#              of one core: a run with much of it is noisy
# Medians over the rounds, with [min-max]. The issue 20 targets for
# orderly are checked against the same run at the end.
#
# Knobs: ROUNDS [3] DURATION [5] (s) WARMUP [1] (s) CONNS [64] NS ["0 100
# 10000"] PEERS ["nginx haproxy caddy"] PIN [split|none] CLIENT_CPU [0]
# SERVER_CPU [1] BASE_PORT [22100] SEED [20] OUT [/tmp/orderly-bench-peers]
# ORDERLY_BIN [bin/orderly, built by make build] ORDERLY_EXTRA ["name=path
# ..."]: more orderly binaries measured beside it in the same rounds (an
# earlier build, for before/after figures). PROFILE_SECONDS [0]: after the
# rounds, a CPU profile of each orderly binary at the largest N under the
# same load, from its admin listener, in $OUT/<name>-<N>.cpu.pprof.
# FLOOR [1]: also measure the floor of a proxy built as issue 20 requires,
# in the same rounds: relay, net/http's server and a pooled keep-alive
# backend client that decide nothing (internal/cmd/benchrelay), and
# relay-walk, the same plus the stat calls of Apache's per-request walk of
# the document root that orderly keeps. Neither refuses anything: their
# 127.0.0.2 check wants 200.
#
# Missing parts are installed from Debian; one that still cannot be had
# fails the run when CI=true and is left out, said so, otherwise.
# Everything listens on 127.0.0.1 and is stopped by pid.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/sbin:/usr/local/go/bin"

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-1}
CONNS=${CONNS:-64}
NS=${NS:-"0 100 10000"}
PEERS=${PEERS-"nginx haproxy caddy"}
PIN=${PIN:-split}
CLIENT_CPU=${CLIENT_CPU:-0}
SERVER_CPU=${SERVER_CPU:-1}
BASE_PORT=${BASE_PORT:-22100}
SEED=${SEED:-20}
OUT=${OUT:-/tmp/orderly-bench-peers}
ORDERLY_BIN=${ORDERLY_BIN:-}
ORDERLY_EXTRA=${ORDERLY_EXTRA:-}
PROFILE_SECONDS=${PROFILE_SECONDS:-0}
FLOOR=${FLOOR:-1}
BACKEND_KA=10 # the backend's KeepAliveTimeout, s

say() { printf 'bench-peers: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# ---- parts
declare -A pkg=([apache2]=apache2 [wrk]=wrk [curl]=curl [taskset]=util-linux [nginx]=nginx-light [haproxy]=haproxy [caddy]=caddy)
missing() { local m=() b; for b in "$@"; do command -v "$b" >/dev/null || m+=("$b"); done; echo "${m[@]:-}"; }
want=(apache2 wrk curl taskset $PEERS)
need=$(missing "${want[@]}")
if [ -n "$need" ]; then
  say "installing: $need"
  apt-get update -q >/dev/null 2>&1 || true
  for b in $need; do
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkg[$b]}" >/dev/null 2>&1 || true
  done
fi
need=$(missing "${want[@]}")
if [ -n "$need" ]; then
  [ "${CI:-}" = true ] && die "missing after apt-get install: $need (CI=true)"
  for b in apache2 wrk curl taskset; do [[ " $need " == *" $b "* ]] && die "missing: $b"; done
  say "left out, not installable here: $need"
  kept=(); for p in $PEERS; do [[ " $need " == *" $p "* ]] || kept+=("$p"); done; PEERS="${kept[*]:-}"
fi
if [ -z "$ORDERLY_BIN" ]; then
  make --no-print-directory build >/dev/null
  ORDERLY_BIN=bin/orderly
fi
declare -A OBIN=([orderly]=$(readlink -f "$ORDERLY_BIN"))
FRONTS=(orderly)
for e in $ORDERLY_EXTRA; do OBIN[${e%%=*}]=$(readlink -f "${e#*=}"); FRONTS+=("${e%%=*}"); done
FRONTS+=($PEERS)

if [ "$PIN" = split ]; then CPIN=(taskset -c "$CLIENT_CPU"); SPIN=(taskset -c "$SERVER_CPU"); WORKERS=1; HAP_THREADS="  nbthread 1"
else CPIN=(); SPIN=(); WORKERS=auto; HAP_THREADS=; fi

# ---- the work directory
rm -rf "$OUT"; mkdir -p "$OUT/raw"
W=$(mktemp -d /tmp/orderly-peers.XXXXXX)
chmod 755 "$W"
mkdir -p "$W/htdocs"
head -c 768 /dev/urandom | base64 -w 0 | head -c 1024 > "$W/htdocs/1k.txt"
chmod -R a+rX "$W/htdocs"

PIDS=()
declare -A PID PORT
stop_all() {
  set +e
  local p i
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  done
  wait 2>/dev/null
  [ "${KEEP:-0}" = 1 ] && say "kept $W" || rm -rf "$W"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

next_port=$BASE_PORT
port() { # sets got_port to the next free port (no subshell: next_port moves on)
  while [ -n "$(ss -Hltn "sport = :$next_port")" ]; do next_port=$((next_port + 1)); done
  got_port=$next_port; next_port=$((next_port + 1))
}
run_bg() { # name log cmd...: start a server in the background, pinned
  local name=$1 log=$2; shift 2
  "${SPIN[@]}" "$@" >"$log" 2>&1 &
  PID[$name]=$!; PIDS+=("$!")
}

# ---- deny lists: N entries in distinct /24s (so none overlaps another),
# /24 and /32 alternately, then 127.0.0.2
maxn=0; for n in $NS; do [ "$n" -gt "$maxn" ] && maxn=$n; done
awk -v want="$maxn" -v seed="$SEED" 'BEGIN {
  srand(seed)
  while (got < want) {
    a = 1 + int(rand() * 223); b = int(rand() * 256); c = int(rand() * 256)
    if (a == 10 || a == 127 || a == 169 || a == 172 || a == 192) continue
    net = a "." b "." c
    if (net in seen) continue
    seen[net] = 1
    print (got % 2 ? net "." (1 + int(rand() * 254)) : net ".0/24")
    got++
  }
}' > "$W/entries"
for n in $NS; do
  a=$W/acl-$n; mkdir -p "$a"
  { head -n "$n" "$W/entries"; echo 127.0.0.2; } > "$a/deny.lst"
  { sed 's/.*/deny &;/' "$a/deny.lst"; printf 'allow 127.0.0.0/8;\ndeny all;\n'; } > "$a/nginx.inc"
  { echo "<Location />"; echo "    Order Deny,Allow"; sed 's/^/    Deny from /' "$a/deny.lst"
    echo "    Allow from 127.0.0.1"; echo "</Location>"; } > "$a/legacy.conf"
done

# ---- the backend: Apache 2.4, mpm_event with a fixed pool of threads
M=/usr/lib/apache2/modules
port; bport=$got_port; PORT[direct]=$bport; mkdir -p "$W/backend"
cat > "$W/backend/httpd.conf" <<EOF
ServerRoot $W/backend
ServerName 127.0.0.1
Listen 127.0.0.1:$bport
PidFile $W/backend/httpd.pid
DefaultRuntimeDir $W/backend
Mutex file:$W/backend default
ErrorLog $W/backend/error.log
User www-data
Group www-data
LoadModule mpm_event_module $M/mod_mpm_event.so
LoadModule authz_core_module $M/mod_authz_core.so
LoadModule mime_module $M/mod_mime.so
TypesConfig /etc/mime.types
StartServers 1
ServerLimit 1
ThreadLimit 256
ThreadsPerChild 256
MinSpareThreads 1
MaxSpareThreads 256
MaxRequestWorkers 256
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout $BACKEND_KA
EnableSendfile On
DocumentRoot $W/htdocs
<Directory />
    Require all denied
</Directory>
<Directory $W/htdocs>
    Require all granted
</Directory>
EOF
apache2 -t -f "$W/backend/httpd.conf" >/dev/null 2>&1 || apache2 -t -f "$W/backend/httpd.conf" || exit 1
run_bg direct "$W/backend/out.log" apache2 -DFOREGROUND -f "$W/backend/httpd.conf"

# ---- the fronts
front() { # kind n
  local k=$1 n=$2 t=$1-$2 d=$W/$1-$2 a=$W/acl-$2 p
  port; p=$got_port; PORT[$t]=$p; mkdir -p "$d"
  case $k in
  nginx)
    mkdir -p "$d/tmp"
    cat > "$d/nginx.conf" <<EOF
worker_processes $WORKERS;
pid $d/nginx.pid;
error_log $d/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $d/tmp;
  proxy_temp_path $d/tmp;
  keepalive_requests 1000000;
  upstream backend { server 127.0.0.1:$bport; keepalive 128; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:$p;
    location / {
      include $a/nginx.inc;
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
EOF
    nginx -t -p "$d" -c "$d/nginx.conf" -e "$d/error.log" >/dev/null 2>&1 || die "nginx -t failed on $d/nginx.conf"
    run_bg "$t" "$d/out.log" nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" -g 'daemon off;' ;;
  haproxy)
    cat > "$d/haproxy.cfg" <<EOF
global
  maxconn 4096
$HAP_THREADS
defaults
  mode http
  option http-keep-alive
  timeout connect 5s
  timeout client 60s
  timeout server 60s
frontend in
  bind 127.0.0.1:$p
  http-request deny deny_status 403 if { src -f $a/deny.lst }
  http-request deny deny_status 403 unless { src 127.0.0.0/8 }
  default_backend httpd
backend httpd
  server b 127.0.0.1:$bport
EOF
    haproxy -c -q -f "$d/haproxy.cfg" >/dev/null 2>&1 || die "haproxy -c failed on $d/haproxy.cfg"
    run_bg "$t" "$d/out.log" haproxy -db -f "$d/haproxy.cfg" ;;
  caddy)
    { printf '{\n  admin off\n  auto_https off\n}\nhttp://127.0.0.1:%s {\n  bind 127.0.0.1\n  @denied remote_ip ' "$p"
      tr '\n' ' ' < "$a/deny.lst"
      printf '\n  respond @denied 403\n  @outside not remote_ip 127.0.0.0/8\n  respond @outside 403\n  reverse_proxy 127.0.0.1:%s\n}\n' "$bport"
    } > "$d/Caddyfile"
    mkdir -p "$d/home"
    caddy adapt --adapter caddyfile --config "$d/Caddyfile" >/dev/null 2>"$d/adapt.log" || die "caddy adapt failed on $d/Caddyfile: $(tail -1 "$d/adapt.log")"
    run_bg "$t" "$d/out.log" env HOME="$d/home" XDG_CONFIG_HOME="$d/home" XDG_DATA_HOME="$d/home" \
      caddy run --adapter caddyfile --config "$d/Caddyfile" ;;
  *) # an orderly binary
    cat > "$d/orderly.hcl" <<EOF
listen = "127.0.0.1:$p"
backend "httpd" {
  url = "http://127.0.0.1:$bport"
}
legacy {
  files         = ["$a/legacy.conf"]
  document_root = "$W/htdocs"
}
mode      = "enforce"
error_log = "$d/error.log"
EOF
    if [ "$PROFILE_SECONDS" -gt 0 ]; then # pprof on the admin listener (loopback: no token)
      port; PORT[$t-admin]=$got_port; printf 'admin {\n  listen = "127.0.0.1:%s"\n}\n' "$got_port" >> "$d/orderly.hcl"
    fi
    run_bg "$t" "$d/out.log" "${OBIN[$k]}" serve -config "$d/orderly.hcl" ;;
  esac
}
TARGETS=(direct)
for k in "${FRONTS[@]}"; do for n in $NS; do front "$k" "$n"; TARGETS+=("$k-$n"); done; done
if [ "$FLOOR" = 1 ]; then # the floor: no decision, with and without the walk's stat calls
  go build -o "$W/benchrelay" ./internal/cmd/benchrelay
  for t in relay relay-walk; do
    port; PORT[$t]=$got_port
    dr=; [ "$t" = relay-walk ] && dr=$W/htdocs
    run_bg "$t" "$W/$t.log" "$W/benchrelay" -listen "127.0.0.1:$got_port" -backend "127.0.0.1:$bport" -docroot "$dr"
    TARGETS+=("$t")
  done
fi

# ---- checks: allowed, control, denied
code() { curl -s -o "$W/body" -m 5 -w '%{http_code}' --interface "$1" "http://127.0.0.1:$2/1k.txt" || true; }
: > "$OUT/checks.txt"
bad=0
for t in "${TARGETS[@]}"; do
  p=${PORT[$t]}
  for _ in $(seq 100); do [ "$(code 127.0.0.1 "$p")" = 000 ] || break; sleep 0.1; done
  c1=$(code 127.0.0.1 "$p"); size=$(stat -c %s "$W/body" 2>/dev/null || echo 0)
  c3=$(code 127.0.0.3 "$p"); c2=$(code 127.0.0.2 "$p")
  want2=403; case $t in direct | relay*) want2=200 ;; esac
  ok=ok; { [ "$c1" = 200 ] && [ "$size" = 1024 ] && [ "$c3" = 200 ] && [ "$c2" = "$want2" ]; } || { ok=FAILED; bad=1; }
  echo "$t 127.0.0.1=$c1 (${size} B) 127.0.0.3=$c3 127.0.0.2=$c2 (want $want2): $ok" | tee -a "$OUT/checks.txt" >&2
done
[ "$bad" = 0 ] || { KEEP=1; die "a check failed: see $OUT/checks.txt and the logs in $W"; }

# ---- CPU accounting
tree() { local k; echo "$1"; for k in $(ps -o pid= --ppid "$1" 2>/dev/null); do tree "$k"; done; }
declare -A TREE
for t in "${TARGETS[@]}"; do TREE[$t]=$(tree "${PID[$t]}" | tr '\n' ' '); done
SERVER_PIDS=${TREE[*]}
ticks_of() { # utime+stime of the processes given, all threads (dead ones read as 0)
  local f=() p
  for p in "$@"; do [ -r /proc/$p/stat ] && f+=(/proc/$p/stat); done
  [ ${#f[@]} -gt 0 ] || { echo 0; return; }
  awk '{ sub(/^.*\) /, ""); split($0, x, " "); s += x[12] + x[13] } END { print s + 0 }' "${f[@]}" 2>/dev/null || echo 0
}
# shellcheck disable=SC2086
ticks_servers() { ticks_of $SERVER_PIDS; }
HZ=$(getconf CLK_TCK)
ticks_children() { awk '{ sub(/^.*\) /, ""); split($0, x, " "); print x[14] + x[15] }' /proc/$$/stat; } # reaped children: wrk
ticks_machine() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
ticks_cpu() { awk -v c="cpu$1" '$1 == c { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
ms() { awk -v v="$1" 'BEGIN { u = v; sub(/[0-9.]+/, "", u); x = v + 0; print (u == "us" ? x / 1000 : u == "ms" ? x : u == "s" ? x * 1000 : x * 60000) }'; }

CSV=$OUT/results.csv
echo "round,target,rps,p50_ms,p99_ms,errors,server_busy_pct,other_cpu_pct,front_cpu_us,backend_cpu_us" > "$CSV"
ncpu=$(nproc)
measure() { # round target
  local r=$1 t=$2 f url s0 s1 c0 c1 m0 m1 v0 v1 rps p50 p99 errs busy other f0 f1 b0 b1 nreq fcpu bcpu
  url="http://127.0.0.1:${PORT[$t]}/1k.txt"
  "${CPIN[@]}" wrk -t1 -c"$CONNS" -d"${WARMUP}s" "$url" >/dev/null 2>&1 || true
  f=$OUT/raw/r$r-$t.txt; [ -e "$f" ] && f=${f%.txt}-b.txt
  # shellcheck disable=SC2086
  f0=$(ticks_of ${TREE[$t]}); b0=$(ticks_of ${TREE[direct]})
  s0=$(ticks_servers); c0=$(ticks_children); m0=$(ticks_machine); v0=$(ticks_cpu "$SERVER_CPU")
  "${CPIN[@]}" wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency "$url" > "$f" 2>&1 || true
  s1=$(ticks_servers); c1=$(ticks_children); m1=$(ticks_machine); v1=$(ticks_cpu "$SERVER_CPU")
  # shellcheck disable=SC2086
  f1=$(ticks_of ${TREE[$t]}); b1=$(ticks_of ${TREE[direct]})
  rps=$(awk '/^Requests\/sec:/ { print $2 }' "$f")
  p50=$(ms "$(awk '$1 == "50%" { print $2 }' "$f")"); p99=$(ms "$(awk '$1 == "99%" { print $2 }' "$f")")
  errs=$(awk '/Non-2xx/ { n += $NF } /Socket errors/ { gsub(/,/, ""); n += $4 + $6 + $8 + $10 } END { print n + 0 }' "$f")
  read -r busy other <<< "$(awk -v m0="$m0" -v m1="$m1" -v v0="$v0" -v v1="$v1" -v s="$((s1 - s0))" -v c="$((c1 - c0))" -v n="$ncpu" 'BEGIN {
    split(m0, a, " "); split(m1, b, " "); split(v0, x, " "); split(v1, y, " ")
    core = (b[2] - a[2]) / n
    printf "%.0f %.0f\n", (y[2] > x[2] ? 100 * (y[1] - x[1]) / (y[2] - x[2]) : 0), (core > 0 ? 100 * ((b[1] - a[1]) - s - c) / core : 0) }')"
  # CPU time per request of the front's own processes and of the backend's
  # (the same for direct): what each spent, whatever else ran beside them.
  nreq=$(awk '/requests in/ { print $1 }' "$f")
  read -r fcpu bcpu <<< "$(awk -v n="${nreq:-0}" -v hz="$HZ" -v f="$((f1 - f0))" -v b="$((b1 - b0))" -v d="$([ "$t" = direct ] && echo 1 || echo 0)" 'BEGIN {
    if (n <= 0) { print "0 0"; exit } fu = 1e6 * f / hz / n; bu = 1e6 * b / hz / n; printf "%.1f %.1f\n", (d ? bu : fu), bu }')"
  echo "$r,$t,${rps:-0},$p50,$p99,$errs,$busy,$other,$fcpu,$bcpu" >> "$CSV"
  say "round $r $t: ${rps:-?} req/s p50 ${p50} ms p99 ${p99} ms errors $errs server cpu ${busy}% other cpu ${other}% cpu/req front ${fcpu} µs backend ${bcpu} µs"
}

"${CPIN[@]}" wrk -t1 -c"$CONNS" -d2s "http://127.0.0.1:$bport/1k.txt" >/dev/null 2>&1 || true # warm the backend
say "$ROUNDS rounds of $(( ${#TARGETS[@]} + 1 )) runs of ${WARMUP}+${DURATION} s; results in $OUT"
start=$(date -u +%FT%TZ); load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$ROUNDS"); do
  for t in "${TARGETS[@]}" direct; do measure "$r" "$t"; done
done

# ---- profiles
if [ "$PROFILE_SECONDS" -gt 0 ]; then
  for k in "${FRONTS[@]}"; do
    [ -n "${OBIN[$k]:-}" ] || continue
    t=$k-$maxn
    "${CPIN[@]}" wrk -t1 -c"$CONNS" -d"$((PROFILE_SECONDS + 2))s" "http://127.0.0.1:${PORT[$t]}/1k.txt" >/dev/null 2>&1 &
    load=$!
    sleep 1
    curl -s -o "$OUT/$t.cpu.pprof" "http://127.0.0.1:${PORT[$t-admin]}/debug/pprof/profile?seconds=$PROFILE_SECONDS" || true
    wait "$load" || true
    go tool pprof -top -nodecount=60 "${OBIN[$k]}" "$OUT/$t.cpu.pprof" > "$OUT/$t.cpu.top.txt" 2>&1 || true
    say "profile of $t: $OUT/$t.cpu.pprof ($OUT/$t.cpu.top.txt)"
  done
fi

# ---- peak memory
MEM=$OUT/memory.csv
echo "target,peak_rss_kib" > "$MEM"
for t in "${TARGETS[@]}"; do
  hwm=0; for p in $(tree "${PID[$t]}"); do v=$(awk '$1 == "VmHWM:" { print $2 }' /proc/$p/status 2>/dev/null || true); hwm=$((hwm + ${v:-0})); done
  echo "$t,$hwm" >> "$MEM"
done

# ---- summary
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit+changes"
{
  echo "make bench-peers, $start, commit $commit, $(nproc) cores ($(uname -r)), load average before $load0"
  echo
  echo "wrk -t1 -c$CONNS on cpu $CLIENT_CPU, every server on cpu $SERVER_CPU (PIN=$PIN); $ROUNDS interleaved rounds of ${DURATION} s (${WARMUP} s warm-up each); 1 KiB file; median [min-max] over rounds"
  echo
  echo "| target | req/s | ratio to backend | added µs/req | CPU µs/req: front, backend | added CPU µs/req | p50 ms | p99 ms | peak RSS MiB | errors | server cpu % | other cpu % (max) |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F, -v mem="$MEM" -v medf="$OUT/medians.txt" '
    function sort(s, a,   n, i, j, x) { n = split(s, a, " "); for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j > 0 && a[j] + 0 > x + 0; j--) a[j + 1] = a[j]; a[j + 1] = x } return n }
    function med(s,   a, n) { n = sort(s, a); lo = a[1]; hi = a[n]; return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    BEGIN { while ((getline l < mem) > 0) { split(l, f, ","); rss[f[1]] = f[2] / 1024 } }
    NR == 1 { next }
    { row[NR] = $0; if (!($2 in seen)) { seen[$2] = 1; order[++no] = $2 }
      if ($2 == "direct") { base[$1] += $3; nb[$1]++; dc[$1] += $10; ndc[$1]++ } }
    END {
      for (i = 2; i <= NR; i++) { split(row[i], f, ","); t = f[2]; b = base[f[1]] / nb[f[1]]
        rps[t] = rps[t] " " f[3]; p50[t] = p50[t] " " f[4]; p99[t] = p99[t] " " f[5]; err[t] += f[6]; busy[t] = busy[t] " " f[7]
        fc[t] = fc[t] " " f[9]; bc[t] = bc[t] " " f[10]; dcpu = dc[f[1]] / ndc[f[1]]
        acpu[t] = acpu[t] " " (t == "direct" ? 0 : f[9] + f[10] - dcpu)
        if (!(t in oth) || f[8] + 0 > oth[t]) oth[t] = f[8] + 0
        if (f[3] > 0) { ratio[t] = ratio[t] " " f[3] / b; added[t] = added[t] " " (1e6 / f[3] - 1e6 / b) } }
      for (i = 1; i <= no; i++) { t = order[i]
        r = med(rps[t]); rl = lo; rh = hi; q = med(ratio[t]); ql = lo; qh = hi; a = med(added[t]); al = lo; ah = hi
        fcm = med(fc[t]); bcm = med(bc[t]); ac = med(acpu[t]); acl = lo; ach = hi
        x = med(p50[t]); y = med(p99[t]); yl = lo; yh = hi; c = med(busy[t])
        printf "| %s | %.0f [%.0f-%.0f] | %.2f [%.2f-%.2f] | %.1f [%.1f-%.1f] | %.1f, %.1f | %.1f [%.1f-%.1f] | %.2f | %.2f [%.2f-%.2f] | %.1f | %d | %.0f | %d |\n", t, r, rl, rh, q, ql, qh, a, al, ah, fcm, bcm, ac, acl, ach, x, y, yl, yh, rss[t], err[t], c, oth[t]
        print t, a, y, rss[t], q, ac > medf } }' "$CSV"
  echo
  # The issue 20 targets, on the medians of this run.
  awk -v ns="$NS" '
    { added[$1] = $2; p99[$1] = $3; rss[$1] = $4; ratio[$1] = $5; cpu[$1] = $6 }
    function check(what, ok) { printf "- %s: %s\n", what, (ok ? "met" : "**not met**") }
    END {
      n = split(ns, N, " "); lo = N[1]; hi = N[n]
      if (!(("orderly-" hi) in added)) exit
      o = "orderly-" hi; o0 = "orderly-" lo
      if (("nginx-" hi) in added) {
        check(sprintf("added µs at %s rules at most 1.5x nginx (%.1f vs %.1f: %.2fx)", hi, added[o], added["nginx-" hi], added[o] / added["nginx-" hi]), added[o] <= 1.5 * added["nginx-" hi])
        check(sprintf("p99 at %s rules at most 1.5x nginx (%.2f vs %.2f ms)", hi, p99[o], p99["nginx-" hi]), p99[o] <= 1.5 * p99["nginx-" hi])
        printf "- (the same, in CPU time: added CPU µs at %s rules %.1f vs nginx %.1f: %.2fx)\n", hi, cpu[o], cpu["nginx-" hi], cpu[o] / cpu["nginx-" hi]
      }
      if (("caddy-" lo) in added)
        check(sprintf("added µs at %s rules at most half of Caddy (%.1f vs %.1f)", lo, added[o0], added["caddy-" lo]), added[o0] <= 0.5 * added["caddy-" lo])
      if (("caddy-" lo) in added)
        printf "- (the same, in CPU time: %.1f vs %.1f)\n", cpu[o0], cpu["caddy-" lo]
      d = ratio[o] / ratio[o0]
      check(sprintf("flat from %s to %s rules within 10%% (req/s ratio %.3f)", lo, hi, d), d >= 0.9 && d <= 1.1)
      check(sprintf("peak RSS at %s rules at most 48 MiB (%.1f)", hi, rss[o]), rss[o] <= 48)
      if ("relay-walk" in added) {
        printf "- floor (no decision, same rounds): relay adds %.1f µs (p99 %.2f ms), relay-walk %.1f µs (p99 %.2f ms); orderly at %s rules adds %.1f µs over relay-walk (%.2fx)\n", added["relay"], p99["relay"], added["relay-walk"], p99["relay-walk"], hi, added[o] - added["relay-walk"], added[o] / added["relay-walk"]
        if (("nginx-" hi) in added)
          printf "- 1.5x nginx at %s rules is %.1f µs and %.2f ms p99: relay-walk is %s in µs and %s in p99\n", hi, 1.5 * added["nginx-" hi], 1.5 * p99["nginx-" hi], (added["relay-walk"] <= 1.5 * added["nginx-" hi] ? "within it" : "above it"), (p99["relay-walk"] <= 1.5 * p99["nginx-" hi] ? "within it" : "above it")
      }
    }' "$OUT/medians.txt"
  echo
  awk -F, 'NR > 1 && $8 > 10 { n++ } END { printf "runs during which other work used more than 10%% of a core: %d of %d\n", n, NR - 1 }' "$CSV"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/summary.md"
cat "$OUT/summary.md"
