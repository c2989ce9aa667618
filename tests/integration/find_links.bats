#!/usr/bin/env bats
# pip's --find-links and --no-index (docs/find-links.md), with REAL wheels
# from PyPI (jinja2, MarkupSafe, filelock and typing_extensions, fetched once
# with pip into ${XDG_CACHE_HOME:-~/.cache}/offwheel-tests/find-links-files;
# skipped with a message when PyPI cannot be reached) beside three tiny torch
# wheels made here (tests/tools/mktorch_wheel.py): 2.10.0 is for cp312 only,
# 2.9.0 pins typing-extensions below the newest, 2.8.0 is older.
# The same files lie in a local directory and in a folder that a real nginx
# lists with `autoindex on`, which cuts the link text of the MarkupSafe
# wheel (its name is 75 bytes) to 50 characters and "..&gt;".  pip is the
# oracle: `pip install --no-index --find-links ... --dry-run --report` with
# the target's --python-version/--platform and --only-binary=:all:.

bats_require_minimum_version 1.5.0

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

FILES_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests/find-links-files"
REAL="jinja2==3.1.4 MarkupSafe==3.0.2 filelock==3.16.1 typing_extensions==4.12.2 typing_extensions==4.11.0"
TAG=cp311-cp311-manylinux_2_28_x86_64
# what offwheel's linux-x86_64 (manylinux_2_28) admits, as pip's options
PLATFORMS="--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64"
LONG=MarkupSafe-3.0.2-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl

fetch_files() { # the real wheels, once
	[ -f "$FILES_CACHE/.complete" ] && return 0
	mkdir -p "$FILES_CACHE"
	local w
	for w in $REAL; do # one at a time: two typing_extensions versions
		timeout 120 python3 -m pip download -q --no-deps --only-binary :all: --python-version 3.11 \
			$PLATFORMS -d "$FILES_CACHE" "$w" || return 1
	done
	touch "$FILES_CACHE/.complete"
}

# DIR: the real wheels and the three torches
fill() {
	mkdir -p "$1"
	cp "$FILES_CACHE"/*.whl "$1/"
	python3 "$OW_SOURCE_DIR/tests/tools/mktorch_wheel.py" "$1" 2.10.0 cp312-cp312-manylinux_2_28_x86_64 jinja2
	python3 "$OW_SOURCE_DIR/tests/tools/mktorch_wheel.py" "$1" 2.9.0 $TAG jinja2 filelock \
		"typing-extensions>=4.10,<4.12"
	python3 "$OW_SOURCE_DIR/tests/tools/mktorch_wheel.py" "$1" 2.8.0 $TAG jinja2
}

setup_file() {
	export SRV=$(mktemp -d)
	if ! fetch_files >"$SRV/pip.log" 2>&1; then
		export OW_NO_PYPI="the real wheels could not be fetched from PyPI ($(tail -1 "$SRV/pip.log"))"
		return 0
	fi
	fill "$SRV/dir"
	# what a listing of the directory must not take: a symlink out of it, a
	# wheel in a folder below it, a file that is no distribution
	echo secret >"$SRV/outside.txt"
	ln -s "$SRV/outside.txt" "$SRV/dir/evil-1.0-py3-none-any.whl"
	mkdir "$SRV/dir/sub"
	cp "$SRV/dir/torch-2.8.0-$TAG.whl" "$SRV/dir/sub/torch-2.7.0-$TAG.whl"
	echo "read me" >"$SRV/dir/README.txt"
	fill "$SRV/www/wheels"
	mkdir -p "$SRV/nginx"
	export NGINX_PORT=$(ow_free_port)
	cat >"$SRV/nginx/server.conf" <<-EOF
		types { text/html html; application/octet-stream whl; }
		server {
		  listen 127.0.0.1:$NGINX_PORT;
		  root $SRV/www;
		  location / { autoindex on; }
		}
	EOF
	ow_nginx_serve "$SRV/nginx" "$NGINX_PORT"
	export URL=http://127.0.0.1:$NGINX_PORT/wheels
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	export PIP_NO_CACHE_DIR=1 PIP_FIND_LINKS= PIP_INDEX_URL=
}

teardown_file() {
	[ -f "$SRV/nginx/nginx.pid" ] && kill "$(cat "$SRV/nginx/nginx.pid")"
	rm -rf "$SRV"
}

setup() { [ -z "${OW_NO_PYPI:-}" ] || skip "$OW_NO_PYPI: the find-links tests did not run"; }

ow() { "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" "$@"; }
target() { echo --python 3.11 --platform linux-x86_64; }
closure() { jq -r '.targets[0].members[] | "\(.project)==\(.version)"' | sort; }

# pip's closure of torch from the sources given (pip's own options)
pip_closure() {
	python3 -m pip install -q --dry-run --ignore-installed --target "$BATS_TEST_TMPDIR/t" \
		--report "$BATS_TEST_TMPDIR/pip.json" --python-version 3.11 $PLATFORMS \
		--only-binary=:all: "$@" torch >&2 || return 1
	python3 -c '
import json, re, sys
for i in json.load(open(sys.argv[1]))["install"]:
    print(re.sub(r"[-_.]+", "-", i["metadata"]["name"]).lower() + "==" + i["metadata"]["version"])' \
		"$BATS_TEST_TMPDIR/pip.json" | sort
}

@test "--no-index --find-links DIR: pip's closure; the listing takes regular files only (no symlink, no subfolder)" {
	pip_closure --no-index --find-links "$SRV/dir" >"$BATS_TEST_TMPDIR/pip.txt"
	cat "$BATS_TEST_TMPDIR/pip.txt"
	grep -qx 'torch==2.9.0' "$BATS_TEST_TMPDIR/pip.txt"
	grep -qx 'typing-extensions==4.11.0' "$BATS_TEST_TMPDIR/pip.txt"
	run --separate-stderr ow --json resolve --no-index --find-links "$SRV/dir" --project torch $(target)
	[ "$status" -eq 0 ] || { echo "$stderr $output"; false; }
	diff -u --label pip --label offwheel "$BATS_TEST_TMPDIR/pip.txt" <(closure <<<"$output")
	# a path is the directory's file: URL; the files are its own
	[ "$(jq -r '.index_url' <<<"$output")" = "file://$SRV/dir" ]
	[ "$(jq -r '[.targets[0].members[].url | startswith("file://'"$SRV"'/dir/")] | all' <<<"$output")" = true ]
	run ow --json ls pages
	! grep -q 'evil' <<<"$output"
	# the torch in sub/ is not a file of the source
	run --separate-stderr ow --json resolve --no-index --find-links "$SRV/dir" --project torch $(target) --version 2.7.0 --offline
	[ "$status" -ne 0 ]
	# sync stores the set; the wheels had no published hash: record-pinned
	run --separate-stderr ow sync --no-index --find-links "$SRV/dir" --project torch $(target)
	[ "$status" -eq 0 ] || { echo "$stderr $output"; false; }
	[ "$(grep -c 'record-pinned' <<<"$output")" -eq 5 ]
}

@test "--no-index --find-links URL of an nginx autoindex: files named by their href, pip's closure, each wheel downloaded whole once" {
	# the fixture is what it claims: autoindex cut the MarkupSafe wheel's link text
	curl -s "$URL/" >"$BATS_TEST_TMPDIR/listing.html"
	grep -q "<a href=\"$LONG\">MarkupSafe-3.0.2-cp311-cp311-manylinux_2_17_x86..&gt;</a>" \
		"$BATS_TEST_TMPDIR/listing.html"
	pip_closure --no-index --find-links "$URL/" --trusted-host 127.0.0.1 >"$BATS_TEST_TMPDIR/pip.txt"
	grep -qix 'markupsafe==3.0.2' "$BATS_TEST_TMPDIR/pip.txt"
	: >"$SRV/nginx/access.log"
	run --separate-stderr ow --json sync --no-index --find-links "$URL" --trusted-host 127.0.0.1 --project torch $(target)
	[ "$status" -eq 0 ] || { echo "$stderr $output"; false; }
	output=$(jq .resolve <<<"$output")
	diff -u --label pip --label offwheel "$BATS_TEST_TMPDIR/pip.txt" <(closure <<<"$output")
	jq -r '.targets[0].members[].filename' <<<"$output" | grep -qx "$LONG"
	# the listing is read, no {source}/{project}/ page is asked for
	! grep -q 'GET /wheels/[a-z_-]*/ ' "$SRV/nginx/access.log"
	grep -q 'GET /wheels/ ' "$SRV/nginx/access.log"
	# every member's file downloaded whole once (its METADATA came by range reads)
	local f
	for f in $(jq -r '.targets[0].members[].filename' <<<"$output"); do
		[ "$(grep -c "GET /wheels/$f .* 200 " "$SRV/nginx/access.log")" -eq 1 ] || { grep "$f" "$SRV/nginx/access.log"; false; }
	done
	# crawl says what it found, one line per project asked
	run --separate-stderr ow crawl --no-index --find-links "$URL" --trusted-host 127.0.0.1 --project torch,markupsafe
	[ "$status" -eq 0 ] || { echo "$stderr $output"; false; }
	[[ $output == *"torch "*"3 files"* ]]
	[[ $output == *"markupsafe "*"1 files"* ]]
}

@test "--find-links DIR beside an index: one pool of candidates, as pip's" {
	# a PEP 503 root that has torch 2.8.0 only; the dependencies and the newer torches come from the directory
	mkdir -p "$BATS_TEST_TMPDIR/idx/simple/torch" "$BATS_TEST_TMPDIR/idx/files"
	cp "$SRV/dir/torch-2.8.0-$TAG.whl" "$BATS_TEST_TMPDIR/idx/files/"
	printf '<!DOCTYPE html><html><body><a href="../../files/torch-2.8.0-%s.whl">torch-2.8.0-%s.whl</a></body></html>\n' \
		$TAG $TAG >"$BATS_TEST_TMPDIR/idx/simple/torch/index.html"
	local index=file://$BATS_TEST_TMPDIR/idx/simple
	pip_closure --index-url "$index" --find-links "$SRV/dir" >"$BATS_TEST_TMPDIR/pip.txt"
	run --separate-stderr ow --json resolve --index-url "$index" --find-links "$SRV/dir" --project torch $(target)
	[ "$status" -eq 0 ] || { echo "$stderr $output"; false; }
	diff -u --label pip --label offwheel "$BATS_TEST_TMPDIR/pip.txt" <(closure <<<"$output")
	grep -qx 'torch==2.9.0' "$BATS_TEST_TMPDIR/pip.txt"
}

@test "an --index-url that is a find-links page: exit 2, saying to use --find-links" {
	run --separate-stderr ow crawl --index-url "$URL" --trusted-host 127.0.0.1
	echo "$output $stderr"
	[ "$status" -eq 2 ]
	[[ $stderr == *"$URL is not an index: it has no project pages"*"give it as --find-links $URL"* ]]
	run --separate-stderr ow resolve --index-url "$URL" --trusted-host 127.0.0.1 $(target)
	[ "$status" -eq 2 ]
	[[ $stderr == *"give it as --find-links $URL"* ]]
	run --separate-stderr ow sync --index-url "$URL" --trusted-host 127.0.0.1 $(target)
	[ "$status" -eq 2 ]
	[[ $stderr == *"give it as --find-links $URL"* ]]
	# a local directory of wheels given as an index: the same
	run --separate-stderr ow resolve --index-url "file://$SRV/dir" $(target)
	[ "$status" -eq 2 ]
	[[ $stderr == *"give it as --find-links file://$SRV/dir"* ]]
}

@test "--no-index needs --find-links; a source that does not exist is named" {
	run --separate-stderr ow resolve --no-index $(target)
	[ "$status" -eq 2 ]
	[[ $stderr == *"--no-index reads only the --find-links sources"* ]]
	run --separate-stderr ow resolve --no-index --find-links "$SRV/nonexistent" $(target)
	[ "$status" -eq 2 ]
	[[ $stderr == *"--find-links: '$SRV/nonexistent'"* ]]
	run --separate-stderr ow resolve --no-index --find-links "$URL/nonexistent/" --trusted-host 127.0.0.1 $(target)
	echo "$output $stderr"
	[ "$status" -eq 4 ]
	[[ "$output $stderr" == *"find-links source $URL/nonexistent/: not found (HTTP 404)"* ]]
}
