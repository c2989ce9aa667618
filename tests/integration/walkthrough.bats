#!/usr/bin/env bats
# The README's walk-through, run as written: its commands are read from
# README.md (tests/tools/readme_block.py), so the README cannot drift from
# what works.  The only changes: the stable channel is the sample index on
# loopback ($OFFWHEEL_PYTORCH_URL, the documented mirror setting; its CA via
# SSL_CERT_FILE), /media/usb is a temporary directory, <target> is this
# host's target, pip and python3 are a fresh venv's, and the GPU is the
# stand-in driver with compute capability 12.0.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export SRV=$(mktemp -d)
	mkdir -p "$SRV/www" "$SRV/www2"
	ow_start_nginx "$SRV/www"
	# one host for every file: the README's commands name no --allow-host
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV" --host "$OW_HTTPS_URL" \
		--host2 "$OW_HTTPS_URL" >/dev/null
	cp -a "$SRV/www2/." "$SRV/www/"
	export OW_HTTPS_URL OW_CA_FILE OW_NGINX_LOG OW_NGINX_DIR
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

@test "the README walk-through works as written" {
	cmds=$(python3 "$OW_SOURCE_DIR/tests/tools/readme_block.py" "$OW_SOURCE_DIR/README.md" "A walk through")
	[ "$(grep -c . <<<"$cmds")" -ge 6 ]
	T=$SRV/walk
	mkdir -p "$T/media/usb" "$T/work"
	python3 -m venv "$T/venv"
	py=$("$T/venv/bin/python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
	target="cu128-$py-manylinux_2_28_$(uname -m)"
	export OFFWHEEL_HOME=$T/ws OFFWHEEL_PYTORCH_URL=$OW_HTTPS_URL/whl SSL_CERT_FILE=$OW_CA_FILE
	export OFFWHEEL_LIBCUDA=$OW_BUILD_DIR/tests/standin/libcuda.so.1 OW_STANDIN_CC=12.0
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	offwheel() { "$OFFWHEEL" "$@"; }
	export -f offwheel
	export OFFWHEEL
	cd "$T/work"
	n=0
	while IFS= read -r cmd; do
		n=$((n + 1))
		cmd=${cmd//\/media\/usb/$T/media/usb}
		cmd=${cmd//<target>/$target}
		if [[ "$cmd" == *signify-openbsd* ]] && ! command -v signify-openbsd >/dev/null; then
			echo "skipped (no signify-openbsd): $cmd"
			continue
		fi
		echo "\$ $cmd"
		# pip and python3 are the target's venv
		run env PATH="$T/venv/bin:$PATH" bash -c "$cmd"
		echo "$output"
		[ "$status" -eq 0 ] || { echo "step $n failed with exit $status: $cmd"; false; }
	done <<<"$cmds"
	# the venv holds the set the stick was made for, and the stick checks out
	run "$T/venv/bin/python" -c 'import torch, torchvision, torchaudio; print(torch.__version__)'
	[ "$status" -eq 0 ]
	[[ "$output" == *+cu128 ]]
}
