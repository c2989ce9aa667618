#!/usr/bin/env bats
# One workspace, sets from two indexes (the sample's nightly and stable
# channels, served by a real nginx): `ls sets` says which index each set came
# from, and `export --all-sets` refuses to mix them, naming both, until
# --index picks one — the walk-through's sets never go onto a lab's stick
# beside its own.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	ow_serve_fixture_index "$SRV"
	export WS=$SRV/ws A=$OW_HTTPS_URL/whl/nightly B=$OW_HTTPS_URL/whl
	local net=(--cert "$OW_CA_FILE" --allow-host r2.localhost)
	"$OFFWHEEL" --home "$WS" -q sync --index-url "$A" "${net[@]}" --variant cpu --python 3.12 \
		--platform linux-x86_64
	"$OFFWHEEL" --home "$WS" -q sync --index-url "$B" "${net[@]}" --variant cpu --python 3.12 \
		--platform linux-x86_64
	"$OFFWHEEL" keygen "$SRV/k.sec" >/dev/null
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

@test "ls sets names the index each set came from when there are several" {
	run "$OFFWHEEL" --home "$WS" ls sets
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"1 from $A"$'\n'* ]]
	[[ $output == *"1 from $B"$'\n'* ]]
	run "$OFFWHEEL" --home "$WS" -v ls sets
	[[ $output == *"1 from $A: set 1"$'\n'* ]]
	[[ $output == *"1 from $B: set 2"$'\n'* ]]
	run "$OFFWHEEL" --home "$WS" --json ls sets
	[ "$(jq -r '[.sets[].index_url] | sort | join(" ")' <<<"$output")" = "$B $A" ]
}

@test "export --all-sets over two indexes: refused (exit 2) naming both; --index picks one; nothing written before" {
	run "$OFFWHEEL" --home "$WS" export "$SRV/stick" --all-sets --sign "$SRV/k.sec"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ $output == *"--all-sets: the sets come from more than one index: $A, $B (set 2)"*"name one with --index URL"* ]]
	[ ! -e "$SRV/stick/SHA256SUMS" ]
	run "$OFFWHEEL" --home "$WS" export "$SRV/stick" --all-sets --index "$B/" --sign "$SRV/k.sec"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r '[.sets[].id] | join(" ")' "$SRV/stick/manifest.json")" = 2 ]
	# --index alone chooses nothing
	run "$OFFWHEEL" --home "$WS" export "$SRV/stick2" --index "$B" --target x
	[ "$status" -eq 2 ]
	[[ $output == *"--index chooses among --all-sets"* ]]
	run "$OFFWHEEL" --home "$WS" export "$SRV/stick3" --all-sets --index https://nowhere.example/simple
	[ "$status" -ne 0 ]
	[[ $output == *"--index https://nowhere.example/simple: no set was resolved from it"* ]]
	# --probes alone chooses among every set: the same refusal, naming what was given
	"$OFFWHEEL" probe --name lab-x -o "$SRV/probes/lab-x.json" >/dev/null
	run "$OFFWHEEL" --home "$WS" export "$SRV/stick4" --probes "$SRV/probes" --sign "$SRV/k.sec"
	echo "$output"
	[ "$status" -eq 2 ]
	[[ $output == *"--probes (the machines' sets, chosen among every set in the workspace): the sets come from more than one index: $A, $B (set 2)"* ]]
	[[ $output != *"--all-sets:"* ]]
	[ ! -e "$SRV/stick4/SHA256SUMS" ]
}

@test "two sets that want different files of one name: the clash names both files' sources" {
	# two small file:// indexes (tests/tools/mkextras_index.py's helpers),
	# each with its own filelock-3.0-py3-none-any.whl, different bytes
	python3 - "$SRV/two" <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["OW_SOURCE_DIR"], "tests", "tools"))
from mkextras_index import page, simple
root = sys.argv[1]
for name, extras in (("one", []), ("two", ["other"])):  # Provides-Extra: other
    v = f"{name}/whl/cu128"
    page(root, v, "torch", [simple("torch", "2.10.0+cu128", ["filelock"])])
    page(root, v, "filelock", [simple("filelock", "3.0", [], extras)])
PY
	local ws=$BATS_TEST_TMPDIR/ws i
	for i in one two; do
		"$OFFWHEEL" --home "$ws" -q sync --index-url "file://$SRV/two/$i/whl" --variant cu128 \
			--python 3.12 --platform linux-x86_64 --project torch
	done
	run "$OFFWHEEL" --home "$ws" export "$BATS_TEST_TMPDIR/stick" 1 2
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"filelock-3.0-py3-none-any.whl: two different files of that name: file://$SRV/two/one/whl/cu128/filelock/filelock-3.0-py3-none-any.whl (sha256 "*") and file://$SRV/two/two/whl/cu128/filelock/filelock-3.0-py3-none-any.whl (sha256 "*"--all-sets --index URL"* ]]
}
