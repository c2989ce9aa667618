#!/usr/bin/env bats
# offwheel fetch: parallel downloads into the verified store from a real
# nginx over HTTPS (and a fault server), with the trust policy, resume after
# SIGKILL, a full disk, and two processes on one workspace.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" --large-files 200 >/dev/null
	ow_start_faultserver "$SRV/www"
	export OW_HTTP_PORT OW_HTTPS_PORT OW_HTTPS_PORT2 OW_CA_FILE OW_NGINX_LOG OW_NGINX_DIR \
		OW_HTTPS_URL OW_HTTPS_URL2 OW_HTTP_URL OW_CERT_DIR OW_FAULT_URL OW_FAULT_PID
	export WS=$SRV/ws
	crawl "$OW_HTTPS_URL/whl/nightly" --variant cpu,cu128 --project torch,torchvision,torchaudio
	crawl "$OW_HTTPS_URL/whl" --variant cu128 --project torch,torchvision,torchaudio
}

# crawl INDEX [options] into $WS, with the test CA and hosts
crawl() {
	local index=$1
	shift
	"$OFFWHEEL" --home "$WS" -q crawl --index-url "$index" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --trusted-host 127.0.0.1 "$@"
}

teardown_file() {
	ow_stop_faultserver
	ow_stop_nginx
	rm -rf "$SRV"
}

# ow [--json] fetch [options] ITEM...: fetch with the test CA and hosts
ow() {
	local pre=()
	[ "$1" = --json ] && { pre=(--json); shift; }
	local cmd=$1
	shift
	"$OFFWHEEL" --home "$WS" "${pre[@]}" "$cmd" --cert "$OW_CA_FILE" --allow-host r2.localhost \
		--trusted-host 127.0.0.1 "$@"
}

nightly_wheel() { # variant project python -> the newest nightly file name crawled
	"$OFFWHEEL" --home "$WS" --json ls files --project "$2" --variant "$1" --python "$3" \
		--platform manylinux_2_28_x86_64 --version '*.dev2025*' | jq -r '.files | max_by(.version) | .filename'
}

objects() { "$OFFWHEEL" --home "$1" --json ls objects | jq .count; }

@test "nightly wheels (no published hash) are verified by zip + RECORD and pinned" {
	tv=$(nightly_wheel cu128 torchvision cp312)
	ta=$(nightly_wheel cu128 torchaudio cp312)
	run ow --json fetch "$tv" "$ta"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq -r '[.files[].trust] | unique | join(",")' <<<"$output")" = record-pinned ]
	[ "$(jq .done <<<"$output")" -eq 2 ]
	# the object is the file: its hash on disk equals the pinned hash
	sha=$(jq -r '.files[0].sha256' <<<"$output")
	[ "$(sha256sum "$WS/objects/sha256/${sha:0:2}/$sha" | cut -c1-64)" = "$sha" ]
	# a second run downloads nothing
	run ow --json fetch "$tv" "$ta"
	[ "$status" -eq 0 ]
	[ "$(jq .had <<<"$output")" -eq 2 ]
	[ "$(jq .received <<<"$output")" -eq 0 ]
	run "$OFFWHEEL" --home "$WS" fsck
	[ "$status" -eq 0 ]
}

@test "stable wheels must match the published sha256" {
	f=$("$OFFWHEEL" --home "$WS" --json ls files --project torchaudio --variant cu128 --version 2.10.0+cu128 \
		--python cp312 --platform manylinux_2_28_x86_64 | jq -r '.files[0].filename')
	run ow --json fetch "$f"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq -r '.files[0].trust' <<<"$output")" = published-hash ]
}

@test "a wrong published hash: exit 3, both hashes named, nothing stored, no partial left" {
	bad=$(jq -r '.irregularities[] | select(.kind == "wrong-hash") | .file' "$SRV/MANIFEST.json")
	[ -n "$bad" ]
	before=$(objects "$WS")
	run ow fetch "$bad"
	[ "$status" -eq 3 ]
	[[ "$output" == *"sha256 mismatch: index says "*", got "* ]]
	[[ "$output" == *"not stored"* ]]
	[ "$(objects "$WS")" -eq "$before" ]
	[ -z "$(ls "$WS/tmp")" ]
	run "$OFFWHEEL" --home "$WS" --json ls files --project torchvision
	[ "$(jq -r --arg f "$bad" '.files[] | select(.filename == $f) | .object_sha256' <<<"$output")" = null ]
}

# --- faults: a page whose links point at the fault server ----------------------

fault_page() { # mode... -> writes www/whl/faults/cu128/torchaudio/index.html
	local d=$SRV/www/whl/faults/cu128/torchaudio src f
	mkdir -p "$d"
	# a wheel that lies on the main host (the fault server serves www/ only)
	f=$(cd "$SRV/www/whl/nightly/cu128" && ls torchaudio-*-cp311-cp311-manylinux_2_28_x86_64.whl | tail -1)
	src=whl/nightly/cu128/${f//+/%2B}
	{
		echo '<!DOCTYPE html><html><body><h1>Links for torchaudio</h1>'
		for m in "$@"; do
			echo "<a href=\"$OW_FAULT_URL/fault/$m/$src\">$f</a><br/>"
		done
		echo '</body></html>'
	} >"$d/index.html"
	touch -d '+1 minute' "$d/index.html"
	crawl "$OW_HTTPS_URL/whl/faults" --variant cu128 --project torchaudio --force
	echo "$f"
}

fault_url() { # mode
	local f=$1 m=$2
	echo "$OW_FAULT_URL/fault/$m/whl/nightly/cu128/${f//+/%2B}"
}

@test "transient faults recover within the retry budget and end verified" {
	modes=("truncate,fail=1" "truncate-nocl,fail=1" "flip,fail=1" "reset,fail=1" "503,fail=2,ra=0" "429,fail=1,ra=1" "stall,fail=1,stall=30" "range-wrong,fail=1")
	f=$(fault_page "${modes[@]}")
	for m in "${modes[@]}"; do
		run ow --json fetch --stall-timeout 2 "$(fault_url "$f" "$m")"
		[ "$status" -eq 0 ] || { echo "$m: $output"; false; }
		[ "$(jq -r '.files[0].outcome' <<<"$output")" != failed ]
	done
	run "$OFFWHEEL" --home "$WS" fsck
	[ "$status" -eq 0 ]
}

@test "persistent faults end with a clear error (exit 3 or 4) and nothing stored" {
	modes=(flip lie-cl-short lie-cl-long gzip cl-garbage redirect-other-host redirect-file 500 endless)
	f=$(fault_page "${modes[@]}")
	before=$(objects "$WS")
	for m in "${modes[@]}"; do
		extra=()
		[ "$m" = endless ] && extra=(--max-size 1)
		run ow --json fetch "${extra[@]}" "$(fault_url "$f" "$m")"
		echo "$m: exit $status: $(jq -r '.files[0].error' <<<"$output")"
		[ "$status" -eq 3 ] || [ "$status" -eq 4 ]
		[ "$(jq -r '.files[0].error' <<<"$output")" != null ]
	done
	# flip is caught by the RECORD / CRC checks (no published hash): a rejection
	run ow --json fetch "$(fault_url "$f" flip)"
	[ "$status" -eq 3 ]
	[ "$(objects "$WS")" -eq "$before" ]
	run "$OFFWHEEL" --home "$WS" fsck
	[ "$status" -eq 0 ]
}

# --- hostile wheels served by the index -------------------------------------------

@test "hostile wheels are rejected with a clear error and not stored" {
	d=$SRV/www/whl/hostile/cpu/demo
	mkdir -p "$d"
	python3 - "$d" <<'PY'
import base64, hashlib, sys, zipfile
d = sys.argv[1]
def rec(files):
    lines = []
    for n, b in files:
        h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
        lines.append(f"{n},sha256={h},{len(b)}")
    return "\n".join(lines) + "\n"
def wheel(fn, members, record=None, di=None):
    ver = fn.split("-")[1]
    di = di or f"demo-{ver}.dist-info"
    md = f"Metadata-Version: 2.1\nName: demo\nVersion: {ver}\n\n".encode()
    wh = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files = members + [(f"{di}/METADATA", md), (f"{di}/WHEEL", wh)]
    r = record if record is not None else rec(files) + f"{di}/RECORD,,\n"
    with zipfile.ZipFile(f"{d}/{fn}", "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in files:
            z.writestr(n, b)
        z.writestr(f"{di}/RECORD", r)
ok = [("demo/__init__.py", b"x = 1\n")]
wheel("demo-1.0-py3-none-any.whl", ok)
wheel("demo-1.1-py3-none-any.whl", [("demo/../../evil.py", b"boom\n")])
wheel("demo-1.2-py3-none-any.whl", ok, record="demo/__init__.py,sha256=AAAA,6\n")
wheel("demo-1.3-py3-none-any.whl", ok, di="other-1.3.dist-info")
with open(f"{d}/demo-1.4-py3-none-any.whl", "wb") as f:
    f.write(b"PK\x03\x04 not a zip at all")
PY
	{
		echo '<!DOCTYPE html><html><body><h1>Links for demo</h1>'
		for w in "$d"/*.whl; do b=$(basename "$w"); echo "<a href=\"/whl/hostile/cpu/demo/$b\">$b</a><br/>"; done
		echo '</body></html>'
	} >"$d/index.html"
	crawl "$OW_HTTPS_URL/whl/hostile" --variant cpu --project demo
	run ow --json fetch demo-1.0-py3-none-any.whl
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	before=$(objects "$WS")
	tmp_before=$(ls "$WS/tmp" | wc -l)
	for v in 1.1:'..' 1.2:RECORD 1.3:dist-info 1.4:zip; do
		run --separate-stderr ow --json fetch "demo-${v%%:*}-py3-none-any.whl"
		err=$(jq -r '.files[0].error' <<<"$output")
		echo "${v%%:*}: $err"
		[ "$status" -eq 3 ]
		grep -qi -- "${v#*:}" <<<"$err"
	done
	[ "$(objects "$WS")" -eq "$before" ]
	[ "$(ls "$WS/tmp" | wc -l)" -eq "$tmp_before" ] # bad bytes are not kept for a resume
}

@test "verify --deep re-checks stored wheels: a published hash of a broken wheel is caught" {
	ws=$SRV/ws-deep
	d=$SRV/www/whl/deep/cpu/demo
	mkdir -p "$d"
	printf 'PK\003\004 a published hash does not make this a wheel' >"$d/demo-2.0-py3-none-any.whl"
	sum=$(sha256sum "$d/demo-2.0-py3-none-any.whl" | cut -c1-64)
	printf '<html><body><a href="/whl/deep/cpu/demo/demo-2.0-py3-none-any.whl#sha256=%s">demo-2.0-py3-none-any.whl</a></body></html>\n' "$sum" >"$d/index.html"
	"$OFFWHEEL" --home "$ws" -q crawl --index-url "$OW_HTTPS_URL/whl/deep" --cert "$OW_CA_FILE" --variant cpu --project demo
	run "$OFFWHEEL" --home "$ws" fetch --cert "$OW_CA_FILE" demo-2.0-py3-none-any.whl
	[ "$status" -eq 0 ] # the published hash matches: that is fetch's trust rule
	run "$OFFWHEEL" --home "$ws" verify
	[ "$status" -eq 0 ]
	run "$OFFWHEEL" --home "$ws" verify --deep
	[ "$status" -eq 3 ]
	[[ "$output" == *"demo-2.0-py3-none-any.whl"*"zip"* ]]
	run "$OFFWHEEL" --home "$WS" verify --deep
	[ "$status" -eq 0 ]
}

# --- crashes, resume, full disk, two processes ---------------------------------------

large_urls() {
	"$OFFWHEEL" --home "$1" --json ls files --project torch | jq -r '.files[] | select(.url | contains("/large/")) | .filename'
}

@test "SIGKILL at 100 random moments over three 200 MB downloads: fsck clean each time, resumes, ends verified" {
	ws=$SRV/ws-kill
	"$OFFWHEEL" --home "$ws" -q crawl --index-url "$OW_HTTPS_URL/whl/large" --cert "$OW_CA_FILE" --variant cu128 --project torch
	mapfile -t files < <(large_urls "$ws")
	[ "${#files[@]}" -eq 3 ]
	ranges_before=$(ow_nginx_log_count 'range="bytes=[1-9]')
	for i in $(seq 1 100); do
		"$OFFWHEEL" --home "$ws" -q fetch --cert "$OW_CA_FILE" "${files[@]}" >/dev/null 2>&1 &
		pid=$!
		sleep "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", 0.05 + rand() * 0.5 }')"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" || true
		run "$OFFWHEEL" --home "$ws" --json fsck
		[ "$status" -eq 0 ] || { echo "kill $i: $output"; false; }
		[ "$(jq .errors <<<"$output")" -eq 0 ]
	done
	run "$OFFWHEEL" --home "$ws" --json fetch --cert "$OW_CA_FILE" "${files[@]}"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq '.had + .done' <<<"$output")" -eq 3 ]
	ranges_after=$(ow_nginx_log_count 'range="bytes=[1-9]')
	echo "Range requests seen by nginx: $((ranges_after - ranges_before))" >&3
	[ "$ranges_after" -gt "$ranges_before" ]
	run "$OFFWHEEL" --home "$ws" verify
	[ "$status" -eq 0 ]
	run "$OFFWHEEL" --home "$ws" --json fsck
	[ "$(jq '.errors + .partials' <<<"$output")" -eq 0 ]
}

@test "a full disk: a clear error, nothing published, the partial kept for a later resume" {
	[ "$(id -u)" -eq 0 ] || skip "mounting a tmpfs needs root"
	ws=$SRV/ws-full
	mkdir -p "$ws"
	mount -t tmpfs -o size=120m tmpfs "$ws" || skip "cannot mount a tmpfs here"
	"$OFFWHEEL" --home "$ws" -q crawl --index-url "$OW_HTTPS_URL/whl/large" --cert "$OW_CA_FILE" --variant cu128 --project torch
	f=$(large_urls "$ws" | head -1)
	# the space check refuses it before its first byte (diskspace.bats has more)
	run "$OFFWHEEL" --home "$ws" --json fetch --cert "$OW_CA_FILE" "$f"
	[ "$status" -eq 1 ]
	[[ "$(jq -r '.files[0].error' <<<"$output")" == *"not enough disk space"* ]]
	[ -z "$(find "$ws/tmp" -name 'part-*' -size +0)" ]
	# --force skips the check: the disk fills up while writing
	run "$OFFWHEEL" --home "$ws" --json fetch --force --cert "$OW_CA_FILE" "$f"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$(jq -r '.files[0].error' <<<"$output")" == *"No space left"* ]]
	[ "$(objects "$ws")" -eq 1 ] # only the crawled page
	part=$(ls "$ws/tmp" | grep '^part-.*\.whl$')
	[ -n "$part" ]
	[ "$(stat -c %s "$ws/tmp/$part")" -gt 0 ]
	# room again (move the workspace to a bigger disk): the run resumes
	cp -a "$ws" "$SRV/ws-full-moved"
	umount "$ws"
	run "$OFFWHEEL" --home "$SRV/ws-full-moved" --json fetch --cert "$OW_CA_FILE" "$f"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq -r '.files[0].resumed' <<<"$output")" = true ]
}

@test "two fetch processes on one workspace: one waits for the lock, both finish, fsck clean" {
	ws=$SRV/ws-two
	"$OFFWHEEL" --home "$ws" -q crawl --index-url "$OW_HTTPS_URL/whl/large" --cert "$OW_CA_FILE" --variant cu128 --project torch
	mapfile -t files < <(large_urls "$ws")
	"$OFFWHEEL" --home "$ws" fetch --cert "$OW_CA_FILE" "${files[0]}" "${files[1]}" >"$ws.1" 2>&1 &
	p1=$!
	sleep 0.2
	"$OFFWHEEL" --home "$ws" fetch --cert "$OW_CA_FILE" "${files[1]}" "${files[2]}" >"$ws.2" 2>&1 &
	p2=$!
	wait $p1
	wait $p2
	cat "$ws.1" "$ws.2"
	grep -q "waiting for the workspace lock" "$ws.1" "$ws.2"
	run "$OFFWHEEL" --home "$ws" --json fsck
	[ "$status" -eq 0 ]
	[ "$(jq .objects <<<"$output")" -eq 4 ] # 3 wheels + the page
}

@test "two sets that share files: each shared file is downloaded once, exit 0, fsck clean" {
	ws=$SRV/ws-share
	run "$OFFWHEEL" --home "$ws" --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --variant cpu,cu128 --python 3.11 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	a=$(jq -r '.targets[0].set_id' <<<"$output")
	b=$(jq -r '.targets[1].set_id' <<<"$output")
	shared=$(jq '[.targets[0].members[].filename] - ([.targets[0].members[].filename] - [.targets[1].members[].filename]) | length' <<<"$output")
	[ "$shared" -ge 5 ]
	cp "$OW_NGINX_LOG" "$OW_NGINX_LOG.before"
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json fetch --cert "$OW_CA_FILE" --allow-host r2.localhost "set:$a" "set:$b" "set:$a"
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	[ "$(jq .failed <<<"$output")" -eq 0 ]
	# asked for |a| + |b| + |a| files: the distinct ones downloaded, the repeats taken from them
	total=$(jq '.files | length' <<<"$output")
	distinct=$(jq '[.files[].filename] | unique | length' <<<"$output")
	# (resolve already downloaded the wheels that publish no .metadata: those are "had")
	done_=$(jq .done <<<"$output")
	[ "$done_" -gt 0 ]
	[ $((done_ + $(jq .had <<<"$output"))) -eq "$total" ]
	[ "$(jq '[.files[] | select(.outcome == "done") | .filename] | unique | length' <<<"$output")" -eq "$done_" ]
	[ "$(jq '[.files[] | select(.sha256 == null)] | length' <<<"$output")" -eq 0 ]
	# files already there say how they were trusted when they were stored
	[ "$(jq '[.files[] | select(.trust == null)] | length' <<<"$output")" -eq 0 ]
	# the server saw one GET per distinct file
	new=$(diff "$OW_NGINX_LOG.before" "$OW_NGINX_LOG" | grep '^> ' | grep -c '"GET [^ ]*\.whl ' || true)
	[ "$new" -eq "$done_" ] || { echo "GETs $new, files downloaded $done_"; false; }
	run "$OFFWHEEL" --home "$ws" fsck
	[ "$status" -eq 0 ]
	[[ "$output" == *"0 partial(s) — clean"* ]]
	run "$OFFWHEEL" --home "$ws" -q fetch --cert "$OW_CA_FILE" --allow-host r2.localhost "set:$a" "set:$b"
	[ "$status" -eq 0 ]
}
