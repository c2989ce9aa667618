#!/usr/bin/env bats
# The resume rule against a real nginx: one server block that sends no ETag
# and no Last-Modified (as the caching proxies and mirrors that motivated
# it), one that sends both.  A 64 MiB wheel is fetched, interrupted with
# SIGINT at about half, and fetched again; nginx's access log says how many
# bytes went out.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

MIB=64
WHEEL=torch-2.1.0-py3-none-any.whl

setup_file() {
	export SRV=$(mktemp -d)
	export NGX=$SRV/nginx WWW=$SRV/www
	mkdir -p "$NGX" "$WWW"
	export PORT_BARE=$(ow_free_port) PORT_TAGGED=$(ow_free_port)
	# limit_rate: slow enough to interrupt at about half, fast enough to be short
	cat >"$NGX/server.conf" <<-EOC
		log_format bytes '\$server_port "\$request" \$status \$body_bytes_sent';
		server {
		  listen 127.0.0.1:$PORT_BARE;
		  root $WWW;
		  types { text/html html; application/octet-stream whl; }
		  access_log $NGX/bytes.log bytes;
		  etag off;
		  add_header Last-Modified "";
		  limit_rate 16m;
		}
		server {
		  listen 127.0.0.1:$PORT_TAGGED;
		  root $WWW;
		  types { text/html html; application/octet-stream whl; }
		  access_log $NGX/bytes.log bytes;
		  limit_rate 16m;
		}
	EOC
	ow_nginx_serve "$NGX" "$PORT_BARE"
	_ow_wait_port "$PORT_TAGGED"
}

teardown_file() {
	[ -f "$NGX/nginx.pid" ] && kill "$(cat "$NGX/nginx.pid")" 2>/dev/null || true
	rm -rf "$SRV"
}

# publish NAME SEED HASHED: the wheel (64 MiB of the seed's bytes) under
# whl/NAME/files/ and its page whl/NAME/cpu/torch/ (with #sha256 when HASHED=1)
publish() {
	local name=$1 seed=$2 hashed=$3 frag=
	mkdir -p "$WWW/whl/$name/files" "$WWW/whl/$name/cpu/torch"
	python3 "$OW_SOURCE_DIR/tests/tools/mkwheel.py" "$WWW/whl/$name/files/$WHEEL.new" big torch \
		2.1.0 "$MIB" "$seed"
	mv "$WWW/whl/$name/files/$WHEEL.new" "$WWW/whl/$name/files/$WHEEL"
	[ "$hashed" = 1 ] && frag="#sha256=$(sha256sum "$WWW/whl/$name/files/$WHEEL" | cut -c1-64)"
	cat >"$WWW/whl/$name/cpu/torch/index.html" <<-HTML
		<!DOCTYPE html>
		<html><body><h1>Links for torch</h1>
		<a href="/whl/$name/files/$WHEEL$frag">$WHEEL</a><br/>
		</body></html>
	HTML
}

# ow HOME ARGS...: offwheel on workspace HOME, plain http to 127.0.0.1 allowed
ow() {
	local home=$1
	shift
	"$OFFWHEEL" --home "$home" "$@" --trusted-host 127.0.0.1
}

crawl() { # home port name
	ow "$1" -q crawl --index-url "http://127.0.0.1:$2/whl/$3" --variant cpu --project torch
}

size() { stat -c %s "$WWW/whl/$1/files/$WHEEL"; }

# interrupt HOME: fetch the wheel, SIGINT it once its partial holds about half
interrupt() {
	local home=$1 half=$(((MIB << 20) / 2)) part= n=0 i
	# a background job of a script ignores SIGINT; as at a terminal, it must not
	python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$OFFWHEEL" --home "$home" -q fetch "$WHEEL" \
		--trusted-host 127.0.0.1 >"$home.int" 2>&1 &
	local pid=$!
	for i in $(seq 600); do
		part=$(ls "$home"/tmp/part-*.whl 2>/dev/null | head -1)
		n=$([ -n "$part" ] && stat -c %s "$part" || echo 0)
		[ "$n" -ge "$half" ] && break
		sleep 0.02
	done
	kill -INT "$pid"
	local rc=0
	wait "$pid" || rc=$?
	n=$(stat -c %s "$part")
	echo "interrupted at $n of $((MIB << 20)) bytes (exit $rc)" >&3
	[ "$rc" -eq 130 ] || { cat "$home.int"; false; } # 128 + SIGINT: Ctrl-C
	# about half: what the re-run may transfer is judged against it
	[ "$n" -ge $((half * 9 / 10)) ] && [ "$n" -le $((half * 11 / 10)) ]
}

# bytes_log PORT NAME: "status bytes" of each GET of the wheel, in order
bytes_log() {
	grep "^$1 \"GET /whl/$2/files/$WHEEL " "$NGX/bytes.log" | awk '{print $(NF-1), $NF}'
}

@test "the bare server really sends neither ETag nor Last-Modified; the tagged one both" {
	publish probe 7 1
	run curl -sSI "http://127.0.0.1:$PORT_BARE/whl/probe/files/$WHEEL"
	[ "$status" -eq 0 ]
	[ "$(grep -ci '^etag:' <<<"$output")" -eq 0 ]
	[ "$(grep -ci '^last-modified:' <<<"$output")" -eq 0 ]
	grep -qi '^accept-ranges: bytes' <<<"$output"
	run curl -sSI "http://127.0.0.1:$PORT_TAGGED/whl/probe/files/$WHEEL"
	grep -qi '^etag:' <<<"$output"
	grep -qi '^last-modified:' <<<"$output"
}

@test "no validators, a published sha256: SIGINT at half, the re-run resumes (<= 55% sent) and verifies" {
	publish bare 1 1
	ws=$SRV/ws-bare
	crawl "$ws" "$PORT_BARE" bare
	interrupt "$ws"
	run ow "$ws" fetch "$WHEEL"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"offwheel fetch: $WHEEL: resumed at "*"(no If-Range; the published sha256 decides)"* ]]
	# what nginx sent to the re-run: one 206, at most 55% of the file
	last=$(bytes_log "$PORT_BARE" bare | tail -1)
	echo "re-run: $last of $(size bare)"
	[ "${last%% *}" = 206 ]
	[ "${last##* }" -le $(($(size bare) * 55 / 100)) ]
	# the stored file is the published one
	want=$(sha256sum "$WWW/whl/bare/files/$WHEEL" | cut -c1-64)
	run ow "$ws" --json fetch "$WHEEL"
	[ "$(jq -r '.files[0].outcome + " " + .files[0].sha256' <<<"$output")" = "had $want" ]
	[ "$(sha256sum "$ws/objects/sha256/${want:0:2}/$want" | cut -c1-64)" = "$want" ]
	run "$OFFWHEEL" --home "$ws" verify
	[ "$status" -eq 0 ]
	run "$OFFWHEEL" --home "$ws" --json fsck
	[ "$(jq '.errors + .partials' <<<"$output")" -eq 0 ]
}

@test "no validators, the file replaced under the same name: the final hash catches the resume, downloaded once more, verifies" {
	# the page listed the old file without a hash; it now publishes the new
	# file's: the partial holds the old file's first half
	publish swap 2 0
	ws=$SRV/ws-swap
	crawl "$ws" "$PORT_BARE" swap
	interrupt "$ws"
	old_size=$(size swap)
	old=$(sha256sum "$WWW/whl/swap/files/$WHEEL" | cut -c1-64)
	publish swap 3 1 # same name, same size, other bytes
	new=$(sha256sum "$WWW/whl/swap/files/$WHEEL" | cut -c1-64)
	[ "$old" != "$new" ]
	[ "$(size swap)" -eq "$old_size" ]
	crawl "$ws" "$PORT_BARE" swap
	run ow "$ws" --json fetch "$WHEEL"
	echo "$output"
	[ "$status" -eq 0 ]
	f=$(jq -c '.files[0] | {outcome, resume, resumed, restarted, resume_basis, sha256}' <<<"$output")
	[ "$f" = "{\"outcome\":\"done\",\"resume\":\"discarded\",\"resumed\":false,\"restarted\":true,\"resume_basis\":\"published-sha256\",\"sha256\":\"$new\"}" ]
	# nginx: the resumed tail (206), then the whole file once more (200), nothing else
	mapfile -t got < <(bytes_log "$PORT_BARE" swap | tail -2)
	partial=$(jq '.files[0].partial' <<<"$output")
	[ "${got[0]}" = "206 $(($(size swap) - partial))" ]
	[ "${got[1]}" = "200 $(size swap)" ]
	[ "$(jq '.files[0].received' <<<"$output")" -eq $((2 * $(size swap) - partial)) ]
	[ "$(sha256sum "$ws/objects/sha256/${new:0:2}/$new" | cut -c1-64)" = "$new" ]
	run "$OFFWHEEL" --home "$ws" verify
	[ "$status" -eq 0 ]
}

@test "the file replaced while the index pins the old hash: resume discarded (one line), the new download mismatches too: rejected, nothing kept" {
	publish swap2 4 1
	ws=$SRV/ws-swap2
	crawl "$ws" "$PORT_BARE" swap2
	interrupt "$ws"
	publish swap2 5 1
	crawl "$ws" "$PORT_BARE" swap2 # keeps the hash it had (crawl's rule)
	run ow "$ws" fetch "$WHEEL"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *"offwheel fetch: $WHEEL: resume discarded: the resumed file did not match its published sha256; downloaded again from zero"* ]]
	[[ "$output" == *"rejected $WHEEL: $WHEEL: sha256 mismatch"* ]]
	# two transfers: the tail, then the whole file; not a third
	[ "$(bytes_log "$PORT_BARE" swap2 | tail -2 | cut -d' ' -f1 | paste -sd,)" = 206,200 ]
	[ "$(ls "$ws/tmp" | grep -c '^part-')" -eq 0 ]
}

@test "no validators and no published sha256: the partial is not resumed (the line says why), never stitched" {
	publish blind 6 0
	ws=$SRV/ws-blind
	crawl "$ws" "$PORT_BARE" blind
	interrupt "$ws"
	run ow "$ws" fetch "$WHEEL"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"offwheel fetch: $WHEEL: a partial of "*" not resumed: no sha256 is known and the server sent no ETag or Last-Modified"* ]]
	last=$(bytes_log "$PORT_BARE" blind | tail -1)
	[ "$last" = "200 $(size blind)" ]
	run "$OFFWHEEL" --home "$ws" verify
	[ "$status" -eq 0 ]
}

@test "validators and no published sha256: the existing If-Range path resumes" {
	publish tagged 8 0
	ws=$SRV/ws-tagged
	crawl "$ws" "$PORT_TAGGED" tagged
	interrupt "$ws"
	run ow "$ws" fetch "$WHEEL"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"offwheel fetch: $WHEEL: resumed at "*"(If-Range \""*"\")"* ]]
	last=$(bytes_log "$PORT_TAGGED" tagged | tail -1)
	[ "${last%% *}" = 206 ]
	[ "${last##* }" -le $(($(size tagged) * 55 / 100)) ]
	run "$OFFWHEEL" --home "$ws" verify
	[ "$status" -eq 0 ]
}
