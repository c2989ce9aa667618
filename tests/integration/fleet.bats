#!/usr/bin/env bats
# The lab as a fleet (docs/fleet.md): machines describe themselves (probe),
# the stick is made for them (sync --probes, export), each installs its own
# set (install) and the stick brings back what happened (fleet).  The
# stand-in libcuda plays four machines: a 12.0 GPU with driver 12.8, an 8.0
# GPU with driver 12.6, no driver, and a 12.0 GPU behind driver 11.8.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

setup_file() {
	export STANDIN="$OW_BUILD_DIR/tests/standin/libcuda.so.1"
	export EXT="${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}"
	unset OW_STANDIN_CC OW_STANDIN_DRIVER OW_STANDIN_MODE OW_STANDIN_DEVICES OW_STANDIN_NAME
}

# machine NAME: the stand-in's environment for one of the four machines
machine() {
	case $1 in
	lab-a) echo "OFFWHEEL_LIBCUDA=$STANDIN OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12.8" ;;
	lab-b) echo "OFFWHEEL_LIBCUDA=$STANDIN OW_STANDIN_CC=8.0 OW_STANDIN_DRIVER=12.6" ;;
	lab-c) echo "OFFWHEEL_LIBCUDA=$BATS_FILE_TMPDIR/no-driver/libcuda.so.1" ;;
	lab-d) echo "OFFWHEEL_LIBCUDA=$STANDIN OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=11.8" ;;
	esac
}

on() { # NAME CMD...: run offwheel as on that machine
	local m=$1
	shift
	env $(machine "$m") "$OFFWHEEL" "$@"
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
