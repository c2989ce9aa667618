#!/usr/bin/env bats
# offwheel audit on code that is never loaded or is compiled at run time
# (issue 47), on wheels built here with nvcc: a static archive and a
# relocatable object are link-time code, listed and never judged; raw
# arch-specific PTX files that no library beside them uses are "no code
# here" (exit 0), and --strict keeps CUDA's answer (exit 3); an NVIDIA
# library shipped in two builds (triton's cupti/ and cupti-blackwell/) is
# judged by the copy that runs.  Skipped with a message where nvcc is not
# on PATH.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/rss.bash"

setup_file() {
	export D="$BATS_FILE_TMPDIR"
	command -v nvcc >/dev/null || return 0
	printf '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n' >"$D/k.cu"
	printf '__global__ void s(float *x) { x[threadIdx.x] += 1.0f; }\n' >"$D/s.cu"
	# a good library: sm_120 SASS and compute_120 PTX
	nvcc -shared -Xcompiler -fPIC -cudart none -gencode arch=compute_120,code=sm_120 \
		-gencode arch=compute_120,code=compute_120 "$D/k.cu" -o "$D/libgood.so"
	# an sm_80-only static archive and the object it is made of
	nvcc -c -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 "$D/s.cu" -o "$D/s.o"
	ar rcs "$D/libs80_static.a" "$D/s.o"
	# raw PTX for an arch-specific target, as a run-time compiler ships it
	nvcc -ptx -arch=sm_90a "$D/k.cu" -o "$D/k90a.ptx"
	nvcc -ptx -arch=sm_90a "$D/s.cu" -o "$D/s90a.ptx"
	# one NVIDIA library in two builds: sm_80 and sm_120 only
	nvcc -shared -Xcompiler -fPIC -cudart none -gencode arch=compute_80,code=sm_80 \
		"$D/k.cu" -o "$D/libcupti_old.so"
	nvcc -shared -Xcompiler -fPIC -cudart none -gencode arch=compute_120,code=sm_120 \
		"$D/k.cu" -o "$D/libcupti_new.so"
}

need_nvcc() {
	command -v nvcc >/dev/null || skip "nvcc is not on PATH (the CUDA toolkit builds these wheels at test time)"
}

# mkwheel NAME SRC=DEST...: a wheel of the given files (tests/tools/mkwheel_members.py)
mkwheel() {
	local name=$1 a specs=()
	shift
	for a in "$@"; do specs+=("${a#*=}=${a%%=*}"); done
	python3 "$OW_SOURCE_DIR/tests/tools/mkwheel_members.py" "$D/$name" "${specs[@]}"
}

@test "a static archive and a relocatable object beside a good library: listed as link-time code, never judged (not even --strict)" {
	need_nvcc
	mkwheel pkg-1.0-py3-none-any.whl "$D/libgood.so=pkg/libgood.so" \
		"$D/libs80_static.a=pkg/lib/libs80_static.a" "$D/s.o=pkg/lib/s.o"
	w="$D/pkg-1.0-py3-none-any.whl"
	run "$OFFWHEEL" audit --device 12.0 "$w"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == *"native on CC 12.0 — 3 of 3 libraries carry device code, 2 link-time (static archives, not judged)"* ]]
	[[ $output == *"pkg/lib/libs80_static.a: link-time code"* ]]
	[[ $output == *"pkg/lib/s.o: link-time code"* ]]
	run "$OFFWHEEL" audit --strict --device 12.0 "$w"
	[ "$status" -eq 0 ]
	run "$OFFWHEEL" --json audit --device 12.0 "$w"
	[ "$status" -eq 0 ]
	got=$(jq -c '[.targets[0].libraries[] | [.path, .format, .link_time, .device.role, .device.fatal]]' <<<"$output")
	[ "$got" = '[["pkg/lib/libs80_static.a","archive",true,"link-time",false],["pkg/lib/s.o","elf",true,"link-time",false],["pkg/libgood.so","elf",false,"required",false]]' ] || { echo "$got"; false; }
	# the archive's SASS is still listed
	[ "$(jq -r '.targets[0].libraries[0].sass | join(" ")' <<<"$output")" = "sm_80" ]
	# the archive alone: nothing that loads, no verdict against it
	mkwheel arc-1.0-py3-none-any.whl "$D/libs80_static.a=arc/libs80_static.a"
	run "$OFFWHEEL" audit --device 12.0 "$D/arc-1.0-py3-none-any.whl"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == *"no-code on CC 12.0"*"1 link-time"* ]]
	# the good library itself still fails where it cannot run
	run "$OFFWHEEL" audit --device 8.0 "$w"
	[ "$status" -eq 3 ]
	[[ $output == *"pkg/libgood.so: NO IMAGE"* ]]
}

@test "a wheel of raw compute_90a PTX files only: no code here on 12.0 and 8.0 (exit 0), JIT on 9.0, --strict exit 3" {
	need_nvcc
	grep -q '^\.target sm_90a' "$D/k90a.ptx"
	mkwheel rt-1.0-py3-none-any.whl "$D/k90a.ptx=rt/ptx/k.ptx" "$D/s90a.ptx=rt/ptx/s.ptx"
	w="$D/rt-1.0-py3-none-any.whl"
	for dev in 12.0 8.0; do
		run "$OFFWHEEL" audit --device $dev "$w"
		echo "$output"
		[ "$status" -eq 0 ]
		[[ ${lines[0]} == *"no code here for $dev: this package compiles its kernels at run time or does not support the device — 2 of 2 libraries carry device code, 2 arch-specific not for this device"* ]]
		[[ $output == *"rt/ptx/k.ptx: not for this device"* ]]
	done
	run "$OFFWHEEL" --json audit --device 12.0 "$w"
	[ "$(jq -r '.targets[0] | "\(.verdict) \(.fatal) \(.runtime_only) \([.libraries[].device.role] | join(","))"' <<<"$output")" = "no-code false true not-for-device,not-for-device" ]
	run "$OFFWHEEL" audit --device 9.0 "$w"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == *"jit on CC 9.0"* ]]
	run "$OFFWHEEL" audit --strict --device 12.0 "$w"
	[ "$status" -eq 3 ]
	[[ ${lines[0]} == *"none on CC 12.0"*"CANNOT RUN"* ]]
	# beside a library that cannot run, the library decides: exit 3
	mkwheel rt2-1.0-py3-none-any.whl "$D/k90a.ptx=rt/ptx/k.ptx" "$D/libgood.so=rt/libgood.so"
	run "$OFFWHEEL" audit --device 8.0 "$D/rt2-1.0-py3-none-any.whl"
	[ "$status" -eq 3 ]
	[[ $output != *"no code here"* ]]
}

@test "an NVIDIA library in two builds (cupti/ and cupti-blackwell/): the copy that cannot run is not for this device; --strict judges both" {
	need_nvcc
	mkwheel tri-1.0-py3-none-any.whl "$D/libcupti_old.so=tri/lib/cupti/libcupti.so.12" \
		"$D/libcupti_new.so=tri/lib/cupti-blackwell/libcupti.so.13"
	w="$D/tri-1.0-py3-none-any.whl"
	run "$OFFWHEEL" audit --device 8.0 "$w"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == *"native on CC 8.0"*"1 other copies of NVIDIA libraries"* ]]
	[[ $output == *"cupti-blackwell/libcupti.so.13: not for this device (another copy"* ]]
	run "$OFFWHEEL" audit --device 12.0 "$w"
	[ "$status" -eq 0 ]
	run "$OFFWHEEL" audit --strict --device 8.0 "$w"
	[ "$status" -eq 3 ]
	# neither copy runs: cannot run
	run "$OFFWHEEL" audit --device 7.0 "$w"
	[ "$status" -eq 3 ]
	# the same name in another folder, not an NVIDIA library: no such rule
	mkwheel mine-1.0-py3-none-any.whl "$D/libcupti_old.so=mine/a/libmine.so" \
		"$D/libcupti_new.so=mine/b/libmine.so"
	run "$OFFWHEEL" audit --device 8.0 "$D/mine-1.0-py3-none-any.whl"
	[ "$status" -eq 3 ]
}


@test "a library whose section name table lies 300 MB before its section headers (tensorflow's layout): streamed twice, never held whole, under 256 MB, the same listing" {
	need_nvcc
	# libgood.so rewritten: .shstrtab, then a 300 MiB .strtab (no fatbin magic in it), then the section headers
	python3 - "$D/libgood.so" "$D/libfar.so" $((300 << 20)) <<'EOP'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
pad = int(sys.argv[3])
shoff, = struct.unpack_from("<Q", b, 0x28)
entsize, num, strndx = struct.unpack_from("<HHH", b, 0x3A)
hdrs = [list(struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * entsize)) for i in range(num)]
assert shoff + num * entsize == len(b), "the section headers end the file"
s = hdrs[strndx]
names = bytes(b[s[4]:s[4] + s[5]])
name = lambda h: names[h[0]:names.index(b"\0", h[0])].decode()
out = bytearray(b[:shoff])
out += bytes(-len(out) % 8 + (2 << 20))  # past the first bytes a stream keeps
s[4] = len(out)                    # .shstrtab moved to the end ...
out += names
st = [h for h in hdrs if name(h) == ".strtab"][0]
st[4], st[5] = len(out), pad       # ... then a big .strtab ...
# 64 random bytes a 4 KiB page: under the 1000:1 ratio offwheel takes from a zip
import random
page = bytearray(4096)
rnd = random.Random(47)
for off in range(0, pad, 4096):
    page[:64] = rnd.randbytes(64)
    out += page[:min(4096, pad - off)]
out += bytes(-len(out) % 8)
struct.pack_into("<Q", out, 0x28, len(out))  # ... then the section headers
for h in hdrs:
    out += struct.pack("<IIQQQQIIQQ", *h)
open(sys.argv[2], "wb").write(out)
EOP
	readelf -SW "$D/libfar.so" | grep -q '\.strtab'
	mkwheel far-1.0-py3-none-any.whl "$D/libfar.so=far/libfar.so"
	w="$D/far-1.0-py3-none-any.whl"
	# the listing of the member is the file's own
	a=$("$OFFWHEEL" --json audit --device 12.0 "$D/libfar.so" | jq -c '.targets[0].libraries[0] | [.sass, [.ptx[].name], .modules, .device.verdict]')
	b=$("$OFFWHEEL" --json audit --device 12.0 "$w" | jq -c '.targets[0].libraries[0] | [.sass, [.ptx[].name], .modules, .device.verdict]')
	[ "$a" = '[["sm_120"],["compute_120"],1,"native"]' ] || { echo "$a"; false; }
	[ "$a" = "$b" ] || { echo "$b"; false; }
	# -v says why it was inflated twice, and that it was never held whole
	run "$OFFWHEEL" -v audit --device 12.0 "$w"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"inflated 2 times ("*"not kept while the input streamed); the later passes streamed it again keeping 1 more byte range"*"never the whole member"* ]]
	if ldd "$OFFWHEEL" 2>/dev/null | grep -q libasan; then
		skip "the ASan build's memory is not offwheel's (the normal build checks it)"
	fi
	kb=$(peak_rss "$OFFWHEEL" audit --device 12.0 "$w")
	echo "streamed: peak RSS $((kb / 1024)) MB"
	[ "$kb" -le $((256 * 1024)) ]
	# the measure sees a member held whole
	kb=$(OFFWHEEL_AUDIT_STREAM_FROM=never peak_rss "$OFFWHEEL" audit --device 12.0 "$w")
	echo "held whole: peak RSS $((kb / 1024)) MB"
	[ "$kb" -ge $((300 * 1024)) ]
}

@test "a library that is partial and fatal names the modules without an image here (offset, size, images)" {
	need_nvcc
	printf '__global__ void a(float *x) { x[0] = 1.0f; }\n' >"$D/a.cu"
	printf '__global__ void b(float *x) { x[0] = 2.0f; }\n' >"$D/b.cu"
	nvcc -c -Xcompiler -fPIC -gencode arch=compute_75,code=sm_75 -gencode arch=compute_120,code=sm_120 "$D/a.cu" -o "$D/a.o"
	nvcc -c -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 "$D/b.cu" -o "$D/b.o"
	nvcc -shared -cudart none "$D/a.o" "$D/b.o" -o "$D/libmix.so"
	run "$OFFWHEEL" audit --device 7.5 "$D/libmix.so"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"libmix.so: partial: 1 of 2 modules have no usable image — FATAL"* ]]
	# the module named is the sm_80/sm_86 one, with its place and size, and only it
	[[ $output =~ "no image here: module #"[01]" in .nv_fatbin at offset "[0-9]+", "[0-9]+" bytes: sm_80"(:[a-z0-9]+)?" sm_86" ]]
	[ "$(grep -c 'no image here' <<<"$output")" -eq 1 ]
	# on 8.6 it is the other one
	run "$OFFWHEEL" audit --device 8.6 "$D/libmix.so"
	[[ $output =~ "no image here: module #"[01]" in .nv_fatbin at offset "[0-9]+", "[0-9]+" bytes: sm_75"(:[a-z0-9]+)?" sm_120" ]]
	[ "$(grep -c 'no image here' <<<"$output")" -eq 1 ]
}
