#!/usr/bin/env bats
# offwheel audit against NVIDIA's cuobjdump (PyPI's nvidia-cuda-cuobjdump)
# on the real wheels torch 2.15.0 (CUDA 13.2) pins: torch, torchvision
# 0.29.2, torchaudio 2.11.1, and nvidia-cudnn-cu13 9.26.0.51, whose
# libcudnn_ext.so.9 is all kernel-less compressed modules.  Per library the
# SASS architectures (with their a/f suffixes), the PTX architectures and
# ISAs, the number of cubins and the number without a kernel must be
# cuobjdump's (tests/tools/cuobjdump_compare.py).  Beside them:
# flashinfer-cubin 0.6.9 (10,560 standalone .cubin files, sm_100f/sm_100a/
# sm_103a: a sample against cuobjdump -elf, the wheel against the
# arch-specific extension rule), bitsandbytes 0.50.2 (one
# libbitsandbytes_cudaXYZ.so per CUDA runtime: the family rule) and the local
# toolkit's libcudadevrt.a (a static archive), vllm 0.34.0 (per-architecture
# modules and sm_90a/sm_100f-only libraries).  About 1.8 GB of wheels,
# cached under $XDG_CACHE_HOME (ctest label realwheels); skipped with a
# message where PyPI cannot be reached and the cache does not have them.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/rss.bash"

setup_file() {
	export EXT="${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}"
	export CACHE="$EXT/wheels" CUVENV="$EXT/cuobjdump-venv"
	mkdir -p "$CACHE"
	export WHEELS="torch==2.15.0 torchvision==0.29.2 torchaudio==2.11.1 nvidia-cudnn-cu13==9.26.0.51 flashinfer-cubin==0.6.9 bitsandbytes==0.50.2 vllm==0.34.0"
	export LIBS="$BATS_FILE_TMPDIR/libs"
}

# The wheels, from the cache or PyPI (Linux x86_64, Python 3.12).
fetch_wheels() {
	local missing=0 spec name ver
	for spec in $WHEELS; do
		name=${spec%%==*} ver=${spec##*==}
		ls "$CACHE"/"${name//-/_}"-"$ver"-*.whl >/dev/null 2>&1 || missing=1
	done
	[ "$missing" -eq 0 ] && return 0
	(cd "$CACHE" && timeout 1200 python3 -m pip download -q --no-deps --only-binary=:all: \
		--python-version 3.12 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
		--platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
		$WHEELS) >/dev/null 2>&1
}

cuobjdump_path() {
	ls "$CUVENV"/lib/python3*/site-packages/nvidia/cu*/bin/cuobjdump 2>/dev/null | head -1
}

# NVIDIA's cuobjdump in a venv of the cache (nothing of it in the repository).
fetch_cuobjdump() {
	[ -n "$(cuobjdump_path)" ] && return 0
	rm -rf "$CUVENV"
	python3 -m venv "$CUVENV" >/dev/null 2>&1 &&
		timeout 600 "$CUVENV/bin/python" -m pip install -q nvidia-cuda-cuobjdump >/dev/null 2>&1
	[ -n "$(cuobjdump_path)" ]
}

need_real() {
	fetch_cuobjdump || skip "PyPI cannot be reached and $CUVENV has no cuobjdump (pip install nvidia-cuda-cuobjdump)"
	fetch_wheels || skip "PyPI cannot be reached and $CACHE lacks some of: $WHEELS"
}

wheel_of() { ls "$CACHE"/"$1"-*.whl | head -1; }

unpack() { # the library members of every wheel, once
	[ -d "$LIBS" ] && return 0
	mkdir -p "$LIBS.tmp"
	local w
	for w in $(wheel_of torch-2.15.0) $(wheel_of torchvision-0.29.2) \
		$(wheel_of torchaudio-2.11.1) $(wheel_of nvidia_cudnn_cu13-9.26.0.51); do
		unzip -qo "$w" '*.so' '*.so.*' -d "$LIBS.tmp" >/dev/null 2>&1 || true
	done
	mv "$LIBS.tmp" "$LIBS"
}

@test "architectures, PTX ISAs, cubins and kernel-less cubins equal cuobjdump's on every library of the real wheels" {
	need_real
	unpack
	mapfile -t libs < <(find "$LIBS" -type f -name '*.so*' | sort)
	[ "${#libs[@]}" -ge 30 ]
	run python3 "$OW_SOURCE_DIR/tests/tools/cuobjdump_compare.py" "$OFFWHEEL" "$(cuobjdump_path)" "${libs[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	# the comparison covered the cases that matter, each with device code
	[[ $output == *"same    libtorch_cuda.so: "*" cubins (0 without a kernel)"* ]]
	[[ $output == *"same    libcudnn_ext.so.9: 132 cubins (132 without a kernel)"* ]]
	[[ $output == *"same    libcudnn_engines_precompiled.so.9: "* ]]
	[[ $output == *"same    libtorchaudio.so: "*"PTX compute_120@9.2"* ]]
	[ "$(grep -c '^same ' <<<"$output")" -eq "${#libs[@]}" ]
}

@test "libcudnn_ext.so.9 (22 kernel-less compressed modules) is no-code on any device, never NO IMAGE" {
	need_real
	unpack
	lib=$(find "$LIBS" -name 'libcudnn_ext.so.9' | head -1)
	for cc in 7.0 11.0 12.0; do
		run "$OFFWHEEL" audit --device "$cc" "$lib"
		[ "$status" -eq 0 ] || { echo "$cc: $output"; false; }
		[[ $output == *"no-code on CC $cc"* ]] || { echo "$cc: $output"; false; }
		[[ $output == *"22 modules (0 with code, 22 empty"* ]] || { echo "$cc: $output"; false; }
	done
}

@test "the real torch 2.15.0 wheel: runs on 12.0 and 9.0, not on 7.0; the same with one pass or several" {
	need_real
	w=$(wheel_of torch-2.15.0)
	run "$OFFWHEEL" audit --device 12.0 "$w"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run "$OFFWHEEL" audit --device 9.0 "$w"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run "$OFFWHEEL" audit --device 7.0 "$w"
	[ "$status" -eq 3 ]
	one=$("$OFFWHEEL" --json --jobs 1 audit --device 12.0 "$w" | jq -S 'del(.targets[0].bytes_read)')
	two=$("$OFFWHEEL" --json --jobs 2 audit --device 12.0 "$w" | jq -S 'del(.targets[0].bytes_read)')
	[ "$one" = "$two" ]
	# libtorch_nvshmem's sm_89 and compute_120 exist only in its link-time modules
	nv=$(jq -c '.targets[0].libraries[] | select(.path | endswith("libtorch_nvshmem.so")) | [(.sass | index("sm_89")), .rdc_only]' <<<"$one")
	[[ $nv == "[null,"*'"sm_89"'*'"compute_120@9.0"'* ]] || { echo "$nv"; false; }
}

@test "flashinfer-cubin: every 50th of its standalone cubins has cuobjdump's arch and kernel; the wheel runs on 10.0 and 10.3 with the other device's Sm100a/Sm103a cubins not for it, not on 9.0; --strict keeps the old verdict" {
	need_real
	w=$(wheel_of flashinfer_cubin-0.6.9)
	sample="$BATS_FILE_TMPDIR/fi"
	mkdir -p "$sample"
	unzip -Z1 "$w" '*.cubin' | sort | awk 'NR % 50 == 1' >"$sample/list"
	[ "$(wc -l <"$sample/list")" -ge 200 ]
	unzip -qo "$w" $(cat "$sample/list") -d "$sample"
	mapfile -t cubins < <(find "$sample" -name '*.cubin' | sort)
	run python3 "$OW_SOURCE_DIR/tests/tools/cuobjdump_cubins.py" "$OFFWHEEL" "$(cuobjdump_path)" "${cubins[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"same    sm_100: "* && $output == *"same    sm_100a: "* && $output == *"same    sm_103a: "* ]]
	[[ $output == *"${#cubins[@]} of ${#cubins[@]} cubins the same"* ]]
	# the whole wheel: every cubin is a library with device code
	run "$OFFWHEEL" audit --device 10.0 "$w"
	[ "$status" -eq 0 ] || { echo "${output:0:2000}"; false; }
	n=$(unzip -Z1 "$w" '*.cubin' | wc -l)
	[[ ${lines[0]} == *"native on CC 10.0 — $n of $n libraries carry device code, "*" arch-specific not for this device" ]] || { echo "${lines[0]}"; false; }
	[[ $output == *"Sm103aKernel"*": not for this device"* ]]
	run "$OFFWHEEL" audit --device 10.3 "$w"
	[ "$status" -eq 0 ] || { echo "${lines[0]}"; false; }
	run "$OFFWHEEL" audit --device 9.0 "$w"
	[ "$status" -eq 3 ]
	run "$OFFWHEEL" audit --strict --device 10.0 "$w"
	[ "$status" -eq 3 ]
	[[ ${lines[0]} == *"partial on CC 10.0"*"CANNOT RUN"* ]]
}

@test "bitsandbytes: its libbitsandbytes_cudaXYZ.so equal cuobjdump's; the family is judged by its newest member (no set), --strict by every member" {
	need_real
	w=$(wheel_of bitsandbytes-0.50.2)
	d="$BATS_FILE_TMPDIR/bnb"
	unzip -qo "$w" 'bitsandbytes/libbitsandbytes_cuda*.so' -d "$d"
	# cuobjdump aborts on the cuda121 build ("Invalid ELF"): offwheel must list it
	mapfile -t libs < <(find "$d" -name 'libbitsandbytes_cuda*.so' ! -name '*cuda121*' | sort)
	[ "${#libs[@]}" -eq 6 ]
	run python3 "$OW_SOURCE_DIR/tests/tools/cuobjdump_compare.py" "$OFFWHEEL" "$(cuobjdump_path)" "${libs[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"same    libbitsandbytes_cuda132.so: 7 cubins"* ]]
	run "$OFFWHEEL" audit "$d/bitsandbytes/libbitsandbytes_cuda121.so"
	[ "$status" -eq 0 ]
	[[ $output == *"SASS sm_"* ]]
	run "$OFFWHEEL" --json audit --device 12.0 "$w"
	[ "$status" -eq 0 ]
	roles=$(jq -r '.targets[0].libraries[] | select(.path | test("_cuda[0-9]+\\.so$")) | "\(.path | sub(".*/"; "")) \(.device.role)"' <<<"$output")
	echo "$roles"
	[ "$(grep -c ' other-cuda$' <<<"$roles")" -eq 6 ]
	[[ $roles == *"libbitsandbytes_cuda132.so required"* ]]
	run "$OFFWHEEL" audit --strict --device 12.0 "$w"
	[ "$status" -eq 3 ] # the cuda11x/12.[1-6] builds stop at sm_90
}

@test "vllm 0.34.0: its 12 libraries equal cuobjdump's; it runs on 12.0, 10.0 and 9.0 (per-architecture modules, sm_90a/sm_100f-only libraries not for the device), not on 7.5 nor under --strict" {
	need_real
	w=$(wheel_of vllm-0.34.0)
	d="$BATS_FILE_TMPDIR/vllm"
	unzip -qo "$w" '*.so' -d "$d"
	mapfile -t libs < <(find "$d" -name '*.so' | sort)
	[ "${#libs[@]}" -eq 12 ]
	run python3 "$OW_SOURCE_DIR/tests/tools/cuobjdump_compare.py" "$OFFWHEEL" "$(cuobjdump_path)" "${libs[@]}"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^same ' <<<"$output")" -eq 12 ]
	[[ $output == *"same    _C_stable_libtorch.abi3.so: "* ]]
	run "$OFFWHEEL" --json audit --device 12.0 "$w"
	[ "$status" -eq 0 ] || { echo "$output" | head -c 3000; false; }
	c=$(jq -c '.targets[0].libraries[] | select(.path == "vllm/_C_stable_libtorch.abi3.so") | .device | [.verdict, .per_arch, .per_arch_modules, .fatal]' <<<"$output")
	[ "$c" = '["partial",true,25,false]' ] || { echo "$c"; false; }
	roles=$(jq -r '.targets[0].libraries[] | select(.device.role == "not-for-device") | .path' <<<"$output" | sort | tr '\n' ' ')
	[ "$roles" = "vllm/_deepselect_C.abi3.so vllm/_flashmla_C.abi3.so vllm/_flashmla_extension_C.abi3.so vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so " ] || { echo "$roles"; false; }
	for cc in 10.0 9.0; do
		run "$OFFWHEEL" audit --device "$cc" "$w"
		[ "$status" -eq 0 ] || { echo "$cc: $output"; false; }
	done
	# 7.5: modules for sm_80 and up lack sm_75 (a build without it, not dispatch)
	run "$OFFWHEEL" audit --device 7.5 "$w"
	[ "$status" -eq 3 ]
	[[ $output == *"_C_stable_libtorch.abi3.so: partial: "*" — FATAL"* ]]
	run "$OFFWHEEL" audit --strict --device 12.0 "$w"
	[ "$status" -eq 3 ]
}

@test "a static archive (the toolkit's libcudadevrt.a): its link-time modules equal cuobjdump's" {
	need_real
	a=/usr/local/cuda/lib64/libcudadevrt.a
	[ -f "$a" ] || skip "no CUDA toolkit at /usr/local/cuda (libcudadevrt.a)"
	run python3 "$OW_SOURCE_DIR/tests/tools/cuobjdump_compare.py" "$OFFWHEEL" "$(cuobjdump_path)" "$a"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == "same    libcudadevrt.a: "*" cubins"*"SASS "*"sm_90"* ]]
	run "$OFFWHEEL" --json audit "$a"
	[ "$(jq -r '.targets[0].libraries[0].format' <<<"$output")" = archive ]
}

@test "every real wheel listed while it inflates (docs/fatbin.md) equals it listed held whole, in every mode" {
	need_real
	local w mode a b
	for w in $(wheel_of torch-2.15.0) $(wheel_of torchvision-0.29.2) $(wheel_of torchaudio-2.11.1) \
		$(wheel_of nvidia_cudnn_cu13-9.26.0.51) $(wheel_of bitsandbytes-0.50.2) $(wheel_of vllm-0.34.0); do
		for mode in "" "--device 12.0" "--device 8.0" "--device 9.0 --scan-data always"; do
			# every member streamed (1 byte and up) against every member held whole
			# (but for "reread": a member streamed may be inflated twice)
			a=$(OFFWHEEL_AUDIT_STREAM_FROM=1 "$OFFWHEEL" --json audit $mode "$w" | jq -S 'del(.targets[0].bytes_read, .targets[0].libraries[].reread)')
			b=$(OFFWHEEL_AUDIT_STREAM_FROM=never "$OFFWHEEL" --json audit $mode "$w" | jq -S 'del(.targets[0].bytes_read, .targets[0].libraries[].reread)')
			[ "$a" = "$b" ] || { echo "$(basename "$w") $mode: streamed and whole differ"; diff <(echo "$a") <(echo "$b") | head -20; false; }
			[ "$(jq '[.targets[0].libraries[].modules] | add' <<<"$a")" -gt 0 ] # not an empty comparison
		done
		# the plain text listing too (no payload opened)
		a=$(OFFWHEEL_AUDIT_STREAM_FROM=1 "$OFFWHEEL" audit "$w")
		b=$(OFFWHEEL_AUDIT_STREAM_FROM=never "$OFFWHEEL" audit "$w")
		[ "$a" = "$b" ]
	done
	# the comparison is not empty: torch's libtorch_cuda.so has its 476 modules
	w=$(wheel_of torch-2.15.0)
	n=$("$OFFWHEEL" --json audit --device 12.0 "$w" | jq '.targets[0].libraries[] | select(.path == "torch/lib/libtorch_cuda.so") | .modules')
	[ "$n" -eq 476 ] || { echo "libtorch_cuda.so: $n modules"; false; }
}

@test "auditing torch 2.15.0 peaks under 256 MB of memory with 1 pass and with 16" {
	need_real
	# AddressSanitizer's shadow memory and quarantine are no measure of ours
	if ldd "$OFFWHEEL" 2>/dev/null | grep -q libasan; then
		skip "the ASan build's memory is not offwheel's (the normal build checks it)"
	fi
	w=$(wheel_of torch-2.15.0)
	# bounded memory: the goal is 256 MB at any --jobs (held whole it was 0.5-0.9 GB)
	for j in 1 16; do
		kb=$(peak_rss "$OFFWHEEL" --jobs "$j" audit --device 12.0 "$w")
		echo "--jobs $j: peak RSS $((kb / 1024)) MB"
		[ "$kb" -le $((256 * 1024)) ] || { echo "peak RSS $kb kB over 256 MB"; false; }
	done
}
