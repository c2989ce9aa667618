#!/usr/bin/env bats
# A server without Range and without PEP 658 (issue 44): every METADATA
# costs a whole wheel there.  The index (tests/tools/mknorange_index.py) has a
# torch that pins dep==1.0 exactly beside eight other 3 MiB releases of dep
# (one newer, seven older): sync must read none of those eight, download no
# wheel twice (a wheel read whole for its metadata is the stored object that
# fetch then finds), and the server must send at most 1.1 x the closure's
# bytes.  Three real servers that ignore Range: python's http.server, nginx
# with max_ranges 0, and devpi-server 6 (from PyPI, in a venv of the test
# cache) as a mirror of the index served by http.server.  Their access logs
# are the witnesses.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	python3 "$OW_SOURCE_DIR/tests/tools/mknorange_index.py" "$SRV/idx" 3
	export HOSTPY=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	# the closure's bytes (torch, dep 1.0, small 2.0)
	export CLOSURE_BYTES=$(awk '{s += $2} END {print s}' "$SRV/idx/CLOSURE")
}

teardown_file() {
	rm -rf "$SRV"
}

teardown() {
	[ -n "${HPID:-}" ] && kill "$HPID" 2>/dev/null
	[ -f "$BATS_TEST_TMPDIR/devpi.pid" ] && kill "$(cat "$BATS_TEST_TMPDIR/devpi.pid")" 2>/dev/null
	ow_stop_nginx
	return 0
}

# python's http.server over the index on a free port; HPORT, HPID, HLOG
start_http_server() {
	export HPORT=$(ow_free_port) HLOG=$BATS_TEST_TMPDIR/http.log
	ow_spawn "$HLOG" python3 -m http.server "$HPORT" --bind 127.0.0.1 -d "$SRV/idx"
	HPID=$OW_SPAWN_PID
	local i
	for i in $(seq 50); do
		curl -sf -o /dev/null "http://127.0.0.1:$HPORT/simple/" && return 0
		sleep 0.1
	done
	echo "http.server did not come up on port $HPORT"
	cat "$HLOG"
	return 1
}

# sync torch alone for the host's target through ROOT; stderr in $BATS_TEST_TMPDIR/err
sync_torch() { # ROOT TRUST...
	local root=$1
	shift
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json sync --index-url "$root" \
		"$@" --python "$HOSTPY" --platform linux-x86_64 --project torch
	echo "$stderr" >"$BATS_TEST_TMPDIR/err"
	echo "$output" >"$BATS_TEST_TMPDIR/out.json"
	echo "exit $status; stderr: $stderr"
	[ "$status" -eq 0 ]
	jq -e '.complete' "$BATS_TEST_TMPDIR/out.json" >/dev/null
	# the set: torch 2.15.0 with dep 1.0 (the pin) and small 2.0
	diff -u <(printf '%s\n' dep==1.0 small==2.0 torch==2.15.0) \
		<(jq -r '.resolve.targets[0].members[] | "\(.project)==\(.version)"' "$BATS_TEST_TMPDIR/out.json" | sort)
	# said once, naming the host and the cost
	[ "$(grep -c "ignores Range requests: metadata costs whole wheels (.*so far); those wheels are kept and not fetched again" "$BATS_TEST_TMPDIR/err")" -eq 1 ]
	# nothing half-done left behind
	"$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" fsck | tee /dev/stderr | grep -q "0 partial(s) — clean"
}

# The wheel paths GET'd, one a line, from a list of "PATH STATUS" lines:
# only the closure's files, each once, each answered 200.
check_wheel_gets() { # FILE (lines: PATH STATUS)
	echo "--- wheel GETs:"
	cat "$1"
	[ -s "$1" ]
	# none of the eight releases the pin rules out
	! grep -E 'dep-(1\.1|0\.[0-9])-py3' "$1"
	# each wheel once
	[ -z "$(awk '{print $1}' "$1" | sort | uniq -d)" ]
	[ "$(awk '{print $1}' "$1" | sed 's|.*/||' | sort | tr '\n' ' ')" = "dep-1.0-py3-none-any.whl small-2.0-py3-none-any.whl torch-2.15.0-py3-none-any.whl " ]
	[ -z "$(awk '$2 != 200' "$1")" ]
}

# bytes served <= 1.1 x the closure's bytes
check_bytes() { # SERVED
	echo "served $1 bytes, the closure is $CLOSURE_BYTES bytes"
	[ "$1" -le "$((CLOSURE_BYTES * 11 / 10))" ]
}

# A second sync downloads nothing: no new wheel GET.
check_warm() { # ROOT LOGFILE TRUST...
	local root=$1 log=$2 n
	shift 2
	n=$(grep -c '\.whl' "$log")
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json sync --index-url "$root" \
		"$@" --python "$HOSTPY" --platform linux-x86_64 --project torch
	[ "$status" -eq 0 ]
	[ "$(grep -c '\.whl' "$log")" -eq "$n" ]
}

@test "python's http.server: none of the releases the pin rules out is read, each wheel is sent once" {
	start_http_server
	local root=http://127.0.0.1:$HPORT/simple
	sync_torch "$root" --trusted-host "127.0.0.1:$HPORT"
	grep -q "127.0.0.1:$HPORT ignores Range requests" "$BATS_TEST_TMPDIR/err"
	# "GET /simple/dep/dep-1.0-py3-none-any.whl HTTP/1.1" 200 -
	grep -o '"GET [^ ]*\.whl HTTP/1\.[01]" [0-9]*' "$HLOG" | awk '{print $2, $4}' >"$BATS_TEST_TMPDIR/gets"
	check_wheel_gets "$BATS_TEST_TMPDIR/gets"
	# http.server logs no sizes: every GET answered 200 sent the whole file
	local served=0 p
	for p in $(grep -o '"GET [^ ]* HTTP/1\.[01]" 200' "$HLOG" | awk '{print $2}'); do
		f=$SRV/idx$p
		[ -d "$f" ] && f=$f/index.html
		served=$((served + $(stat -c %s "$f")))
	done
	check_bytes "$served"
	check_warm "$root" "$HLOG" --trusted-host "127.0.0.1:$HPORT"
}

@test "nginx with max_ranges 0: the answer to the first range is the whole wheel, taken and stored" {
	OW_NGINX_MAX_RANGES=0 ow_start_nginx "$SRV/idx"
	local root=$OW_HTTPS_URL/simple
	sync_torch "$root" --cert "$OW_CA_FILE"
	grep -q "localhost:$OW_HTTPS_PORT ignores Range requests" "$BATS_TEST_TMPDIR/err"
	# <port> "GET /simple/dep/... HTTP/1.1" 200 <bytes> range="..."
	grep '\.whl HTTP' "$OW_NGINX_LOG" | awk '{print $3, $5}' >"$BATS_TEST_TMPDIR/gets"
	check_wheel_gets "$BATS_TEST_TMPDIR/gets"
	# every wheel sent in full, once (a range answered 200 was not cut off)
	grep '\.whl HTTP' "$OW_NGINX_LOG" | while read -r _ _ path _ st bytes _; do
		[ "$bytes" -eq "$(stat -c %s "$SRV/idx$path")" ] || exit 1
	done
	check_bytes "$(awk '{s += $6} END {print s}' "$OW_NGINX_LOG")"
	check_warm "$root" "$OW_NGINX_LOG" --cert "$OW_CA_FILE"
}

# devpi-server 6 and devpi-client in a venv of the test cache (made once);
# a reason on stdout when they cannot be had
devpi6_tools() {
	local ext=${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests} v
	# devpi.bats's venv when it holds a devpi-server 6, else one of our own
	for DVENV in "$ext/devpi-venv" "$ext/devpi6-venv"; do
		v=$("$DVENV/bin/devpi-server" --version 2>/dev/null | tail -1)
		[ -x "$DVENV/bin/devpi" ] && [ "${v%%.*}" = 6 ] && return 0
	done
	if ! curl -sf --max-time 10 -o /dev/null https://pypi.org/simple/devpi-server/; then
		echo "PyPI is not reachable: devpi-server 6 cannot be installed, the devpi mirror test did not run"
		return 0
	fi
	mkdir -p "$ext"
	rm -rf "$DVENV"
	if python3 -m venv "$DVENV" >/dev/null 2>&1 &&
		PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 \
			timeout 600 "$DVENV/bin/python" -m pip install -q 'devpi-server>=6,<7' devpi-client \
			>"$ext/devpi6-venv.log" 2>&1 && "$DVENV/bin/devpi-server" --version >/dev/null 2>&1; then
		return 0
	fi
	rm -rf "$DVENV"
	echo "cannot install devpi-server 6 and devpi-client from PyPI into $DVENV (see $ext/devpi6-venv.log)"
}

@test "devpi-server 6 as a mirror of the index: no PEP 658, no Range; each wheel asked of it once" {
	local skip_why
	skip_why=$(devpi6_tools)
	[ -z "$skip_why" ] || skip "$skip_why"
	DVENV=${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}/devpi-venv
	"$DVENV/bin/devpi-server" --version 2>/dev/null | grep -q '^6\.' ||
		DVENV=${DVENV%/*}/devpi6-venv
	start_http_server
	local d=$BATS_TEST_TMPDIR/devpi port i
	port=$(ow_free_port)
	"$DVENV/bin/devpi-init" --serverdir "$d" --no-root-pypi >"$BATS_TEST_TMPDIR/devpi.log" 2>&1
	ow_spawn "$BATS_TEST_TMPDIR/devpi.log" \
		"$DVENV/bin/devpi-server" --serverdir "$d" --host 127.0.0.1 --port "$port"
	echo "$OW_SPAWN_PID" >"$BATS_TEST_TMPDIR/devpi.pid"
	for i in $(seq 150); do # 30 s
		curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$port/+api" && break
		sleep 0.2
	done
	export DEVPI_CLIENTDIR=$BATS_TEST_TMPDIR/client
	{
		"$DVENV/bin/devpi" use "http://127.0.0.1:$port" &&
			"$DVENV/bin/devpi" login root --password '' &&
			"$DVENV/bin/devpi" index -c mirror type=mirror \
				"mirror_url=http://127.0.0.1:$HPORT/simple/"
	} >"$BATS_TEST_TMPDIR/client.log" 2>&1 || { cat "$BATS_TEST_TMPDIR/client.log" "$BATS_TEST_TMPDIR/devpi.log"; false; }
	echo "devpi-server $("$DVENV/bin/devpi-server" --version | tail -1), mirroring http://127.0.0.1:$HPORT/simple/"
	# the mirror's pages: the upstream's files, no PEP 658 attribute
	curl -sf "http://127.0.0.1:$port/root/mirror/+simple/dep/" | tee "$BATS_TEST_TMPDIR/page" |
		grep -q 'href="\.\./\.\./+f/[0-9a-f/]*/dep-1\.0-py3-none-any\.whl#sha256='
	! grep -q 'data-core-metadata\|data-dist-info-metadata' "$BATS_TEST_TMPDIR/page"
	local root=http://127.0.0.1:$port/root/mirror/+simple
	sync_torch "$root" --trusted-host "127.0.0.1:$port"
	grep -q "127.0.0.1:$port ignores Range requests" "$BATS_TEST_TMPDIR/err"
	# devpi's log: "[req14] GET /root/mirror/+f/294/06950ae5a5a0a/dep-1.0-py3-none-any.whl"
	tr -d '\000' <"$BATS_TEST_TMPDIR/devpi.log" | grep -o 'GET /root/mirror/+f/[^ ]*\.whl$' |
		awk '{print $2, 200}' >"$BATS_TEST_TMPDIR/gets"
	check_wheel_gets "$BATS_TEST_TMPDIR/gets"
	# what devpi was asked for, by size (devpi logs no sizes; it sends files whole)
	local served=0 f
	for f in $(awk '{print $1}' "$BATS_TEST_TMPDIR/gets"); do
		served=$((served + $(stat -c %s "$(find "$SRV/idx/simple" -name "${f##*/}")")))
	done
	check_bytes "$served"
	# and devpi read each from upstream once
	grep -o '"GET [^ ]*\.whl HTTP/1\.[01]" [0-9]*' "$HLOG" | awk '{print $2, $4}' >"$BATS_TEST_TMPDIR/up"
	check_wheel_gets "$BATS_TEST_TMPDIR/up"
	check_warm "$root" "$BATS_TEST_TMPDIR/devpi.log" --trusted-host "127.0.0.1:$port"
}
