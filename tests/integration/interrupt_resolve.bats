#!/usr/bin/env bats
# SIGTERM (or Ctrl-C) while sync or resolve is still crawling pages and
# reading metadata, before any download: the same "interrupted — re-run to
# resume" line as during downloads, 128 + the signal, no set recorded from a
# half-done resolve, and a workspace fsck calls clean (no tmp/part-*, no
# object without its row).  The sample index is served by a real nginx slowed
# to 20 kB/s per connection, so the rounds last long enough to be caught.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/idx/www" "$SRV/idx/www2"
	OW_NGINX_LIMIT_RATE=20k ow_start_nginx "$SRV/idx/www" "$SRV/idx/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV/idx" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL" >/dev/null
	cp -a "$SRV/idx/www2/." "$SRV/idx/www/"
	export OW_HTTPS_URL OW_CA_FILE OW_NGINX_DIR
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

# run_and_term CMD...: start offwheel CMD -v in the background, SIGTERM it once
# stderr shows its second resolve round; sets $rc, $out, $err
run_and_term() {
	local home=$BATS_TEST_TMPDIR/ws i
	"$OFFWHEEL" --home "$home" -v "$@" >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err" &
	local pid=$!
	for i in $(seq 300); do
		grep -q "resolve round 2" "$BATS_TEST_TMPDIR/err" 2>/dev/null && break
		sleep 0.05
	done
	grep -q "resolve round 2" "$BATS_TEST_TMPDIR/err"
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	out=$(cat "$BATS_TEST_TMPDIR/out") err=$(cat "$BATS_TEST_TMPDIR/err")
	echo "exit $rc"$'\n'"$out"$'\n'"$err"
}

workspace_clean() {
	local home=$BATS_TEST_TMPDIR/ws
	run "$OFFWHEEL" --home "$home" fsck
	echo "$output"
	[[ $output == *" 0 garbage file(s), 0 partial(s)"* ]]
	[ -z "$(find "$home/tmp" -type f 2>/dev/null)" ]
	run "$OFFWHEEL" --home "$home" --json ls sets
	[ "$(jq '.sets | length' <<<"$output")" -eq 0 ]
}

@test "sync: SIGTERM during the resolve phase says interrupted, exits 143, leaves a clean workspace; the re-run completes" {
	local args=(sync --index-url "$OW_HTTPS_URL/whl" --cert "$OW_CA_FILE" --variant cu128
		--python 3.12 --platform linux-x86_64)
	run_and_term "${args[@]}"
	[ "$rc" -eq 143 ]
	[[ $err == *"offwheel sync: interrupted — re-run to resume"* ]]
	[[ $err != *"no metadata"* ]] # a cancelled read is not reported as a finding
	[[ $out != *"INCOMPLETE"* ]]
	workspace_clean
	run "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" -q "${args[@]}"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json ls sets
	[ "$(jq '[.sets[] | select(.fetched)] | length' <<<"$output")" -eq 1 ]
}

@test "resolve: SIGTERM during its rounds says interrupted, exits 143, records no set" {
	run_and_term resolve --index-url "$OW_HTTPS_URL/whl" --cert "$OW_CA_FILE" --variant cu126 \
		--python 3.11 --platform linux-x86_64
	[ "$rc" -eq 143 ]
	[[ $err == *"offwheel resolve: interrupted — re-run to resume"* ]]
	[[ $out != *"TARGET"* ]]
	workspace_clean
}
