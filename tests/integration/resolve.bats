#!/usr/bin/env bats
# offwheel resolve on the sample index (tests/tools/make-fixture-index): every
# target of every channel against MANIFEST.json (missing torchaudio day,
# torchvision one day off, stalled Windows torchaudio, free-threaded python,
# per-platform markers, no .metadata on the oldest day), --date / --version,
# stored sets, ls sets, gc --keep; pip (host target) and uv (foreign targets)
# as oracles for the closure.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

PYS=3.11,3.12,3.13,3.13t
PLATS=linux-x86_64,windows-x86_64,linux-aarch64,macos-arm64

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www" "$SRV/www2"
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL2" >/dev/null
	export OW_HTTPS_URL OW_HTTPS_URL2 OW_CA_FILE OW_NGINX_LOG OW_NGINX_DIR
	export WS=$SRV/ws CHECK=$BATS_TEST_DIRNAME/resolve_check.py
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
}

teardown() { # the http.server pair of the oracle tests
	for p in "$SRV"/*.pid; do
		[ -e "$p" ] && kill "$(cat "$p")" 2>/dev/null
		rm -f "$p"
	done
	true
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

ow() { "$OFFWHEEL" --home "$WS" "$@"; }

idx() { # channel -> path
	case $1 in nightly) echo whl/nightly ;; stable) echo whl ;; test) echo whl/test ;; esac
}

resolve() { # channel, options... (--variant cpu,cu126,cu128 unless VARIANTS says)
	local ch=$1
	shift
	ow --json resolve --index-url "$OW_HTTPS_URL/$(idx "$ch")" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --variant "${VARIANTS:-cpu,cu126,cu128}" "$@"
}

@test "nightly: every target of the matrix matches the manifest (sets, passed-over days, closure)" {
	run resolve nightly --python "$PYS" --platform "$PLATS"
	[ "$status" -eq 4 ] || { echo "$output"; false; } # cp313t targets are incomplete
	echo "$output" >"$SRV/nightly.json"
	run python3 "$CHECK" "$SRV/MANIFEST.json" nightly "$SRV/nightly.json"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"48 targets checked, 0 problems"* ]]
	j="$SRV/nightly.json"
	# day off: torch 20251021 goes with torchvision 20251022 (the pin, not the date)
	[ "$(jq -r '.targets[] | select(.target == "cu128 cp312-manylinux_2_28_x86_64") | .versions | [.torch, .torchvision, .torchaudio] | join(" ")' "$j")" = \
		"2.10.0.dev20251021+cu128 0.25.0.dev20251022+cu128 2.10.0.dev20251021+cu128" ]
	# stalled Windows torchaudio: back to 20251018, whose pins came from inside the wheels
	[ "$(jq -r '.targets[] | select(.target == "cu126 cp313-win_amd64") | .versions.torch' "$j")" = 2.10.0.dev20251018+cu126 ]
	[ "$(jq -r '.targets[] | select(.target == "cu126 cp313-win_amd64") | .skipped | map(.missing | join(",")) | join(" ")' "$j")" = \
		"torchvision,torchaudio torchaudio torchaudio torchaudio" ]
	# markers for the target: nvidia-* only on Linux x86_64, triton on Linux, setuptools >= 3.12
	members() { jq -r --arg t "$1" '.targets[] | select(.target == $t) | [.members[].project] | join(" ")' "$j"; }
	for p in nvidia-cudnn-cu12 pytorch-triton setuptools; do
		[[ " $(members 'cu128 cp312-manylinux_2_28_x86_64') " == *" $p "* ]]
	done
	[[ " $(members 'cu128 cp312-manylinux_2_28_aarch64') " != *" nvidia-"* ]]
	[[ " $(members 'cu128 cp312-manylinux_2_28_aarch64') " == *" pytorch-triton "* ]]
	[[ " $(members 'cu128 cp311-manylinux_2_28_x86_64') " != *" setuptools "* ]]
	[[ " $(members 'cu128 cp312-win_amd64') " != *" pytorch-triton "* ]]
	# free-threaded: torch only, reported as incomplete with what is missing
	[ "$(jq -r '.targets[] | select(.target == "cu128 cp313t-manylinux_2_28_x86_64") | [.complete, (.missing | join(",")), .newest_complete] | tostring' "$j")" = \
		'[false,"torchvision,torchaudio",null]' ]
	# every member has its URL; dependency files carry their published hash
	[ "$(jq '[.targets[] | select(.complete) | .members[] | select(.url == null or .url == "")] | length' "$j")" -eq 0 ]
	[ "$(jq '[.targets[] | select(.complete) | .members[] | select(.role == "dep" and .sha256_source != "published")] | length' "$j")" -eq 0 ]
	[[ "$(jq -r '[.targets[] | .members[] | select(.project == "mpmath") | .required_by][0]' "$j")" == "torch 2.10.0.dev"*" -> sympy 1.14.0" ]]
}

@test "stable and test channels match the manifest" {
	for ch in stable test; do
		run resolve "$ch" --python "$PYS" --platform "$PLATS"
		[ "$status" -eq 4 ]
		echo "$output" >"$SRV/$ch.json"
		run python3 "$CHECK" "$SRV/MANIFEST.json" "$ch" "$SRV/$ch.json"
		echo "$output"
		[ "$status" -eq 0 ]
	done
}

@test "--date of the missing torchaudio day is incomplete and names the newest complete set" {
	VARIANTS=cu128 run resolve nightly --python 3.12 --platform linux-x86_64 --date 20251020
	[ "$status" -eq 4 ]
	t=$(jq -c '.targets[] | select(.variant == "cu128")' <<<"$output")
	[ "$(jq -r '.versions.torch' <<<"$t")" = 2.10.0.dev20251020+cu128 ]
	[ "$(jq -r '.missing | join(",")' <<<"$t")" = torchaudio ]
	[ "$(jq -r '.newest_complete' <<<"$t")" = 2.10.0.dev20251021+cu128 ]
	run ow resolve --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" --allow-host r2.localhost \
		--variant cu128 --python 3.12 --platform linux-x86_64 --date 20251020
	[ "$status" -eq 4 ]
	[[ "$output" == *"INCOMPLETE"* ]]
	[[ "$output" == *"no torchaudio matches torch 2.10.0.dev20251020+cu128; newest complete set: torch 2.10.0.dev20251021+cu128"* ]]
	# a complete day, and a stable version
	VARIANTS=cu128 run resolve nightly --python 3.12 --platform linux-x86_64 --date 20251019 --no-deps
	[ "$status" -eq 0 ]
	[ "$(jq -r '.targets[0].versions.torchvision' <<<"$output")" = 0.25.0.dev20251019+cu128 ]
	[ "$(jq '.targets[0].members | length' <<<"$output")" -eq 3 ]
	VARIANTS=cu128 run resolve stable --python 3.12 --platform windows-x86_64 --version 2.9.1 --no-deps
	[ "$status" -eq 0 ]
	[ "$(jq -r '.targets[0].versions | [.torch, .torchvision, .torchaudio] | join(" ")' <<<"$output")" = "2.9.1+cu128 0.24.1+cu128 2.9.1+cu128" ]
	# the deliberately wrong published hash is passed on as published (fetch refuses the file)
	[ "$(jq -r '.targets[0].members[] | select(.project == "torchvision") | .sha256_source' <<<"$output")" = published ]
	run resolve nightly --date 2025-10-20
	[ "$status" -eq 2 ]
}

@test "a variant the index lacks: named per target when asked for, a note when it was a default" {
	WS=$SRV/ws-variant # its --no-deps sets stay out of the shared workspace
	# asked for: that target is incomplete and says where it looked; the other goes on
	VARIANTS=cu130,cu128 run --separate-stderr resolve nightly --python 3.12 --platform linux-x86_64 --no-deps
	[ "$status" -eq 4 ]
	[ "$(jq -r '.targets[] | select(.variant == "cu130") | .error' <<<"$output")" = \
		"cu130: no such variant on this index: no page at $OW_HTTPS_URL/whl/nightly/cu130/torch/ (HTTP 404)" ]
	[ "$(jq -r '.targets[] | select(.variant == "cu128") | .complete' <<<"$output")" = true ]
	[[ "$stderr" != *"unknown error"* ]]
	run ow resolve --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" --allow-host r2.localhost \
		--variant cu130 --python 3.12 --platform linux-x86_64 --no-deps
	[ "$status" -eq 4 ]
	[[ "$output" == *"cu130: no such variant on this index: no page at"* ]]
	[[ "$output" != *"no torch wheel fits"* && "$output" != *"unknown error"* ]]
	# the defaults (cu126,cu128,cu130,cpu): cu130 is left out with a note, exit 0
	run ow --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq -r '[.targets[].variant] | join(",")' <<<"$output")" = cu126,cu128,cpu ]
	[ "$(jq -r '.notes[0]' <<<"$output")" = "cu130: no such variant on this index; left out (a default variant: name --variant to choose)" ]
	run ow resolve --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" --allow-host r2.localhost \
		--python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ]
	[[ "$output" == *"note: cu130: no such variant on this index"* ]]
}

@test "a lab's mirror of one variant under a name that is not a variant: one root, the variant from torch's +cu128" {
	# every page a pip user of .../nightly/cu128 reads (the folder's, else the
	# channel root's), copied under /labmirror/: the links still point at the
	# files in .../cu128/ on both hosts
	local m=$SRV/www/labmirror d p
	rm -rf "$m"
	for d in "$SRV"/www/whl/nightly/*/; do
		p=$(basename "$d")
		case $p in cu*|cpu*|rocm*|xpu) continue ;; esac
		[ -f "$d/index.html" ] && mkdir -p "$m/$p" && cp "$d/index.html" "$m/$p/"
	done
	for d in "$SRV"/www/whl/nightly/cu128/*/; do
		p=$(basename "$d")
		mkdir -p "$m/$p" && cp "$d/index.html" "$m/$p/"
	done
	run --separate-stderr ow --json resolve --index-url "$OW_HTTPS_URL/labmirror" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output $stderr"; false; }
	echo "$output" >"$BATS_TEST_TMPDIR/m.json"
	jq -e '.flat == true and (.targets | length) == 1 and .targets[0].variant == "cu128" and .targets[0].variant_from == "local-version" and .targets[0].target == "cu128 cp312-manylinux_2_28_x86_64"' "$BATS_TEST_TMPDIR/m.json"
	[[ $(jq -r '.targets[0].versions.torch' "$BATS_TEST_TMPDIR/m.json") == *+cu128 ]]
	# the same set and closure as the channel's cu128 folder gives
	run --separate-stderr ow --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --variant cu128 --python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ]
	diff <(jq -r '.targets[0].members[] | "\(.project)==\(.version) \(.filename)"' <<<"$output" | sort) \
		<(jq -r '.targets[0].members[] | "\(.project)==\(.version) \(.filename)"' "$BATS_TEST_TMPDIR/m.json" | sort)
}

@test "an index that cannot be reached: incomplete (exit 4) with the host and the cause, never 'no torch wheel fits' nor exit 3" {
	port=$(ow_free_port) # nothing listens there: connection refused
	for cmd in resolve sync; do
		run --separate-stderr "$OFFWHEEL" --home "$SRV/ws-down" "$cmd" --index-url "https://127.0.0.1:$port/whl" \
			--variant cu128 --python 3.12 --platform linux-x86_64 --device 12.0
		echo "$output"
		[ "$status" -eq 4 ]
		[[ "$output" == *"the index could not be reached: GET https://127.0.0.1:$port/whl/cu128/torch/: "* ]]
		# nothing of this index is in the workspace: --offline would find nothing
		[[ "$output" != *"--offline"* && "$output" == *"the workspace holds no page of this index yet"* ]]
		[[ "$output" != *"no torch wheel fits"* && "$output" != *"no set here runs"* ]]
	done
	run "$OFFWHEEL" --home "$SRV/ws-down" --json resolve --index-url "https://127.0.0.1:$port/whl" \
		--python 3.12 --platform linux-x86_64
	[ "$status" -eq 4 ]
	# the default variants are not "missing": all four are named unreachable, each with its own page
	[ "$(jq '[.targets[] | select(.error | startswith("the index could not be reached"))] | length' <<<"$output")" -eq 4 ]
	for v in cu126 cu128 cu130 cpu; do
		jq -e --arg v "$v" --arg u "GET https://127.0.0.1:$port/whl/$v/torch/: " \
			'.targets[] | select(.variant == $v) | .error | contains($u)' <<<"$output"
	done
	[ "$(jq '.notes | length' <<<"$output")" -eq 0 ]
}

@test "the demo matrix (2 variants x 2 pythons x 2 platforms) resolves complete" {
	run ow resolve --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" --allow-host r2.localhost \
		--variant cu126,cu128 --python 3.12,3.13 --platform linux-x86_64,windows-x86_64
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c ' deps$' <<<"$output")" -eq 8 ]
	[[ "$output" == *"8 target(s), 8 complete, 0 incomplete"* ]]
}

@test "sets are stored once, re-resolving fetches nothing, ls sets and gc --keep" {
	before=$(ow_nginx_log_count '\.metadata"')
	run resolve nightly --python 3.12 --platform linux-x86_64
	[ "$status" -eq 0 ]
	ids=$(jq -c '[.targets[].set_id]' <<<"$output")
	[ "$(ow_nginx_log_count '\.metadata"')" -eq "$before" ]
	run resolve nightly --python 3.12 --platform linux-x86_64
	[ "$(jq -c '[.targets[].set_id]' <<<"$output")" = "$ids" ]
	run ow --json ls sets
	[ "$status" -eq 0 ]
	n=$(jq .count <<<"$output")
	[ "$n" -gt 10 ]
	[ "$(jq -r '[.sets[] | select(.target == "cu128 cp312-manylinux_2_28_x86_64" and .selector == "latest")][0].members | map(.role) | unique | join(",")' <<<"$output")" = dep,torch,torchaudio,torchvision ]
	run ow ls sets
	# resolved, nothing downloaded: "not fetched", not "complete"
	[[ "$output" == *"cu128 cp312-manylinux_2_28_x86_64"*"not fetched"* ]]
	# a header, the rows, the count; -q keeps exactly the rows; 80 columns
	[[ "$(head -n1 <<<"$output")" == "  ID  TARGET "*"TORCH"*"STATE" ]]
	[ "$(tail -n1 <<<"$output")" = "$n sets" ]
	[ -z "$(awk 'length($0) > 80' <<<"$output")" ]
	run ow ls sets -q
	[ "$status" -eq 0 ]
	[ "$(wc -l <<<"$output")" -eq "$n" ]
	[[ "$output" == *"cu128 cp312-manylinux_2_28_x86_64"*"not fetched"* ]]
	run ow ls sets -v
	[[ "$(head -n1 <<<"$output")" == *"RESOLVED"*"SELECTOR, FILES, STATE" ]]
	run ow ls files -q --project torch
	[ "$(wc -l <<<"$output")" -eq "$(ow --json ls files --project torch | jq .count)" ]
	run ow --json ls files --project filelock
	[ "$(jq -c '[.files[] | .yanked, .has_metadata] | unique' <<<"$output")" = '[false,true]' ]
	run ow --json gc --keep 1
	[ "$status" -eq 0 ]
	[ "$(jq .removed_sets <<<"$output")" -gt 0 ]
	run ow --json ls sets
	[ "$(jq '[.sets[] | .target + " " + .index_url] | group_by(.) | map(length) | max' <<<"$output")" -eq 1 ]
	run ow fsck
	[ "$status" -eq 0 ]
}

# --- oracles: the sample index on two loopback http.server ports ---------------

serve_plain() {
	P1=$(ow_free_port)
	P2=$(ow_free_port)
	while [ "$P2" = "$P1" ]; do P2=$(ow_free_port); done
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV/h" --host "http://127.0.0.1:$P1" \
		--host2 "http://127.0.0.1:$P2" >/dev/null
	python3 -m http.server "$P1" --bind 127.0.0.1 -d "$SRV/h/www" >"$SRV/h1.log" 2>&1 3>&- &
	echo $! >"$SRV/h1.pid"
	python3 -m http.server "$P2" --bind 127.0.0.1 -d "$SRV/h/www2" >"$SRV/h2.log" 2>&1 3>&- &
	echo $! >"$SRV/h2.pid"
	for _ in $(seq 50); do
		curl -sf "http://127.0.0.1:$P1/whl/nightly/" >/dev/null && curl -s -o /dev/null "http://127.0.0.1:$P2/" && return 0
		sleep 0.1
	done
	return 1
}

plain_resolve() { # index path with variant (whl/nightly/cu128), python, platform|"" (host)
	local plat=()
	[ -n "$3" ] && plat=(--platform "$3")
	"$OFFWHEEL" --home "$SRV/ws-plain" --json resolve --index-url "http://127.0.0.1:$P1/${1%/*}" \
		--trusted-host "127.0.0.1:$P1,127.0.0.1:$P2" --variant "${1##*/}" --python "$2" "${plat[@]}"
}

closure_of() { jq -r '.targets[0].members[] | "\(.project)==\(.version)"' "$1" | sort; }

@test "pip agrees on the host target's closure (nightly cpu, nightly cu128, stable cu126)" {
	[ -z "${OW_PIP_TOO_OLD:-}" ] || skip "pip < 23.1 misreads PEP 658 metadata whose Name spelling differs (pypa/pip#11847), and PyPI is out of reach for a newer one"
	py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	grep -q "\"cp${py/./}\"" "$SRV/MANIFEST.json" || skip "host python $py is not in the sample matrix"
	serve_plain
	for index in whl/nightly/cpu whl/nightly/cu128 whl/cu126; do
		plain_resolve "$index" "$py" "" >"$SRV/ow.json"
		pins=$(jq -r '.targets[0].versions | to_entries[] | "\(.key)==\(.value)"' "$SRV/ow.json")
		python3 -m pip install --dry-run --ignore-installed --no-cache-dir --quiet --only-binary=:all: \
			--report "$SRV/pip.json" --index-url "http://127.0.0.1:$P1/$index" --trusted-host 127.0.0.1 $pins
		python3 -c '
import json, re, sys
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()
for i in sorted(json.load(open(sys.argv[1]))["install"], key=lambda i: norm(i["metadata"]["name"])):
    print(norm(i["metadata"]["name"]) + "==" + i["metadata"]["version"])' "$SRV/pip.json" >"$SRV/pip.txt"
		closure_of "$SRV/ow.json" >"$SRV/ow.txt"
		echo "$index"
		diff -u "$SRV/pip.txt" "$SRV/ow.txt"
		[ "$(wc -l <"$SRV/ow.txt")" -gt 10 ]
	done
}

@test "uv agrees on foreign targets (Linux aarch64, Windows, macOS, Linux x86_64 3.12)" {
	serve_plain
	uvenv="$BATS_FILE_TMPDIR/uvenv"
	if [ ! -x "$uvenv/bin/uv" ]; then
		python3 -m venv "$uvenv" && timeout 180 "$uvenv/bin/pip" install -q uv >/dev/null 2>&1 ||
			skip "uv could not be installed from PyPI (no network?)"
	fi
	for t in "whl/nightly/cu128 3.12 linux-x86_64 x86_64-manylinux_2_28" \
		"whl/nightly/cu128 3.12 linux-aarch64 aarch64-manylinux_2_28" \
		"whl/nightly/cu126 3.13 windows-x86_64 x86_64-pc-windows-msvc" \
		"whl/nightly/cpu 3.11 macos-arm64 aarch64-apple-darwin" \
		"whl/cu128 3.13 linux-x86_64 x86_64-manylinux_2_28"; do
		set -- $t
		plain_resolve "$1" "$2" "$3" >"$SRV/ow.json"
		jq -r '.targets[0].versions | to_entries[] | "\(.key)==\(.value)"' "$SRV/ow.json" >"$SRV/req.in"
		"$uvenv/bin/uv" pip compile -q --no-cache --python-platform "$4" --python-version "$2" \
			--index-url "http://127.0.0.1:$P1/$1" --allow-insecure-host 127.0.0.1 \
			--only-binary :all: --no-header --no-annotate "$SRV/req.in" | sort >"$SRV/uv.txt"
		closure_of "$SRV/ow.json" >"$SRV/ow.txt"
		echo "$t"
		diff -u "$SRV/uv.txt" "$SRV/ow.txt"
		[ "$(wc -l <"$SRV/ow.txt")" -gt 9 ]
	done
}
