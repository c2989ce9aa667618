#!/usr/bin/env bats
# offwheel smoke / doctor against the stand-in driver (tests/standin), which
# applies the real driver's image-selection rules to what it is asked to
# load and runs the smoke kernel's arithmetic on the CPU.  The fake installs
# use the nvcc-built fixture libraries of tests/fixtures/fatbin.

setup() {
	T=$(mktemp -d)
	STANDIN="$OW_BUILD_DIR/tests/standin/libcuda.so.1"
	FB="$OW_FIXTURES/fatbin"
	export OFFWHEEL_LIBCUDA="$STANDIN"
	unset OW_STANDIN_CC OW_STANDIN_DRIVER OW_STANDIN_MODE OW_STANDIN_DEVICES OW_STANDIN_NAME
}

teardown() {
	rm -rf "$T"
}

# fake_site DIR TORCH_VERSION CUDA LIB...: a site-packages with torch/lib/<libs>
fake_site() {
	local sp=$1 ver=$2 cuda=$3
	shift 3
	mkdir -p "$sp/torch/lib" "$sp/torch-$ver.dist-info"
	printf 'Metadata-Version: 2.1\nName: torch\nVersion: %s\n\n' "$ver" >"$sp/torch-$ver.dist-info/METADATA"
	printf "__version__ = '%s'\ncuda: Optional[str] = '%s'\n" "$ver" "$cuda" >"$sp/torch/version.py"
	: >"$sp/torch/__init__.py"
	local lib
	for lib in "$@"; do
		cp "$FB/$lib" "$sp/torch/lib/${lib%%:*}"
	done
}

# a cu126-like and a cu128-like install, with a torchvision beside
make_cu126() {
	fake_site "$T/cu126" 2.6.0+cu126 12.6
	cp "$FB/libtorch_cuda_cu126.so" "$T/cu126/torch/lib/libtorch_cuda.so"
	mkdir -p "$T/cu126/torchvision" "$T/cu126/torchvision-0.21.0+cu126.dist-info"
	printf 'Name: torchvision\nVersion: 0.21.0+cu126\n\n' >"$T/cu126/torchvision-0.21.0+cu126.dist-info/METADATA"
	cp "$FB/sass_only.so" "$T/cu126/torchvision/_C.so"
	: >"$T/cu126/torch/lib/libtorch_cpu.so" # no device code: not counted
}

make_cu128() {
	fake_site "$T/cu128" 2.7.0+cu128 12.8
	cp "$FB/libtorch_cuda_cu128.so" "$T/cu128/torch/lib/libtorch_cuda.so"
}

@test "no driver: exit 5 and says what to install" {
	make_cu126
	OFFWHEEL_LIBCUDA="$T/missing/libcuda.so.1" run "$OFFWHEEL" smoke --site-packages "$T/cu126"
	[ "$status" -eq 5 ]
	[[ $output == *"no CUDA driver"* ]]
	[[ $output == *"install the NVIDIA driver"* ]]
	OFFWHEEL_LIBCUDA="$T/missing/libcuda.so.1" run "$OFFWHEEL" --json smoke --site-packages "$T/cu126"
	[ "$status" -eq 5 ]
	[ "$(jq -r .error.code <<<"$output")" = ENODRIVER ]
	[ "$(jq -r .install.torch.version <<<"$output")" = 2.6.0+cu126 ]
}

@test "the CUDA stub library: exit 5, says stub (stand-in mode and the toolkit's own stub)" {
	make_cu126
	OW_STANDIN_MODE=stub run "$OFFWHEEL" smoke --site-packages "$T/cu126"
	[ "$status" -eq 5 ]
	[[ $output == *"CUDA_ERROR_STUB_LIBRARY (34)"*"stub library, not a driver"* ]]
	local real=/usr/local/cuda/lib64/stubs/libcuda.so
	if [ -e "$real" ]; then
		OFFWHEEL_LIBCUDA=$real run "$OFFWHEEL" smoke --site-packages "$T/cu126"
		[ "$status" -eq 5 ]
		[[ $output == *"stub library"* ]]
	else
		echo "# $real absent: the real stub was not tried" >&3
	fi
}

@test "driver without a device: exit 5" {
	make_cu126
	OW_STANDIN_MODE=no-device run "$OFFWHEEL" smoke --site-packages "$T/cu126"
	[ "$status" -eq 5 ]
	[[ $output == *"CUDA_ERROR_NO_DEVICE"* ]]
}

@test "a failing launch is reported as failed, exit non-zero; NOT_SUPPORTED as not run" {
	make_cu128
	OW_STANDIN_MODE=launch-fail run "$OFFWHEEL" --json smoke --site-packages "$T/cu128"
	[ "$status" -ne 0 ]
	[ "$(jq -r '.devices[0].kernel.status' <<<"$output")" = launch-failed ]
	[ "$(jq -r '.devices[0].kernel.call' <<<"$output")" = cuLaunchKernel ]
	[ "$(jq -r '.devices[0].kernel.result' <<<"$output")" = CUDA_ERROR_LAUNCH_FAILED ]
	OW_STANDIN_MODE=launch-fail run "$OFFWHEEL" smoke --site-packages "$T/cu128"
	[ "$status" -ne 0 ]
	[[ $output == *"smoke kernel: FAILED"*"cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED (719)"* ]]
	[[ $output != *PASSED* ]]
	OW_STANDIN_MODE=no-launch run "$OFFWHEEL" smoke --site-packages "$T/cu128"
	[ "$status" -ne 0 ]
	[[ $output == *"smoke kernel: NOT RUN"* ]]
}

@test "wrong kernel results are caught by the exact check: exit 3" {
	make_cu128
	OW_STANDIN_MODE=wrong-result run "$OFFWHEEL" --json smoke --site-packages "$T/cu128"
	[ "$status" -eq 3 ]
	[ "$(jq -r '.devices[0].kernel.status' <<<"$output")" = wrong-result ]
	[ "$(jq -r '.devices[0].kernel.bad_elements' <<<"$output")" -eq 1 ]
	[ "$(jq '.devices[0].kernel.got - .devices[0].kernel.expected' <<<"$output")" -eq 1 ]
}

@test "the smoke kernel: SASS where the fatbin has it, PTX through the JIT elsewhere" {
	make_cu128
	OW_STANDIN_CC=9.0 run "$OFFWHEEL" --json smoke --site-packages "$T/cu128"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.devices[0].kernel.image' <<<"$output")" = sass ]
	[ "$(jq -r '.devices[0].kernel.status' <<<"$output")" = passed ]
	# 11.0 (Thor): no SASS in smoke.fatbin, PTX ISA 7.0 compute_75 JITs even on a 12.0 driver
	OW_STANDIN_CC=11.0 OW_STANDIN_DRIVER=12000 run "$OFFWHEEL" --json smoke --site-packages "$T/cu128"
	[ "$(jq -r '.devices[0].kernel.image' <<<"$output")" = ptx ]
	[ "$(jq -r '.devices[0].kernel.status' <<<"$output")" = passed ]
}

@test "12.0 device, cu126-like install: exit 3, 209 per library; doctor prints the stable cu128 fix" {
	make_cu126
	OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12080 run "$OFFWHEEL" --json smoke --all --site-packages "$T/cu126"
	[ "$status" -eq 3 ]
	[ "$(jq -r .error.code <<<"$output")" = ENOIMAGE ]
	[ "$(jq '.devices[0].libraries | length' <<<"$output")" -eq 2 ]
	[ "$(jq '[.devices[0].libraries[] | select(.status == "no-binary-for-gpu" and .no_binary_for_gpu == .tried and .loaded == 0)] | length' <<<"$output")" -eq 2 ]
	[ "$(jq '[.devices[0].libraries[] | select(.static == "none")] | length' <<<"$output")" -eq 2 ]
	[ "$(jq '[.devices[0].libraries[].disagree_with_static] | add' <<<"$output")" -eq 0 ]
	[ "$(jq .libraries_without_device_code <<<"$output")" -eq 1 ]
	OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12080 run "$OFFWHEEL" smoke --site-packages "$T/cu126"
	[ "$status" -eq 3 ]
	[[ $output == *"209 CUDA_ERROR_NO_BINARY_FOR_GPU"* ]]
	OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12080 run "$OFFWHEEL" doctor --site-packages "$T/cu126"
	[ "$status" -eq 3 ]
	[[ $output == *"[pass       ] driver"* ]]
	[[ $output == *"[FAIL       ] images"* ]]
	[[ $output == *"fix: install stable cu128 wheels"* ]]
	[[ $output == *"offwheel sync --channel stable --variant cu128 --python "* ]]
	[[ $output == *"offwheel export DIR --target 'cu128 cp"* ]]
	[[ $output == *"pip install --no-index --find-links DIR/wheels --require-hashes -r DIR/requirements/cu128-cp"* ]]
	OW_STANDIN_CC=12.0 run "$OFFWHEEL" --json doctor --site-packages "$T/cu126"
	[ "$(jq -r .fix.channel <<<"$output")" = stable ]
	[ "$(jq -r .fix.variant <<<"$output")" = cu128 ]
	[ "$(jq -r .fix.since <<<"$output")" = 2.7.0 ]
}

@test "12.0 device, cu128-like install: exit 0 with --no-kernel; doctor passes every step" {
	make_cu128
	OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12080 run "$OFFWHEEL" --json smoke --no-kernel --all --site-packages "$T/cu128"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.devices[0].kernel.status' <<<"$output")" = skipped ]
	[ "$(jq -r '.devices[0].libraries[0].status' <<<"$output")" = loaded ]
	[ "$(jq -r '.devices[0].libraries[0].static' <<<"$output")" = native ]
	[ "$(jq -r '.devices[0].libraries[0].loaded' <<<"$output")" -eq 3 ]
	OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12080 run "$OFFWHEEL" --json doctor --site-packages "$T/cu128"
	[ "$status" -eq 0 ]
	[ "$(jq '[.steps[] | select(.state != "pass")] | length' <<<"$output")" -eq 0 ]
	[ "$(jq .fix <<<"$output")" = null ]
}

@test "PTX-only install on a newer device goes through the JIT; too new a PTX ISA gives 222" {
	fake_site "$T/ptx" 2.9.0+cu130 13.0 ptx_only.so
	OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=13000 run "$OFFWHEEL" --json smoke --all --site-packages "$T/ptx"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.devices[0].libraries[0].status' <<<"$output")" = loaded ]
	[ "$(jq -r '.devices[0].libraries[0].static' <<<"$output")" = jit ]
	# PTX ISA 9.0 needs a CUDA 13.0 driver: a 12.8 driver answers 222
	OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12080 run "$OFFWHEEL" --json smoke --all --site-packages "$T/ptx"
	[ "$status" -eq 3 ]
	[ "$(jq -r '.devices[0].libraries[0].status' <<<"$output")" = unsupported-ptx-version ]
	[ "$(jq -r '.devices[0].libraries[0].unsupported_ptx_version' <<<"$output")" -eq 2 ]
	# statically: no module runs, both because the driver cannot JIT their PTX
	[ "$(jq -r '.devices[0].libraries[0].static' <<<"$output")" = none ]
	[ "$(jq -r '.devices[0].libraries[0].static_ptx_too_new' <<<"$output")" -eq 2 ]
	[ "$(jq -r '.devices[0].libraries[0].disagree_with_static' <<<"$output")" -eq 0 ]
	OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12080 run "$OFFWHEEL" smoke --site-packages "$T/ptx"
	[[ $output == *"222 CUDA_ERROR_UNSUPPORTED_PTX_VERSION"* ]]
}

@test "sm_120-only library: 209 on 9.0, loads on 12.0 and 12.1, never on 10.0" {
	fake_site "$T/s120" 2.7.0+cu128 12.8 sm120_only.so
	for cc in 9.0:3 12.0:0 12.1:0 10.0:3; do
		OW_STANDIN_CC=${cc%:*} run "$OFFWHEEL" --json smoke --no-kernel --site-packages "$T/s120"
		[ "$status" -eq "${cc#*:}" ] || { echo "cc ${cc%:*}: exit $status"; false; }
		[ "$(jq -r '.devices[0].libraries[0].disagree_with_static' <<<"$output")" -eq 0 ]
	done
}

@test "several devices: each runs the kernel, one check per compute capability; --device picks one" {
	make_cu126
	OW_STANDIN_DEVICES=3 OW_STANDIN_CC=8.6,12.0,8.6 run "$OFFWHEEL" --json smoke --site-packages "$T/cu126"
	[ "$status" -eq 3 ]
	[ "$(jq '.devices | length' <<<"$output")" -eq 3 ]
	[ "$(jq '[.devices[].ok]' -c <<<"$output")" = '[true,false,true]' ]
	[ "$(jq '.devices[2].libraries_same_as' <<<"$output")" -eq 0 ]
	OW_STANDIN_DEVICES=3 OW_STANDIN_CC=8.6,12.0,8.6 run "$OFFWHEEL" --json smoke --device 2 --site-packages "$T/cu126"
	[ "$status" -eq 0 ]
	OW_STANDIN_DEVICES=3 run "$OFFWHEEL" smoke --device 5 --site-packages "$T/cu126"
	[ "$status" -eq 2 ]
}

@test "--python: the interpreter is asked where torch is (without importing it)" {
	make_cu128
	PYTHONPATH="$T/cu128" OW_STANDIN_CC=12.0 run "$OFFWHEEL" --json smoke --no-kernel --python python3
	[ "$status" -eq 0 ]
	[ "$(jq -r .install.site_packages <<<"$output")" = "$T/cu128" ]
	[[ "$(jq -r .install.python <<<"$output")" == 3.* ]]
	[ "$(jq -r .install.variant <<<"$output")" = cu128 ]
	run "$OFFWHEEL" smoke --python "$T/no-such-python"
	[ "$status" -ne 0 ]
	[[ $output == *"cannot run it"* ]]
}

@test "doctor without a GPU: static audit for --device, says what it could not check" {
	make_cu126
	OFFWHEEL_LIBCUDA="$T/missing.so" run "$OFFWHEEL" --json doctor --device 12.0 --site-packages "$T/cu126"
	[ "$status" -eq 3 ]
	[ "$(jq -r '.steps[0].state' <<<"$output")" = FAIL ]
	[ "$(jq -r '.steps[2].state' <<<"$output")" = "not checked" ]
	[ "$(jq -r '.steps[4].state' <<<"$output")" = FAIL ]
	[ "$(jq -r .fix.variant <<<"$output")" = cu128 ]
	# the images fit, but with no driver nothing ran: exit 5 (no GPU/driver), and said so
	OFFWHEEL_LIBCUDA="$T/missing.so" run "$OFFWHEEL" doctor --device 8.6 --site-packages "$T/cu126"
	echo "$output"
	[ "$status" -eq 5 ]
	[[ $output == *"[pass       ] images"* ]]
	[[ $output == *"has images for compute capability 8.6 (static audit), but the driver and the GPU were not checked"* ]]
	[[ $output == *"[not checked] smoke-kernel"* ]]
	OFFWHEEL_LIBCUDA="$T/missing.so" run "$OFFWHEEL" doctor --site-packages "$T/cu126"
	[ "$status" -eq 5 ]
	[[ $output == *"give --device CC"* ]]
	# two devices: each judged in turn; the set must run on both, and the
	# last line says it does not (exit 3: 12.0 cannot, over 8.6's unchecked 5)
	OFFWHEEL_LIBCUDA="$T/missing.so" run "$OFFWHEEL" doctor --device 8.6,12.0 --site-packages "$T/cu126"
	echo "$output"
	[ "$status" -eq 3 ]
	[[ $output == *"== for compute capability 8.6"* && $output == *"== for compute capability 12.0"* ]]
	[ "$(tail -n1 <<<"$output")" = "doctor: the installed set does NOT run on every device named (8.6, 12.0)" ]
	OFFWHEEL_LIBCUDA="$T/missing.so" run "$OFFWHEEL" --json doctor --device 8.6,12.0 --site-packages "$T/cu126"
	[ "$status" -eq 3 ]
	jq -e '.ok == false and .exit_code == 3 and .cc == "8.6"' <<<"$output"
	jq -e '[.devices[] | "\(.cc) \(.exit_code)"] == ["8.6 5", "12.0 3"] and .devices[1].fix.variant == "cu128"' <<<"$output"
}

@test "doctor: no stable build for 11.0 (Thor) -> the nightly channel" {
	make_cu126
	OFFWHEEL_LIBCUDA="$T/missing.so" run "$OFFWHEEL" --json doctor --device 11.0 --site-packages "$T/cu126"
	[ "$status" -eq 3 ]
	[ "$(jq -r .fix.channel <<<"$output")" = nightly ]
	[ "$(jq -r '.fix.commands[0].command' <<<"$output")" = "pip install --pre --index-url https://download.pytorch.org/whl/nightly/cu130 torch torchvision torchaudio" ]
}

@test "device-pack: offwheel and jq with their own libraries, for a GPU machine where nothing can be installed" {
	make_cu128
	OFFWHEEL="$OW_BUILD_DIR/offwheel" run "$OW_SOURCE_DIR/scripts/device-pack" "$T/pack"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# the wrappers resolve the bundled libraries, not the system's
	LD_LIBRARY_PATH="$T/pack/lib" ldd "$T/pack/real/offwheel" | grep -q "libarchive.so.13 => $T/pack/lib/"
	LD_LIBRARY_PATH="$T/pack/lib" ldd "$T/pack/real/jq" | grep -q "libjq.so.1 => $T/pack/lib/"
	! ls "$T/pack/lib" | grep -qE '^(libc|libm|ld-linux)'
	# the packed binary does the device check's work (on the stand-in driver here)
	OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12080 run env -i PATH=/usr/bin:/bin OFFWHEEL_LIBCUDA="$STANDIN" \
		OW_STANDIN_CC=12.0 OW_STANDIN_DRIVER=12080 "$T/pack/bin/offwheel" --json smoke --no-kernel --all \
		--site-packages "$T/cu128"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$("$T/pack/bin/jq" -r '.devices[0].cc' <<<"$output")" = "12.0" ]
}
