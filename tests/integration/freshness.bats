#!/usr/bin/env bats
# Stale and silent resolves, on the sample index served by nginx: a root
# found to be one root (no variant folders) is remembered, so later syncs ask
# for no folder; "refreshed N index pages" counts what the server answered;
# a stored page older than --max-age is revalidated with a conditional GET
# (a 304 in nginx's access log) and a fresh one is not; the age of the
# oldest page used is printed; --offline names what the workspace lacks
# instead of falling back to an older torch.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" >/dev/null
	export OW_HTTPS_URL OW_HTTPS_URL2 OW_CA_FILE OW_NGINX_LOG OW_NGINX_DIR
	# a lab's one-root mirror of nightly/cu128 under a name that is no variant
	# (as PyPI's /simple or a devpi index): every page a pip user of
	# .../nightly/cu128 reads, the links still pointing at the channel's files
	local m=$SRV/www/labmirror d p
	for d in "$SRV"/www/whl/nightly/*/; do
		p=$(basename "$d")
		case $p in cu*|cpu*|rocm*|xpu) continue ;; esac
		[ -f "$d/index.html" ] && mkdir -p "$m/$p" && cp "$d/index.html" "$m/$p/"
	done
	for d in "$SRV"/www/whl/nightly/cu128/*/; do
		p=$(basename "$d")
		mkdir -p "$m/$p" && cp "$d/index.html" "$m/$p/"
	done
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

ow() { "$OFFWHEEL" --home "$WS" "$@"; }

net() { echo --cert "$OW_CA_FILE" --allow-host r2.localhost; }

# page GETs (not wheels, not .metadata) in the access log under PATH
page_gets() { grep -cE "\"GET $1[^ ]*/ HTTP/1.1\" ${2:-[0-9]+} " "$OW_NGINX_LOG" || true; }

@test "sync of a one-root index: variant folders are asked for once, remembered, never again; refreshed counts real pages" {
	WS=$BATS_TEST_TMPDIR/ws
	: >"$OW_NGINX_LOG"
	run --separate-stderr ow sync --index-url "$OW_HTTPS_URL/labmirror" $(net) \
		--python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	# the first sync probes the 4 default folders x 3 projects: all 404
	[ "$(page_gets '/labmirror/(cu126|cu128|cu130|cpu)/' 404)" -eq 12 ]
	[[ $output == *"refreshed 3 index pages and 0 dependency pages (12 asked for are not on the index)"* ]]
	[ "$(sqlite3 "$WS/index.db" "SELECT layout FROM roots WHERE url = '$OW_HTTPS_URL/labmirror'")" = flat ]
	: >"$OW_NGINX_LOG"
	run --separate-stderr ow --json sync --index-url "$OW_HTTPS_URL/labmirror" $(net) \
		--python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	echo "$output" >"$BATS_TEST_TMPDIR/s2.json"
	# no folder was asked for again, and "refreshed" is what the server answered
	[ "$(page_gets '/labmirror/(cu126|cu128|cu130|cpu)/')" -eq 0 ]
	answered=$(page_gets '/labmirror/' '(200|304)')
	echo "answered $answered"; jq '{pages_refreshed, pages_not_found}' "$BATS_TEST_TMPDIR/s2.json"
	[ "$answered" -gt 3 ]
	[ "$(jq .pages_refreshed "$BATS_TEST_TMPDIR/s2.json")" -eq "$answered" ]
	[ "$(jq .pages_not_found "$BATS_TEST_TMPDIR/s2.json")" -eq 0 ]
	jq -e '.resolve.flat == true and .resolve.layout_remembered == true and .complete == true' "$BATS_TEST_TMPDIR/s2.json"
	# a resolve of the root asks for no folder either
	: >"$OW_NGINX_LOG"
	run --separate-stderr ow resolve --index-url "$OW_HTTPS_URL/labmirror" $(net) --python 3.13 \
		--platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(page_gets '/labmirror/(cu126|cu128|cu130|cpu)/')" -eq 0 ]
	# crawl --force asks again (and remembers the answer)
	: >"$OW_NGINX_LOG"
	run --separate-stderr ow crawl --index-url "$OW_HTTPS_URL/labmirror" $(net) --force
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(page_gets '/labmirror/(cu126|cu128|cu130|cpu)/' 404)" -eq 12 ]
	run --separate-stderr ow crawl --index-url "$OW_HTTPS_URL/labmirror" $(net)
	[[ $output == *"is one root (found before; --force asks for its variant folders again)"* ]]
}

@test "a page older than --max-age is revalidated with a conditional GET (304); fresh pages are not asked for; the age is printed" {
	WS=$BATS_TEST_TMPDIR/ws
	ow resolve --index-url "$OW_HTTPS_URL/whl/nightly" $(net) --variant cu128 --python 3.12 \
		--platform linux-x86_64 >/dev/null
	# warm and fresh: no page is asked for, the age line is there
	: >"$OW_NGINX_LOG"
	run --separate-stderr ow resolve --index-url "$OW_HTTPS_URL/whl/nightly" $(net) --variant cu128 \
		--python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(page_gets /whl/)" -eq 0 ]
	[[ $output =~ index\ pages:\ [0-9]+\ used,\ oldest\ fetched\ [0-9]+\ seconds?\ ago ]]
	# one dependency page made two hours old: that one only is revalidated
	page=$(sqlite3 "$WS/index.db" "SELECT url FROM pages WHERE status = 'ok' AND project NOT LIKE 'torch%' ORDER BY url LIMIT 1")
	[ -n "$page" ]
	sqlite3 "$WS/index.db" "UPDATE pages SET fetched_at = fetched_at - 7200 WHERE url = '$page'"
	run --separate-stderr ow --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" $(net) \
		--variant cu128 --python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	path=${page#"$OW_HTTPS_URL"}
	cat "$OW_NGINX_LOG"
	[ "$(page_gets /whl/)" -eq 1 ]
	[ "$(grep -c "\"GET $path HTTP/1.1\" 304 .* inm=\"\\\\\"" "$OW_NGINX_LOG")" -eq 1 ]
	jq -e '.index_pages.revalidated == 1 and .index_pages.used > 3 and .index_pages.oldest_age_s < 600' <<<"$output"
	# --max-age now: every page used is asked for, each a 304
	: >"$OW_NGINX_LOG"
	run --separate-stderr ow --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" $(net) \
		--variant cu128 --python 3.12 --platform linux-x86_64 --max-age now
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	used=$(jq .index_pages.used <<<"$output")
	[ "$(jq .index_pages.revalidated <<<"$output")" -eq "$used" ]
	[ "$(page_gets /whl/ 304)" -eq "$used" ]
	[ "$(page_gets /whl/ 200)" -eq 0 ]
	# --offline never asks, and says how old the pages are
	sqlite3 "$WS/index.db" "UPDATE pages SET fetched_at = fetched_at - 3 * 86400"
	: >"$OW_NGINX_LOG"
	run --separate-stderr ow resolve --offline --index-url "$OW_HTTPS_URL/whl/nightly" --variant cu128 \
		--python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ ! -s "$OW_NGINX_LOG" ]
	[[ $output =~ index\ pages:\ [0-9]+\ used,\ oldest\ fetched\ 3\ days\ ago ]]
}

@test "--offline names the metadata and pages the workspace lacks; never an older torch instead" {
	WS=$BATS_TEST_TMPDIR/ws
	run --separate-stderr ow --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" $(net) --variant cu128 \
		--python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	torch=$(jq -r '.targets[0].versions.torch' <<<"$output")
	# another python: its wheels' metadata was never read
	: >"$OW_NGINX_LOG"
	run --separate-stderr ow --json resolve --offline --index-url "$OW_HTTPS_URL/whl/nightly" \
		--variant cu128 --python 3.13 --platform linux-x86_64
	echo "$output" | jq '.targets[0] | {versions, error, not_in_workspace}'
	[ "$status" -eq 4 ]
	[ ! -s "$OW_NGINX_LOG" ]
	jq -e '.targets[0] | .complete == false and .not_in_workspace == true and .versions.torch == null and (.members | length) == 0' <<<"$output"
	# what the matcher needs first is named: the newest torchvision's metadata
	err=$(jq -r '.targets[0].error' <<<"$output")
	[[ $err == "torchvision 0.25.0.dev"*": metadata never read (torchvision-0.25.0.dev"*"-cp313-cp313-manylinux_2_28_x86_64.whl)"*" — run without --offline to read it"* ]]
	run --separate-stderr ow resolve --offline --index-url "$OW_HTTPS_URL/whl/nightly" --variant cu128 \
		--python 3.13 --platform linux-x86_64
	[ "$status" -eq 4 ]
	[[ $output == *"metadata never read"* && $output != *"no torch wheel fits"* && $output != *"matches torch"* ]]
	# torch alone: its own metadata is what is missing, and no older torch is taken
	run --separate-stderr ow --json resolve --offline --index-url "$OW_HTTPS_URL/whl/nightly" \
		--variant cu128 --project torch --python 3.13 --platform linux-x86_64
	[ "$status" -eq 4 ]
	jq -e '.targets[0] | .not_in_workspace == true and .versions.torch == null' <<<"$output"
	[[ $(jq -r '.targets[0].error' <<<"$output") == "torch 2.10.0.dev"*": metadata never read (torch-2.10.0.dev"*"-cp313-cp313-manylinux_2_28_x86_64.whl) — run without --offline"* ]]
	# a variant never crawled: its page is named
	run --separate-stderr ow --json resolve --offline --index-url "$OW_HTTPS_URL/whl/nightly" \
		--variant cu126 --python 3.12 --platform linux-x86_64
	[ "$status" -eq 4 ]
	[ "$(jq -r '.targets[0].error' <<<"$output")" = "torch: no page in the workspace for $OW_HTTPS_URL/whl/nightly/cu126/torch/; torchvision: no page in the workspace for $OW_HTTPS_URL/whl/nightly/cu126/torchvision/; torchaudio: no page in the workspace for $OW_HTTPS_URL/whl/nightly/cu126/torchaudio/ — run without --offline to read it (or resolve or sync this target online first)" ]
	# online, the same target resolves: the metadata is read then
	run --separate-stderr ow --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" $(net) --variant cu128 \
		--python 3.13 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(jq -r '.targets[0].versions.torch' <<<"$output")" = "$torch" ]
}
