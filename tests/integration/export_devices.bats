#!/usr/bin/env bats
# The device rule: a set the workspace knows fails a device it was asked for
# never reaches a stick silently.  The sample index served by nginx over
# HTTPS: its cu126 torch carries no sm_120, its cu128 torch does.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" >/dev/null
	export OW_HTTPS_URL OW_CA_FILE OW_NGINX_DIR
	export WS=$SRV/ws KEYS=$SRV/keys
	mkdir -p "$KEYS"
	"$OFFWHEEL" keygen "$KEYS/k.sec" >/dev/null
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

ow() { "$OFFWHEEL" --home "$WS" "$@"; }

sync() { # [global options --] [options]: the cu126 + cu128 matrix, python 3.12
	local pre=()
	[ "${1:-}" = --json ] && { pre=(--json); shift; }
	ow "${pre[@]}" sync --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --variant "${VARIANTS:-cu126,cu128}" --python 3.12 \
		--platform linux-x86_64,windows-x86_64 "$@"
}

chk() { # DIR [options]
	local d=$1
	shift
	"$OFFWHEEL" check "$d" --pubkey "$KEYS/k.pub" --state "$BATS_TEST_TMPDIR/state.json" "$@"
}

set_of() { # TARGET: the id of its newest set
	ow --json ls sets | jq -r --arg t "$1" '[.sets[] | select(.target == $t)][0].id'
}

# a listing of DIR (paths, sizes, times): "untouched" compares two of them
tree() { (cd "$1" && find . -printf '%p %s %T@\n' | sort); }

@test "sync, then a failing sync --device 12.0: exit 3, the library and its module counts named, the verdict recorded" {
	run --separate-stderr sync
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	# the cu126 sets (already fetched): torch itself judged, none of them runs
	VARIANTS=cu126 run --separate-stderr sync --device 12.0
	[ "$status" -eq 3 ] || { echo "$output $stderr"; false; }
	[[ "$output" == *"cu126 cp312-manylinux_2_28_x86_64"*"WOULD NOT RUN — none"* ]] || { echo "$output"; false; }
	# the cause: a library of torch and how many of its modules lack the image
	[[ "$output" == *"      torch/lib/libtorch_cuda.so: 3 of 3 modules have no sm_120 image"* ]] || { echo "$output"; false; }
	VARIANTS=cu126 run --separate-stderr sync --json --device 12.0
	[ "$status" -eq 3 ]
	t='.device.targets[] | select(.target == "cu126 cp312-manylinux_2_28_x86_64")'
	[ "$(jq -r "$t | .runs" <<<"$output")" = false ]
	[ "$(jq -r "$t | .predicted" <<<"$output")" = false ] # torch itself is in the store
	[ "$(jq -r "$t | .detail" <<<"$output")" = "torch/lib/libtorch_cuda.so: 3 of 3 modules have no sm_120 image" ]
	[ "$(jq -c "$t | .cause" <<<"$output")" = '{"library":"torch/lib/libtorch_cuda.so","modules":3,"no_image":3}' ]
	# recorded in the index, per set and device; the cu128 sets were not asked about
	id=$(set_of "cu126 cp312-manylinux_2_28_x86_64")
	row=$(sqlite3 "$WS/index.db" "SELECT cc, driver, verdict, runs, predicted, library, modules, no_image FROM set_devices WHERE set_id = $id")
	[ "$row" = "120|0|none|0|0|torch/lib/libtorch_cuda.so|3|3" ] || { echo "$row"; false; }
	ok=$(set_of "cu128 cp312-manylinux_2_28_x86_64")
	[ "$(sqlite3 "$WS/index.db" "SELECT count(*) FROM set_devices WHERE set_id = $ok")" -eq 0 ]
}

@test "a cu126-only sync --device 12.0: exit 3; the suggestion names the index in use and where the variant is" {
	# the sample index stands in for PyTorch's (a lab's mirror of it)
	export OFFWHEEL_PYTORCH_URL=$OW_HTTPS_URL/whl
	run --separate-stderr "$OFFWHEEL" --home "$SRV/ws126" sync --channel nightly \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126 --python 3.12 \
		--platform linux-x86_64 --device 12.0
	[ "$status" -eq 3 ]
	[[ "$output" == *"torchvision/_C.so: 3 of 3 modules have no sm_120 image; predicted from torchvision-"* ]] || { echo "$output"; false; }
	[[ "$output" == *"— sync with --channel stable --variant cu128 ($OW_HTTPS_URL/whl/cu128; the index in use is $OW_HTTPS_URL/whl/nightly)"* ]] || { echo "$output"; false; }
	# one root of PyTorch's index (.../whl/cu126): the folder to use instead
	run --separate-stderr "$OFFWHEEL" --home "$SRV/ws126" sync --index-url "$OW_HTTPS_URL/whl/cu126" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --python 3.12 \
		--platform linux-x86_64 --device 12.0
	[ "$status" -eq 3 ] || { echo "$output $stderr"; false; }
	[[ "$output" == *"with the index in use, $OW_HTTPS_URL/whl/cu126: "*" — sync with --index-url $OW_HTTPS_URL/whl/cu128 (or --channel stable --variant cu128 in place of --index-url)"* ]] || { echo "$output"; false; }
	# an index that is not PyTorch's (PyPI, another mirror): said so, and where the variant is
	unset OFFWHEEL_PYTORCH_URL
	run --separate-stderr "$OFFWHEEL" --home "$SRV/ws126" --json sync --index-url "$OW_HTTPS_URL/whl/cu126" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --python 3.12 \
		--platform linux-x86_64 --device 12.0
	[ "$status" -eq 3 ] || { echo "$output $stderr"; false; }
	[ "$(jq -r .device.suggest.index_in_use <<<"$output")" = "$OW_HTTPS_URL/whl/cu126" ]
	[ "$(jq -r .device.suggest.index <<<"$output")" = "https://download.pytorch.org/whl/cu128" ]
	[ "$(jq -r .device.suggest.same_index <<<"$output")" = false ]
	jq -e '.device.targets[0].cause | .library == "torchvision/_C.so" and .modules == 3 and .no_image == 3' <<<"$output"
	run --separate-stderr "$OFFWHEEL" --home "$SRV/ws126" sync --index-url "$OW_HTTPS_URL/whl/cu126" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --python 3.12 \
		--platform linux-x86_64 --device 12.0
	[[ "$output" == *"with the index in use, $OW_HTTPS_URL/whl/cu126: "*", on PyTorch's index — sync with --index-url https://download.pytorch.org/whl/cu128"*"or try another torch of this index (--version V)"* ]] || { echo "$output"; false; }
}

@test "export --all-sets refuses a set recorded as not running (exit 3: set, device, library; three ways out), DIR untouched" {
	# a valid stick holding the set that runs
	ok=$(set_of "cu128 cp312-manylinux_2_28_x86_64")
	ow -q export "$SRV/stick" "$ok" --sign "$KEYS/k.sec"
	before=$(tree "$SRV/stick")
	run --separate-stderr ow export "$SRV/stick" --all-sets --sign "$KEYS/k.sec"
	[ "$status" -eq 3 ] || { echo "$output $stderr"; false; }
	id=$(set_of "cu126 cp312-manylinux_2_28_x86_64")
	[[ "$stderr" == *"set $id (cu126 cp312-manylinux_2_28_x86_64) would not run on 12.0"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"torch/lib/"*"modules have no sm_120 image"* ]] || { echo "$stderr"; false; }
	[[ "$stderr" == *"drop --all-sets"* && "$stderr" == *"--device 12.0"* && "$stderr" == *"--force"* ]] || { echo "$stderr"; false; }
	[ "$(tree "$SRV/stick")" = "$before" ]
	run chk "$SRV/stick"
	[ "$status" -eq 0 ]
	# a set named by id: the same refusal; a new DIR is not even made
	run --separate-stderr ow export "$SRV/stick-new" "$id" --sign "$KEYS/k.sec"
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"would not run on 12.0"*"--force"* ]] || { echo "$stderr"; false; }
	[ ! -e "$SRV/stick-new" ]
	# the same plan refuses an object store target before it is reached
	run --separate-stderr ow export s3://bucket/never --all-sets --endpoint http://127.0.0.1:9 \
		--sign "$KEYS/k.sec"
	[ "$status" -eq 3 ] || { echo "$output $stderr"; false; }
	[[ "$stderr" == *"would not run on 12.0"* ]]
}

@test "export --all-sets --force ships it: manifest, check, INSTALL.txt record the failing verdict; stock sha256sum -c passes" {
	run --separate-stderr ow export "$SRV/forced" --all-sets --force --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	m=$SRV/forced/manifest.json
	s='.sets[] | select(.target == "cu126 cp312-manylinux_2_28_x86_64")'
	[ "$(jq -r "$s | .devices[0] | [.cc, .verdict, .runs] | @tsv" "$m")" = "$(printf '12.0\tnone\tfalse')" ]
	jq -e "$s | .devices[0].cause.library | startswith(\"torch/lib/\")" "$m"
	[ "$(jq -c '.sets[] | select(.target == "cu128 cp312-manylinux_2_28_x86_64") | .devices' "$m")" = "[]" ]
	grep -q "^Target cu126 cp312-manylinux_2_28_x86_64" "$SRV/forced/INSTALL.txt"
	grep -A1 "^Target cu126 cp312-manylinux_2_28_x86_64" "$SRV/forced/INSTALL.txt" |
		grep -q "audited for 12.0: WOULD NOT RUN (none) — torch/lib/.*modules have no sm_120 image"
	grep -A1 "^Target cu128 cp312-manylinux_2_28_x86_64" "$SRV/forced/INSTALL.txt" |
		grep -q "not audited for any device"
	run chk "$SRV/forced"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"cu126 cp312-manylinux_2_28_x86_64: audited for 12.0: WOULD NOT RUN (none) — torch/lib/"*"no sm_120 image"* ]] || { echo "$output"; false; }
	[[ "$output" == *"cu128 cp312-manylinux_2_28_x86_64: not audited for any device"* ]]
	run chk "$SRV/forced" --json --state "$BATS_TEST_TMPDIR/state2.json"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.sets[] | select(.target == "cu126 cp312-manylinux_2_28_x86_64") | .devices[0] | [.cc, .runs] | @tsv' <<<"$output")" = "$(printf '12.0\tfalse')" ]
	(cd "$SRV/forced" && sha256sum -c --quiet SHA256SUMS)
	signify-openbsd -V -p "$KEYS/k.pub" -m "$SRV/forced/SHA256SUMS"
}

@test "export --device 12.0 --all-sets ships only the sets that run there and names the ones left out" {
	run --separate-stderr ow export "$SRV/rtx50" --device 12.0 --all-sets --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(jq -r '[.sets[].target] | map(startswith("cu128")) | all' "$SRV/rtx50/manifest.json")" = true ]
	[ "$(jq '.sets | length' "$SRV/rtx50/manifest.json")" -eq 2 ]
	! ls "$SRV/rtx50/wheels" | grep -q 'cu126'
	[[ "$output" == *"--device: left out 2 sets that would not run on every device named: set "*"(cu126 cp312-manylinux_2_28_x86_64): would not run on 12.0 (none): torch/lib/"* ]] || { echo "$output"; false; }
	# the cu128 sets had no verdict for 12.0: judged now from their stored torch, and recorded
	ok=$(set_of "cu128 cp312-manylinux_2_28_x86_64")
	[ "$(sqlite3 "$WS/index.db" "SELECT verdict, runs, predicted FROM set_devices WHERE set_id = $ok AND cc = 120")" = "native|1|0" ]
	win=$(set_of "cu126 cp312-win_amd64")
	[[ "$output" == *"set $win (cu126 cp312-win_amd64): would not run on 12.0 (none)"* ]]
	run --separate-stderr ow --json export "$SRV/rtx50" --device 12.0 --all-sets --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ]
	[ "$(jq '[.skipped[] | select(.rule == "device")] | length' <<<"$output")" -eq 2 ]
	jq -e '.skipped[] | select(.rule == "device") | .reason | contains("would not run on 12.0")' <<<"$output"
	run chk "$SRV/rtx50"
	[ "$status" -eq 0 ]
	[ "$(grep -c 'audited for 12.0: runs (native)' <<<"$output")" -eq 2 ]
	(cd "$SRV/rtx50" && sha256sum -c --quiet SHA256SUMS)
	# 8.6 runs cu126 and cu128: --device 8.6,12.0 still leaves cu126 out
	run --separate-stderr ow export "$SRV/both" --device 8.6,12.0 --all-sets --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(jq -r '[.sets[].devices | length] | min' "$SRV/both/manifest.json")" -eq 2 ]
	# nothing left: exit 3, naming why
	cu126=$(set_of "cu126 cp312-manylinux_2_28_x86_64")
	run --separate-stderr ow export "$SRV/none" "$cu126" --device 12.0 --sign "$KEYS/k.sec"
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"no set asked for runs on every --device"*"would not run on 12.0"* ]] || { echo "$stderr"; false; }
	[ ! -e "$SRV/none" ]
	run ow export "$SRV/none" --file x.whl --device 12.0
	[ "$status" -eq 2 ]
}

@test "audit set:N --device records the verdict: a set never synced with --device is refused after it" {
	ws=$SRV/ws-audit
	run --separate-stderr "$OFFWHEEL" --home "$ws" sync --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126 --python 3.12 \
		--platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	id=$("$OFFWHEEL" --home "$ws" --json ls sets | jq -r '.sets[0].id')
	# never judged for a device: shipped, and the stick says so
	run --separate-stderr "$OFFWHEEL" --home "$ws" export "$SRV/st-plain" --all-sets --sign "$KEYS/k.sec"
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	grep -A1 "^Target cu126" "$SRV/st-plain/INSTALL.txt" | grep -q "not audited for any device"
	[ "$(jq '.sets[0].devices' "$SRV/st-plain/manifest.json")" = "[]" ]
	run chk "$SRV/st-plain"
	[[ "$output" == *"cu126 cp312-manylinux_2_28_x86_64: not audited for any device"* ]] || { echo "$output"; false; }
	# export --device with no verdict recorded: judged now (torch is stored), and recorded
	run --separate-stderr "$OFFWHEEL" --home "$ws" export "$SRV/st-86" --device 8.6 --all-sets
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(sqlite3 "$ws/index.db" "SELECT cc, verdict, runs, predicted FROM set_devices WHERE set_id = $id")" = "86|native|1|0" ]
	grep -A1 "^Target cu126" "$SRV/st-86/INSTALL.txt" | grep -q "audited for 8.6: runs (native)"
	run "$OFFWHEEL" --home "$ws" audit "set:$id" --device 12.0
	[ "$status" -eq 3 ]
	[ "$(sqlite3 "$ws/index.db" "SELECT verdict, runs FROM set_devices WHERE set_id = $id AND cc = 120")" = "none|0" ]
	run --separate-stderr "$OFFWHEEL" --home "$ws" export "$SRV/st-audit" --all-sets
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"would not run on 12.0"* ]]
	# the same set on 8.6 runs: recorded beside it, export still refuses (12.0 is known to fail)
	run "$OFFWHEEL" --home "$ws" audit "set:$id" --device 8.6
	[ "$status" -eq 0 ]
	[ "$(sqlite3 "$ws/index.db" "SELECT count(*) FROM set_devices WHERE set_id = $id")" -eq 2 ]
	run --separate-stderr "$OFFWHEEL" --home "$ws" export "$SRV/st-audit" --device 8.6 --all-sets
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	grep -q "audited for 8.6: runs" "$SRV/st-audit/INSTALL.txt"
	grep -q "audited for 12.0: WOULD NOT RUN" "$SRV/st-audit/INSTALL.txt"
}
