#!/usr/bin/env bats
# NVIDIA's libraries told by their content, not only by name or folder
# (issue 47): the DT_SONAME a shared library calls itself survives renaming
# and vendoring.  Oracle: binutils' readelf -d.  Real NVIDIA libraries come
# from the CUDA toolkit here (/usr/local/cuda/lib64) and from triton 3.9.0 in
# the shared wheel cache; nvcc builds the non-NVIDIA ones.  Each test is
# skipped with a message where this machine lacks what it needs.

setup_file() {
	export D="$BATS_FILE_TMPDIR"
	export CUDA_LIB=${CUDA_LIB:-/usr/local/cuda/lib64}
	export OW_EXT_CACHE="${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}"
	command -v nvcc >/dev/null || return 0
	# one library, two modules: sm_80, and sm_90 + sm_120 (partial on 8.6: not
	# one architecture per module, so no per-architecture dispatch either)
	printf '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n' >"$D/k.cu"
	printf '__global__ void s(float *x) { x[threadIdx.x] += 1.0f; }\n' >"$D/s.cu"
	nvcc -c -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 "$D/k.cu" -o "$D/k.o"
	nvcc -c -Xcompiler -fPIC -gencode arch=compute_90,code=sm_90 -gencode arch=compute_120,code=sm_120 \
		"$D/s.cu" -o "$D/s.o"
	nvcc -shared -cudart none -Xlinker -soname=libmykernels.so.1 "$D/k.o" "$D/s.o" -o "$D/libmykernels.so"
	# the same code calling itself one of NVIDIA's libraries
	nvcc -shared -cudart none -Xlinker -soname=libcublasLt.so.13 "$D/k.o" "$D/s.o" -o "$D/libnamed.so"
}

soname() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'; }
lib_json() { "$OFFWHEEL" --json audit "$@" | jq -c '.targets[0].libraries[0] | [.vendor, .soname]'; }

@test "a renamed copy of a real NVIDIA library in a neutral folder is NVIDIA's by its SONAME" {
	f=$CUDA_LIB/libcupti.so.13
	[ -e "$f" ] || skip "no $f on this machine"
	command -v readelf >/dev/null || skip "readelf (binutils) is not installed"
	mkdir -p "$D/plain/pkg"
	cp "$f" "$D/plain/pkg/libprofiler.so"
	want="[true,\"$(soname "$f")\"]"
	[ "$(lib_json "$D/plain/pkg/libprofiler.so")" = "$want" ]
	# judged as the original is: the same device verdict
	a=$("$OFFWHEEL" --json audit --device 8.6 "$f" | jq -c '.targets[0].libraries[0].device')
	b=$("$OFFWHEEL" --json audit --device 8.6 "$D/plain/pkg/libprofiler.so" | jq -c '.targets[0].libraries[0].device')
	[ "$a" = "$b" ]
	# in a wheel, held whole (a small member)
	(cd "$D/plain" && zip -q "$D/prof-1.0-py3-none-manylinux_2_28_x86_64.whl" pkg/libprofiler.so)
	[ "$(lib_json "$D/prof-1.0-py3-none-manylinux_2_28_x86_64.whl")" = "$want" ]
}

@test "a big NVIDIA library renamed in a wheel is streamed and still told by its SONAME, read once" {
	f=$CUDA_LIB/libcufft.so.12
	[ -e "$f" ] || skip "no $f on this machine"
	command -v readelf >/dev/null || skip "readelf (binutils) is not installed"
	mkdir -p "$D/big/pkg"
	cp "$f" "$D/big/pkg/libfft_impl.so"
	(cd "$D/big" && zip -q -0 "$D/fft-1.0-py3-none-manylinux_2_28_x86_64.whl" pkg/libfft_impl.so)
	run "$OFFWHEEL" --json audit --device 12.0 "$D/fft-1.0-py3-none-manylinux_2_28_x86_64.whl"
	[ "$status" -eq 0 ]
	got=$(jq -c '.targets[0].libraries[0] | [.vendor, .soname, .reread, .device.fatal]' <<<"$output")
	[ "$got" = "[true,\"$(soname "$f")\",null,false]" ] || { echo "$got"; false; }
}

@test "an nvcc-built library is not NVIDIA's; one whose SONAME names NVIDIA's is judged as NVIDIA's" {
	command -v nvcc >/dev/null || skip "nvcc is not on PATH"
	[ "$(lib_json "$D/libmykernels.so")" = "[false,\"$(soname "$D/libmykernels.so")\"]" ]
	# partial on 8.6: fatal for a library of its own
	run "$OFFWHEEL" audit --device 8.6 "$D/libmykernels.so"
	[ "$status" -eq 3 ]
	# the SONAME is the signal: the same code calling itself libcublasLt is
	# judged as NVIDIA's libraries are (one architecture per module)
	[ "$(lib_json "$D/libnamed.so")" = '[true,"libcublasLt.so.13"]' ]
	run "$OFFWHEEL" audit --device 8.6 "$D/libnamed.so"
	[ "$status" -eq 0 ]
}

@test "triton 3.9.0's vendored CUPTI, renamed out of its nvidia/ folder, is NVIDIA's by content" {
	w=$(ls "$OW_EXT_CACHE"/wheels/triton-3.9.0-*.whl 2>/dev/null | head -1 || true)
	[ -n "$w" ] || skip "triton 3.9.0 is not in $OW_EXT_CACHE/wheels (tests/integration/audit_real.bats fetches it)"
	command -v readelf >/dev/null || skip "readelf (binutils) is not installed"
	mkdir -p "$D/tri/vendored"
	unzip -p "$w" triton/backends/nvidia/lib/cupti/libcupti.so.12 >"$D/tri/vendored/libprof.so"
	[ "$(lib_json "$D/tri/vendored/libprof.so")" = "[true,\"$(soname "$D/tri/vendored/libprof.so")\"]" ]
}
