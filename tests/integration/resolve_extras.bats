#!/usr/bin/env bats
# Extras, build tags and where dependency pages are looked up, on a tiny
# index (tests/tools/mkextras_index.py says what each case is), with pip (the
# host) and uv (a Windows target) as oracles: extras asked of a dependency
# and of a set member, transitive, with markers, in two spellings (PEP 685),
# a substring that is not the extra; a build-tagged rebuild over the plain
# file; dependencies under the variant folder first, the channel root only
# when the variant folder has no page, and a page missing in both reported
# per target; torchvision and torchaudio a dependency of an extra index's
# project asks for taken from the primary only, never from that extra.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

setup_file() {
	export SRV=$(mktemp -d)
	python3 "$OW_SOURCE_DIR/tests/tools/mkextras_index.py" "$SRV/www"
	ow_start_nginx "$SRV/www"
	export OW_HTTP_URL OW_HTTP_PORT OW_NGINX_LOG OW_NGINX_DIR
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	export PIP_NO_CACHE_DIR=1 PIP_FIND_LINKS=
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

ow_res() { # variant, project list, extra options...
	local v=$1 p=$2
	shift 2
	"$OFFWHEEL" --home "$SRV/ws" --json resolve --index-url "$OW_HTTP_URL/whl" \
		--trusted-host "127.0.0.1:$OW_HTTP_PORT" --variant "$v" --project "$p" --python 3.11 "$@"
}

members() { jq -r '.targets[0].members[] | "\(.project)==\(.version)"' | sort; }

@test "extras: asked of a dependency and of torch, transitive, with markers and PEP 685 names" {
	run ow_res cu130 'torch[opt]' --platform linux-x86_64
	echo "$output"
	[ "$status" -eq 0 ]
	got=$(echo "$output" | members | tr '\n' ' ')
	want="bdep==1.0 blas==1.0 built2==1.0 deeper==1.0 dep==1.0 leaf==1.0 lib==1.0 mdep==1.0 optdep==1.0 torch==2.10.0 vdep==1.0 "
	[ "$got" = "$want" ] || { echo "got:  $got"; echo "want: $want"; false; }
}

@test "build tag: the rebuilt torch-2.10.0-2 file is the one chosen" {
	run ow_res cu130 torch --platform linux-x86_64 --no-deps
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r '.targets[0].members[0].filename')" = torch-2.10.0-2-py3-none-any.whl ]
}

@test "pip agrees on the host target (extras, build tag, variant folder first)" {
	[ -z "${OW_PIP_TOO_OLD:-}" ] || skip "pip < 23.3 (no PEP 685 extra names) and PyPI out of reach for a newer one"
	python3 -c 'from importlib.metadata import version; import sys; sys.exit(tuple(map(int, version("pip").split(".")[:2])) < (23, 3))' ||
		skip "pip $(python3 -m pip --version | cut -d" " -f2) is older than 23.3 and compares extra names unnormalized (PEP 685); scripts/test provides a current one"
	py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	"$OFFWHEEL" --home "$SRV/ws" --json resolve --index-url "$OW_HTTP_URL/whl" \
		--trusted-host "127.0.0.1:$OW_HTTP_PORT" --variant cu130 --project 'torch[opt]' \
		--python "$py" | members >"$SRV/ow.txt"
	python3 -m pip install --dry-run --ignore-installed --quiet --only-binary=:all: \
		--report "$SRV/pip.json" --index-url "$OW_HTTP_URL/whl/cu130" \
		--trusted-host 127.0.0.1 'torch[opt]==2.10.0'
	jq -r '.install[] | "\(.metadata.name)==\(.metadata.version)"' "$SRV/pip.json" | sort >"$SRV/pip.txt"
	diff -u "$SRV/pip.txt" "$SRV/ow.txt"
	jq -e '.install[] | select(.metadata.name == "torch") | .download_info.url | endswith("torch-2.10.0-2-py3-none-any.whl")' "$SRV/pip.json"
	[ "$(wc -l <"$SRV/ow.txt")" -eq 11 ]
}

@test "uv agrees on a Windows target (the Linux-only extra lines drop out)" {
	uvenv="${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests/uv-venv"
	if [ ! -x "$uvenv/bin/uv" ]; then
		rm -rf "$uvenv"
		{ python3 -m venv "$uvenv" && timeout 180 "$uvenv/bin/pip" install -q uv; } >/dev/null 2>&1 ||
			skip "uv could not be installed from PyPI (no network?)"
	fi
	run ow_res cu130 'torch[opt]' --platform windows-x86_64
	[ "$status" -eq 0 ]
	echo "$output" | members >"$SRV/ow.txt"
	echo 'torch[opt]==2.10.0' >"$SRV/req.in"
	"$uvenv/bin/uv" pip compile -q --no-cache --python-platform x86_64-pc-windows-msvc \
		--python-version 3.11 --index-url "$OW_HTTP_URL/whl/cu130" --allow-insecure-host 127.0.0.1 \
		--only-binary :all: --no-header --no-annotate "$SRV/req.in" | sort >"$SRV/uv.txt"
	diff -u "$SRV/uv.txt" "$SRV/ow.txt"
	grep -qx 'windep==1.0' "$SRV/ow.txt"
	! grep -q '^leaf==\|^mdep==' "$SRV/ow.txt"
}

@test "a dependency with no page under the variant folder is taken from the channel root" {
	run ow_res cu126 torch --platform linux-x86_64
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | members | tr '\n' ' ')" = "rootonly==1.0 torch==2.10.0 " ]
}

@test "a dependency on no page at all: that target is incomplete (exit 4) and says where it looked" {
	run ow_res cu124,cu130 torch --platform linux-x86_64
	echo "$output"
	[ "$status" -eq 4 ]
	err=$(echo "$output" | jq -r '.targets[] | select(.variant == "cu124") | .error')
	[[ "$err" == "filelock (required by torch 2.10.0): no page at $OW_HTTP_URL/whl/cu124/filelock/ (HTTP 404) nor at $OW_HTTP_URL/whl/filelock/ (HTTP 404)" ]]
	echo "$output" | jq -e '.targets[] | select(.variant == "cu130") | .complete'
}

@test "torchvision and torchaudio a dependency asks for (any spelling) come only from --index-url, never from an extra index" {
	: >"$OW_NGINX_LOG"
	run ow_res cu117 torch --platform linux-x86_64 --extra-index-url "$OW_HTTP_URL/extra"
	echo "$output"
	[ "$status" -eq 0 ]
	got=$(echo "$output" | members | tr '\n' ' ')
	[ "$got" = "filelock==3.0 torch==2.10.0 torchaudio==2.10.0 torchvision==0.25.0 " ] || { echo "got: $got"; false; }
	grep -q '"GET /extra/filelock/ HTTP/1.1" 200' "$OW_NGINX_LOG"
	[ "$(ow_nginx_log_count '"GET /extra/(torchvision|torchaudio)/')" -eq 0 ]
	# the primary has no torchvision at all: incomplete, never the extra's 99.0
	run ow_res cu116 torch --platform linux-x86_64 --extra-index-url "$OW_HTTP_URL/extra"
	echo "$output"
	[ "$status" -eq 4 ]
	err=$(echo "$output" | jq -r '.targets[0].error')
	[[ "$err" == "torchvision (required by torch 2.10.0 -> filelock 3.0): no page at $OW_HTTP_URL/whl/cu116/torchvision/ (HTTP 404) nor at $OW_HTTP_URL/whl/torchvision/ (HTTP 404); torchvision is only taken from --index-url, never from an extra index" ]]
	! grep -q '99\.0' <(echo "$output" | jq -r '.targets[].members[]?.version')
	[ "$(ow_nginx_log_count '"GET /extra/(torchvision|torchaudio)/')" -eq 0 ]
}

@test "METADATA over the Requires-Dist cap (2,000) is refused naming the file and the cap, quickly for 700,000 lines" {
	for v in cu199 cu198; do
		SECONDS=0
		run ow_res "$v" torch --platform linux-x86_64
		echo "$v: $SECONDS s: $output"
		[ "$status" -eq 4 ]
		[ "$SECONDS" -lt 20 ]
		cap="METADATA line 2004: more than 2000 Requires-Dist lines"
		[[ "$output" == *"warning: bigdep-1.0-py3-none-any.whl: unusable metadata: $cap"* ]]
		err=$(echo "$output" | sed -n '/^{/,$p' | jq -r '.targets[0].error')
		[[ "$err" == "bigdep-1.0-py3-none-any.whl: $cap"* ]]
	done
}

@test "a newer torch only for a newer macOS is named, with the --platform that takes it" {
	run ow_res cpu torch --platform macos-arm64
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r '.targets[0].versions.torch')" = 2.11.0 ]
	[ "$(echo "$output" | jq -r '.targets[0].hint')" = "torch 2.15.0 needs macOS 14.0 (macosx_14_0 wheels; this target is macosx_11_0): try --platform macosx_14_0_arm64" ]
	run ow_res cpu torch --platform macosx_14_0_arm64
	[ "$(echo "$output" | jq -r '.targets[0].versions.torch')" = 2.15.0 ]
	[ "$(echo "$output" | jq -r '.targets[0].hint')" = null ]
	run "$OFFWHEEL" --home "$SRV/ws" resolve --index-url "$OW_HTTP_URL/whl" --trusted-host "127.0.0.1:$OW_HTTP_PORT" \
		--variant cpu --project torch --python 3.11 --platform macos-arm64
	[[ "$output" == *"try --platform macosx_14_0_arm64"* ]]
}

@test "pairing: the torchvision released for torch by default, pip's newest with --pair newest (pip agrees)" {
	tv() { jq -r '.targets[0].versions.torchvision' <<<"$output"; }
	run ow_res cu128 torch,torchvision --version 2.14.0 --no-deps
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(tv)" = 0.29.0 ]
	[ "$(jq -r .selector <<<"$output")" = version:2.14.0 ]
	run ow_res cu128 torch,torchvision --version 2.14.0 --no-deps --pair newest
	[ "$status" -eq 0 ]
	[ "$(tv)" = 0.29.2 ]
	[ "$(jq -r .selector <<<"$output")" = version:2.14.0,pair:newest ]
	python3 -m pip install --dry-run --ignore-installed --quiet --only-binary=:all: \
		--report "$SRV/pair.json" --index-url "$OW_HTTP_URL/whl/cu128" \
		--trusted-host 127.0.0.1 torch==2.14.0 torchvision
	[ "$(jq -r '.install[] | select(.metadata.name == "torchvision") | .metadata.version' "$SRV/pair.json")" = 0.29.2 ]
	# the newest torch: both rules give the newest torchvision
	run ow_res cu128 torch,torchvision --no-deps
	[ "$(jq -r '.targets[0].versions.torch' <<<"$output")" = 2.15.0 ]
	[ "$(tv)" = 0.29.2 ]
	run ow_res cu128 torch,torchvision --pair oldest
	[ "$status" -eq 2 ]
	[[ "$output" == *"--pair: 'oldest' is not matched or newest"* ]]
}

@test "--project NAME[...] that is malformed, and --channel with --index-url, are usage errors" {
	run ow_res cu130 'torch[opt'
	[ "$status" -eq 2 ]
	[[ "$output" == *"'torch[opt' is not NAME or NAME[EXTRA,...]"* ]]
	run "$OFFWHEEL" --home "$SRV/ws" resolve --channel stable --index-url "$OW_HTTP_URL/whl" --variant cu130
	[ "$status" -eq 2 ]
	[[ "$output" == *"give one of them"* ]]
}
