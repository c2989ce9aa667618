#!/usr/bin/env bats
# A real devpi-server (from PyPI, in a venv of the test cache) as the index:
# its /+simple/ pages link every file as "../../+f/<hash>/<file>#sha256=..."
# (HTML) and answer PEP 691 JSON with the same relative urls.  offwheel must
# read them as pip does (the link rule, docs/index-quirks.md): crawl lists the
# files, resolve takes pip's closure through the same root, sync stores it and
# the export installs with pip --no-index.  The wheels are the sample index's
# cpu folder (tests/tools/make-fixture-index), uploaded with devpi-client.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

# make (once) or check the venv $DVENV with devpi-server and devpi-client; a
# reason on stdout when they cannot be had
devpi_tools() {
	local ext=${DVENV%/*}
	if [ -x "$DVENV/bin/devpi-server" ] && [ -x "$DVENV/bin/devpi" ] &&
		"$DVENV/bin/devpi-server" --version >/dev/null 2>&1; then
		return 0
	fi
	if ! curl -sf --max-time 10 -o /dev/null https://pypi.org/simple/devpi-server/; then
		echo "PyPI is not reachable: devpi-server cannot be installed, the devpi tests did not run"
		return 0
	fi
	mkdir -p "$ext"
	rm -rf "$DVENV"
	if python3 -m venv "$DVENV" >/dev/null 2>&1 &&
		PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 \
			timeout 900 "$DVENV/bin/python" -m pip install -q devpi-server devpi-client \
			>"$ext/devpi-venv.log" 2>&1 && "$DVENV/bin/devpi-server" --version >/dev/null 2>&1; then
		return 0
	fi
	rm -rf "$DVENV"
	echo "cannot install devpi-server and devpi-client from PyPI into $DVENV (see $ext/devpi-venv.log)"
}

# the wheels the sample index's cpu pages link, copied into DIR
cpu_wheels() { # WWW DIR
	python3 - "$1" "$2" <<'EOF'
import glob, os, re, shutil, sys, urllib.parse
www, out = sys.argv[1:3]
os.makedirs(out, exist_ok=True)
for page in glob.glob(f"{www}/whl/cpu/*/index.html"):
    for href in re.findall(r'href="([^"]*)"', open(page).read()):
        src = www + urllib.parse.unquote(urllib.parse.urlsplit(href).path)
        if src.endswith(".whl"):
            shutil.copy(src, os.path.join(out, os.path.basename(src)))
EOF
}

devpi_logs() {
	echo "--- devpi-server log (tail)"
	tail -30 "$SRV/devpi.log" 2>/dev/null
	echo "--- devpi client log (tail)"
	tail -30 "$SRV/client.log" 2>/dev/null
}

# devpi-server up and answering, within a time budget
devpi_wait() {
	local i
	for i in $(seq 150); do # 30 s
		curl -sf --max-time 2 -o /dev/null "$DEVPI/+api" && return 0
		kill -0 "$(cat "$SRV/devpi.pid")" 2>/dev/null || break
		sleep 0.2
	done
	echo "devpi-server did not answer on $DEVPI within 30 s"
	devpi_logs
	return 1
}

setup_file() {
	export SRV=$(mktemp -d)
	export DVENV=${OW_EXT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests}/devpi-venv
	export DSKIP=$(devpi_tools)
	[ -z "$DSKIP" ] || return 0
	"$OW_SOURCE_DIR/tests/tools/make-fixture-index" "$SRV/fx" >/dev/null
	cpu_wheels "$SRV/fx/www" "$SRV/up"
	local port
	port=$(ow_free_port)
	export DEVPI=http://127.0.0.1:$port DEVPI_CLIENTDIR=$SRV/client
	"$DVENV/bin/devpi-init" --serverdir "$SRV/d" >"$SRV/devpi.log" 2>&1
	"$DVENV/bin/devpi-server" --serverdir "$SRV/d" --host 127.0.0.1 --port "$port" \
		--offline-mode >>"$SRV/devpi.log" 2>&1 &
	echo $! >"$SRV/devpi.pid"
	devpi_wait
	{
		"$DVENV/bin/devpi" use "$DEVPI" &&
			"$DVENV/bin/devpi" login root --password '' &&
			"$DVENV/bin/devpi" index -c lab bases= volatile=True &&
			"$DVENV/bin/devpi" use root/lab &&
			"$DVENV/bin/devpi" upload --from-dir "$SRV/up"
	} >"$SRV/client.log" 2>&1 || { devpi_logs; return 1; }
	export ROOT=$DEVPI/root/lab/+simple HOSTPORT=127.0.0.1:$port
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	export PIP_NO_CACHE_DIR=1 PIP_FIND_LINKS=
	export HOSTPY=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
}

teardown_file() {
	[ -f "$SRV/devpi.pid" ] && kill "$(cat "$SRV/devpi.pid")" 2>/dev/null
	[ -f "$SRV/ex-nginx/nginx.pid" ] && kill "$(cat "$SRV/ex-nginx/nginx.pid")" 2>/dev/null
	rm -rf "$SRV"
}

setup() {
	[ -z "$DSKIP" ] || skip "$DSKIP"
}

ow() { "$OFFWHEEL" --home "$SRV/ws" "$@"; }

# name==version of every member of the first target of a --json resolve FILE
closure() { jq -r '.targets[0].members[] | "\(.project)==\(.version)"' "$1" | sort; }

@test "devpi serves its files as ../../+f/ links, in HTML and in PEP 691 JSON" {
	curl -sf "$ROOT/filelock/" | grep -q 'href="\.\./\.\./+f/[0-9a-f]*/[0-9a-f]*/filelock-3\.19\.1-py3-none-any\.whl#sha256='
	curl -sf -H 'Accept: application/vnd.pypi.simple.v1+json' "$ROOT/filelock/" |
		jq -e '.files[] | select(.filename == "filelock-3.19.1-py3-none-any.whl") | .url | startswith("../../+f/")'
}

@test "crawl through devpi lists every uploaded wheel of the page, none rejected" {
	run ow --json crawl --index-url "$ROOT" --trusted-host "$HOSTPORT" --variant all \
		--project torch,filelock
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	echo "$output" | jq -c '.pages[] | {url, files, rejected, rejected_reasons}'
	[ "$(jq '[.pages[].rejected] | add' <<<"$output")" -eq 0 ]
	[ "$(jq '.pages[] | select(.url | endswith("/filelock/")) | .files' <<<"$output")" -eq "$(ls "$SRV/up"/filelock-*.whl | wc -l)" ]
	[ "$(jq '.pages[] | select(.url | endswith("/torch/")) | .files' <<<"$output")" -eq "$(ls "$SRV/up"/torch-*.whl | wc -l)" ]
	run ow --json ls files --project filelock
	jq -e --arg r "$DEVPI/root/lab/+f/" '[.files[] | select(.url | startswith($r))] | length == 2' <<<"$output"
}

@test "resolve through devpi takes pip's closure through the same root" {
	ow --json resolve --index-url "$ROOT" --trusted-host "$HOSTPORT" --python "$HOSTPY" \
		--platform linux-x86_64 >"$BATS_TEST_TMPDIR/r.json" || { cat "$BATS_TEST_TMPDIR/r.json"; false; }
	jq -e '.targets[0].complete and .links_rejected == 0' "$BATS_TEST_TMPDIR/r.json"
	[ "$(uname -m)" = x86_64 ] || skip "pip's closure is taken for this machine's own target, and this is not x86_64"
	jq -r '.targets[0].versions | to_entries[] | "\(.key)==\(.value)"' "$BATS_TEST_TMPDIR/r.json" \
		>"$BATS_TEST_TMPDIR/req.in"
	python3 -m pip install --dry-run --ignore-installed --quiet --only-binary=:all: \
		--report "$BATS_TEST_TMPDIR/pip.json" --index-url "$ROOT/" --trusted-host "$HOSTPORT" \
		-r "$BATS_TEST_TMPDIR/req.in"
	python3 -c '
import json, re, sys
for i in json.load(open(sys.argv[1]))["install"]:
    print(re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower() + "==" + i["metadata"]["version"])' \
		"$BATS_TEST_TMPDIR/pip.json" | sort >"$BATS_TEST_TMPDIR/pip.txt"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/pip.txt")" -gt 5 ]
	diff -u --label pip --label offwheel "$BATS_TEST_TMPDIR/pip.txt" <(closure "$BATS_TEST_TMPDIR/r.json")
}

@test "sync through devpi stores the set; its export installs with pip --no-index; offwheel reads the export over HTTP" {
	run ow --json sync --index-url "$ROOT" --trusted-host "$HOSTPORT" --python "$HOSTPY" \
		--platform linux-x86_64
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	jq -e '.complete and .resolve.links_rejected == 0' <<<"$output"
	closure <(jq '.resolve' <<<"$output") >"$BATS_TEST_TMPDIR/set.txt"
	target=$(jq -r '.resolve.targets[0].target' <<<"$output")
	ow -q export "$SRV/ex" --target "$target" --nginx-conf "$SRV/ex.nginx.conf"
	[ "$(uname -m)" = x86_64 ] || skip "the export's wheels are for x86_64 Linux, this machine is not"
	python3 -m venv "$BATS_TEST_TMPDIR/v"
	"$BATS_TEST_TMPDIR/v/bin/pip" install -q --no-index --find-links "$SRV/ex/wheels" \
		-r "$SRV/ex/requirements/${target// /-}.txt"
	"$BATS_TEST_TMPDIR/v/bin/pip" list 2>/dev/null | grep -q '^torch .*+cpu'
	# the export's own pages link ../../wheels/<file>: served by nginx, offwheel
	# crawls and resolves them to the same set
	local d=$SRV/ex-nginx port
	mkdir -p "$d"
	port=$(ow_free_port)
	sed "s/listen 8080;/listen 127.0.0.1:$port;/" "$SRV/ex.nginx.conf" >"$d/server.conf"
	ow_nginx_serve "$d" "$port"
	"$OFFWHEEL" --home "$SRV/ws2" --json resolve --index-url "http://127.0.0.1:$port/simple" \
		--trusted-host "127.0.0.1:$port" --python "$HOSTPY" --platform linux-x86_64 \
		>"$BATS_TEST_TMPDIR/r2.json" || { cat "$BATS_TEST_TMPDIR/r2.json"; false; }
	jq -e '.links_rejected == 0' "$BATS_TEST_TMPDIR/r2.json"
	diff -u --label devpi --label export "$BATS_TEST_TMPDIR/set.txt" <(closure "$BATS_TEST_TMPDIR/r2.json")
	"$OFFWHEEL" --home "$SRV/ws2" --json ls files | jq -e --arg w "http://127.0.0.1:$port/wheels/" \
		'[.files[] | select(.url | startswith($w) | not)] | length == 0'
}
