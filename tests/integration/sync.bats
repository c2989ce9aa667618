#!/usr/bin/env bats
# offwheel sync, the main job (crawl + resolve + fetch), and --device, on the
# sample index served by nginx over HTTPS.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" >/dev/null
	export OW_HTTP_PORT OW_HTTPS_PORT OW_HTTPS_PORT2 OW_CA_FILE OW_NGINX_LOG OW_NGINX_DIR \
		OW_HTTPS_URL OW_HTTPS_URL2 OW_HTTP_URL OW_CERT_DIR
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

sync_args() { # WS: the argument list of the matrix sync, in SYNC_ARGS
	SYNC_ARGS=(--home "$1" --json sync --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE"
		--allow-host r2.localhost --variant cu126,cu128 --python 3.11,3.12
		--platform linux-x86_64,windows-x86_64)
}

sync() { # WS [options]
	sync_args "$1"
	shift
	"$OFFWHEEL" "${SYNC_ARGS[@]}" "$@"
}

@test "sync resolves the 2 x 2 x 2 matrix and stores every member, verified" {
	run --separate-stderr sync "$SRV/ws"
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(jq '.resolve.targets | length' <<<"$output")" -eq 8 ]
	[ "$(jq '[.resolve.targets[] | select(.complete)] | length' <<<"$output")" -eq 8 ]
	members=$(jq '[.resolve.targets[].members[].filename] | unique | length' <<<"$output")
	[ "$(jq '.fetch.files | length' <<<"$output")" -eq "$members" ]
	[ "$(jq '.fetch.rejected + .fetch.failed' <<<"$output")" -eq 0 ]
	# every member is in the store now
	run "$OFFWHEEL" --home "$SRV/ws" --json ls files
	stored=$(jq '[.files[] | select(.object_sha256 != null) | .filename] | unique | length' <<<"$output")
	[ "$stored" -ge "$members" ]
	run "$OFFWHEEL" --home "$SRV/ws" fsck
	[ "$status" -eq 0 ]
	# a second sync downloads nothing
	run --separate-stderr sync "$SRV/ws"
	[ "$status" -eq 0 ]
	[ "$(jq .fetch.done <<<"$output")" -eq 0 ]
	[ "$(jq .fetch.received <<<"$output")" -eq 0 ]
}

@test "a sync killed and re-run finishes without downloading again what was done" {
	ws=$SRV/ws-kill
	for i in 1 2 3 4 5; do
		sync_args "$ws"
		"$OFFWHEEL" "${SYNC_ARGS[@]}" >/dev/null 2>&1 & # the binary itself: a killed
		pid=$!                                          # subshell would leave it running
		sleep "0.0$((RANDOM % 9 + 1))"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" || true
		# killed before it made the workspace: there is nothing to check yet
		[ -e "$ws/index.db" ] || continue
		run "$OFFWHEEL" --home "$ws" fsck
		[ "$status" -eq 0 ]
	done
	before=$("$OFFWHEEL" --home "$ws" --json ls files | jq -r '.files[] | select(.object_sha256 != null) | .url')
	mark=$(wc -l <"$OW_NGINX_LOG")
	run --separate-stderr sync "$ws"
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	# none of the files stored before the re-run was requested again
	tail -n +"$((mark + 1))" "$OW_NGINX_LOG" >"$ws.log"
	again=0
	while read -r url; do
		[ -n "$url" ] || continue
		path=${url#https://*/}
		grep -qF "GET /$path " "$ws.log" && { echo "fetched again: $path"; again=$((again + 1)); }
	done <<<"$before"
	[ "$again" -eq 0 ]
	echo "stored before the re-run: $(grep -c . <<<"$before"), downloaded by it: $(jq .fetch.done <<<"$output")" >&3
}

@test "--device 12.0: only sets whose torch runs are fetched; torch predicted from torchvision" {
	ws=$SRV/ws-dev
	run --separate-stderr sync "$ws" --device 12.0
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(jq -r '[.device.targets[] | select(.runs == true) | .target] | map(startswith("cu128")) | all' <<<"$output")" = true ]
	[ "$(jq -r '[.device.targets[] | select(.runs == false) | .target] | map(startswith("cu126")) | all' <<<"$output")" = true ]
	[ "$(jq '[.device.targets[] | select(.runs == false)] | length' <<<"$output")" -eq 4 ]
	# linux cu126 sets were judged from torchvision, their torch never downloaded
	[ "$(jq '[.device.targets[] | select(.predicted)] | length' <<<"$output")" -gt 0 ]
	run "$OFFWHEEL" --home "$ws" --json ls files --project torch --variant cu126 --platform 'manylinux*'
	[ "$(jq '[.files[] | select(.object_sha256 != null)] | length' <<<"$output")" -eq 0 ]
	run "$OFFWHEEL" --home "$ws" --json ls files --project torch --variant cu128 --platform 'manylinux*'
	[ "$(jq '[.files[] | select(.object_sha256 != null)] | length' <<<"$output")" -gt 0 ]
}

@test "--device 12.0 with only cu126: exit 3, and the variant that would run is named" {
	ws=$SRV/ws-dev126
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json sync --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126 --python 3.12 \
		--platform linux-x86_64 --device 12.0
	[ "$status" -eq 3 ]
	[ "$(jq -r '.device.suggest.variant' <<<"$output")" = cu128 ]
	[ "$(jq -r '.device.suggest.channel' <<<"$output")" = stable ]
	run "$OFFWHEEL" --home "$ws" sync --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126 --python 3.12 \
		--platform linux-x86_64 --device 12.0
	[ "$status" -eq 3 ]
	# the sample index is not PyTorch's: said so, with the index in use and where the variant is
	[[ "$output" == *"no set here runs on 12.0 with the index in use, $OW_HTTPS_URL/whl/nightly: stable cu128 wheels since torch 2.7.0 carry images for compute capability 12.0, on PyTorch's index — sync with --index-url https://download.pytorch.org/whl/cu128 (or --channel stable --variant cu128 in place of --index-url)"* ]] || { echo "$output"; false; }
	[[ "$output" == *"      torchvision/_C.so: 3 of 3 modules have no sm_120 image; predicted from"* ]] || { echo "$output"; false; }
	# when one does run, nothing is suggested
	run --separate-stderr sync "$SRV/ws-dev" --device 12.0
	[ "$(jq -r '.device.suggest' <<<"$output")" = null ]
}

set_id() { # WS TARGET: the id of the newest set for that target
	"$OFFWHEEL" --home "$1" --json ls sets | jq -r --arg t "$2" '[.sets[] | select(.target == $t)][0].id'
}

@test "audit set:ID audits every fetched member; cannot run -> 3, members not fetched -> 4" {
	ws=$SRV/ws # fully fetched by the first test
	ok=$(set_id "$ws" "cu128 cp312-manylinux_2_28_x86_64")
	bad=$(set_id "$ws" "cu126 cp312-manylinux_2_28_x86_64")
	run "$OFFWHEEL" --home "$ws" audit --device 12.0 "set:$ok"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"torch-"*"native on CC 12.0"* ]]
	[[ "$output" == *"more members carry no device code"* ]]
	run "$OFFWHEEL" --home "$ws" --json audit --device 12.0 "set:$bad"
	[ "$status" -eq 3 ]
	n=$("$OFFWHEEL" --home "$ws" --json ls sets | jq --argjson i "$bad" '.sets[] | select(.id == $i) | .n_members')
	[ "$(jq '.targets | length' <<<"$output")" -eq "$n" ]
	[ "$(jq --argjson i "$bad" '[.targets[] | select(.set == $i)] | length' <<<"$output")" -eq "$n" ]
	[ "$(jq -r '.targets[] | select(.label | startswith("torch-")) | .verdict' <<<"$output")" = none ]
	# with --device, only the cu128 sets were fetched: a cu126 set has members not fetched
	ws=$SRV/ws-dev
	part=$(set_id "$ws" "cu126 cp312-manylinux_2_28_x86_64")
	run "$OFFWHEEL" --home "$ws" audit --device 8.6 "set:$part"
	[ "$status" -eq 4 ] || { echo "$output"; false; }
	[[ "$output" == *"not fetched: run 'offwheel fetch set:$part'"* ]]
	run "$OFFWHEEL" --home "$ws" audit "set:999999"
	[ "$status" -ne 0 ]
	[[ "$output" == *"no such set"* ]]
}

@test "resolve --device 12.0 picks cu128; a cu126-only matrix has nothing that runs (exit 3)" {
	ws=$SRV/ws-res
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126,cu128 --python 3.12 \
		--platform linux-x86_64 --device 12.0
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(jq -r '[.device.targets[] | select(.runs) | .target] | join(",")' <<<"$output")" = "cu128 cp312-manylinux_2_28_x86_64" ]
	run --separate-stderr "$OFFWHEEL" --home "$ws" resolve --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126 --python 3.12 \
		--platform linux-x86_64 --device 12.0
	[ "$status" -eq 3 ]
	[[ "$output" == *"WOULD NOT RUN"* ]]
	[[ "$output" == *"predicted from torchvision"* ]]
	# the same matrix for an RTX 30xx (8.6) runs
	run --separate-stderr "$OFFWHEEL" --home "$ws" resolve --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126 --python 3.12 \
		--platform linux-x86_64 --device 8.6
	[ "$status" -eq 0 ]
}

@test "--device 12.0,8.6 (two GPU types): a set must run on both; sync and resolve take it, JSON has both verdicts" {
	ws=$SRV/ws-two
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126,cu128 --python 3.12 \
		--platform linux-x86_64 --device 12.0,8.6
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(jq -r '[.devices[].cc] | join(",")' <<<"$output")" = "12.0,8.6" ]
	[ "$(jq -r '.device.cc' <<<"$output")" = 12.0 ]
	# cu126 runs on 8.6 only, cu128 on both
	[ "$(jq -r '.devices[1].targets[] | select(.target | startswith("cu126")) | .runs' <<<"$output")" = true ]
	[ "$(jq -r '.devices[0].targets[] | select(.target | startswith("cu126")) | .runs' <<<"$output")" = false ]
	run "$OFFWHEEL" --home "$ws" resolve --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126,cu128 --python 3.12 \
		--platform linux-x86_64 --device 12.0 --device 8.6
	[ "$status" -eq 0 ]
	[[ $output == *"on every device named (12.0 and 8.6): 1 of 2 complete target(s) run"* ]]
	# sync fetches only the set that runs on both
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json sync --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126,cu128 --python 3.12 \
		--platform linux-x86_64 --device 8.6,12.0
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	run "$OFFWHEEL" --home "$ws" --json ls files --project torch --variant cu126 --platform 'manylinux*'
	[ "$(jq '[.files[] | select(.object_sha256 != null)] | length' <<<"$output")" -eq 0 ]
	run "$OFFWHEEL" --home "$ws" --json ls files --project torch --variant cu128 --platform 'manylinux*'
	[ "$(jq '[.files[] | select(.object_sha256 != null)] | length' <<<"$output")" -gt 0 ]
	run "$OFFWHEEL" --home "$ws" resolve --device 12.0,x --offline
	[ "$status" -eq 2 ]
	[[ $output == *"--device: 'x' is not a compute capability like 12.0 or sm_86"* ]]
}

@test "fetch set:ID downloads every member of a resolved set" {
	ws=$SRV/ws-set
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu128 --python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ]
	id=$(jq '.targets[0].set_id' <<<"$output")
	n=$(jq '.targets[0].members | length' <<<"$output")
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json fetch --cert "$OW_CA_FILE" --allow-host r2.localhost "set:$id"
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(jq '.files | length' <<<"$output")" -eq "$n" ]
	[ "$(jq '.done + .had' <<<"$output")" -eq "$n" ]
	run "$OFFWHEEL" --home "$ws" fetch set:999
	[ "$status" -ne 0 ]
	[[ "$output" == *"no such set"* ]]
	run "$OFFWHEEL" --home "$ws" fetch set:abc
	[ "$status" -eq 2 ]
}

@test "ls sets says fetched or not; ls objects names each object; failed resolves leave no set, gc --keep removes old ones" {
	ws=$BATS_TEST_TMPDIR/ws-sets
	idx=(--index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" --allow-host r2.localhost)
	"$OFFWHEEL" --home "$ws" resolve "${idx[@]}" --variant cu128 --python 3.12 --platform linux-x86_64 >/dev/null
	run "$OFFWHEEL" --home "$ws" ls sets -q
	[[ $output == *"cu128 cp312-manylinux_2_28_x86_64"*"not fetched" ]]
	"$OFFWHEEL" --home "$ws" sync "${idx[@]}" --variant cu128 --python 3.12 --platform linux-x86_64 >/dev/null
	run "$OFFWHEEL" --home "$ws" ls sets -q
	[[ $output == *"cu128 cp312-manylinux_2_28_x86_64"*" fetched" && $output != *"not fetched"* ]]
	[ "$("$OFFWHEEL" --home "$ws" --json ls sets | jq '.sets[0] | .fetched == .n_members')" = true ]
	# each object by name: wheels and .metadata files by file name, pages by URL
	run "$OFFWHEEL" --home "$ws" ls objects
	[[ $output == *" wheel    torch-2.10.0"* ]]
	[[ $output == *" metadata torch-2.10.0"*".whl.metadata"* ]]
	[[ $output == *" page     $OW_HTTPS_URL/whl/nightly/cu128/torch/"* ]]
	[ "$("$OFFWHEEL" --home "$ws" --json ls objects | jq '[.objects[] | select(.name == null)] | length')" -eq 0 ]
	# a variant the index does not have: the target is incomplete, and no set is recorded for it
	n=$("$OFFWHEEL" --home "$ws" --json ls sets | jq .count)
	run "$OFFWHEEL" --home "$ws" resolve "${idx[@]}" --variant cu199 --python 3.12 --platform linux-x86_64
	[ "$status" -eq 4 ]
	[ "$("$OFFWHEEL" --home "$ws" --json ls sets | jq .count)" -eq "$n" ]
	# one an older offwheel recorded is removed by gc --keep
	sqlite3 "$ws/index.db" "INSERT INTO sets(target, index_url, variant, python, platform, selector, torch_version, complete, with_deps, missing, members_key, created_at, resolved_at) VALUES('cu199 cp312-manylinux_2_28_x86_64', '$OW_HTTPS_URL/whl/nightly', 'cu199', 'cp312', 'manylinux_2_28_x86_64', 'latest', NULL, 0, 1, 'torch,torchvision,torchaudio', '', 1, 1)"
	[ "$("$OFFWHEEL" --home "$ws" --json ls sets | jq .count)" -eq $((n + 1)) ]
	run "$OFFWHEEL" --home "$ws" --json gc --keep 1
	[ "$status" -eq 0 ]
	[ "$(jq .removed_sets <<<"$output")" -eq 1 ]
	[ "$("$OFFWHEEL" --home "$ws" --json ls sets | jq '[.sets[] | select(.torch == null)] | length')" -eq 0 ]
}
