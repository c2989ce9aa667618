#!/usr/bin/env bats
# Trust under attack, round three (issue 48): what was found accepted,
# cut, blocked or worded wrongly, each refused or said as it is.  The
# sample index served by nginx, some of its pages made hostile (upload
# times that are no dates, a page of one byte that is not UTF-8); check's
# state file with sequences that are no numbers; requirement files checked
# against a real pip from PyPI (a venv under the shared test cache; skipped
# with a message when PyPI cannot be reached); Python's tomllib and uv as
# the readers of the signed lock file; hostile TOML, FIFOs, arguments.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"
bats_require_minimum_version 1.5.0

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests"

# data-upload-time on every link of the project's pages (variant folder and
# channel root): what a hostile index may write there
upload_time() { # PROJECT VALUE
	local f
	for f in "$SRV"/www/whl/nightly/"$1"/index.html "$SRV"/www/whl/nightly/cpu/"$1"/index.html; do
		[ -f "$f" ] && sed -i "s|<a href=|<a data-upload-time=\"$2\" href=|g" "$f"
	done
	return 0
}

setup_file() {
	export SRV=$(mktemp -d)
	ow_serve_fixture_index "$SRV"
	upload_time filelock '2026-99-99T99:99:99Z'          # the shape, not a date
	upload_time typing-extensions '2026-01-01T00:00:00.Z' # a point and no digits
	upload_time sympy '2025-02-29T00:00:00Z'             # 2025 is no leap year
	upload_time mpmath '2024-02-29T23:59:59.123456Z'     # a real moment: kept
	upload_time networkx '2025-10-28T15:21:34+01:00'     # with an offset: kept
	export WS=$SRV/ws
	"$OFFWHEEL" --home "$WS" -q sync --index-url "$OW_HTTPS_URL/whl/nightly" --cert "$OW_CA_FILE" \
		--allow-host r2.localhost --variant cpu --python 3.11 --platform linux-x86_64
	export KID=$("$OFFWHEEL" --json keygen "$SRV/k.sec" | jq -r .key_id)
	"$OFFWHEEL" --home "$WS" -q export "$SRV/stick" --all-sets --sign "$SRV/k.sec"
}

teardown_file() {
	ow_stop_nginx
	rm -rf "$SRV"
}

# check with a state file of the test's own
chk() {
	timeout 60 "$OFFWHEEL" check "$SRV/stick" --pubkey "$SRV/k.pub" --state "$BATS_TEST_TMPDIR/state.json" "$@"
}

@test "check's state: an entry whose sequence is a string, 1e300, -5, null or missing is refused as unreadable, naming the file and entry; the state is left as it was" {
	name=$(jq -r .name "$SRV/stick/manifest.json")
	st=$BATS_TEST_TMPDIR/state.json
	for bad in '"99"' 1e300 -5 null 9007199254740993 '{}'; do
		printf '{"keys": {}, "names": {"%s": {"%s": {"sequence": %s, "accepted_at": 1}}}}\n' \
			"$KID" "$name" "$bad" >"$st"
		cp "$st" "$st.before"
		run chk
		echo "$bad: $output"
		[ "$status" -eq 3 ]
		[[ $output == *"$st: the accepted-sequence state is unreadable (entry \"names\" → \"$KID\" → \"$name\" has "*"sequence"*"repair or remove it deliberately"* ]]
		cmp "$st" "$st.before" # never replaced by a fresh one
	done
	# the per-key entries (an offwheel before export names) the same way
	printf '{"keys": {"%s": {"sequence": "7"}}}\n' "$KID" >"$st"
	run chk
	[ "$status" -eq 3 ]
	[[ $output == *"entry \"keys\" → \"$KID\" has a \"sequence\" that is a string"* ]]
	printf '{"keys": {"%s": 5}}\n' "$KID" >"$st"
	run chk
	[ "$status" -eq 3 ]
	[[ $output == *"entry \"keys\" → \"$KID\" is not an object"* ]]
	# a sound state: accepted, and the floor recorded
	printf '{"keys": {"%s": {"sequence": 2, "accepted_at": 1}}}\n' "$KID" >"$st"
	run chk
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(jq ".names[\"$KID\"][\"$name\"].sequence" "$st")" -eq "$(jq .sequence "$SRV/stick/manifest.json")" ]
}

@test "the lock file: upload times that are no real moment are left out, real ones kept; Python's tomllib and uv read every lock file" {
	run python3 - "$SRV/stick" <<'PY'
import os, sys, tomllib
root = sys.argv[1]
n = 0
times = {}
for fn in sorted(os.listdir(root)):
    if fn.startswith("pylock.") and fn.endswith(".toml"):
        lock = tomllib.load(open(os.path.join(root, fn), "rb"))  # raises on a bad date
        n += 1
        for p in lock["packages"]:
            for w in p.get("wheels", []):
                times[p["name"]] = w.get("upload-time")
assert n >= 1, "no lock file"
for bad in ("filelock", "typing-extensions", "sympy"):
    assert times.get(bad, 0) is None, (bad, times.get(bad, "not in the set"))
assert str(times["mpmath"]) == "2024-02-29 23:59:59.123456+00:00", times["mpmath"]
assert str(times["networkx"]) == "2025-10-28 15:21:34+01:00", times["networkx"]
print("%d lock files read" % n)
PY
	echo "$output"
	[ "$status" -eq 0 ]
	run "$OFFWHEEL" check "$SRV/stick" --pubkey "$SRV/k.pub" --state "$BATS_TEST_TMPDIR/s.json"
	[ "$status" -eq 0 ]
	uv=$CACHE/uv-venv/bin/uv
	if [ ! -x "$uv" ]; then
		{ python3 -m venv "$CACHE/uv-venv" && timeout 180 "$CACHE/uv-venv/bin/pip" install -q uv; } >/dev/null 2>&1 ||
			skip "uv is not in $CACHE/uv-venv and could not be installed from PyPI (no network?): tomllib read the lock files, uv did not"
	fi
	"$uv" venv -q --no-config -p python3 "$BATS_TEST_TMPDIR/venv"
	lock=$(cd "$SRV/stick" && ls pylock.*cp311*.toml | head -1)
	run bash -c "cd '$SRV/stick' && '$uv' pip install --no-config --offline --dry-run --python '$BATS_TEST_TMPDIR/venv/bin/python' -r '$lock'"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"Would install"* ]]
}

@test "a dependency page that cannot be read (one byte, not UTF-8) is named with its cause, not as 'could not be fetched'" {
	p=$SRV/www/whl/nightly/cpu/filelock/index.html
	cp "$p" "$BATS_TEST_TMPDIR/page"
	printf '\xff' >"$p"
	run timeout 120 "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" resolve --index-url "$OW_HTTPS_URL/whl/nightly" \
		--cert "$OW_CA_FILE" --allow-host r2.localhost --variant cpu --python 3.11 --platform linux-x86_64
	cp "$BATS_TEST_TMPDIR/page" "$p"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"filelock"* ]]
	[[ $output != *"filelock/ could not be fetched"* ]]
	[[ $output == *"UTF-8"* ]]
}

# pip from PyPI, the newest, in a venv of the shared test cache
pip_oracle() {
	PIPV=$CACHE/pip-venv
	if [ ! -x "$PIPV/bin/pip" ] || [ ! -f "$PIPV/.from-pypi" ]; then
		{ rm -rf "$PIPV" && python3 -m venv "$PIPV" &&
			timeout 180 "$PIPV/bin/pip" install -q --isolated --upgrade pip && touch "$PIPV/.from-pypi"; } >/dev/null 2>&1 ||
			skip "pip could not be installed from PyPI into $PIPV (no network?): the pip oracle did not run"
	fi
	export PIP_CONFIG_FILE=/dev/null PIP_FIND_LINKS= PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1
}

# pip FILE-ARGS...: pip installing them (dry run) from the test's wheels, no index
pip_try() {
	"$PIPV/bin/pip" --isolated install --dry-run --no-index --find-links "$D/wheels" "$@" 2>&1
}

# offwheel reading them, from the same wheels, no index
ow_try() {
	timeout 60 "$OFFWHEEL" --home "$D/ws" resolve --no-index --find-links "$D/wheels" \
		--python 3.11 --platform linux-x86_64 "$@" 2>&1
}

@test "requirement files: pip's hash-checking mode and constraints with extras, refused as pip refuses them (a real pip from PyPI says so)" {
	pip_oracle
	D=$BATS_TEST_TMPDIR
	mkdir -p "$D/wheels"
	python3 "$OW_SOURCE_DIR/tests/tools/mkwheel.py" "$D/wheels/alpha-1.0-py3-none-any.whl" big alpha 1.0 0 1
	python3 "$OW_SOURCE_DIR/tests/tools/mkwheel.py" "$D/wheels/beta-1.0-py3-none-any.whl" big beta 1.0 0 2
	ha=$(sha256sum "$D/wheels/alpha-1.0-py3-none-any.whl" | cut -c1-64)
	hb=$(sha256sum "$D/wheels/beta-1.0-py3-none-any.whl" | cut -c1-64)
	cd "$D"
	printf -- '--require-hashes\nalpha==1.0\n' >explicit.txt
	printf -- 'alpha==1.0 --hash=sha256:%s\nbeta==1.0\n' "$ha" >implicit.txt
	printf -- '-r hashes-on.txt\nbeta==1.0\n' >included.txt
	printf -- '--require-hashes\n' >hashes-on.txt
	printf -- '--require-hashes\nalpha==1.0 --hash=sha256:%s\nbeta==1.0 --hash=sha256:%s\n' "$ha" "$hb" >all.txt
	printf -- 'alpha\n' >plain.txt
	printf -- 'alpha==1.0 --hash=sha256:%s\n' "$ha" >hashed-c.txt
	printf -- 'alpha[fast]<2\n' >extras-c.txt
	# pip and offwheel both refuse these, each naming why
	for f in explicit implicit included; do
		run pip_try -r $f.txt
		echo "pip $f: $output"
		[ "$status" -ne 0 ]
		[[ $output == *"--require-hashes mode"* ]]
		run ow_try -r $f.txt
		echo "offwheel $f: $output"
		[ "$status" -eq 2 ]
		[[ $output == *"has no --hash, but "*" turned hash checking on"* ]]
	done
	run ow_try -r explicit.txt
	[[ $output == *"explicit.txt:2: alpha has no --hash, but explicit.txt:1 turned hash checking on"* ]]
	run ow_try -r implicit.txt
	[[ $output == *"implicit.txt:2: beta has no --hash, but implicit.txt:1 turned"* ]]
	run pip_try -r plain.txt -c extras-c.txt
	echo "pip: $output"
	[ "$status" -ne 0 ]
	[[ $output == *"Constraints cannot have extras"* ]]
	run ow_try -r plain.txt -c extras-c.txt
	echo "offwheel: $output"
	[ "$status" -eq 2 ]
	[[ $output == *"extras-c.txt:1: a constraint cannot have extras"*"alpha[fast]<2"* ]]
	# and both take these: every requirement hashed; a hash from a constraint
	for args in "-r all.txt" "-r plain.txt -c hashed-c.txt"; do
		run pip_try $args
		echo "pip $args: $output"
		[ "$status" -eq 0 ]
		run ow_try $args
		echo "offwheel $args: $output"
		[ "$status" -eq 4 ] # read, resolved; incomplete only for want of a torch
		[[ $output != *"--hash"* ]]
	done
}

@test "-r of a FIFO, a directory or a device is refused at once, as every non-regular file is, never waited on" {
	D=$BATS_TEST_TMPDIR
	mkfifo "$D/fifo"
	printf -- '-r fifo\n' >"$D/inc.txt"
	for f in "$D/fifo" "$D/inc.txt" /dev/zero "$D"; do
		for opt in -r -c; do
			run timeout 10 "$OFFWHEEL" --home "$D/ws" resolve "$opt" "$f" --index-url https://127.0.0.1:9/x
			echo "$opt $f: $output"
			[ "$status" -eq 2 ]
			[[ $output == *"not a regular file — name a requirements file"* ]]
		done
	done
	run timeout 10 "$OFFWHEEL" --home "$D/ws" resolve -r "$D/inc.txt" --index-url https://127.0.0.1:9/x
	[[ $output == *"inc.txt:1: -r fifo: "*"fifo is a FIFO, not a regular file"* ]]
}

# resolve_py FILE-TEXT ARGS...: a pyproject.toml of that text, read
resolve_py() {
	local d=$BATS_TEST_TMPDIR/py
	mkdir -p "$d"
	cat >"$d/pyproject.toml"
	timeout 10 "$OFFWHEEL" --home "$BATS_TEST_TMPDIR/ws" resolve -r "$d/pyproject.toml" \
		--index-url https://127.0.0.1:9/x "$@"
}

@test "TOML: \\u0000 in a string is refused, never cut short ('alpha\\u0000; marker' read as 'alpha')" {
	run resolve_py <<'TOML'
[project]
name = "demo"
version = "1"
dependencies = ["alpha\u0000; python_version < '3'"]
TOML
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"pyproject.toml:4: \\u0000 (a NUL character) in a string or key"*"remove it"* ]]
	run resolve_py <<'TOML'
[project]
name = "demo"
version = "1"
dependencies = []
[dependency-groups]
"dev\U00000000x" = ["alpha"]
TOML
	[ "$status" -eq 1 ]
	[[ $output == *"\\U00000000 (a NUL character)"* ]]
	# tomllib reads both: the one difference, deliberate (docs/trust.md)
	python3 -c 'import tomllib; assert tomllib.loads("a = \"x\\u0000y\"")["a"] == "x\0y"'
}

@test "a dependency group that includes itself under another spelling says so (names compared normalized, PEP 735)" {
	run resolve_py --group dev.tools <<'TOML'
[project]
name = "demo"
version = "1"
dependencies = []
[dependency-groups]
Dev_Tools = ["alpha", {include-group = "dev-tools"}]
TOML
	echo "$output"
	[ "$status" -eq 2 ]
	[[ $output == *"[dependency-groups] 'dev-tools' includes itself (through include-group; it is 'Dev_Tools'"* ]]
	[[ $output != *"deep"* ]]
}

@test "--json with bytes that are not UTF-8 in an argument still prints exactly one document; messages show ESC and such bytes escaped" {
	D=$BATS_TEST_TMPDIR
	run --separate-stderr "$OFFWHEEL" --json resolve --python $'3.1\xff\e[31m'
	echo "$output"
	[ "$status" -eq 2 ]
	[ "$(jq -r .error.code <<<"$output")" = USAGE ]
	[[ $(jq -r .error.message <<<"$output") == *"3.1\\xff\\x1b[31m"* ]]
	[[ $stderr == *"3.1\\xff\\x1b[31m"* ]]
	[[ $stderr != *$'\e'* && $stderr != *$'\xff'* ]]
	# keygen's path: the document, with the exact bytes in base64
	mkdir "$D/k"
	run --separate-stderr "$OFFWHEEL" --json keygen "$D/k/lab"$'\xff'".sec"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r .secret_key_base64 <<<"$output" | base64 -d)" = "$D/k/lab"$'\xff'".sec" ]
	[ "$(jq -r .public_key_base64 <<<"$output" | base64 -d)" = "$D/k/lab"$'\xff'".pub" ]
	[ -f "$D/k/lab"$'\xff'".pub" ]
	run --separate-stderr "$OFFWHEEL" --json keygen "$D/none"$'\xff'"/lab.sec"
	[ "$status" -eq 1 ]
	[ "$(jq -r .error.code <<<"$output")" = ENOENT ]
	# before a command, and at the terminal
	run --separate-stderr "$OFFWHEEL" --json $'--bo\xffgus\e[2J'
	[ "$status" -eq 2 ]
	[ "$(jq -r .error.code <<<"$output")" = USAGE ]
	run -2 "$OFFWHEEL" $'--bo\xffgus\e[2J'
	[[ $output == *'--bo\xffgus\x1b[2J'* ]]
	[[ $output != *$'\e'* && $output != *$'\xff'* ]]
	run -2 "$OFFWHEEL" keygen "$D/k/x"$'\e[2J'".pub"
	[[ $output == *'x\x1b[2J.pub'* ]]
	[[ $output != *$'\e'* ]]
}

@test "an sdist whose PKG-INFO names another project or version than its file name is never stored, with or without a published hash" {
	D=$BATS_TEST_TMPDIR
	python3 - "$D/bad" "$D/good" <<'PY'
import io, os, sys, tarfile
def sdist(d, name, top, pkg_name, pkg_version):
    os.makedirs(d, exist_ok=True)
    with tarfile.open(os.path.join(d, name), "w:gz") as t:
        data = f"Metadata-Version: 2.1\nName: {pkg_name}\nVersion: {pkg_version}\n\n".encode()
        i = tarfile.TarInfo(f"{top}/PKG-INFO"); i.size = len(data)
        t.addfile(i, io.BytesIO(data))
sdist(sys.argv[1], "liar-1.0.tar.gz", "liar-1.0", "other", "1.0")        # no published hash
sdist(sys.argv[2], "fibber-1.0.tar.gz", "fibber-1.0", "fibber", "9.9")  # hashed by the index
sdist(sys.argv[2], "honest-1.0.tar.gz", "honest-1.0", "Honest", "1.0.0")
PY
	python3 "$OW_SOURCE_DIR/tests/tools/mksdist_index.py" "$D/www" "$D/good" "$D/bad"
	ow_start_nginx "$D/www"
	idx=(--index-url "$OW_HTTP_URL/whl" --variant cu128 --extra-index-url "$OW_HTTP_URL/simple"
		--trusted-host "127.0.0.1:$OW_HTTP_PORT" --python 3.11 --platform linux-x86_64 --allow-sdist)
	for p in liar fibber honest; do
		run timeout 120 "$OFFWHEEL" --home "$D/ws" resolve "${idx[@]}" --with "$p"
		echo "$p: $output"
		[ "$status" -eq 4 ] # an sdist's build needs setuptools, which this index lacks
	done
	run "$OFFWHEEL" --home "$D/ws" resolve "${idx[@]}" --with liar
	[[ $output == *"liar-1.0.tar.gz: its PKG-INFO says Name: other, Version: 1.0, but the file name says liar 1.0"* ]]
	run "$OFFWHEEL" --home "$D/ws" resolve "${idx[@]}" --with fibber
	[[ $output == *"fibber-1.0.tar.gz: its PKG-INFO says Name: fibber, Version: 9.9"* ]]
	# stored: only the honest one (whose Name and Version differ in spelling only)
	run "$OFFWHEEL" --home "$D/ws" ls objects
	echo "$output"
	grep -Eq ' sdist +honest-1\.0\.tar\.gz$' <<<"$output"
	! grep -Eq ' sdist +(liar|fibber)' <<<"$output"
	[ "$(find "$D/ws/objects" -type f | wc -l)" -eq "$(sqlite3 "$D/ws/index.db" 'SELECT count(*) FROM objects')" ]
	ow_stop_nginx
}
