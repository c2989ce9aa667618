#!/usr/bin/env bats
# offwheel audit: fixture libraries, the sample index's wheels, stored
# objects (cached), real CUDA libraries and real PyTorch wheels from PyPI
# (each skipped with a message where this machine lacks them).

setup_file() {
	export SRC="${OW_SOURCE_DIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
	export FIX="${OW_FIXTURES:-$SRC/tests/fixtures}"
	export T="$BATS_FILE_TMPDIR"
	export OW_EXT_CACHE="${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}"
	"$SRC/tests/tools/make-fixture-index" "$T/idx" >/dev/null
	export W126 W128 TV126
	W126=$(find "$T/idx/www/whl/cu126" -name 'torch-*+cu126-cp312-cp312-manylinux_2_28_x86_64.whl' | head -1)
	W128=$(find "$T/idx/www/whl/cu128" -name 'torch-*+cu128-cp312-cp312-manylinux_2_28_x86_64.whl' | head -1)
	TV126=$(find "$T/idx/www/whl/cu126" -name 'torchvision-*+cu126-cp312-cp312-manylinux_2_28_x86_64.whl' | head -1)
}

ow() { "$OFFWHEEL" --home "$T/home" "$@"; }

@test "audit --help documents the options and exit codes" {
	run ow audit --help
	[ "$status" -eq 0 ]
	[[ $output == *"--device"* && $output == *"--driver"* && $output == *"--scan-data"* ]]
	[[ $output == *"Exit 3"* ]]
}

@test "usage errors exit 2" {
	run ow audit
	[ "$status" -eq 2 ]
	run ow audit --device banana "$FIX/fatbin/sass_only.so"
	[ "$status" -eq 2 ]
	[[ $output == *"compute capability"* ]]
	run ow audit --driver x "$FIX/fatbin/sass_only.so"
	[ "$status" -eq 2 ]
	run ow audit --scan-data sometimes "$FIX/fatbin/sass_only.so"
	[ "$status" -eq 2 ]
}

@test "fixture libraries: lists and verdicts" {
	run ow audit --device 12.0 "$FIX/fatbin/libtorch_cuda_cu126.so"
	[ "$status" -eq 3 ]
	[[ $output == *"none on CC 12.0"* && $output == *"SASS sm_75 sm_80 sm_86 sm_90"* ]]
	run ow audit --device 8.6 "$FIX/fatbin/libtorch_cuda_cu126.so"
	[ "$status" -eq 0 ]
	[[ $output == *"native on CC 8.6"* ]]
	run ow audit --device 12.0 "$FIX/fatbin/libtorch_cuda_cu128.so"
	[ "$status" -eq 0 ]
	[[ $output == *"PTX  compute_120@9.0"* ]]
	run ow audit "$FIX/fatbin/libtorch_cuda_cu128.so"
	[ "$status" -eq 0 ]
	[[ $output == *"1 of 1 libraries carry device code"* && $output != *"native"* ]]
}

@test "a module without kernels (nvcc-built, like libcufftw's) is no-code, never 'no image'" {
	run ow -v audit --device 12.0 "$FIX/fatbin/nokernel.so"
	[ "$status" -eq 0 ]
	[[ $output == *"no-code on CC 12.0 — 0 of 1 libraries carry device code"* ]]
	[[ $output == *"#0 .nv_fatbin (no kernels): sm_75 -> skip"* ]]
	run ow --json audit --device 12.0 "$FIX/fatbin/nokernel.so"
	[ "$(jq '.targets[0].libraries[0].module_list[0].kernels' <<<"$output")" = false ]
	# the same sm_75-only build with a kernel in it cannot run on 12.0
	run ow audit --device 12.0 "$FIX/fatbin/sass_only.so"
	[ "$status" -eq 3 ]
}

@test "PTX only: JIT, and a driver too old for the PTX ISA is fatal" {
	run ow audit --device 12.0 "$FIX/fatbin/ptx_only.so"
	[ "$status" -eq 0 ]
	[[ $output == *"jit on CC 12.0, needs driver >= 13.0"* ]]
	run ow audit --device 12.0 --driver 12.8 "$FIX/fatbin/ptx_only.so"
	[ "$status" -eq 3 ]
	run ow audit --device 12.0 --driver 13.0 "$FIX/fatbin/ptx_only.so"
	[ "$status" -eq 0 ]
}

@test "PTX of an ISA newer than the table: needs a driver newer than its newest (13.5)" {
	# ptx_only.so with its second module's PTX entry marked ISA 9.<minor>
	isa() {
		python3 - "$FIX/fatbin/ptx_only.so" "$T/isa9$1.so" "$1" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
hdr = bytes.fromhex("000009004b000000")  # entry +0x18: ISA minor 0, major 9, arch 75
assert d.count(hdr) == 2
i = d.rfind(hdr)
d[i] = int(sys.argv[3])
open(sys.argv[2], "wb").write(d)
PY
	}
	isa 9
	run ow audit --device 12.0 "$T/isa99.so"
	[ "$status" -eq 0 ]
	[[ $output == *"jit on CC 12.0, needs a driver newer than 13.5 —"* ]]
	[[ $output == *"JIT only (PTX ISA 9.9: newer than this offwheel knows; needs a driver newer than 13.5)"* ]]
	[[ $output != *"?"* ]]
	run ow --json audit --device 12.0 "$T/isa99.so"
	echo "$output" | jq -e '.targets[0].driver_needed == null and .targets[0].driver_newer_than == "13.5"'
	echo "$output" | jq -e '.targets[0].libraries[0].device.driver_newer_than == "13.5"'
	echo "$output" | jq -e '.targets[0].libraries[0].ptx[1] == {"name":"compute_75","isa":"9.9","driver":null,"driver_newer_than":"13.5"}'
	# 13.5 cannot JIT it (only the module with ISA 9.0 runs); 13.6 can
	run ow audit --device 12.0 --driver 13.5 "$T/isa99.so"
	[ "$status" -eq 3 ]
	run ow audit --device 12.0 --driver 13.6 "$T/isa99.so"
	[ "$status" -eq 0 ]
	# ISA 9.5, the newest measured, is CUDA 13.5's
	isa 5
	run ow --json audit --device 12.0 "$T/isa95.so"
	echo "$output" | jq -e '.targets[0].driver_needed == "13.5" and .targets[0].driver_newer_than == null'
	run ow audit --device 12.0 --driver 13.4 "$T/isa95.so"
	[ "$status" -eq 3 ]
}

@test "-v lists every module with its verdict" {
	run ow -v audit --device 12.0 "$FIX/fatbin/libtorch_cuda_cu126.so"
	[ "$status" -eq 3 ]
	[[ $output == *"#0 .nv_fatbin: sm_75:zstd sm_80:zstd sm_86:zstd sm_90:zstd -> none"* ]]
}

@test "sample index: cu126 torch has no image for 12.0, cu128 runs natively" {
	[ -n "$W126" ] && [ -n "$W128" ]
	run ow audit --device 12.0 "$W126"
	[ "$status" -eq 3 ]
	[[ $output == *"none on CC 12.0"* && $output == *"torch/lib/libtorch_cuda.so"* ]]
	run ow audit --device 8.6 "$W126"
	[ "$status" -eq 0 ]
	[[ $output == *"native on CC 8.6"* ]]
	run ow audit --device 12.0 "$W128"
	[ "$status" -eq 0 ]
	[[ $output == *"native on CC 12.0"* ]]
	# one failing target among several: exit 3
	run ow audit --device 12.0 "$W128" "$W126"
	[ "$status" -eq 3 ]
	# torchvision carries the same architecture list as torch of its build
	a=$(ow --json audit "$W126" | jq -c '[.targets[0].libraries[] | select(.modules > 0) | .sass]')
	b=$(ow --json audit "$TV126" | jq -c '[.targets[0].libraries[] | select(.modules > 0) | .sass]')
	[ "$a" = "$b" ]
}

@test "--device 12.0,8.6: each device judged in turn, one meaning (must run on every one), one verdict line" {
	# cu126 runs on 8.6, not on 12.0: the pair fails, each device's verdict said
	run ow audit --device 8.6,12.0 "$W126"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"native on CC 8.6"* && $output == *"none on CC 12.0"* ]]
	[ "$(tail -n1 <<<"$output")" = "audit: does NOT run on every device named (8.6, 12.0)" ]
	# cu128 runs on both
	run ow audit --device 12.0,sm_86 "$W128"
	[ "$status" -eq 0 ]
	[ "$(tail -n1 <<<"$output")" = "audit: runs on every device named (12.0, 8.6)" ]
	run ow -q audit --device 12.0,8.6 "$W128"
	[ "$status" -eq 0 ]
	[ "$(tail -n1 <<<"$output")" = "audit: runs on every device named (12.0, 8.6)" ]
	# JSON: one document, every device, each entry naming its device
	run ow --json audit --device 8.6,12.0 "$W126"
	[ "$status" -eq 3 ]
	echo "$output" | jq -e '.devices == ["8.6","12.0"] and .device == "8.6" and .ok == false'
	echo "$output" | jq -e '[.targets[] | "\(.device) \(.verdict)"] == ["8.6 native", "12.0 none"]'
	# a bad one is named
	run ow audit --device 12.0,9.9x "$W128"
	[ "$status" -eq 2 ]
	[[ $output == *"'9.9x' is not a compute capability"* ]]
}

@test "--json has the verdict, the lists, the counts and every module" {
	run ow --json audit --device 12.0 "$W128"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.command == "audit" and .device == "12.0" and .ok == true'
	echo "$output" | jq -e '.targets[0].kind == "wheel" and .targets[0].verdict == "native"'
	echo "$output" | jq -e '.targets[0].libraries[0].path == "torch/lib/libtorch_cuda.so"'
	echo "$output" | jq -e '.targets[0].libraries[0].sass == ["sm_75","sm_80","sm_86","sm_90","sm_100","sm_120"]'
	echo "$output" | jq -e '.targets[0].libraries[0].ptx == [{"name":"compute_120","isa":"9.0","driver":"13.0","driver_newer_than":null}]'
	echo "$output" | jq -e '.targets[0].libraries[0].device.verdict == "native" and .targets[0].libraries[0].device.modules.native == 3'
	echo "$output" | jq -e '(.targets[0].libraries[0].module_list | length) == 3'
	run ow --json audit --device 12.0 "$W126"
	[ "$status" -eq 3 ]
	echo "$output" | jq -e '.ok == false and .targets[0].verdict == "none" and .targets[0].fatal == true'
}

@test "directories are walked; symlinks are not followed" {
	mkdir -p "$T/site/torch/lib" "$T/site/torchvision"
	cp "$FIX/fatbin/libtorch_cuda_cu128.so" "$T/site/torch/lib/libtorch_cuda.so"
	cp "$FIX/fatbin/sass_ptx.so" "$T/site/torchvision/_C.so"
	ln -sf libtorch_cuda.so "$T/site/torch/lib/libtorch_cuda.so.2"
	echo "x = 1" >"$T/site/torch/__init__.py"
	run ow --json audit --device 12.0 "$T/site"
	echo "$output" | jq -e '.targets[0].kind == "directory" and (.targets[0].libraries | length) == 2 and .targets[0].skipped == 1'
}

@test "stored objects: by sha256 and by file name, audited once" {
	hex=$("$OW_BUILD_DIR/tests/ow_put" "$T/home" file "$W126" | awk '{print $2}')
	[ ${#hex} -eq 64 ]
	run ow --json audit --device 12.0 "$hex"
	[ "$status" -eq 3 ]
	echo "$output" | jq -e '.targets[0].cached == false and .targets[0].sha256 == "'"$hex"'"'
	run ow --json audit --device 8.6 "$hex"
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.targets[0].cached == true and .targets[0].bytes_read == 0 and .targets[0].verdict == "native"'
	name=$(basename "$W126")
	sqlite3 "$T/home/index.db" "INSERT INTO files(url, filename, project, version, python_tag, abi_tag, platform_tag, variant, index_url, first_seen, last_seen, object_sha256) VALUES('https://x/$name', '$name', 'torch', '2.10.0', 'cp312', 'cp312', 'manylinux_2_28_x86_64', 'cu126', 'https://x', 1, 1, '$hex')"
	run ow --json audit --device 12.0 "$name"
	[ "$status" -eq 3 ]
	echo "$output" | jq -e '.targets[0].cached == true and .targets[0].label == "'"$name"'"'
	[ "$(sqlite3 "$T/home/index.db" "SELECT count(*) FROM audits WHERE object_sha256 = '$hex'")" -eq 1 ]
	run ow audit --no-cache --device 12.0 "$hex"
	[ "$status" -eq 3 ]
	run ow audit nothing-1.0-py3-none-any.whl
	[ "$status" -eq 1 ]
	[[ $output == *"ls files"* ]]
	run ow fsck
	[ "$status" -eq 0 ]
}

@test "--device auto needs a GPU, or says to give --device" {
	run ow audit --device auto "$FIX/fatbin/sass_only.so"
	if [ "$status" -eq 5 ]; then
		[[ $output == *"--device X.Y"* ]]
	else
		[[ $output == *"compute capability"* ]]
	fi
}

@test "real CUDA libraries: libcublas lists, every library parses" {
	lib=/usr/local/cuda/lib64
	[ -e $lib/libcublas.so.13 ] || skip "no $lib/libcublas.so.13 on this machine"
	run ow --json audit --device 12.0 $lib/libcublas.so.13
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.targets[0].libraries[0].sass == ["sm_75","sm_80","sm_86","sm_90","sm_100","sm_120"]'
	echo "$output" | jq -e '.targets[0].libraries[0].ptx[0].name == "compute_120" and .targets[0].libraries[0].vendor == true'
	run ow --json audit $lib
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '[.targets[0].libraries[] | select(.path | startswith("libcudnn")) | .sass[]] | (index("sm_90a") != null)'
}

@test "real libcufft: containers in .rodata found by small reads equal the streamed listing; on 12.0 one module to JIT settles it" {
	f=/usr/local/cuda/lib64/libcufft.so.12
	[ -e $f ] || skip "no $f on this machine"
	# the file is read with pread, back-to-back containers found without reading
	# their payloads; a wheel member is listed from the magics its stream kept
	# (fbstream.h) — a different reader over the same bytes
	mods='[.targets[0].libraries[0].module_list[] | [.section, .scanned, .entries]]'
	ow --json audit "$f" | jq -c "$mods" >"$T/cufft.file"
	mkdir -p "$T/cufftw/nvidia/cufft/lib"
	cp "$f" "$T/cufftw/nvidia/cufft/lib/"
	(cd "$T/cufftw" && zip -q -0 "$T/cufft_only-1.0-py3-none-manylinux_2_28_x86_64.whl" nvidia/cufft/lib/libcufft.so.12)
	ow --json audit "$T/cufft_only-1.0-py3-none-manylinux_2_28_x86_64.whl" | jq -c "$mods" >"$T/cufft.wheel"
	[ "$(jq length "$T/cufft.file")" -gt 20000 ]
	cmp "$T/cufft.file" "$T/cufft.wheel"
	# 12.0: thousands of modules to JIT (sm_75 SASS, older PTX); one with a kernel
	# among those needing the newest driver settles jit-or-not and that driver
	run ow --json audit --device 12.0 "$f"
	[ "$status" -eq 0 ]
	lib=$(jq -c '.targets[0].libraries[0] | del(.module_list)' <<<"$output")
	opened=$(jq '[.targets[0].libraries[0].module_list[] | select(.verdict == "jit" and .kernels != null)] | length' <<<"$output")
	jit=$(jq '[.targets[0].libraries[0].module_list[] | select(.verdict == "jit")] | length' <<<"$output")
	[ "$jit" -gt 1000 ] && [ "$opened" -le 4 ] || { echo "jit $jit opened $opened"; false; }
	run ow audit --device 12.0 "$f"
	[[ $output == *"to JIT here and "*" without an image here not opened for kernels"* ]] || { echo "$output"; false; }
	# the same verdict as when every module is opened: a stored object's audit
	# is cached for every device, so it looks into them all
	hex=$("$OW_BUILD_DIR/tests/ow_put" "$T/home" file "$f" | awk '{print $2}')
	dev='.targets[0].libraries[0].device | [.verdict, .driver_needed, .modules]'
	all=$(ow --json audit --device 12.0 "$hex" | jq -c "$dev")
	some=$(ow --json audit --device 12.0 "$f" | jq -c "$dev")
	[ "$all" = "$some" ] || { echo "all $all some $some"; false; }
	run ow audit --device 12.0 "$f"
	[[ $output == *"runs on 12.0 (native)"* ]]
}

# Real wheels from PyPI, cached outside the repository in $OW_EXT_CACHE.
fetch_pypi() {
	local d="$OW_EXT_CACHE/wheels"
	mkdir -p "$d" 2>/dev/null || return 1
	ls "$d"/torchvision-0.25.0-*.whl "$d"/torchaudio-2.10.0-*.whl >/dev/null 2>&1 && return 0
	timeout 300 pip download torchvision==0.25.0 torchaudio==2.10.0 --no-deps --only-binary=:all: \
		--platform manylinux_2_28_x86_64 --python-version 3.12 -d "$d" >/dev/null 2>&1
}

@test "real PyTorch wheels: audit equals a reading of their libraries unzipped" {
	fetch_pypi || skip "PyPI cannot be reached and $OW_EXT_CACHE/wheels has no torchvision/torchaudio wheels"
	for w in "$OW_EXT_CACHE"/wheels/torchvision-0.25.0-*.whl "$OW_EXT_CACHE"/wheels/torchaudio-2.10.0-*.whl; do
		rm -rf "$T/unz" && mkdir -p "$T/unz"
		(cd "$T/unz" && unzip -q "$w")
		from_wheel=$(ow --json audit "$w" | jq -c '[.targets[0].libraries[] | {path, sass, ptx, modules}]')
		from_disk=$(ow --json audit "$T/unz" | jq -c '[.targets[0].libraries[] | {path, sass, ptx, modules}]')
		[ "$from_wheel" = "$from_disk" ]
		# and it has device code for current GPUs
		echo "$from_wheel" | jq -e '[.[].sass[]] | index("sm_120") != null'
		run ow audit --device 12.0 "$w"
		[ "$status" -eq 0 ]
	done
}

@test "with --device, kernel-less modules are looked for only where the verdict depends on it" {
	# lz4.so: two modules with kernels, sm_80 SASS and compute_80 PTX; on 8.6
	# the first found with a kernel settles it, the other is not opened
	run ow --json audit --device 8.6 "$FIX/fatbin/lz4.so"
	[ "$status" -eq 0 ]
	lib=$(jq -c '.targets[0].libraries[0]' <<<"$output")
	[ "$(jq .modules_unchecked <<<"$lib")" -eq 1 ]
	[ "$(jq -c '[.module_list[].kernels]' <<<"$lib")" = '[true,null]' ]
	run ow audit --device 8.6 "$FIX/fatbin/lz4.so"
	[[ $output == *"2 modules (2 with code, 0 empty, 0 rdc); 1 of these native here, not opened for kernels"* ]]
	# without a device every module is opened
	run ow --json audit "$FIX/fatbin/lz4.so"
	[ "$(jq .targets[0].libraries[0].modules_unchecked <<<"$output")" -eq 0 ]
	[ "$(jq -c '[.targets[0].libraries[0].module_list[].kernels]' <<<"$output")" = '[true,true]' ]
	# a kernel-less module that is native still decides between none and partial:
	# nokernel_mixed on 7.5 has a kernel-less sm_75 module and a sm_86 one with a kernel
	run ow audit --device 7.5 "$FIX/fatbin/nokernel_mixed.so"
	[ "$status" -eq 3 ]
	[[ $output == *"NO IMAGE"*"FATAL"*"2 modules (1 with code, 1 empty, 0 rdc)"* ]] || { echo "$output"; false; }
}

@test "a .whl that is not a zip is an error (exit 3, not a zip archive), never audited as a library" {
	d=$BATS_TEST_TMPDIR
	: >"$d/empty-1.0-py3-none-any.whl"
	head -c 5000 /dev/urandom >"$d/random-1.0-py3-none-any.whl"
	echo "<html>captive portal</html>" >"$d/text-1.0-py3-none-any.whl"
	for f in "$d"/*.whl; do
		run ow audit "$f"
		[ "$status" -eq 3 ] || { echo "$f: $output"; false; }
		[[ $output == *"$(basename "$f"): not a zip archive"* ]] || { echo "$output"; false; }
		st=0
		out=$(ow --json audit "$f" 2>/dev/null) || st=$?
		[ "$st" -eq 3 ]
		[ "$(jq -r .ok <<<"$out")" = false ]
		[ "$(jq -r '.targets[0].error.code' <<<"$out")" = EZIP ]
	done
	run ow audit "$d/empty-1.0-py3-none-any.whl"
	[[ $output == *"(an empty file)"* ]]
	# the same bytes under a library's name are a library without device code
	cp "$d/random-1.0-py3-none-any.whl" "$d/librandom.so"
	run ow audit "$d/librandom.so"
	[ "$status" -eq 0 ]
}

@test "modules only the data scan finds are counted apart and never make a library fatal on their own" {
	# datascan.so: tu1 for sm_120 in .nv_fatbin, tu2's sm_90-only fatbin as a
	# const array in .rodata (like torch's TopK kernels in .lrodata)
	run ow audit --scan-data always --device 12.0 "$FIX/fatbin/datascan.so"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ $output == *"datascan.so: native; 1 of 1 modules found only in data sections have no usable image (not registered at start-up: counted apart)"* ]] || { echo "$output"; false; }
	[[ $output == *"    SASS sm_120"$'\n'"    only in modules found in data sections: sm_90"* ]] || { echo "$output"; false; }
	run ow --json audit --scan-data always --device 12.0 "$FIX/fatbin/datascan.so"
	lib=$(jq -c '.targets[0].libraries[0]' <<<"$output")
	[ "$(jq -c .sass <<<"$lib")" = '["sm_120"]' ]
	[ "$(jq -c .data_sections_only <<<"$lib")" = '["sm_90"]' ]
	[ "$(jq -c .device.data_sections <<<"$lib")" = '{"modules":1,"no_image":1,"judged_by":false}' ]
	[ "$(jq -r .device.verdict <<<"$lib")" = native ]
	# where the sections cannot run, the library is fatal whatever the data holds
	run ow audit --scan-data always --device 9.0 "$FIX/fatbin/datascan.so"
	[ "$status" -eq 3 ]
	# a file whose code is all found by the scan is judged by it
	run ow --json audit --scan-data always --device 12.0 "$FIX/fatbin/blob.bin"
	[ "$(jq -c '.targets[0].libraries[0] | [.sass, .device.verdict, .device.data_sections.judged_by]' <<<"$output")" = '[["sm_86"],"jit",true]' ]
}

@test "images only in link-time (-rdc) modules are listed apart from the library's own" {
	run ow audit --device 12.0 "$FIX/fatbin/dlink.so"
	[[ $output == *"    SASS sm_86"$'\n'"    only in link-time (rdc) modules: sm_86"* ]] || { echo "$output"; false; }
	run ow --json audit "$FIX/fatbin/rdc.so"
	[ "$(jq -c '.targets[0].libraries[0] | [.sass, .ptx, .rdc_only]' <<<"$output")" = '[[],[],["sm_80","compute_80@9.0"]]' ]
	run ow audit "$FIX/fatbin/rdc.so"
	[[ $output != *"SASS"* ]]
	[[ $output == *"only in link-time (rdc) modules: sm_80 compute_80@9.0"* ]]
}

@test "wheel members are inflated in parallel (--jobs): the same result as one at a time; a damaged member still named" {
	w=$BATS_TEST_TMPDIR/multi-1.0-cp312-cp312-linux_x86_64.whl
	python3 - "$w" "$FIX/fatbin" <<'PY'
import os, sys, zipfile
w, fix = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(w, "w", zipfile.ZIP_DEFLATED) as z:
    for n in sorted(os.listdir(fix)):
        if n.endswith(".so"):
            z.write(os.path.join(fix, n), "multi/lib/" + n)
    z.writestr("multi/__init__.py", "x = 1\n" * 1000)
PY
	one=$(ow --json --jobs 1 audit --device 12.0 "$w" | jq -S 'del(.targets[0].bytes_read)')
	for j in 2 4 16; do
		many=$(ow --json --jobs $j audit --device 12.0 "$w" | jq -S 'del(.targets[0].bytes_read)')
		[ "$one" = "$many" ] || { diff <(echo "$one") <(echo "$many"); false; }
	done
	[ "$(jq '.targets[0].libraries | length' <<<"$one")" -ge 15 ]
	[ "$(jq '.targets[0].skipped' <<<"$one")" -eq 1 ]
	# a flipped byte inside one member's data: exit 3, that member named, with any --jobs
	off=$(python3 -c "import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); i=z.getinfo('multi/lib/sm120_only.so'); print(i.header_offset + 30 + len(i.filename) + len(i.extra) + i.compress_size // 2)" "$w")
	cp "$w" "$BATS_TEST_TMPDIR/bad.whl"
	"$SRC/tests/tools/flipbyte" "$BATS_TEST_TMPDIR/bad.whl" "$off"
	for j in 1 4; do
		run ow --jobs $j audit "$BATS_TEST_TMPDIR/bad.whl"
		[ "$status" -eq 3 ] || { echo "$output"; false; }
		[[ $output == *"sm120_only.so"* ]] || { echo "$output"; false; }
	done
}

@test "standalone cubins, PTX and fatbin files are device code, told by content, in a wheel or given directly" {
	F="$OW_FIXTURES/fatbin"
	d="$BATS_TEST_TMPDIR/w"
	mkdir -p "$d/pkg/cubins"
	cp "$F/cubin_sm90a.bin" "$d/pkg/cubins/k_sm90a.cubin"
	cp "$F/cubin_sm80.bin" "$d/pkg/cubins/k_sm80.cubin"
	cp "$F/ptx_sm90a.bin" "$d/pkg/k.ptx"
	cp "$F/fatbin_file.bin" "$d/pkg/k.fatbin"
	printf 'not a cubin\n' >"$d/pkg/cubins/fake.cubin"
	(cd "$d" && python3 -c 'import sys, zipfile, os
z = zipfile.ZipFile("../pkg-1.0-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED)
for r, _, fs in os.walk("pkg"):
    for f in fs: z.write(os.path.join(r, f))')
	for target in "$d" "$BATS_TEST_TMPDIR/pkg-1.0-py3-none-any.whl"; do
		run "$OFFWHEEL" audit --device 9.0 "$target"
		echo "$output"
		# the plain sm_80 cubin cannot run on 9.0: a library like any other
		[ "$status" -eq 3 ]
		[[ ${lines[0]} == *"partial on CC 9.0 — 4 of 5 libraries carry device code"* ]]
		[[ $output == *"pkg/cubins/k_sm80.cubin: NO IMAGE"* ]]
		[[ $output == *"pkg/cubins/k_sm90a.cubin: native"* ]]
		[[ $output == *"pkg/k.ptx: JIT only"* ]]
		[[ $output == *"pkg/k.fatbin: JIT only"* ]]
	done
	run "$OFFWHEEL" --json audit "$d/pkg/k.ptx" "$d/pkg/cubins/k_sm90a.cubin" "$d/pkg/k.fatbin"
	[ "$(jq -r '[.targets[].libraries[0].format] | join(" ")' <<<"$output")" = "ptx cubin fatbin" ]
	[ "$(jq -r '.targets[1].libraries[0].sass | join(" ")' <<<"$output")" = "sm_90a" ]
	# the arch-specific sm_90a cubin on 8.0 is an extension: not for this device
	run "$OFFWHEEL" audit --device 8.0 "$d/pkg/cubins"
	[ "$status" -eq 0 ]
	[[ $output == *"k_sm90a.cubin: not for this device"* ]]
	run "$OFFWHEEL" audit --strict --device 8.0 "$d/pkg/cubins"
	[ "$status" -eq 3 ]
}

@test "a static archive: fatbins at 2-aligned member offsets are found" {
	run "$OFFWHEEL" -v --json audit "$OW_FIXTURES/fatbin/archive.bin"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.targets[0].libraries[0] | "\(.format) \(.sass | join(",")) \(.rdc_only | join(","))"' <<<"$output")" = "archive sm_80 sm_86" ]
}

@test "an nvcc-built library with its section headers stripped: the same images, found in its segments, and said" {
	command -v nvcc >/dev/null || skip "nvcc is not on PATH (the CUDA toolkit builds this library at test time)"
	d="$BATS_TEST_TMPDIR"
	printf '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n' >"$d/k.cu"
	nvcc -shared -Xcompiler -fPIC -cudart none -gencode arch=compute_86,code=sm_86 \
		-gencode arch=compute_120,code=compute_120 "$d/k.cu" -o "$d/libk.so"
	python3 - "$d/libk.so" "$d/libk_stripped.so" <<'EOP'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[0x28:0x30] = bytes(8)  # e_shoff
b[0x3C:0x40] = bytes(4)  # e_shnum, e_shstrndx
open(sys.argv[2], 'wb').write(b)
EOP
	run "$OFFWHEEL" --json audit --device 8.6 "$d/libk.so" "$d/libk_stripped.so"
	[ "$status" -eq 0 ]
	lists=$(jq -c '[.targets[].libraries[0] | [.sass, [.ptx[].name], .device.verdict, .section_headers_missing]]' <<<"$output")
	[ "$lists" = '[[["sm_86"],["compute_120"],"native",false],[["sm_86"],["compute_120"],"native",true]]' ] || { echo "$lists"; false; }
	run "$OFFWHEEL" audit "$d/libk_stripped.so"
	[[ $output == *"no section headers (e_shoff 0): fatbins found by scanning its loadable segments"* ]]
	run "$OFFWHEEL" audit --device 7.5 "$d/libk_stripped.so"
	[ "$status" -eq 3 ]
}

@test "library operands audited on threads say exactly what one at a time says, errors included" {
	F="$FIX/fatbin"
	head -c 3000 "$F/lz4.so" >"$T/cut.so"
	args=(audit --device 8.6 "$F/lz4.so" "$T/cut.so" "$F/sass_only.so" "$F/ptx_only.so" "$F/nokernel_mixed.so")
	run ow --jobs 1 "${args[@]}"
	one=$output st1=$status
	run ow --jobs 4 "${args[@]}"
	[ "$status" -eq "$st1" ] && [ "$output" = "$one" ] || { diff <(echo "$one") <(echo "$output"); false; }
	[[ $output == *"$T/cut.so: ELF section headers: truncated input"* ]]
	[[ $output == *"audit: 4 of 5 targets run on 8.6"* ]] || { echo "$output"; false; }
	a=$(ow --json --jobs 1 "${args[@]}" | jq -S .)
	b=$(ow --json --jobs 4 "${args[@]}" | jq -S .)
	[ "$a" = "$b" ]
}
