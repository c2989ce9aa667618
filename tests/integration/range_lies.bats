#!/usr/bin/env bats
# A lying server behind the range reads of wheel METADATA (an index without
# PEP 658 files; src/wheel/fetchrange.c): the real-metadata fixture index
# served by tests/tools/faultserver.py, its cp312 Linux torch wheel rewritten
# by tests/tools/mkforgeable.py so that a forged version of it (one
# Requires-Dist more or less, the METADATA's length and CRC-32 kept) can be
# served, and its link pointed at one fault mode per tree:
#   s1  ifrange-swap: reads with If-Range answered from the forged version
#       (another ETag), If-Range ignored — two versions mixed
#   s2  range-wrong: a 206 whose Content-Range is one byte off
#   s3  range-lie: every range from the forged version (the real validators),
#       the whole file the real one, whose hash the page publishes

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

TORCH=torch-2.15.0-cp312-cp312-manylinux_2_28_x86_64.whl

setup_file() {
	export SRV=$(mktemp -d)
	"$OW_SOURCE_DIR/scripts/real-metadata-index" build "$SRV/plain" --no-pep658 >/dev/null
	local page=$SRV/plain/www/whl/cu130/torch/index.html
	"$OW_SOURCE_DIR/tests/tools/mkforgeable.py" "$SRV/plain/www/whl/cu130/torch/$TORCH" "$page"
	local s fault
	for s in s1:ifrange-swap,add=evil s2:range-wrong s3:range-lie,drop=jinja2; do
		fault=${s#*:} s=${s%%:*}
		mkdir -p "$SRV/www/$s"
		cp -a "$SRV/plain/www/whl" "$SRV/www/$s/"
		find "$SRV/www/$s" -name index.html -exec sed -i "s#href=\"/whl/#href=\"/$s/whl/#g" {} +
		sed -i "s#href=\"/$s/whl/cu130/torch/$TORCH#href=\"/fault/$fault/$s/whl/cu130/torch/$TORCH#" \
			"$SRV/www/$s/whl/cu130/torch/index.html"
		grep -q "/fault/$fault/" "$SRV/www/$s/whl/cu130/torch/index.html"
	done
	ow_start_faultserver "$SRV/www"
	export OW_FAULT_URL OW_FAULT_PID
}

teardown_file() {
	ow_stop_faultserver
	rm -rf "$SRV"
}

ow() { # WS COMMAND [args]: one target, over plain HTTP to the fault server
	local ws=$1 cmd=$2
	shift 2
	"$OFFWHEEL" --home "$ws" "$cmd" --trusted-host 127.0.0.1 --variant cu130 --python 3.12 \
		--platform linux-x86_64 "$@"
}

torch_meta() { # WS: what file_meta keeps for the torch wheel
	sqlite3 "$1/index.db" "SELECT m.source || '|' || m.requires_dist FROM file_meta m JOIN files f ON f.id = m.file_id WHERE f.filename = '$TORCH'"
}

@test "a server that ignores If-Range: never two versions mixed; read again once, then refused naming the cause" {
	local ws=$SRV/ws1
	curl -fsS "$OW_FAULT_URL/stats/reset"
	run --separate-stderr ow "$ws" resolve --json --index-url "$OW_FAULT_URL/s1/whl"
	echo "exit $status; stderr: $stderr"
	[ "$status" -eq 4 ]
	# the forged METADATA (Requires-Dist: evil) is kept nowhere
	torch_meta "$ws"
	[[ "$(torch_meta "$ws")" != *evil* ]]
	# the tail read twice; each later read sent If-Range and was refused
	curl -fsS "$OW_FAULT_URL/stats" >"$BATS_TEST_TMPDIR/stats.json"
	jq -c '.requests[] | select(.path | contains("/fault/")) | {range, if_range, status}' "$BATS_TEST_TMPDIR/stats.json"
	[ "$(jq '[.requests[] | select((.path | contains("/fault/")) and .range == "bytes=-65536" and .if_range == null)] | length' "$BATS_TEST_TMPDIR/stats.json")" -eq 2 ]
	[ "$(jq '[.requests[] | select((.path | contains("/fault/")) and .if_range != null)] | length' "$BATS_TEST_TMPDIR/stats.json")" -eq 2 ]
	# the file and the cause, in the warning and as the target's error
	[[ "$stderr" == *"$TORCH: no metadata: read twice"*"carries ETag"*"not the If-Range"*"sent"* ]]
	jq -r '.targets[0].error' <<<"$output"
	jq -e --arg t "$TORCH" '.targets[0].error | startswith($t + ": read twice") and contains("ignored If-Range")' <<<"$output"
}

@test "a range read refused (a shifted Content-Range): its cause printed per file, in text and JSON" {
	local ws=$SRV/ws2
	run --separate-stderr ow "$ws" resolve --json --index-url "$OW_FAULT_URL/s2/whl"
	echo "exit $status; stderr: $stderr"
	[ "$status" -eq 4 ]
	jq -r '.targets[0].error' <<<"$output"
	jq -e --arg t "$TORCH" '.targets[0].error | startswith($t + ": GET ") and contains("206 with Content-Range") and contains("is not the range asked for")' <<<"$output"
	[[ "$stderr" != *"neither its .metadata nor the wheel has been fetched"* ]]
	# and in text, under the target, once more on a warm run
	run --separate-stderr ow "$ws" resolve --index-url "$OW_FAULT_URL/s2/whl"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == *"no torch wheel fits this target"*"$TORCH: GET "*"206 with Content-Range"* ]]
}

@test "range METADATA that the wheel contradicts: replaced, re-resolved in the same run; the wrong set is never exported" {
	local ws=$SRV/ws3
	run --separate-stderr ow "$ws" sync --json --index-url "$OW_FAULT_URL/s3/whl"
	echo "exit $status; stderr: $stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"$TORCH: its METADATA"*"is not the one read earlier by range requests"* ]]
	# the set of this run has the dependency the ranges hid (jinja2), fetched
	jq -e '[.resolve.targets[0].members[].project] | index("jinja2") != null' <<<"$output"
	jq -e --arg t "$TORCH" '.metadata_replaced == [$t]' <<<"$output"
	jq -e '.resolve.targets[0].complete' <<<"$output"
	local good=$(jq '.resolve.targets[0].set_id' <<<"$output")
	# the metadata kept is the wheel's
	[ "$(torch_meta "$ws" | head -1 | cut -d'|' -f1)" = wheel ]
	[[ "$(torch_meta "$ws")" == *jinja2* ]]
	# the set resolved from the ranges' metadata: incomplete, export refuses it
	bad=$(sqlite3 "$ws/index.db" "SELECT id FROM sets WHERE id <> $good")
	[ -n "$bad" ]
	[ "$(sqlite3 "$ws/index.db" "SELECT complete FROM sets WHERE id = $bad")" -eq 0 ]
	run --separate-stderr "$OFFWHEEL" --home "$ws" export "$SRV/ex-bad" "$bad"
	echo "exit $status; stderr: $stderr"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"set $bad"*"resolved from wrong metadata"*"$TORCH"*"run 'offwheel sync'"* ]]
	[ ! -e "$SRV/ex-bad/requirements" ]
	# --all-sets ships the good one, with the real dependency
	run --separate-stderr "$OFFWHEEL" --home "$ws" export "$SRV/ex" --all-sets
	echo "exit $status; stderr: $stderr"
	[ "$status" -eq 0 ]
	grep -q '^jinja2==' "$SRV/ex/requirements/"*.txt
	# and the next sync has nothing to say
	run --separate-stderr ow "$ws" sync --json --index-url "$OW_FAULT_URL/s3/whl"
	echo "exit $status; stderr: $stderr"
	[ "$status" -eq 0 ]
	jq -e '.metadata_replaced == []' <<<"$output"
}

@test "plain fetch of a wheel whose range METADATA was wrong: the sets resolved with it are marked, export refuses them" {
	local ws=$SRV/ws4
	run --separate-stderr ow "$ws" resolve --json --index-url "$OW_FAULT_URL/s3/whl"
	[ "$status" -eq 0 ]
	set=$(jq '.targets[0].set_id' <<<"$output")
	jq -e '[.targets[0].members[].project] | index("jinja2") == null' <<<"$output"
	run --separate-stderr "$OFFWHEEL" --home "$ws" fetch --trusted-host 127.0.0.1 "set:$set"
	echo "exit $status; stderr: $stderr"
	[ "$(sqlite3 "$ws/index.db" "SELECT complete FROM sets WHERE id = $set")" -eq 0 ]
	[[ "$stderr" == *"$TORCH: its METADATA"*"marked incomplete"* ]]
	run --separate-stderr "$OFFWHEEL" --home "$ws" export "$SRV/ex4" --all-sets
	echo "exit $status; stderr: $stderr"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"resolved from wrong metadata"* ]]
}
