#!/usr/bin/env bats
# Projects that come only as source (--allow-sdist), with REAL files from
# PyPI (fetched once with pip into ${XDG_CACHE_HOME:-~/.cache}/offwheel-tests/
# sdist-files; skipped with a message when PyPI cannot be reached):
#   docopt 0.6.2 and antlr4-python3-runtime 4.9.3 (hydra/omegaconf's), both
#   sdist-only on PyPI, setup.py projects with no pyproject.toml (Metadata-
#   Version 1.1 and 1.0); tomli 2.0.1 (flit_core >=3.2,<4; Metadata-Version
#   2.1); typing_extensions 4.16.0 (flit_core >=3.11,<4; Metadata-Version 2.4,
#   its dependencies promised); and the real setuptools, wheel, packaging and
#   flit_core (4.2.0 and 3.12.0) wheels their builds need.
# Served by nginx in the lab's layout (tests/tools/mksdist_index.py): torch
# from a variant root, the rest PyPI-shaped.  pip is the oracle for the
# closure; the proof is the install: pip and uv build every sdist from the
# exported stick, offline, into fresh venvs.  Hostile sdists without a
# published hash must prove themselves, and are stored only when they do.

load "${OW_SOURCE_DIR:-$BATS_TEST_DIRNAME/../..}/tests/lib/servers.bash"

FILES_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests/sdist-files"
SDISTS="docopt==0.6.2 antlr4-python3-runtime==4.9.3 tomli==2.0.1 typing_extensions==4.16.0"
WHEELS="setuptools==84.2.1 wheel==0.48.0 packaging==26.4 flit_core==4.2.0 flit_core==3.12.0"
TARGET="cu128 cp311-manylinux_2_28_x86_64"

fetch_files() { # the real files, once
	[ -f "$FILES_CACHE/.complete" ] && return 0
	mkdir -p "$FILES_CACHE"
	local w
	timeout 300 python3 -m pip download -q --no-deps --no-binary :all: -d "$FILES_CACHE" $SDISTS || return 1
	for w in $WHEELS; do # one at a time: two flit_core versions
		timeout 120 python3 -m pip download -q --no-deps --only-binary :all: -d "$FILES_CACHE" "$w" || return 1
	done
	touch "$FILES_CACHE/.complete"
}

# Hostile sdists, made here: each lacks something a real one has.
make_bad() {
	python3 - "$1" <<'PY'
import io, os, sys, tarfile
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
def sdist(name, members):
    with tarfile.open(os.path.join(d, name), "w:gz") as t:
        for path, data in members:
            i = tarfile.TarInfo(path); i.size = len(data)
            t.addfile(i, io.BytesIO(data))
pkg = lambda n: f"Metadata-Version: 2.1\nName: {n}\nVersion: 1.0\n\n".encode()
sdist("twotops-1.0.tar.gz", [("twotops-1.0/PKG-INFO", pkg("twotops")), ("other-1.0/setup.py", b"")])
sdist("dotdot-1.0.tar.gz", [("dotdot-1.0/PKG-INFO", pkg("dotdot")), ("dotdot-1.0/../../evil", b"x")])
sdist("nopkg-1.0.tar.gz", [("nopkg-1.0/setup.py", b"")])
sdist("cut-1.0.tar.gz", [("cut-1.0/PKG-INFO", pkg("cut")), ("cut-1.0/big", os.urandom(200000))])
p = os.path.join(d, "cut-1.0.tar.gz")
b = open(p, "rb").read()
open(p, "wb").write(b[: len(b) // 2])
PY
}

setup_file() {
	export SRV=$(mktemp -d)
	if ! fetch_files >"$SRV/pip.log" 2>&1; then
		export OW_NO_PYPI="the real sdists could not be fetched from PyPI ($(tail -1 "$SRV/pip.log"))"
		return 0
	fi
	make_bad "$SRV/bad"
	python3 "$OW_SOURCE_DIR/tests/tools/mksdist_index.py" "$SRV/www" "$FILES_CACHE" "$SRV/bad"
	ow_start_nginx "$SRV/www"
	export OW_HTTP_URL OW_HTTP_PORT OW_NGINX_DIR
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_CONFIG_FILE=/dev/null
	export PIP_NO_CACHE_DIR=1 PIP_FIND_LINKS=
}

teardown_file() {
	[ -n "${OW_NO_PYPI:-}" ] || ow_stop_nginx
	rm -rf "$SRV"
}

setup() { [ -z "${OW_NO_PYPI:-}" ] || skip "$OW_NO_PYPI: the sdist tests did not run"; }

ow() { "$OFFWHEEL" --home "$SRV/ws" "$@"; }
sql() { python3 -c 'import sqlite3, sys; [print(*r, sep="|") for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]; ' "$@"; }
sql_run() { python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()' "$@"; }
idx() { echo --index-url "$OW_HTTP_URL/whl" --variant cu128 --extra-index-url "$OW_HTTP_URL/simple" \
	--trusted-host "127.0.0.1:$OW_HTTP_PORT" --python 3.11 --platform linux-x86_64; }
stack() { echo --with docopt --with antlr4-python3-runtime --with tomli --with typing-extensions; }
members() { jq -r '.targets[0].members[] | "\(.project)==\(.version):\(.role)"' | sort | tr '\n' ' '; }

@test "without --allow-sdist a project with only an sdist is named, never dropped: incomplete, exit 4" {
	run ow resolve $(idx) --with docopt
	echo "$output"
	[ "$status" -eq 4 ]
	[[ $output == *"docopt 0.6.2 meets them, but it has only an sdist (--allow-sdist ships it, and the target builds it at install)"* ]]
	run ow --json resolve $(idx) --with docopt
	[ "$status" -eq 4 ]
	[ "$(jq -r '.targets[0].complete' <<<"$output")" = false ]
}

@test "--allow-sdist: the sdists join the set, what building them needs joins as 'build', resolved apart per sdist" {
	run ow --json resolve $(idx) $(stack) --allow-sdist
	echo "$output" | jq -c '.targets[0].members[] | [.project, .version, .role, .required_by]'
	[ "$status" -eq 0 ]
	[ "$(members <<<"$output")" = "antlr4-python3-runtime==4.9.3:project docopt==0.6.2:project flit-core==3.12.0:build packaging==26.4:build setuptools==84.2.1:build tomli==2.0.1:project torch==2.10.0+cu128:torch typing-extensions==4.16.0:project wheel==0.48.0:build " ]
	# flit_core 4.2.0 is newer, but tomli's [build-system] says <4
	[ "$(jq -r '.targets[0].members[] | select(.project == "flit-core") | .required_by' <<<"$output")" = "building tomli 2.0.1" ]
	# a build requirement's own dependency, with its chain
	[ "$(jq -r '.targets[0].members[] | select(.project == "packaging") | .required_by' <<<"$output")" = "building docopt 0.6.2 -> wheel 0.48.0" ]
	# a note per sdist; PKG-INFO before Metadata-Version 2.2 is said not to promise its dependencies
	jq -r '.targets[0].notes[]' <<<"$output" >"$SRV/notes"
	cat "$SRV/notes"
	[ "$(grep -c 'ships as its sdist' "$SRV/notes")" -eq 4 ]
	grep -q '^docopt 0.6.2 ships as its sdist (docopt-0.6.2.tar.gz): the target builds it at install, with setuptools 84.2.1, wheel 0.48.0, packaging 26.4 from the stick.*does not promise its dependencies' "$SRV/notes"
	grep '^typing-extensions 4.16.0 ships' "$SRV/notes" | grep -q 'flit-core 3.12.0'
	! grep '^typing-extensions' "$SRV/notes" | grep -q 'does not promise'
	# the text view says how many are built from source, and why, without -v
	run ow resolve $(idx) $(stack) --allow-sdist --offline
	[ "$status" -eq 0 ]
	[[ $output == *"0 deps, 4 built from source"* ]]
	[ "$(grep -c 'note: .* ships as its sdist' <<<"$output")" -eq 4 ]
}

@test "pip agrees: the same requirements, the same two indexes, the same set (pip builds the sdists' metadata itself)" {
	ow --json resolve $(idx) $(stack) --allow-sdist |
		jq -r '.targets[0].members[] | select(.role != "build") | "\(.project)==\(.version)"' | sort >"$SRV/ow.txt"
	# pip's hash mode is off, the host runs 3.11 or not: pip resolves for the Python it runs
	py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	[ "$py" = 3.11 ] || skip "the host's python3 is $py: pip resolves for 3.11 only on a 3.11 host"
	printf '%s\n' torch docopt antlr4-python3-runtime tomli typing-extensions >"$SRV/pip.txt"
	python3 -m pip install --dry-run --ignore-installed --quiet --index-url "$OW_HTTP_URL/whl/cu128" \
		--extra-index-url "$OW_HTTP_URL/simple" --trusted-host 127.0.0.1 -r "$SRV/pip.txt" \
		--report "$SRV/pip.json"
	jq -r '.install[] | "\(.metadata.name | ascii_downcase | gsub("[-_.]+"; "-"))==\(.metadata.version)"' \
		"$SRV/pip.json" | sort >"$SRV/pip.out"
	diff "$SRV/ow.txt" "$SRV/pip.out"
}

@test "sync, export, check; pip (--no-index --require-hashes) and uv (the lock file) build every sdist from the stick, offline" {
	run ow sync $(idx) $(stack) --allow-sdist
	echo "$output"
	[ "$status" -eq 0 ]
	ow keygen "$SRV/key.sec" >/dev/null
	run ow export "$SRV/stick" --target "$TARGET" --sign "$SRV/key.sec"
	echo "$output"
	[ "$status" -eq 0 ]
	run ow check "$SRV/stick" --pubkey "$SRV/key.pub"
	[ "$status" -eq 0 ]
	(cd "$SRV/stick" && sha256sum -c --quiet SHA256SUMS)
	req=$SRV/stick/requirements/cu128-cp311-manylinux_2_28_x86_64.txt
	lock=$SRV/stick/pylock.cu128-cp311-manylinux_2_28_x86_64.toml
	# the requirements and the lock name what is installed; build requirements are on the stick only
	[ "$(grep -c -- '--hash=sha256:' "$req")" -eq 5 ]
	! grep -q '^setuptools==' "$req"
	for f in setuptools-84.2.1-py3-none-any.whl flit_core-3.12.0-py3-none-any.whl docopt-0.6.2.tar.gz; do
		[ -f "$SRV/stick/wheels/$f" ]
	done
	[ "$(grep -c '^\[packages.sdist\]' "$lock")" -eq 4 ]
	! grep -q '"setuptools"' "$lock"
	grep -q 'built from source at install: .*docopt-0.6.2.tar.gz' "$SRV/stick/INSTALL.txt"
	py=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	[ "$py" = 3.11 ] || skip "the host's python3 is $py: the set is for 3.11 (the export was checked)"
	python3 -m venv "$SRV/venv"
	(cd "$SRV/stick" && "$SRV/venv/bin/pip" install -q --no-index --find-links wheels --require-hashes -r "$req")
	"$SRV/venv/bin/python" -c 'import docopt, antlr4, tomli, typing_extensions; print(docopt.__version__)' | grep -qx 0.6.2
	"$SRV/venv/bin/pip" check
	UVENV="${XDG_CACHE_HOME:-$HOME/.cache}/offwheel-tests/uv-venv"
	if [ ! -x "$UVENV/bin/uv" ]; then
		{ python3 -m venv "$UVENV" && timeout 180 "$UVENV/bin/pip" install -q uv; } >/dev/null 2>&1 ||
			skip "uv could not be installed from PyPI: the lock file install did not run (pip's did)"
	fi
	"$UVENV/bin/uv" venv -q --no-config -p python3 "$SRV/uvenv"
	(cd "$SRV/stick" && VIRTUAL_ENV=$SRV/uvenv "$UVENV/bin/uv" pip install --no-config --offline --no-index \
		--no-cache --find-links wheels -r "$lock")
	"$SRV/uvenv/bin/python" -c 'import docopt, antlr4, tomli, typing_extensions'
}

@test "hostile sdists without a published hash must prove themselves: refused, named, nothing stored" {
	for bad in twotops dotdot nopkg cut; do
		st=0
		ow --json resolve $(idx) --with "$bad" --allow-sdist >"$SRV/bad.json" 2>"$SRV/bad.err" || st=$?
		err=$(jq -r '.targets[0].error' "$SRV/bad.json")
		echo "$bad: $err"
		[ "$st" -eq 4 ]
		[ "$(jq -r '.targets[0].complete' "$SRV/bad.json")" = false ]
		# the conflict has nothing to do with torch: said as it is
		[[ $err == "no set fits the stack on this target: "* ]]
		[[ $err == *"$bad-1.0.tar.gz"* ]]
		case $bad in
		twotops) [[ $err == *"two top-level directories"* ]] ;;
		dotdot) [[ $err == *"leaves the archive's tree"* ]] ;;
		nopkg) [[ $err == *"no nopkg-1.0/PKG-INFO"* ]] ;;
		cut) [[ $err == *"not a readable source distribution"* ]] ;;
		esac
		# never stored
		! ow ls objects | grep -q "$bad-1.0.tar.gz"
	done
	run ow fsck
	[ "$status" -eq 0 ]
}

@test "a workspace of schema 11 (an offwheel before sdists) is upgraded: its sets keep their members, role 'build' can be stored, the pages are read again" {
	# the workspace as the migrations 0001-0011 of this tree leave it, with a
	# set and a page validator in it, made with sqlite3 alone
	ws=$SRV/old-ws
	mkdir -p "$ws"
	python3 - "$OW_SOURCE_DIR/index/schema" "$ws/index.db" <<'PY'
import glob, os, sqlite3, sys
db = sqlite3.connect(sys.argv[2])
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.sql"))):
    if int(os.path.basename(f)[:4]) <= 11:
        db.executescript(open(f).read())
db.executescript("""
INSERT INTO pages(url, index_url, variant, project, status, etag, fetched_at)
  VALUES('http://x/whl/cu128/torch/', 'http://x/whl', 'cu128', 'torch', 'ok', '"e1"', 1);
INSERT INTO files(url, filename, project, version, python_tag, abi_tag, platform_tag, variant,
  index_url, first_seen, last_seen)
  VALUES('http://x/torch-2.10.0-py3-none-any.whl', 'torch-2.10.0-py3-none-any.whl', 'torch',
  '2.10.0', 'py3', 'none', 'any', 'cu128', 'http://x/whl', 1, 1);
""")
db.execute("INSERT INTO sets(index_url, target, variant, python, platform, selector, torch_version, complete, with_deps, members_key, created_at, resolved_at) VALUES('http://x/whl', 'cu128 cp311-manylinux_2_28_x86_64', 'cu128', 'cp311', 'manylinux_2_28_x86_64', 'latest', '2.10.0', 1, 1, '1', 1, 1)")
db.execute("INSERT INTO set_members(set_id, file_id, role) VALUES(1, 1, 'torch')")
db.commit()
db.execute("PRAGMA application_id=%d" % 0x4F57484C)
db.execute("PRAGMA user_version=11")
db.close()
PY
	run "$OFFWHEEL" --home "$ws" ls sets
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"2.10.0"* ]]
	[ "$(sql "$ws/index.db" 'PRAGMA user_version')" -ge 12 ]
	[ "$(sql "$ws/index.db" "SELECT role FROM set_members WHERE set_id = 1")" = torch ]
	[ "$(sql "$ws/index.db" "SELECT kind FROM files WHERE id = 1")" = wheel ]
	# the stored page forgets its validator, so the next crawl reads it whole (with its sdists)
	[ "$(sql "$ws/index.db" "SELECT etag IS NULL FROM pages")" = 1 ]
	# the new role is accepted (an older CHECK refused it, and INSERT OR IGNORE hid that)
	sql_run "$ws/index.db" "UPDATE set_members SET role = 'build' WHERE set_id = 1"
	! sql_run "$ws/index.db" "UPDATE set_members SET role = 'bogus' WHERE set_id = 1" 2>/dev/null
	sql_run "$ws/index.db" "UPDATE set_members SET role = 'torch' WHERE set_id = 1"
	run "$OFFWHEEL" --home "$ws" fsck
	[ "$status" -eq 0 ]
}
