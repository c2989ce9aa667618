#!/usr/bin/env bats
# The store's promise under SIGKILL: whatever moment a publishing process
# dies, fsck finds no row without its object and no object that fails its
# hash; what is left over is garbage that gc removes.

setup() {
	WS=$(mktemp -d)
	PUT="$OW_BUILD_DIR/tests/ow_put"
}

teardown() {
	rm -rf "$WS"
}

fsck_json() {
	"$OFFWHEEL" --home "$WS" --json fsck
}

@test "SIGKILL at 50 random moments while publishing 8 MB objects: fsck clean every time" {
	leftovers=0
	for i in $(seq 1 50); do
		"$PUT" "$WS" random 1000 8 "$i" >/dev/null 2>&1 &
		pid=$!
		sleep "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", 0.02 + rand() * 0.3 }')"
		kill -9 "$pid"
		wait "$pid" || true
		run fsck_json
		[ "$status" -eq 0 ] || { echo "kill $i: fsck exit $status: $output"; false; }
		[ "$(jq .errors <<<"$output")" -eq 0 ]
		# did this kill interrupt a publish? (a temp file or an orphan left)
		if [ "$(jq '.partials + .garbage' <<<"$output")" -gt 0 ]; then
			leftovers=$((leftovers + 1))
		fi
		# start the next round clean, so each round counts its own leftovers
		"$OFFWHEEL" --home "$WS" -q gc --prune=now
	done
	echo "kills that left garbage behind: $leftovers / 50" >&3
	# the kills really landed mid-publish, or this test proved nothing
	[ "$leftovers" -gt 0 ]
	run "$OFFWHEEL" --home "$WS" verify
	[ "$status" -eq 0 ]
	objects=$(find "$WS/objects" -type f | wc -l)
	[ "$objects" -gt 0 ]
	run fsck_json
	[ "$status" -eq 0 ]
	[ "$(jq '.errors + .garbage + .partials' <<<"$output")" -eq 0 ]
}

@test "verify and fsck exit 3 and name a damaged or missing object" {
	"$PUT" "$WS" random 3 1 7 >/dev/null
	obj=$(find "$WS/objects" -type f | head -1)
	"$OW_SOURCE_DIR/tests/tools/flipbyte" "$obj" 100
	run "$OFFWHEEL" --home "$WS" verify
	[ "$status" -eq 3 ]
	[[ "$output" == *"$(basename "$obj" | cut -c1-12)"* ]]
	[[ "$output" == *"damaged"* ]]
	run "$OFFWHEEL" --home "$WS" --json fsck
	[ "$status" -eq 3 ]
	[ "$(jq -r '.issues[0].kind' <<<"$output")" = corrupt ]
	rm -f "$obj"
	run "$OFFWHEEL" --home "$WS" --json fsck
	[ "$status" -eq 3 ]
	[ "$(jq -r '.issues[0].kind' <<<"$output")" = missing ]
}

@test "--json prints exactly one JSON document and nothing else on stdout" {
	"$PUT" "$WS" random 2 1 9 >/dev/null
	for cmd in verify fsck "ls objects" gc; do
		out=$("$OFFWHEEL" --home "$WS" --json $cmd 2>/dev/null)
		jq -e . <<<"$out" >/dev/null
		[ "$(jq -s length <<<"$out")" -eq 1 ]
	done
	[ "$("$OFFWHEEL" --home "$WS" --json ls objects | jq .count)" -eq 2 ]
}

@test "a second writer waits for the lock with a message, then times out clearly" {
	"$PUT" "$WS" random 1 1 1 >/dev/null
	# the lock is a flock on the workspace directory (HOME/lock only names the holder)
	flock "$WS" sleep 3 &
	holder=$!
	sleep 0.3
	run "$OFFWHEEL" --home "$WS" --lock-timeout 1 gc
	[ "$status" -eq 1 ]
	[[ "$output" == *"waiting for the workspace lock"* ]]
	[[ "$output" == *"in use"* ]]
	wait "$holder"
	run "$OFFWHEEL" --home "$WS" gc
	[ "$status" -eq 0 ]
}

@test "--help lists only working commands; usage errors exit 2" {
	run "$OFFWHEEL" --help
	[ "$status" -eq 0 ]
	for cmd in verify fsck ls gc; do
		[[ "$output" == *"  $cmd "* ]]
		run "$OFFWHEEL" "$cmd" --help
		[ "$status" -eq 0 ]
		[[ "$output" == *"usage: offwheel $cmd"* ]]
		run "$OFFWHEEL" --help
	done
	run "$OFFWHEEL" --version
	[[ "$output" == "offwheel "* ]]
	run "$OFFWHEEL" frobnicate
	[ "$status" -eq 2 ]
	run "$OFFWHEEL" verify --no-such-option
	[ "$status" -eq 2 ]
	run "$OFFWHEEL" --home "$WS" --jobs 0 verify
	[ "$status" -eq 2 ]
}
