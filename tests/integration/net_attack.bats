#!/usr/bin/env bats
# A hostile index server cannot hang, starve or fool a crawl, a fetch or a
# resolve: each attack of tests/tools/faultserver.py against the real binary
# on a tiny index (tests/tools/mkattack_index.py), asserting the exit code,
# that the message names the URL or file and the cause, that nothing is
# stored that should not be (files, pages, tmp/part-*, fsck clean), and that
# nothing hangs (every run under `timeout`).

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www"
	ow_start_faultserver "$SRV/www"
	python3 "$OW_SOURCE_DIR/tests/tools/mkattack_index.py" "$SRV/www" "$OW_FAULT_URL"
	export OW_FAULT_URL OW_FAULT_PID OW_FAULT_PORT
}

teardown_file() {
	ow_stop_faultserver
	rm -rf "$SRV"
}

setup() {
	export WS=$BATS_TEST_TMPDIR/ws
}

ow() { timeout 60 "$OFFWHEEL" --home "$WS" "$@"; }

crawl() { # index [options]
	local index=$1
	shift
	ow --json --lock-timeout 5 crawl --index-url "$index" --trusted-host 127.0.0.1 \
		--variant cpu --project torch "$@"
}

files() { "$OFFWHEEL" --home "$WS" --json ls files --project "${1:-torch}" | jq .count; }
pages() { "$OFFWHEEL" --home "$WS" --json ls objects --kind page | jq .count; }
gone() { "$OFFWHEEL" --home "$WS" --json ls files --project torch | jq '[.files[] | select(.gone_at != null)] | length'; }

fsck_clean() {
	run "$OFFWHEEL" --home "$WS" fsck
	[ "$status" -eq 0 ] || { echo "fsck: $output"; false; }
}

no_partials() {
	local left
	left=$(ls "$WS/tmp" 2>/dev/null | grep '^part-' || true)
	[ -z "$left" ] || { echo "left in tmp/: $left"; false; }
}

page_error() { jq -r '.pages[0].error' <<<"$output"; }

@test "a page trickled at 2 B/s is cut off by the minimum rate and the deadline, in seconds" {
	SECONDS=0
	run crawl "$OW_FAULT_URL/fault/trickle,every=0.5/idx" --stall-timeout 1 --min-rate 1000 --deadline 4
	echo "$output"
	[ "$status" -eq 4 ]
	[ "$SECONDS" -lt 20 ]
	err=$(page_error)
	[[ "$err" == *"$OW_FAULT_URL/fault/trickle,every=0.5/idx/cpu/torch/"* ]]
	[[ "$err" == *"B/s"* ]]
	[[ "$err" == *"too slow"* || "$err" == *"deadline"* ]]
	[ "$(files)" -eq 0 ]
	[ "$(pages)" -eq 0 ]
	fsck_clean
}

@test "a wheel trickled at 2 B/s is cut off too; no partial of it is trusted" {
	run crawl "$OW_FAULT_URL/faults"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	SECONDS=0
	run ow --json fetch --trusted-host 127.0.0.1 --stall-timeout 1 --min-rate 1000 --deadline 4 \
		"$OW_FAULT_URL/fault/trickle,every=0.5/idx/cpu/torch/torch-2.0.0-py3-none-any.whl"
	echo "$output"
	[ "$status" -eq 4 ]
	[ "$SECONDS" -lt 20 ]
	err=$(jq -r '.files[0].error' <<<"$output")
	[[ "$err" == *"B/s"* ]]
	[ "$(jq -r '.files[0].outcome' <<<"$output")" = failed ]
	[ "$("$OFFWHEEL" --home "$WS" --json ls objects --kind wheel | jq .count)" -eq 0 ]
	fsck_clean
}

@test "a 304 to a first request is an error, not an empty complete crawl" {
	run crawl "$OW_FAULT_URL/fault/not-modified/idx"
	echo "$output"
	[ "$status" -eq 4 ]
	[ "$(jq .complete <<<"$output")" = false ]
	[ "$(jq -r '.pages[0].outcome' <<<"$output")" = failed ]
	err=$(page_error)
	[[ "$err" == *"/fault/not-modified/idx/cpu/torch/"* ]]
	[[ "$err" == *"304"* && "$err" == *"not conditional"* ]]
	fsck_clean
}

@test "a page cut short by a closed connection (HTTP/1.0, no length) is failed, nothing stored" {
	run crawl "$OW_FAULT_URL/fault/early-close/idx"
	echo "$output"
	[ "$status" -eq 4 ]
	[ "$(jq -r '.pages[0].outcome' <<<"$output")" = failed ]
	err=$(page_error)
	[[ "$err" == *"/fault/early-close/idx/cpu/torch/"* ]]
	[[ "$err" == *"closed the connection"* && "$err" == *"</html>"* ]]
	[ "$(files)" -eq 0 ]
	[ "$(pages)" -eq 0 ]
	fsck_clean
	# the same page whole over HTTP/1.0 (it ends with </html>) is taken
	run crawl "$OW_FAULT_URL/fault/http10/idx"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq '.pages[0].files' <<<"$output")" -eq 50 ]
	# a PEP 691 JSON page: cut short it does not parse, whole it is taken
	n=$(pages)
	run crawl "$OW_FAULT_URL/fault/early-close/json"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$(page_error)" == *"/fault/early-close/json/cpu/torch/"* ]]
	[ "$(pages)" -eq "$n" ]
	run crawl "$OW_FAULT_URL/fault/http10/json"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq '.pages[0].files' <<<"$output")" -eq 49 ]
	fsck_clean
}

@test "a re-crawl that would drop more than 10 % of a page at once is reported and not applied" {
	run crawl "$OW_FAULT_URL/shrink"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq '.pages[0].files' <<<"$output")" -eq 50 ]
	page=$SRV/www/shrink/cpu/torch/index.html
	cp "$page" "$BATS_TEST_TMPDIR/full.html"
	# a complete page (it ends with </html>) that lists 30 of the 50 files
	awk '/<a href/ { if (++n > 30) next } { print }' "$BATS_TEST_TMPDIR/full.html" >"$page"
	touch -d '+1 minute' "$page"
	run crawl "$OW_FAULT_URL/shrink"
	echo "$output"
	cp "$BATS_TEST_TMPDIR/full.html" "$page"
	[ "$status" -eq 4 ]
	[ "$(jq -r '.pages[0].outcome' <<<"$output")" = failed ]
	[ "$(jq '.pages[0].vanished' <<<"$output")" -eq 20 ]
	err=$(page_error)
	[[ "$err" == *"/shrink/cpu/torch/"* && "$err" == *"20 of the 50"* && "$err" == *"--force"* ]]
	[ "$(gone)" -eq 0 ]
	[ "$(files)" -eq 50 ]
	# the text output has the line too
	awk '/<a href/ { if (++n > 30) next } { print }' "$BATS_TEST_TMPDIR/full.html" >"$page"
	touch -d '+2 minute' "$page"
	run timeout 60 "$OFFWHEEL" --home "$WS" crawl --index-url "$OW_FAULT_URL/shrink" \
		--trusted-host 127.0.0.1 --variant cpu --project torch
	[ "$status" -eq 4 ]
	[[ "$output" == *"20 of the 50 files"* ]]
	# --force accepts it: applied, 20 gone, said so
	run timeout 60 "$OFFWHEEL" --home "$WS" crawl --index-url "$OW_FAULT_URL/shrink" \
		--trusted-host 127.0.0.1 --variant cpu --project torch --force
	cp "$BATS_TEST_TMPDIR/full.html" "$page"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"20 files vanished"* ]]
	[ "$(gone)" -eq 20 ]
	fsck_clean
}

@test "another project's page served at this project's URL is refused" {
	run crawl "$OW_FAULT_URL/fault/other-project,p=torchvision/idx"
	echo "$output"
	[ "$status" -eq 4 ]
	[ "$(jq -r '.pages[0].outcome' <<<"$output")" = failed ]
	err=$(page_error)
	[[ "$err" == *"/fault/other-project,p=torchvision/idx/cpu/torch/"* ]]
	[[ "$err" == *"torchvision"* && "$err" == *"another project"* ]]
	[ "$(pages)" -eq 0 ]
	[ "$(files torchvision)" -eq 0 ]
	fsck_clean
}

@test "ETags with control characters or over 128 bytes are dropped: no conditional GET next time" {
	for kind in ctl long; do
		curl -fsS "$OW_FAULT_URL/stats/reset" >/dev/null
		for i in 1 2; do
			run crawl "$OW_FAULT_URL/fault/etag-hostile,kind=$kind/idx"
			[ "$status" -eq 0 ] || { echo "$kind $i: $output"; false; }
		done
		reqs=$(curl -fsS "$OW_FAULT_URL/stats" | jq -c '[.requests[] | select(.path | contains("etag-hostile"))]')
		echo "$kind: $reqs"
		[ "$(jq length <<<"$reqs")" -eq 2 ]
		[ "$(jq '[.[] | select(.if_none_match != null)] | length' <<<"$reqs")" -eq 0 ]
		rm -rf "$WS"
	done
}

@test "a download refused before its first byte leaves no tmp/part-* behind" {
	run crawl "$OW_FAULT_URL/faults"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	for m in cl-huge gzip; do
		run ow --json fetch --trusted-host 127.0.0.1 \
			"$OW_FAULT_URL/fault/$m/idx/cpu/torch/torch-2.0.0-py3-none-any.whl"
		echo "$m: $output"
		[ "$status" -eq 4 ] || [ "$status" -eq 1 ]
		err=$(jq -r '.files[0].error' <<<"$output")
		[[ "$err" == *"/fault/$m/idx/cpu/torch/torch-2.0.0-py3-none-any.whl"* ]]
		case $m in
		cl-huge) [[ "$err" == *"Content-Length 999999999999999 is over the size cap"* ]] ;;
		gzip) [[ "$err" == *"Content-Encoding 'gzip'"* ]] ;;
		esac
		no_partials
	done
	[ "$("$OFFWHEEL" --home "$WS" --json ls objects --kind wheel | jq .count)" -eq 0 ]
	fsck_clean
}

@test "oversized headers are named as such, not as 'Out of memory'" {
	run crawl "$OW_FAULT_URL/fault/header-huge/idx"
	echo "$output"
	[ "$status" -eq 4 ]
	err=$(page_error)
	[[ "$err" == *"/fault/header-huge/idx/cpu/torch/"* ]]
	[[ "$err" == *"headers over"* ]]
	[[ "$err" != *"Out of memory"* ]]
	[ "$(pages)" -eq 0 ]
	fsck_clean
}

@test "resolve refuses a .metadata whose Name and Version contradict the wheel's file name" {
	run ow --json resolve --index-url "$OW_FAULT_URL/meta" --trusted-host 127.0.0.1 \
		--variant cpu --project torch --python 3.12 --platform linux-x86_64
	echo "$output"
	[ "$status" -ne 0 ]
	[ "$(jq '.complete' <<<"$output")" != true ]
	[[ "$output" == *"torch-2.0.0-py3-none-any.whl"* ]]
	[[ "$output" == *"evil-torch"* && "$output" == *"9.9.9"* ]]
	[[ "$output" != *"neither its .metadata nor the wheel has been fetched"* ]]
}

@test "--index-url with a query string or a fragment is a usage error" {
	for u in "$OW_FAULT_URL/idx?page=2" "$OW_FAULT_URL/idx#top"; do
		run ow crawl --index-url "$u" --trusted-host 127.0.0.1 --variant cpu --project torch
		echo "$output"
		[ "$status" -eq 2 ]
		[[ "$output" == *"--index-url"* && "$output" == *"$u"* ]]
		[[ "$output" == *"query string"* || "$output" == *"fragment"* ]]
	done
	[ ! -e "$WS/index.db" ] || [ "$(files)" -eq 0 ]
}
