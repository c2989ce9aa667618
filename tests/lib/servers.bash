# servers.bash - test servers for bats tests (load with
#   load "$OW_SOURCE_DIR/tests/lib/servers.bash").
#
# ow_start_nginx ROOT [ROOT2]
#   Starts a real nginx as the current user (no root needed) on free loopback
#   ports (OW_NGINX_LIMIT_RATE=RATE, e.g. 2k, slows the first server's
#   responses to RATE bytes/s per connection: progress stays on screen;
#   OW_NGINX_MAX_RANGES=0 makes it a server that ignores Range requests;
#   OW_NGINX_AUTH_FILE=FILE puts the first server behind HTTP basic auth with
#   the users of FILE, "user:{PLAIN}password" lines; the second never asks)
#   ports, serving ROOT over HTTP and HTTPS and ROOT2 (default ROOT) over a
#   second HTTPS port standing in for the second download host.  The test PKI
#   (tests/tools/mkcerts.sh) is made at start.  Exports:
#     OW_HTTP_PORT OW_HTTPS_PORT OW_HTTPS_PORT2
#     OW_HTTP_URL  = http://127.0.0.1:$OW_HTTP_PORT
#     OW_HTTPS_URL = https://localhost:$OW_HTTPS_PORT
#     OW_HTTPS_URL2 = https://r2.localhost:$OW_HTTPS_PORT2 (resolved by curl
#                    to loopback; name is in the certificate)
#     OW_CA_FILE   test CA (PEM)     OW_CERT_DIR  all test certificates
#     OW_NGINX_DIR nginx prefix      OW_NGINX_LOG access log, one line each:
#       <server_port> "<request>" <status> <bytes> range="<Range>"
#       if_range="<If-Range>" inm="<If-None-Match>" ims="<If-Modified-Since>"
#       ae="<Accept-Encoding>" accept="<Accept>" ct="<Content-Type sent>"
#       auth="<Authorization>"
#   (escape=json: an absent header is logged as "", a quote as \").
#   The first server answers /to-r2/PATH with a 302 to
#   https://127.0.0.1:$OW_HTTPS_PORT2/PATH (the second server by its address,
#   which Python resolves too; r2.localhost only curl does).
# ow_stop_nginx            stops it (call from teardown).
# ow_nginx_log_count PATTERN   number of access-log lines matching (grep -E).
# ow_start_faultserver ROOT [--cert PEM --key PEM]
#   Starts tests/tools/faultserver.py; exports OW_FAULT_PORT, OW_FAULT_URL
#   (http://127.0.0.1:PORT); ow_stop_faultserver stops it.
# ow_spawn LOG CMD...
#   Starts a server of the test's own (python3 -m http.server, ...) as these
#   functions start theirs; sets OW_SPAWN_PID.  The caller stops it (kill).
#
# Every server started here (ow_start_nginx, ow_nginx_serve,
# ow_start_faultserver, ow_spawn, and seaweed.bash's) is started
#  - holding no descriptor of the shell that starts it but stdin (/dev/null),
#    stdout and stderr (its logs): bats reads the test's output until every
#    holder of its pipes has closed them, so a server holding one (a failed
#    setup_file that never reached its stop) hung the file until ctest's
#    timeout;
#  - (started by a bats test's own shell) with a watchdog: when the bats
#    process that started it (the file's for setup_file, the test's for a
#    test) has exited, a server still running is stopped (TERM, KILL 3 s
#    later) and a line saying so goes to
#    $OW_BUILD_DIR/Testing/ow-servers-stopped.log, which the suite's last
#    test (integration/servers_stopped, tests/tools/servers_left.py) prints;
#  - marked with the run's OW_TEST_RUN_ID (ctest sets it for the integration
#    tests: one per build directory): in its environment, and on nginx's
#    command line (nginx overwrites its environment with its process
#    title).  integration/servers_stopped fails on any process so marked
#    that outlives the integration tests.

_ow_src() { echo "${OW_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"; }

# A free TCP port on 127.0.0.1 (the kernel picks it; tiny race accepted).
ow_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

_ow_nginx_conf() { # dir root root2
	local d=$1 root=$2 root2=$3 user=
	# as root, nginx would drop its workers to nobody, who cannot read the
	# test directories; keep them as the current user
	[ "$(id -u)" = 0 ] && user="user $(id -un) $(id -gn);"
	cat > "$d/nginx.conf" <<EOF
$user
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log warn;
daemon on;
events { worker_connections 256; }
http {
	types { text/html html; application/octet-stream whl bin; text/plain txt metadata;
	        application/vnd.pypi.simple.v1+json json; }
	# PEP 691 content negotiation: a client that asks for the JSON API gets a
	# folder's index.json where there is one, its index.html otherwise
	map \$http_accept \$ow_index {
		default index.html;
		"~application/vnd\.pypi\.simple\.v1\+json" index.json;
	}
	default_type application/octet-stream;
	client_body_temp_path $d/tmp/body;
	proxy_temp_path $d/tmp/proxy;
	fastcgi_temp_path $d/tmp/fastcgi;
	uwsgi_temp_path $d/tmp/uwsgi;
	scgi_temp_path $d/tmp/scgi;
	log_format ow escape=json '\$server_port "\$request" \$status \$body_bytes_sent range="\$http_range" '
	              'if_range="\$http_if_range" inm="\$http_if_none_match" '
	              'ims="\$http_if_modified_since" ae="\$http_accept_encoding" accept="\$http_accept" ct="\$sent_http_content_type" '
	              'auth="\$http_authorization"';
	access_log $d/access.log ow;
	sendfile on;
	etag on;
	autoindex off;
	index \$ow_index index.html;
	server {
		listen 127.0.0.1:$OW_HTTP_PORT;
		listen 127.0.0.1:$OW_HTTPS_PORT ssl;
		server_name localhost 127.0.0.1;
		${OW_NGINX_LIMIT_RATE:+limit_rate $OW_NGINX_LIMIT_RATE;}
		${OW_NGINX_MAX_RANGES:+max_ranges $OW_NGINX_MAX_RANGES;}
		${OW_NGINX_AUTH_FILE:+auth_basic lab-index; auth_basic_user_file $OW_NGINX_AUTH_FILE;}
		rewrite ^/to-r2/(.*)\$ https://127.0.0.1:$OW_HTTPS_PORT2/\$1 redirect;
		ssl_certificate $OW_CERT_DIR/server.pem;
		ssl_certificate_key $OW_CERT_DIR/server.key;
		root $root;
	}
	server {
		listen 127.0.0.1:$OW_HTTPS_PORT2 ssl;
		server_name r2.localhost;
		ssl_certificate $OW_CERT_DIR/server.pem;
		ssl_certificate_key $OW_CERT_DIR/server.key;
		root $root2;
	}
}
EOF
}

# _ow_close_fds: in a subshell about to exec a server, close every
# descriptor above 2 (bats' output pipes, its script's descriptor ...)
_ow_close_fds() {
	local f n
	for f in /proc/$BASHPID/fd/*; do
		n=${f##*/}
		[ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"
	done
	return 0
}

# _ow_watchdog PID MATCH: once this shell's process ($$: the bats file's in
# setup_file, the test's in a test) has exited, stop PID if it still runs
# and its command line still holds MATCH (a pid the kernel gave to another
# process since is left alone).  The watchdog holds none of bats'
# descriptors and is not marked with OW_TEST_RUN_ID: it is not a leftover.
# Only in a bats process's own shell (bats' `skip` is defined there, not in
# the scripts a test runs): `scripts/demo --serve` leaves its nginx running
# on purpose after it exits, also when a test runs it.
_ow_watchdog() { # PID MATCH [OWNER]: OWNER (default this shell's bats process) ends -> PID stopped
	local pid=$1 match=$2 owner=${3:-$$} log=
	[ -n "$pid" ] && [ -n "${BATS_TEST_FILENAME:-}" ] && declare -F skip >/dev/null || return 0
	[ -n "${OW_BUILD_DIR:-}" ] && [ -d "$OW_BUILD_DIR" ] && log=$OW_BUILD_DIR/Testing/ow-servers-stopped.log
	(
		_ow_close_fds
		exec env -u OW_TEST_RUN_ID sh -c '
			owner=$1 pid=$2 match=$3 log=$4 file=$5
			tail --pid="$owner" -f /dev/null 2>/dev/null
			alive() {
				cmd=$(tr "\0" " " <"/proc/$pid/cmdline" 2>/dev/null) || return 1
				case $cmd in *"$match"*) return 0 ;; esac
				return 1
			}
			alive || exit 0
			what=$cmd
			kill -TERM "$pid" 2>/dev/null
			i=0
			while alive && [ "$i" -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
			alive && { pkill -KILL -P "$pid"; kill -KILL "$pid"; } 2>/dev/null
			[ -n "$log" ] && mkdir -p "${log%/*}" &&
				echo "${file##*/}: left running when its bats process ended; stopped: $what" >>"$log"
			exit 0' sh "$owner" "$pid" "$match" "$log" "${BATS_TEST_FILENAME:-}"
	) </dev/null >/dev/null 2>&1 &
	disown $! 2>/dev/null || true
}

# nginx's command line carries the run's mark (it overwrites its environment)
_ow_nginx_mark() {
	[ -n "${OW_TEST_RUN_ID:-}" ] && printf '%s\n' -g "env OW_TEST_RUN_ID=$OW_TEST_RUN_ID;"
	return 0
}

# _ow_nginx_run PREFIX: start nginx (daemon) with PREFIX/nginx.conf, holding
# none of our descriptors; on success, its master is watched
_ow_nginx_run() {
	local d=$1 mark pid
	mapfile -t mark < <(_ow_nginx_mark)
	( _ow_close_fds; exec nginx -p "$d" -c "$d/nginx.conf" -e "$d/error.log" "${mark[@]}" ) </dev/null || return 1
	# the daemon writes its pid file after the starting process has returned
	for _ in $(seq 50); do
		pid=$(cat "$d/nginx.pid" 2>/dev/null) && [ -n "$pid" ] && break
		sleep 0.1
	done
	_ow_watchdog "$pid" "$d/nginx.conf"
	return 0
}

ow_spawn() {
	local log=${1:?ow_spawn LOG CMD...}
	shift
	( _ow_close_fds; exec "$@" ) </dev/null >"$log" 2>&1 &
	OW_SPAWN_PID=$!
	_ow_watchdog "$OW_SPAWN_PID" "$1"
}

ow_start_nginx() {
	local root=${1:?ow_start_nginx ROOT [ROOT2]} root2=${2:-$1} d try
	command -v nginx >/dev/null || PATH=$PATH:/usr/sbin
	command -v nginx >/dev/null || { echo "nginx not installed (apt-get install nginx)" >&2; return 1; }
	d=$(mktemp -d "${BATS_TEST_TMPDIR:-${TMPDIR:-/tmp}}/nginx.XXXXXX")
	mkdir -p "$d/tmp" "$d/certs"
	export OW_NGINX_DIR=$d OW_CERT_DIR=$d/certs OW_NGINX_LOG=$d/access.log
	sh "$(_ow_src)/tests/tools/mkcerts.sh" "$OW_CERT_DIR" || return 1
	export OW_CA_FILE=$OW_CERT_DIR/ca.pem
	root=$(cd "$root" && pwd) root2=$(cd "$root2" && pwd)
	for try in 1 2 3 4 5; do
		export OW_HTTP_PORT=$(ow_free_port) OW_HTTPS_PORT=$(ow_free_port) OW_HTTPS_PORT2=$(ow_free_port)
		_ow_nginx_conf "$d" "$root" "$root2"
		if _ow_nginx_run "$d" 2>>"$d/start.log"; then
			export OW_HTTP_URL=http://127.0.0.1:$OW_HTTP_PORT
			export OW_HTTPS_URL=https://localhost:$OW_HTTPS_PORT
			export OW_HTTPS_URL2=https://r2.localhost:$OW_HTTPS_PORT2
			_ow_wait_port "$OW_HTTPS_PORT" && return 0
			ow_stop_nginx # not answering: stopped before the next try
		fi
	done
	echo "nginx did not start:" >&2
	cat "$d/start.log" "$d/error.log" >&2 2>/dev/null
	return 1
}

_ow_wait_port() {
	local i
	for i in $(seq 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

ow_stop_nginx() {
	[ -n "${OW_NGINX_DIR:-}" ] && [ -f "$OW_NGINX_DIR/nginx.pid" ] || return 0
	local i pid
	pid=$(cat "$OW_NGINX_DIR/nginx.pid" 2>/dev/null)
	nginx -p "$OW_NGINX_DIR" -c "$OW_NGINX_DIR/nginx.conf" -e "$OW_NGINX_DIR/error.log" -s stop 2>/dev/null \
		|| kill "$pid" 2>/dev/null
	for i in $(seq 30); do
		[ -f "$OW_NGINX_DIR/nginx.pid" ] || break
		sleep 0.1
	done
	# not gone in 3 s (a full disk, a wedged worker): no server outlives the test
	[ -f "$OW_NGINX_DIR/nginx.pid" ] && [ -n "$pid" ] &&
		grep -qsF "$OW_NGINX_DIR/nginx.conf" "/proc/$pid/cmdline" &&
		{ pkill -KILL -P "$pid"; kill -KILL "$pid"; } 2>/dev/null
	return 0
}

ow_nginx_log_count() {
	grep -cE "$1" "$OW_NGINX_LOG" 2>/dev/null || true
}

ow_start_faultserver() {
	local root=${1:?ow_start_faultserver ROOT [args]} out
	shift
	out=$(mktemp "${BATS_TEST_TMPDIR:-${TMPDIR:-/tmp}}/fault.XXXXXX")
	( _ow_close_fds; exec python3 "$(_ow_src)/tests/tools/faultserver.py" --root "$root" "$@" ) </dev/null >"$out" &
	export OW_FAULT_PID=$!
	_ow_watchdog "$OW_FAULT_PID" faultserver.py
	local i
	for i in $(seq 100); do
		[ -s "$out" ] && break
		sleep 0.05
	done
	export OW_FAULT_PORT=$(head -n1 "$out")
	[ -n "$OW_FAULT_PORT" ] || { echo "faultserver did not start" >&2; return 1; }
	export OW_FAULT_URL=http://127.0.0.1:$OW_FAULT_PORT
}

ow_stop_faultserver() {
	[ -n "${OW_FAULT_PID:-}" ] && kill "$OW_FAULT_PID" 2>/dev/null
	[ -n "${OW_FAULT_PID:-}" ] && wait "$OW_FAULT_PID" 2>/dev/null
	OW_FAULT_PID=
	return 0
}

# ow_nginx_serve DIR PORT: run nginx with DIR/server.conf (a server block
# listening on 127.0.0.1:PORT, such as export --nginx-conf writes) in an http
# block of its own, pid, logs and temp files under DIR; waits for the port.
# The caller stops it with: kill "$(cat DIR/nginx.pid)".
ow_nginx_serve() {
	local d=$1 port=$2 user=
	mkdir -p "$d/tmp"
	[ "$(id -u)" -eq 0 ] && user="user root;" # workers must reach the private test dirs
	cat >"$d/nginx.conf" <<-EOC
		$user
		pid $d/nginx.pid;
		error_log $d/error.log;
		events { worker_connections 256; }
		http {
		  access_log $d/access.log;
		  client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
		  uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
		  include $d/server.conf;
		}
	EOC
	command -v nginx >/dev/null || PATH=$PATH:/usr/sbin
	_ow_nginx_run "$d" || { cat "$d/error.log" >&2; return 1; }
	_ow_wait_port "$port"
}

# ow_serve_fixture_index DIR [make-fixture-index args...]: the sample index
# (tests/tools/make-fixture-index) under DIR, served by nginx over HTTPS on
# its two hosts (the second, r2.localhost, as download-r2.pytorch.org is);
# exports what the tests read: OW_HTTPS_URL, OW_HTTPS_URL2, OW_CA_FILE, ...
ow_serve_fixture_index() {
	local d=${1:?ow_serve_fixture_index DIR [args]}
	shift
	mkdir -p "$d/www" "$d/www2"
	ow_start_nginx "$d/www" "$d/www2" || return 1
	"$(_ow_src)/tests/tools/make-fixture-index" "$d" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" "$@" >/dev/null || return 1
	export OW_HTTPS_URL OW_HTTPS_URL2 OW_CA_FILE OW_NGINX_LOG OW_NGINX_DIR
}
