#!/usr/bin/env bats
# offwheel audit on real wheels from PyPI where code is never loaded, is
# compiled at run time, or lies far from its section headers (issue 47):
# triton 3.9.0 (a dependency of every Linux torch: NVIDIA's CUPTI vendored in
# two builds, cupti/ and cupti-blackwell/, each with its static archives),
# flashinfer-python 0.7.4 (pure Python with four compute_103a .ptx files it
# compiles at run time) and tensorflow 2.21.0 (libtensorflow_cc.so.2, 1.1 GB,
# whose section name table lies 188 MB before its section headers).  About
# 1 GB of wheels, cached under $XDG_CACHE_HOME (ctest label realwheels);
# skipped with a message where PyPI cannot be reached and the cache does not
# have them.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/rss.bash"

setup_file() {
	export EXT="${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}"
	export CACHE="$EXT/wheels"
	mkdir -p "$CACHE"
}

# fetch NAME==VERSION: the wheel into the cache (Linux x86_64, Python 3.12)
fetch() {
	local name=${1%%==*} ver=${1##*==}
	ls "$CACHE"/"${name//-/_}"-"$ver"-*.whl >/dev/null 2>&1 && return 0
	(cd "$CACHE" && timeout 1200 python3 -m pip download -q --no-deps --only-binary=:all: \
		--python-version 3.12 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
		--platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 "$1") >/dev/null 2>&1
}

need() {
	fetch "$1" || skip "PyPI cannot be reached and $CACHE lacks $1"
}

wheel_of() { ls "$CACHE"/"$1"-*.whl | head -1; }


@test "triton 3.9.0: its CUPTI static archives are link-time code, its libcupti.so is scanned (kernels in .rodata), and it runs on 7.0 (cupti/) and 12.0; --strict judges the cupti-blackwell copy" {
	need triton==3.9.0
	w=$(wheel_of triton-3.9.0)
	run "$OFFWHEEL" audit --device 7.0 "$w"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == *"native on CC 7.0"*"other copies of NVIDIA libraries"*"link-time (static archives, not judged)"* ]]
	[[ $output == *"cupti/libcupti_static.a: link-time code"* ]]
	[[ $output == *"cupti-blackwell/libcupti_static.a: link-time code"* ]]
	[[ $output == *"cupti-blackwell/libcupti.so.13: not for this device (another copy"* ]]
	run "$OFFWHEEL" --json audit --device 7.0 "$w"
	# the .so that loads is scanned and carries CUPTI's kernels (sm_70 among them)
	got=$(jq -r '.targets[0].libraries[] | select(.path == "triton/backends/nvidia/lib/cupti/libcupti.so.12") | "\(.data_scanned) \(.device.verdict) \(.sass | index("sm_70") != null)"' <<<"$output")
	[ "$got" = "true native true" ] || { echo "$got"; false; }
	[ "$(jq '[.targets[0].libraries[] | select(.link_time)] | length' <<<"$output")" -eq 4 ]
	run "$OFFWHEEL" audit --device 12.0 "$w"
	[ "$status" -eq 0 ]
	run "$OFFWHEEL" audit --strict --device 7.0 "$w"
	[ "$status" -eq 3 ]
	[[ $output == *"cupti-blackwell/libcupti.so.13: NO IMAGE"* ]]
	[[ $output == *"libcupti_static.a: link-time code"* ]]
}

@test "flashinfer-python 0.7.4: four compute_103a PTX files: no code here on 9.0, 10.0 and 12.0 (exit 0), JIT on 10.3, --strict exit 3" {
	need flashinfer-python==0.7.4
	w=$(wheel_of flashinfer_python-0.7.4)
	for dev in 9.0 10.0 12.0; do
		run "$OFFWHEEL" audit --device $dev "$w"
		echo "$output"
		[ "$status" -eq 0 ]
		[[ ${lines[0]} == *"no code here for $dev: this package compiles its kernels at run time or does not support the device — 4 of 4 libraries carry device code, 4 arch-specific not for this device"* ]]
	done
	run "$OFFWHEEL" audit --device 10.3 "$w"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == *"jit on CC 10.3"* ]]
	run "$OFFWHEEL" audit --strict --device 12.0 "$w"
	[ "$status" -eq 3 ]
}

@test "tensorflow 2.21.0: libtensorflow_cc.so.2 (section names 188 MB before the section headers) is streamed twice, never held whole: under 256 MB, the listing of the file itself" {
	need tensorflow==2.21.0
	w=$(wheel_of tensorflow-2.21.0)
	m=tensorflow/libtensorflow_cc.so.2
	run "$OFFWHEEL" -v --json audit --device 12.0 "$w"
	[ "$status" -eq 0 ] || [ "$status" -eq 3 ]
	got=$(jq -r --arg m "$m" '.targets[0].libraries[] | select(.path == $m) | .reread' <<<"$output")
	[[ $got == "inflated 2 times ("*"never the whole member" ]] || { echo "$got"; false; }
	a=$(jq -c --arg m "$m" '.targets[0].libraries[] | select(.path == $m) | [.sass, .ptx, .modules, .device.verdict]' <<<"$output")
	unzip -p "$w" "$m" >"$BATS_TEST_TMPDIR/lib.so"
	b=$("$OFFWHEEL" --json audit --device 12.0 "$BATS_TEST_TMPDIR/lib.so" | jq -c '.targets[0].libraries[0] | [.sass, .ptx, .modules, .device.verdict]')
	rm -f "$BATS_TEST_TMPDIR/lib.so"
	[ "$a" = "$b" ] || { echo "wheel: $a"; echo "file:  $b"; false; }
	if ldd "$OFFWHEEL" 2>/dev/null | grep -q libasan; then
		skip "the ASan build's memory is not offwheel's (the normal build checks it)"
	fi
	kb=$(peak_rss "$OFFWHEEL" audit --device 12.0 "$w")
	echo "peak RSS $((kb / 1024)) MB"
	[ "$kb" -le $((256 * 1024)) ]
}
