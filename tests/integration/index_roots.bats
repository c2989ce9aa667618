#!/usr/bin/env bats
# Index shapes other than the PyTorch channel's {index}/{variant}/{project}/:
# a PyPI-shaped root (flat /simple/{project}/, pages as PEP 503 HTML and as
# PEP 691 JSON by content negotiation, PEP 658 files for some projects only,
# the wheels apart under /packages/<hash>/), a PyTorch variant folder given
# as the whole index (.../whl/cu130), extra indexes with pip's flag and uv's
# first-index rule (a hostile extra index that shadows filelock and torch),
# and unreachable roots.  All of it on the REAL metadata of torch 2.15.0 and
# its closure (scripts/real-metadata-index build --layout pypi, from the
# snapshot of PyPI), so the oracles are uv's closure on PyPI, uv and pip on
# the same served root.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

PYS=3.11,3.12,3.13
PLATS=linux-x86_64,linux-aarch64,windows-x86_64,macosx_14_0_arm64

# a tiny wheel NAME VERSION into DIR (its METADATA a real one's shape); prints
# its file name and sha256
tiny_wheel() {
	python3 - "$@" <<'EOF'
import base64, hashlib, io, os, sys, zipfile
name, version, d = sys.argv[1:4]
fn = f"{name}-{version}-py3-none-any.whl"
di = f"{name}-{version}.dist-info"
files = {f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
         f"{di}/WHEEL": "Wheel-Version: 1.0\nGenerator: evil\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(b.encode()).digest()).rstrip(b'=').decode()},{len(b)}\n"
              for p, b in files.items()) + f"{di}/RECORD,,\n"
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    for p, b in files.items():
        z.writestr(p, b)
    z.writestr(f"{di}/RECORD", rec)
os.makedirs(d, exist_ok=True)
open(os.path.join(d, fn), "wb").write(buf.getvalue())
print(fn, hashlib.sha256(buf.getvalue()).hexdigest())
EOF
}

setup_file() {
	export SRV=$(mktemp -d)
	export SNAP=$OW_SOURCE_DIR/tests/fixtures/real-metadata/snapshot.json
	"$OW_SOURCE_DIR/scripts/real-metadata-index" build "$SRV" --snapshot "$SNAP" --layout pypi >/dev/null
	"$OW_SOURCE_DIR/scripts/real-metadata-index" build "$SRV" --snapshot "$SNAP" >/dev/null # + whl/cu130/
	export EXP=$SRV/EXPECTED.json W=$SRV/www
	# a lab's primary root that lacks mpmath, a mirror that has it, and a
	# hostile extra index offering filelock 99.0, torch 99.0 and mpmath's page missing
	mkdir -p "$W/lab" "$W/mirror/simple" "$W/evil/simple"
	cp -r "$W/simple" "$W/lab/"
	rm -r "$W/lab/simple/mpmath"
	cp -r "$W/simple/mpmath" "$W/mirror/simple/"
	local p fn sha
	for p in filelock torch; do
		read -r fn sha < <(tiny_wheel "$p" 99.0 "$W/evil/files")
		mkdir -p "$W/evil/simple/$p"
		printf '<!DOCTYPE html><html><body><a href="/evil/files/%s#sha256=%s">%s</a></body></html>\n' \
			"$fn" "$sha" "$fn" >"$W/evil/simple/$p/index.html"
	done
	ow_start_nginx "$W"
	export OW_HTTP_URL OW_HTTP_PORT OW_HTTPS_URL OW_CA_FILE OW_NGINX_DIR OW_NGINX_LOG
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	export PIP_NO_CACHE_DIR=1 PIP_FIND_LINKS=
	export UVENV="${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests/uv-venv"
	# the 12 targets from the PyPI-shaped root, once, for several tests
	"$OFFWHEEL" --home "$SRV/ws" --json resolve --index-url "$OW_HTTP_URL/simple" --trusted-host 127.0.0.1 \
		--python "$PYS" --platform "$PLATS" >"$SRV/pypi.json" 2>"$SRV/pypi.err" || echo $? >"$SRV/pypi.rc"
	[ -f "$SRV/pypi.rc" ] || echo 0 >"$SRV/pypi.rc"
	cp "$OW_NGINX_LOG" "$SRV/pypi.log"
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

# closure of the target named python-platform (cp311-manylinux_2_28_x86_64) in --json FILE
ow_closure() { jq -r --arg t "$2" '.targets[] | select(.python + "-" + .platform == $t) | .members[] | "\(.project)==\(.version)"' "$1" | sort; }
exp_closure() { jq -r --arg t "$1" '.targets[$t][]' "$EXP" | sort; }
exp_targets() { jq -r '.targets | keys[]' "$EXP"; }
pins() { jq -r '.sets | to_entries[] | "\(.key)==\(.value)"' "$EXP"; }

# offwheel's --json FILE against oracle function ($2 NAME -> closure), every target
compare_all() {
	local ow=$1 oracle=$2 label=$3 t bad=()
	[ -s "$ow" ] || { echo "offwheel printed nothing"; return 1; }
	for t in $(exp_targets); do
		"$oracle" "$t" >"$BATS_TEST_TMPDIR/want.txt"
		ow_closure "$ow" "$t" >"$BATS_TEST_TMPDIR/got.txt"
		diff -u --label "$label $t" --label "offwheel $t" "$BATS_TEST_TMPDIR/want.txt" \
			"$BATS_TEST_TMPDIR/got.txt" || bad+=("$t")
	done
	[ "${#bad[@]}" -eq 0 ] || { echo "offwheel disagrees with $label on: ${bad[*]}"; return 1; }
}

need_uv() {
	if [ ! -x "$UVENV/bin/uv" ]; then
		rm -rf "$UVENV"
		{ python3 -m venv "$UVENV" && timeout 180 "$UVENV/bin/pip" install -q uv; } >/dev/null 2>&1 ||
			skip "uv is not in $UVENV and could not be installed from PyPI (no network?): the uv oracle did not run"
	fi
}

@test "a PyPI-shaped root: one root, all 12 targets equal uv's closure on PyPI, variants named from torch's requirements" {
	echo "exit $(cat "$SRV/pypi.rc")"; tail -3 "$SRV/pypi.err"
	[ "$(cat "$SRV/pypi.rc")" -eq 0 ]
	compare_all "$SRV/pypi.json" exp_closure "uv-on-PyPI"
	jq -e '.flat == true and (.targets | length) == 12' "$SRV/pypi.json"
	# PyPI's torch 2.15.0 names no +cuXYZ: its cuda-toolkit==13.2.2 (Linux only) names the variant
	[ "$(jq -r '[.targets[] | select(.platform | startswith("manylinux")) | "\(.variant)/\(.variant_from)"] | unique | join(" ")' "$SRV/pypi.json")" = "cu132/requirements" ]
	[ "$(jq -r '[.targets[] | select(.platform | startswith("manylinux") | not) | "\(.variant)/\(.variant_from)"] | unique | join(" ")' "$SRV/pypi.json")" = "cpu/requirements" ]
	jq -e '.targets[] | select(.target == "cu132 cp312-manylinux_2_28_x86_64")' "$SRV/pypi.json" >/dev/null
}

@test "the PyPI-shaped root is read as served: JSON pages where the server has them, HTML elsewhere, PEP 658 or ranges" {
	local json_pages html_pages
	# the default variant folders were asked for first (404), then the root's pages
	[ "$(grep -c '"GET /simple/cu130/torch/ HTTP/1.1" 404' "$SRV/pypi.log")" -eq 1 ]
	json_pages=$(grep -E '"GET /simple/[^/ ]+/ HTTP/1.1" 200' "$SRV/pypi.log" | grep -c 'ct="application/vnd.pypi.simple.v1+json"')
	html_pages=$(grep -E '"GET /simple/[^/ ]+/ HTTP/1.1" 200' "$SRV/pypi.log" | grep -c 'ct="text/html"')
	echo "pages: $json_pages JSON, $html_pages HTML"
	[ "$json_pages" -ge 10 ] && [ "$html_pages" -ge 10 ]
	[ "$((json_pages + html_pages))" -eq "$(ls "$W/simple" | grep -vc index.html)" ]
	# PEP 658 files where announced, the METADATA by ranges for the rest, no wheel whole
	[ "$(grep -c '\.metadata HTTP/1.1" 200' "$SRV/pypi.log")" -gt 0 ]
	[ "$(grep '\.whl HTTP/1.1" 206' "$SRV/pypi.log" | grep -c ' range="bytes=')" -gt 0 ]
	[ "$(grep '\.whl HTTP/1.1" 200' "$SRV/pypi.log" | wc -l)" -eq 0 ]
	# warm and offline: the same sets from the workspace
	run --separate-stderr "$OFFWHEEL" --home "$SRV/ws" --json resolve --offline --index-url "$OW_HTTP_URL/simple" \
		--python "$PYS" --platform "$PLATS"
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	echo "$output" >"$BATS_TEST_TMPDIR/warm.json"
	compare_all "$BATS_TEST_TMPDIR/warm.json" exp_closure "uv-on-PyPI"
	jq -e '.metadata_read == 0' "$BATS_TEST_TMPDIR/warm.json"
}

@test "uv and pip through the same plain PEP 503/691 root agree with offwheel" {
	need_uv
	local t py plat env=() bad=()
	pins >"$BATS_TEST_TMPDIR/req.in"
	for t in $(exp_targets); do
		py=$(jq -r --arg t "$t" '.platforms[$t].python' "$EXP")
		plat=$(jq -r --arg t "$t" '.platforms[$t].uv_python_platform' "$EXP")
		env=()
		[[ $t == *macosx* ]] && mapfile -t env < <(jq -r '.uv_macos_env | to_entries[] | "\(.key)=\(.value)"' "$EXP")
		env "${env[@]}" "$UVENV/bin/uv" pip compile -q --no-config --no-cache --no-python-downloads \
			--python-platform "$plat" --python-version "$py" --index-url "$OW_HTTP_URL/simple" \
			--allow-insecure-host 127.0.0.1 --only-binary :all: --no-header --no-annotate \
			"$BATS_TEST_TMPDIR/req.in" | sort >"$BATS_TEST_TMPDIR/uv-$t.txt"
		diff -u --label "uv $t" --label "offwheel $t" "$BATS_TEST_TMPDIR/uv-$t.txt" \
			<(ow_closure "$SRV/pypi.json" "$t") || bad+=("$t")
	done
	[ "${#bad[@]}" -eq 0 ] || { echo "uv on the root disagrees with offwheel on: ${bad[*]}"; false; }
	# pip for the host's own target, when it is one of the 12
	py=$(python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
	t=$py-manylinux_2_28_x86_64
	if [ "$(uname -m)" = x86_64 ] && jq -e --arg t "$t" '.targets | has($t)' "$EXP" >/dev/null &&
		python3 -c 'from importlib.metadata import version; import sys; sys.exit(tuple(map(int, version("pip").split(".")[:2])) < (23, 1))'; then
		python3 -m pip install --dry-run --ignore-installed --quiet --only-binary=:all: \
			--report "$BATS_TEST_TMPDIR/pip.json" --index-url "$OW_HTTP_URL/simple" \
			--trusted-host 127.0.0.1 -r "$BATS_TEST_TMPDIR/req.in"
		python3 -c '
import json, re, sys
for i in json.load(open(sys.argv[1]))["install"]:
    print(re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower() + "==" + i["metadata"]["version"])' \
			"$BATS_TEST_TMPDIR/pip.json" | sort >"$BATS_TEST_TMPDIR/pip.txt"
		diff -u --label "pip $t" --label "offwheel $t" "$BATS_TEST_TMPDIR/pip.txt" <(ow_closure "$SRV/pypi.json" "$t")
	else
		echo "# pip oracle not run: the host ($(uname -m), $py, pip $(python3 -m pip --version | cut -d' ' -f2)) is none of the 12 targets or pip < 23.1" >&3
	fi
}

@test "--index-url .../whl/cu130 is the whole index: one root, its variant from the URL" {
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json resolve --index-url "$OW_HTTP_URL/whl/cu130" \
		--trusted-host 127.0.0.1 --python "$PYS" --platform "$PLATS"
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	echo "$output" >"$BATS_TEST_TMPDIR/v.json"
	compare_all "$BATS_TEST_TMPDIR/v.json" exp_closure "uv-on-PyPI"
	[ "$(jq -r '[.targets[] | "\(.variant)/\(.variant_from)"] | unique | join(" ")' "$BATS_TEST_TMPDIR/v.json")" = "cu130/root" ]
	jq -e '.flat == true and ([.targets[] | select(.target == "cu130 cp311-win_amd64")] | length) == 1' "$BATS_TEST_TMPDIR/v.json"
	# no folder below it was asked for: pip's --index-url reads {index}/{project}/ only
	[ "$(ow_nginx_log_count '"GET /whl/cu130/cu1[0-9]+/')" -eq 0 ]
}

@test "crawl of a root without variant folders crawls its project pages, and says so" {
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" crawl --index-url "$OW_HTTP_URL/simple" \
		--trusted-host 127.0.0.1
	[ "$status" -eq 0 ] || { echo "$stderr $output"; false; }
	[[ $output == *"has no folder for any default variant: crawling it as one root"* ]]
	run "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json ls pages
	[ "$(jq -r '[.pages[] | select(.status != "missing") | .url | sub(".*/simple/"; "")] | sort | join(" ")' <<<"$output")" = "torch/ torchaudio/ torchvision/" ]
}

@test "--cuda on a root without variant folders: exit 4, saying the index has none and how its variant is chosen" {
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" resolve --index-url "$OW_HTTP_URL/simple" \
		--trusted-host 127.0.0.1 --cuda 12.8 --python 3.12 --platform linux-x86_64 --no-deps
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"no page at $OW_HTTP_URL/simple/cu128/torch/ (HTTP 404); this index has no variant folders: it is one root"* ]]
	[[ $output == *"leave --variant/--cuda out to read it so, or use a PyTorch variant root such as --index-url https://download.pytorch.org/whl/cu128"* ]]
}

@test "extra indexes: a dependency the index lacks comes from the first extra that has it; a hostile extra shadows nothing" {
	: >"$OW_NGINX_LOG"
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" --json resolve --index-url "$OW_HTTP_URL/lab/simple" \
		--extra-index-url "$OW_HTTP_URL/evil/simple" --extra-index-url "$OW_HTTP_URL/mirror/simple/" \
		--trusted-host 127.0.0.1 --python "$PYS" --platform "$PLATS"
	[ "$status" -eq 0 ] || { echo "$stderr"; false; }
	echo "$output" >"$BATS_TEST_TMPDIR/x.json"
	# the closures are PyPI's: filelock 99.0 and torch 99.0 of the hostile index never taken
	compare_all "$BATS_TEST_TMPDIR/x.json" exp_closure "uv-on-PyPI"
	! grep -q '99\.0' <(jq -r '.targets[].members[].version' "$BATS_TEST_TMPDIR/x.json")
	jq -e '.extra_index_urls == ["'"$OW_HTTP_URL"'/evil/simple", "'"$OW_HTTP_URL"'/mirror/simple"]' "$BATS_TEST_TMPDIR/x.json"
	# mpmath: the lab's 404, the hostile index's 404, then the mirror's page and file
	grep -q '"GET /lab/simple/mpmath/ HTTP/1.1" 404' "$OW_NGINX_LOG"
	grep -q '"GET /evil/simple/mpmath/ HTTP/1.1" 404' "$OW_NGINX_LOG"
	grep -q '"GET /mirror/simple/mpmath/ HTTP/1.1" 200' "$OW_NGINX_LOG"
	jq -e '[.targets[].members[] | select(.project == "mpmath") | .url | test("/packages/")] | all and length > 0' "$BATS_TEST_TMPDIR/x.json"
	# the projects the lab has were never asked of an extra index
	[ "$(ow_nginx_log_count '"GET /(evil|mirror)/simple/(filelock|torch|torchvision|torchaudio|sympy)/')" -eq 0 ]
	# uv, given the same roots in the same order and its default first-index
	# strategy, agrees.  (uv ranks its --extra-index-url ABOVE --index-url;
	# offwheel asks the index first, so the order is spelled with --index,
	# highest first, and --default-index, the last.)
	need_uv
	pins >"$BATS_TEST_TMPDIR/req.in"
	"$UVENV/bin/uv" pip compile -q --no-config --no-cache --no-python-downloads --python-platform x86_64-manylinux_2_28 \
		--python-version 3.12 --index "$OW_HTTP_URL/lab/simple" --index "$OW_HTTP_URL/evil/simple" \
		--default-index "$OW_HTTP_URL/mirror/simple" --allow-insecure-host 127.0.0.1 --only-binary :all: \
		--no-header --no-annotate "$BATS_TEST_TMPDIR/req.in" | sort >"$BATS_TEST_TMPDIR/uv.txt"
	diff -u --label uv --label offwheel "$BATS_TEST_TMPDIR/uv.txt" <(ow_closure "$BATS_TEST_TMPDIR/x.json" cp312-manylinux_2_28_x86_64)
}

@test "unreachable roots: exit 4 naming the host and the cause, for the index and for an extra index" {
	local dead
	dead=$(ow_free_port)
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" resolve --index-url "http://127.0.0.1:$dead/simple" \
		--trusted-host "127.0.0.1:$dead" --python 3.12 --platform linux-x86_64
	echo "$output $stderr"
	[ "$status" -eq 4 ]
	[[ "$output $stderr" == *"127.0.0.1"*"$dead"* ]]
	[[ "$output $stderr" == *[Cc]onnect* || "$output $stderr" == *refused* ]]
	[[ "$output $stderr" != *"no torch wheel fits"* ]]
	# the index answers, the one extra index that would have mpmath does not
	run --separate-stderr "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws2" resolve --index-url "$OW_HTTP_URL/lab/simple" \
		--extra-index-url "http://127.0.0.1:$dead/simple" --trusted-host 127.0.0.1 --trusted-host "127.0.0.1:$dead" \
		--python 3.12 --platform linux-x86_64
	echo "$output $stderr"
	[ "$status" -eq 4 ]
	[[ "$output $stderr" == *"127.0.0.1:$dead/simple/mpmath/"* ]]
}

@test "sync + export from the PyPI-shaped root, then pip install --no-index --require-hashes of the stick" {
	py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	t=cp${py/./}-manylinux_2_28_x86_64
	jq -e --arg t "$t" '.targets | has($t)' "$EXP" >/dev/null || skip "host python $py is not one of the snapshot's (3.11-3.13)"
	[ "$(uname -m)" = x86_64 ] || skip "pip on $(uname -m) cannot install the manylinux x86_64 wheels"
	ws=$BATS_TEST_TMPDIR/ws
	run --separate-stderr "$OFFWHEEL" --home "$ws" sync --index-url "$OW_HTTP_URL/simple" --trusted-host 127.0.0.1 \
		--python "$py" --platform manylinux_2_28_x86_64
	echo "sync exit $status; $output $stderr" | tail -5
	[ "$status" -eq 0 ]
	"$OFFWHEEL" keygen "$BATS_TEST_TMPDIR/k.sec" >/dev/null
	"$OFFWHEEL" --home "$ws" -q export "$BATS_TEST_TMPDIR/stick" --target "cu132 $t" --sign "$BATS_TEST_TMPDIR/k.sec"
	[ -f "$BATS_TEST_TMPDIR/stick/requirements/cu132-$t.txt" ]
	mapfile -t cmds < <(sed -n 's/^    //p' "$BATS_TEST_TMPDIR/stick/INSTALL.txt" | grep -E '^pip install --no-index --find-links wheels ')
	[ "${#cmds[@]}" -eq 1 ]
	python3 -m venv "$BATS_TEST_TMPDIR/v"
	run bash -c "cd '$BATS_TEST_TMPDIR/stick' && PATH='$BATS_TEST_TMPDIR/v/bin':\$PATH && ${cmds[0]} -q"
	[ "$status" -eq 0 ] || { echo "${cmds[0]}: $output"; false; }
	"$BATS_TEST_TMPDIR/v/bin/pip" list --format freeze 2>/dev/null >"$BATS_TEST_TMPDIR/installed.txt"
	grep -qx 'torch==2.15.0' "$BATS_TEST_TMPDIR/installed.txt"
	grep -qx 'cuda-toolkit==13.2.2' "$BATS_TEST_TMPDIR/installed.txt"
	run "$BATS_TEST_TMPDIR/v/bin/pip" check
	[ "$status" -eq 0 ] || { echo "pip check: $output"; false; }
}
