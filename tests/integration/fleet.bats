#!/usr/bin/env bats
# The lab as a fleet (docs/fleet.md): machines describe themselves (probe),
# the stick is made for them (sync --probes, export), each installs its own
# set (install) and the stick brings back what happened (fleet).  The
# stand-in libcuda plays four machines: a 12.0 GPU with driver 12.8, an 8.0
# GPU with driver 12.6, no driver, and a 12.0 GPU behind driver 11.8.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/fleet.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export STANDIN="$OW_BUILD_DIR/tests/standin/libcuda.so.1"
	export EXT="${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}"
	unset OW_STANDIN_CC OW_STANDIN_DRIVER OW_STANDIN_MODE OW_STANDIN_DEVICES OW_STANDIN_NAME
	# the sample index, served by nginx over HTTPS
	export SRV="$BATS_FILE_TMPDIR/srv"
	ow_serve_fixture_index "$SRV"
}

@test "probe: one document per machine, its GPUs and driver from the Driver API; no driver is an answer" {
	cd "$BATS_TEST_TMPDIR"
	for m in lab-a lab-b lab-c lab-d; do
		run on "$m" probe --name "$m" --python python3
		[ "$status" -eq 0 ] || { echo "$output"; false; }
		[ -f "probes/$m.json" ]
		[[ $output == *"written to probes/$m.json"* ]]
	done
	[ "$(jq -r '.driver.version, .gpus[0].cc' probes/lab-a.json | tr '\n' ' ')" = "12.8 12.0 " ]
	[ "$(jq -r '.driver.version, .gpus[0].cc' probes/lab-b.json | tr '\n' ' ')" = "12.6 8.0 " ]
	[ "$(jq -r '.driver.version, (.gpus | length)' probes/lab-c.json | tr '\n' ' ')" = "null 0 " ]
	[[ $(jq -r .driver.error probes/lab-c.json) == *libcuda* ]]
	[ "$(jq -r '.driver.version_raw, .gpus[0].cc' probes/lab-d.json | tr '\n' ' ')" = "11080 12.0 " ]
	# several GPUs: each with its own compute capability
	env $(machine lab-a) OW_STANDIN_DEVICES=3 OW_STANDIN_CC=12.0,8.0,9.0 "$OFFWHEEL" probe --name multi -o multi.json >/dev/null
	[ "$(jq -r '[.gpus[].cc] | join(",")' multi.json)" = "12.0,8.0,9.0" ]
	# --json: the same document, which follows docs/json/probe.schema.json
	run --separate-stderr on lab-a --json probe --name lab-a -o "$BATS_TEST_TMPDIR/x.json"
	[ "$status" -eq 0 ]
	[ "$(jq -r .name <<<"$output")" = lab-a ]
	# a name that cannot be a file name on the stick is refused
	run on lab-a probe --name "../x"
	[ "$status" -eq 2 ] || [ "$status" -eq 1 ]
	[[ $output == *"only letters, digits"* || $output == *"starts with"* ]]
}

@test "probe is quick: well under a second with one interpreter" {
	start=$(date +%s%N)
	on lab-a probe --python python3 -o "$BATS_TEST_TMPDIR/p.json" >/dev/null
	ms=$((($(date +%s%N) - start) / 1000000))
	echo "probe took $ms ms"
	[ "$ms" -lt 1000 ]
}

@test "probe's libc agrees with ldd --version" {
	on lab-c probe -o "$BATS_TEST_TMPDIR/p.json" >/dev/null
	ldd_ver=$(ldd --version 2>&1 | head -1 | grep -oE '[0-9]+\.[0-9]+$')
	[ "$(jq -r .libc.name "$BATS_TEST_TMPDIR/p.json")" = glibc ]
	[ "$(jq -r .libc.version "$BATS_TEST_TMPDIR/p.json")" = "$ldd_ver" ]
	minor=${ldd_ver#2.}
	[ "$(jq -r '.platforms[0]' "$BATS_TEST_TMPDIR/p.json")" = "manylinux_2_${minor}_$(uname -m)" ]
}

# packaging, the tag oracle pip vendors, from PyPI into a venv of the cache
packaging_venv() {
	local v="$EXT/packaging-venv"
	"$v/bin/python" -c 'import packaging.tags' 2>/dev/null && { echo "$v"; return 0; }
	rm -rf "$v"
	python3 -m venv "$v" >/dev/null 2>&1 &&
		timeout 300 "$v/bin/python" -m pip install -q packaging >/dev/null 2>&1 &&
		echo "$v"
}

@test "probe agrees with packaging.tags: the platform tags and each interpreter's ABI tags" {
	v=$(packaging_venv) || skip "PyPI cannot be reached and $EXT/packaging-venv has no packaging"
	on lab-c probe --python "$v/bin/python" --python python3 -o "$BATS_TEST_TMPDIR/p.json" >/dev/null
	oracle() { # PY: "platforms" and "abis" of its sys_tags, one per line, sorted
		"$1" -c '
import sys
from packaging import tags
ts = list(tags.sys_tags())
interp = tags.interpreter_name() + tags.interpreter_version()
print(" ".join(sorted({t.platform for t in ts if t.platform != "any"})))
print(" ".join(sorted({t.abi for t in ts if t.interpreter == interp})))
print(sys.executable)'
	}
	mapfile -t want < <(oracle "$v/bin/python")
	got_plat=$(jq -r '.platforms | sort | join(" ")' "$BATS_TEST_TMPDIR/p.json")
	[ "$got_plat" = "${want[0]}" ] || { echo "probe:     $got_plat"; echo "packaging: ${want[0]}"; false; }
	got_abi=$(jq -r --arg p "$v/bin/python" '.pythons[] | select(.path == $p) | .abis | sort | join(" ")' "$BATS_TEST_TMPDIR/p.json")
	[ "$got_abi" = "${want[1]}" ] || { echo "probe: $got_abi"; echo "packaging: ${want[1]}"; false; }
	[ "$(jq -r --arg p "$v/bin/python" '.pythons[] | select(.path == $p) | .executable' "$BATS_TEST_TMPDIR/p.json")" = "${want[2]}" ]
	[ "$(jq '.pythons | length' "$BATS_TEST_TMPDIR/p.json")" -eq 2 ]
}

# ---- the stick for the four machines ----

teardown_file() {
	ow_stop_nginx
}

probes_of_four() { # DIR: the four machines' probes, made as on each
	local d=$1 m
	mkdir -p "$d"
	for m in lab-a lab-b lab-c lab-d; do
		on "$m" probe --name "$m" --python python3 -o "$d/$m.json" >/dev/null
	done
}

fleet_sync() { # [offwheel options...]
	"$OFFWHEEL" --home "$BATS_FILE_TMPDIR/ws" "$@" sync --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cpu,cu126,cu128 \
		--probes "$BATS_FILE_TMPDIR/probes"
}

@test "sync --probes: the matrix from the machines; each machine named with its set, or why none" {
	probes_of_four "$BATS_FILE_TMPDIR/probes"
	run fleet_sync
	echo "$output"
	[ "$status" -eq 0 ]
	py=$(jq -r '.pythons[0].abis[0]' "$BATS_FILE_TMPDIR/probes/lab-a.json")
	plat=$(jq -r '.platforms[0]' "$BATS_FILE_TMPDIR/probes/lab-a.json")
	[[ $output == *"cu128 $py-$plat"* && $output == *"cu126 $py-$plat"* && $output == *"cpu $py-$plat"* ]]
	grep -E "^  lab-a .*: set [0-9]+, cu128 $py-$plat\$" <<<"$output"
	grep -E "^  lab-b .*: set [0-9]+, cu126 $py-$plat\$" <<<"$output"
	grep -E "^  lab-c .*: set [0-9]+, cpu $py-$plat\$" <<<"$output"
	line=$(grep -E "^  lab-d " <<<"$output")
	[[ $line == *NOTHING* ]]
	# why: the driver is too old for cu128 (which driver is needed), and cu126 has no 12.0 build
	[[ $line == *"cu128: the driver reports CUDA 11.8; cu128 needs 12.8 (NVIDIA driver 570.26 or newer)"* ]]
	[[ $line == *"cu126: the driver reports CUDA 11.8; cu126 needs 12.6"* ]]
	[[ $line == *"cpu: not a CUDA build"* ]]
	# --json: the same, in the sync document
	run --separate-stderr fleet_sync --json
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(jq -r '.machines[] | select(.name == "lab-a") | .variant' <<<"$output")" = cu128 ]
	[ "$(jq -r '.machines[] | select(.name == "lab-d") | .set' <<<"$output")" = null ]
	[[ $(jq -r '.machines[] | select(.name == "lab-d") | .why' <<<"$output") == *"570.26"* ]]
}

@test "resolve --probes: the same matrix and the same set per machine, nothing fetched" {
	[ -f "$BATS_FILE_TMPDIR/probes/lab-a.json" ] || skip "needs the sync --probes test before it"
	ws="$BATS_TEST_TMPDIR/ws-resolve"
	run "$OFFWHEEL" --home "$ws" resolve --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cpu,cu126,cu128 \
		--probes "$BATS_FILE_TMPDIR/probes"
	echo "$output"
	[ "$status" -eq 0 ]
	py=$(jq -r '.pythons[0].abis[0]' "$BATS_FILE_TMPDIR/probes/lab-a.json")
	plat=$(jq -r '.platforms[0]' "$BATS_FILE_TMPDIR/probes/lab-a.json")
	grep -E "^  lab-a .*: set [0-9]+, cu128 $py-$plat\$" <<<"$output"
	grep -E "^  lab-b .*: set [0-9]+, cu126 $py-$plat\$" <<<"$output"
	grep -E "^  lab-c .*: set [0-9]+, cpu $py-$plat\$" <<<"$output"
	grep -E "^  lab-d .*NOTHING: .*570.26" <<<"$output"
	# nothing was downloaded: no wheel among the workspace's objects
	[ "$("$OFFWHEEL" --home "$ws" --json ls objects --kind wheel | jq '.objects | length')" -eq 0 ]
	run --separate-stderr "$OFFWHEEL" --home "$ws" --json resolve --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cpu,cu126,cu128 \
		--probes "$BATS_FILE_TMPDIR/probes" --offline
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	[ "$(jq -r '.machines[] | select(.name == "lab-b") | .variant' <<<"$output")" = cu126 ]
	[ "$(jq -r '.machines[] | select(.name == "lab-d") | .set' <<<"$output")" = null ]
}

@test "sync --probes: a machine whose driver is new enough but whose GPU no build serves" {
	d="$BATS_TEST_TMPDIR/probes"
	mkdir -p "$d"
	# 12.0 behind driver 12.6: cu128 is too new for the driver, cu126 has no sm_120
	env OFFWHEEL_LIBCUDA="$STANDIN" OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12.6 \
		"$OFFWHEEL" probe --name lab-e --python python3 -o "$d/lab-e.json" >/dev/null
	run "$OFFWHEEL" --home "$BATS_FILE_TMPDIR/ws" sync --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cu126,cu128 --probes "$d/lab-e.json"
	echo "$output"
	line=$(grep -E "^  lab-e " <<<"$output")
	[[ $line == *"cu126: no build for its GPU (12.0: "* ]]
}

@test "export --probes: machines.json (signed) maps each machine to its set; INSTALL.txt names each one's file; the lab's probes/ stay unsigned and check passes" {
	[ -f "$BATS_FILE_TMPDIR/probes/lab-a.json" ] || skip "needs the sync --probes test before it"
	keys="$BATS_FILE_TMPDIR/keys"
	mkdir -p "$keys"
	"$OFFWHEEL" keygen "$keys/k.sec" >/dev/null
	stick="$BATS_FILE_TMPDIR/stick"
	# the machines probed onto the stick itself first, as in the lab
	mkdir -p "$stick"
	cp -r "$BATS_FILE_TMPDIR/probes" "$stick/probes"
	run "$OFFWHEEL" --home "$BATS_FILE_TMPDIR/ws" export "$stick" --all-sets --sign "$keys/k.sec" \
		--probes "$stick/probes"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -f "$stick/machines.json" ]
	grep -q ' machines.json$' "$stick/SHA256SUMS"
	! grep -q 'probes/' "$stick/SHA256SUMS"
	m="$stick/machines.json"
	[ "$(jq -r '.format' "$m")" = offwheel-machines-1 ]
	[ "$(jq -r '.machines[] | select(.name == "lab-a") | .variant' "$m")" = cu128 ]
	[ "$(jq -r '.machines[] | select(.name == "lab-b") | .variant' "$m")" = cu126 ]
	[ "$(jq -r '.machines[] | select(.name == "lab-c") | .variant' "$m")" = cpu ]
	[ "$(jq -r '.machines[] | select(.name == "lab-d") | .set' "$m")" = null ]
	for n in lab-a lab-b lab-c; do
		req=$(jq -r --arg n "$n" '.machines[] | select(.name == $n) | .requirements' "$m")
		[ -f "$stick/$req" ]
		grep -qF "    $n: $req" "$stick/INSTALL.txt"
	done
	grep -q "    lab-d: NOTHING on this stick fits it: .*570.26" "$stick/INSTALL.txt"
	# check: signed, and the lab's own folders (probes/, reports/) are not extra files
	mkdir -p "$stick/reports" && echo '{}' >"$stick/reports/x.json"
	run "$OFFWHEEL" check "$stick" --pubkey "$keys/k.pub" --state "$BATS_TEST_TMPDIR/state.json"
	echo "$output"
	[ "$status" -eq 0 ]
	# machines.json is signed: a change to it fails the check
	sed -i 's/cu126/cu128/' "$m"
	run "$OFFWHEEL" check "$stick" --pubkey "$keys/k.pub" --state "$BATS_TEST_TMPDIR/state2.json"
	[ "$status" -eq 3 ]
	[[ $output == *machines.json* ]]
	sed -i 's/cu128/cu126/' "$m" # put back (lab-a's line is cu128 in the file: restore from the sums)
}
