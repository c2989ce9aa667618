#!/usr/bin/env bats
# Metadata without PEP 658 (issue 15): the real-metadata fixture index
# (scripts/real-metadata-index, 173 wheels of torch 2.15.0's closure) served
# by a real nginx with no .metadata files.  resolve reads each METADATA with
# HTTP range requests (src/wheel/fetchrange.c); the access log is the
# witness of what went over the wire.  The wheels carry a 4 MiB stored pad
# (as a hole on disk) so that they weigh about what real wheels of such
# projects do while the METADATA stays at the end.  Files that can never be
# picked (yanked, a foreign platform tag, a Requires-Python that excludes
# every target) are added to torchvision's page: none of them may be read.
# A second nginx with max_ranges 0 ignores Range: resolve falls back to
# whole wheels and says so.  A warm resolve --offline reads its metadata
# from the index database alone, even with every stored object removed.
# The same tree with file:// hrefs is resolved as a local index: the pieces
# are read from the wheel files, no wheel is stored, a damaged wheel or a
# FIFO in its place is refused naming it.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

PYS=3.11,3.12,3.13
PLATS=linux-x86_64,linux-aarch64,windows-x86_64,macosx_14_0_arm64
PAD=4194304

# files that cannot be picked, linked from torchvision's page (never served)
add_unpickable() { # PAGE
	python3 - "$1" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
extra = (
    '    <a href="/whl/cu130/torchvision/torchvision-0.30.0-py3-none-any.whl" data-yanked="broken">torchvision-0.30.0-py3-none-any.whl</a><br/>\n'
    '    <a href="/whl/cu130/torchvision/torchvision-0.31.0-cp312-cp312-win32.whl">torchvision-0.31.0-cp312-cp312-win32.whl</a><br/>\n'
    '    <a href="/whl/cu130/torchvision/torchvision-0.32.0-py3-none-any.whl" data-requires-python="&gt;=3.99">torchvision-0.32.0-py3-none-any.whl</a><br/>\n'
)
s = s.replace("  </body>", extra + "  </body>", 1)
open(p, "w").write(s)
PY
}

setup_file() {
	export SRV=$(mktemp -d)
	export EXP=$SRV/pad/EXPECTED.json
	"$OW_SOURCE_DIR/scripts/real-metadata-index" build "$SRV/pad" --no-pep658 --pad $PAD >/dev/null
	"$OW_SOURCE_DIR/scripts/real-metadata-index" build "$SRV/plain" --no-pep658 >/dev/null
	add_unpickable "$SRV/pad/www/whl/cu130/torchvision/index.html"
	ow_start_nginx "$SRV/pad/www"
	export OW_HTTP_URL OW_HTTPS_URL OW_CA_FILE OW_NGINX_DIR OW_NGINX_LOG OW_HTTPS_PORT
	export WS=$SRV/ws
	"$OFFWHEEL" --home "$WS" --json resolve --index-url "$OW_HTTPS_URL/whl" --cert "$OW_CA_FILE" \
		--variant cu130 --python "$PYS" --platform "$PLATS" >"$SRV/cold.json" 2>"$SRV/cold.err" ||
		echo $? >"$SRV/cold.rc"
	[ -f "$SRV/cold.rc" ] || echo 0 >"$SRV/cold.rc"
	cp "$OW_NGINX_LOG" "$SRV/cold.log"
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

exp_closure() { jq -r --arg t "$1" '.targets[$t][]' "$EXP" | sort; }
ow_closure() { jq -r --arg t "cu130 $2" '.targets[] | select(.target == $t) | .members[] | "\(.project)==\(.version)"' "$1" | sort; }

same_as_uv() { # JSON [TARGET...]: offwheel's closures equal uv's on PyPI (the snapshot)
	local json=$1 t bad=()
	shift
	local ts=("$@")
	[ ${#ts[@]} -gt 0 ] || mapfile -t ts < <(jq -r '.targets | keys[]' "$EXP")
	for t in "${ts[@]}"; do
		diff -u --label "uv-on-PyPI $t" --label "offwheel $t" <(exp_closure "$t") <(ow_closure "$json" "$t") || bad+=("$t")
	done
	[ ${#bad[@]} -eq 0 ] || { echo "differs on: ${bad[*]}"; return 1; }
}

@test "cold resolve by range requests: metadata bytes under 2 % of the wheels read, no whole-wheel GET" {
	echo "exit $(cat "$SRV/cold.rc")"
	tail -3 "$SRV/cold.err"
	[ "$(cat "$SRV/cold.rc")" -eq 0 ]
	same_as_uv "$SRV/cold.json"
	log=$SRV/cold.log
	# every wheel request asked for a range and got a 206
	[ "$(grep -c '\.whl HTTP' "$log")" -gt 0 ]
	[ "$(grep '\.whl HTTP' "$log" | grep -vc 'range="bytes=')" -eq 0 ]
	[ "$(grep '\.whl HTTP' "$log" | grep -vc '" 206 ')" -eq 0 ]
	[ "$(grep -c '\.whl\.metadata' "$log")" -eq 0 ]
	# bytes of the range answers against the size of the wheels they read
	read -r reqs wheels bytes total < <(grep '\.whl HTTP' "$log" | python3 -c '
import os, re, sys
root = sys.argv[1]
reqs, bytes_, paths = 0, 0, set()
for line in sys.stdin:
    m = re.search(r"\"GET (\S+) HTTP/[^\"]*\" 206 (\d+)", line)
    reqs += 1
    bytes_ += int(m.group(2))
    paths.add(m.group(1))
total = sum(os.path.getsize(root + p) for p in paths)
print(reqs, len(paths), bytes_, total)' "$SRV/pad/www")
	echo "$reqs range requests for $wheels wheels: $bytes bytes of $total ($(python3 -c "print(f'{100 * $bytes / $total:.2f}')") %)"
	[ $((bytes * 50)) -le "$total" ]
	# one tail read per wheel, at most three reads each
	[ "$(grep '\.whl HTTP' "$log" | grep -c 'range="bytes=-')" -eq "$wheels" ]
	[ "$reqs" -le $((3 * wheels)) ]
	jq -e '.metadata_read == 0 and .metadata_cached > 0' "$SRV/cold.json"
}

@test "no metadata is read for files that cannot be picked (yanked, foreign tag, Requires-Python)" {
	grep -q 'torchvision-0.30.0' "$SRV/pad/www/whl/cu130/torchvision/index.html"
	run grep -c 'torchvision-0\.3[012]\.0' "$SRV/cold.log"
	echo "requests for unpickable files: $output"
	[ "$output" -eq 0 ]
	# and torchvision was read: only the release that goes with torch
	[ "$(grep -c 'torchvision-0\.29\.2.*range="bytes=-' "$SRV/cold.log")" -ge 1 ]
}

@test "a warm resolve --offline reads no object: the metadata kept parsed in the index" {
	n0=$(wc -l <"$OW_NGINX_LOG")
	# no wheel and no .metadata was ever stored: only the pages' bodies
	[ "$(sqlite3 "$WS/index.db" "SELECT count(*) FROM objects WHERE kind <> 'page'")" -eq 0 ]
	start=$(date +%s.%N)
	"$OFFWHEEL" --home "$WS" --json resolve --offline --index-url "$OW_HTTPS_URL/whl" --cert "$OW_CA_FILE" \
		--variant cu130 --python "$PYS" --platform "$PLATS" >"$BATS_TEST_TMPDIR/warm.json"
	echo "warm resolve of 12 targets: $(python3 -c "import time; print(f'{time.time() - $start:.2f}')") s"
	[ "$(wc -l <"$OW_NGINX_LOG")" -eq "$n0" ]
	jq -c '{metadata_read, metadata_cached, complete}' "$BATS_TEST_TMPDIR/warm.json"
	jq -e '.complete and .metadata_read == 0 and .metadata_cached > 0' "$BATS_TEST_TMPDIR/warm.json"
	same_as_uv "$BATS_TEST_TMPDIR/warm.json"
}

@test "a server that ignores Range: whole wheels, said once naming the host; warm resolve without any object" {
	# a second nginx, refusing ranges, over the index without padding
	local saved_dir=$OW_NGINX_DIR
	OW_NGINX_MAX_RANGES=0 ow_start_nginx "$SRV/plain/www"
	local ws=$SRV/ws-norange t=cp312-manylinux_2_28_x86_64
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json resolve --index-url "$OW_HTTPS_URL/whl" \
		--cert "$OW_CA_FILE" --variant cu130 --python 3.12 --platform linux-x86_64
	local st=$status
	echo "$output" >"$BATS_TEST_TMPDIR/nr.json"
	cp "$OW_NGINX_LOG" "$BATS_TEST_TMPDIR/nr.log"
	ow_stop_nginx
	export OW_NGINX_DIR=$saved_dir
	echo "exit $st; stderr: $stderr"
	[ "$st" -eq 0 ]
	[ "$(grep -c "localhost:[0-9]* ignores Range requests: metadata costs whole wheels ([0-9]* files\?, [0-9.]* [kM]B so far); those wheels are kept and not fetched again" <<<"$stderr")" -eq 1 ]
	same_as_uv "$BATS_TEST_TMPDIR/nr.json" "$t"
	log=$BATS_TEST_TMPDIR/nr.log
	ranged=$(grep '\.whl HTTP' "$log" | grep -c 'range="bytes=')
	whole=$(grep '\.whl HTTP' "$log" | grep -c ' range=""')
	members=$(jq '.targets[0].members | length' "$BATS_TEST_TMPDIR/nr.json")
	echo "$ranged range requests (answered 200, taken whole), $whole whole-wheel GETs, $members members"
	# ranges were tried in the first round only (their answers taken as the
	# wheels' downloads), then whole wheels: each member once, none twice
	[ "$ranged" -ge 1 ] && [ "$ranged" -le 4 ]
	[ "$((ranged + whole))" -eq "$members" ]
	[ -z "$(grep '\.whl HTTP' "$log" | awk '{print $3}' | sort | uniq -d)" ]
	[ "$(grep '\.whl HTTP' "$log" | grep -c '" 206 ')" -eq 0 ]
	# every ranged answer was a whole file sent in full (not cut off)
	grep '\.whl HTTP' "$log" | grep 'range="bytes=' | while read -r _ _ path _ st bytes _; do
		[ "$st" = 200 ] && [ "$bytes" -eq "$(stat -c %s "$SRV/plain/www$path")" ] || exit 1
	done
	# warm, offline, every stored wheel gone: the index database alone
	rm -rf "$ws/objects/sha256"
	mkdir -p "$ws/objects/sha256"
	"$OFFWHEEL" --home "$ws" --json resolve --offline --index-url "$OW_HTTPS_URL/whl" --cert "$OW_CA_FILE" \
		--variant cu130 --python 3.12 --platform linux-x86_64 >"$BATS_TEST_TMPDIR/nr-warm.json"
	jq -c '{metadata_read, metadata_cached, complete}' "$BATS_TEST_TMPDIR/nr-warm.json"
	jq -e '.complete and .metadata_read == 0 and .metadata_cached > 0' "$BATS_TEST_TMPDIR/nr-warm.json"
	same_as_uv "$BATS_TEST_TMPDIR/nr-warm.json" "$t"
}

@test "a whole-wheel fetch compares the wheel's METADATA with what the ranges gave" {
	f=filelock
	whl=$(ls "$SRV/pad/www/whl/cu130/$f/"*.whl | tail -1)
	name=$(basename "$whl")
	jq -e --arg n "$name" '[.targets[].members[] | select(.filename == $n)] | length > 0' "$SRV/cold.json" >/dev/null
	# the same bytes: fetched and stored without a word about it
	run --separate-stderr "$OFFWHEEL" --home "$WS" fetch --cert "$OW_CA_FILE" "$name"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" != *"read earlier by range requests"* ]]
	[ "$(sqlite3 "$WS/index.db" "SELECT m.source FROM file_meta m JOIN files f ON f.id = m.file_id WHERE f.filename = '$name'")" = range ]
	# as if the ranges had brought other bytes than the wheel's (a server that
	# changed the file between the reads, or lied): the row says so
	ws2=$SRV/ws-refetch
	cp -a "$WS" "$ws2"
	sqlite3 "$ws2/index.db" "UPDATE file_meta SET sha256 = '$(printf '%064d' 0)', requires_dist = 'evil-extra' || char(10) WHERE file_id = (SELECT id FROM files WHERE filename = '$name')"
	sqlite3 "$ws2/index.db" "UPDATE files SET object_sha256 = NULL WHERE filename = '$name'"
	run --separate-stderr "$OFFWHEEL" --home "$ws2" fetch --cert "$OW_CA_FILE" "$name"
	echo "$stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"$name: its METADATA"*"is not the one read earlier by range requests"* ]]
	[ "$(sqlite3 "$ws2/index.db" "SELECT m.source, instr(m.requires_dist, 'evil-extra') FROM file_meta m JOIN files f ON f.id = m.file_id WHERE f.filename = '$name'")" = "wheel|0" ]
}

@test "a local index (file:): the same three pieces read from each wheel, no wheel stored, the same sets" {
	local d=$SRV/local ws=$SRV/ws-local
	"$OW_SOURCE_DIR/scripts/real-metadata-index" build "$d" --no-pep658 --pad $PAD --host "file://$d/www" >/dev/null
	grep -qF "href=\"file://$d/www/whl/cu130/filelock/" "$d/www/whl/cu130/filelock/index.html"
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json resolve --index-url "file://$d/www/whl" \
		--variant cu130 --python "$PYS" --platform "$PLATS"
	echo "exit $status; stderr: $stderr"
	[ "$status" -eq 0 ]
	echo "$output" >"$BATS_TEST_TMPDIR/local.json"
	same_as_uv "$BATS_TEST_TMPDIR/local.json"
	# the same sets as over HTTP, target by target
	for t in $(jq -r '.targets | keys[]' "$EXP"); do
		diff -u <(ow_closure "$SRV/cold.json" "$t") <(ow_closure "$BATS_TEST_TMPDIR/local.json" "$t")
	done
	# every METADATA kept parsed from the file's pieces: none read from an object
	jq -c '{metadata_read, metadata_cached, complete}' "$BATS_TEST_TMPDIR/local.json"
	jq -e '.complete and .metadata_read == 0 and .metadata_cached > 0' "$BATS_TEST_TMPDIR/local.json"
	[ "$(sqlite3 "$ws/index.db" "SELECT count(*) FROM file_meta WHERE source <> 'range'")" -eq 0 ]
	[ "$(sqlite3 "$ws/index.db" "SELECT count(*) FROM file_meta")" -gt 100 ]
	# no wheel and no .metadata stored: only the pages, a few hundred kB
	[ "$(sqlite3 "$ws/index.db" "SELECT count(*) FROM objects WHERE kind <> 'page'")" -eq 0 ]
	[ "$(sqlite3 "$ws/index.db" "SELECT count(*) FROM files WHERE object_sha256 IS NOT NULL")" -eq 0 ]
	kb=$(du -sk "$ws" | cut -f1)
	echo "workspace: $kb kB for wheels of $(du -sk --apparent-size "$d/www" | cut -f1) kB"
	[ "$kb" -lt 20000 ]
}

@test "a truncated wheel on a local index: refused naming it and its path, nothing stored for it" {
	local d=$SRV/local-bad ws=$SRV/ws-local-bad t=cp312-manylinux_2_28_x86_64
	"$OW_SOURCE_DIR/scripts/real-metadata-index" build "$d" --no-pep658 --host "file://$d/www" >/dev/null
	whl=$(ls "$d/www/whl/cu130/filelock/"*.whl | tail -1)
	name=$(basename "$whl")
	jq -e --arg n "$name" '[.targets[].members[] | select(.filename == $n)] | length > 0' "$SRV/cold.json" >/dev/null
	# cut in the middle: its end record and central directory are gone
	truncate -s $(($(stat -c %s "$whl") / 2)) "$whl"
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json resolve --index-url "file://$d/www/whl" \
		--variant cu130 --python 3.12 --platform linux-x86_64
	echo "exit $status; stderr: $stderr"
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"$name: no ZIP end record"*"not a valid wheel"*"[$whl]"* ]]
	jq -e '.complete | not' <<<"$output"
	# nothing kept for it, and no wheel stored instead
	[ "$(sqlite3 "$ws/index.db" "SELECT count(*) FROM file_meta m JOIN files f ON f.id = m.file_id WHERE f.filename = '$name'")" -eq 0 ]
	[ "$(sqlite3 "$ws/index.db" "SELECT count(*) FROM objects WHERE kind <> 'page'")" -eq 0 ]
	# a file that is not a regular file is refused without blocking on it
	rm "$whl"
	mkfifo "$whl"
	run --separate-stderr timeout 60 "$OFFWHEEL" --home "$ws" --json resolve --index-url "file://$d/www/whl" \
		--variant cu130 --python 3.12 --platform linux-x86_64
	echo "exit $status; stderr: $stderr"
	[ "$status" -ne 0 ] && [ "$status" -ne 124 ]
	[[ "$stderr" == *"$name: $whl is not a regular file"* ]]
	[ "$(sqlite3 "$ws/index.db" "SELECT count(*) FROM objects WHERE kind <> 'page'")" -eq 0 ]
}
